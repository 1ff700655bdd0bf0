/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Not a terminal (a pipe, a file, --batch): the same view as a plain
 * table, every row and every column, one block per refresh, separated
 * by a blank line. The first block comes one interval after the start:
 * rates need two snapshots.
 */
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "top.h"

int top_plain(struct top_opts *o, struct top_source *src, int sigfd)
{
	struct top_view v;
	char err[300];
	uint64_t shown = 0, now = tsc_mono_ns();
	uint64_t deadline = o->tsc.duration_ns ? now + o->tsc.duration_ns
					       : UINT64_MAX;
	int status = 0;
	bool resized;

	top_view_setup(&v, o);
	if (top_refresh(&v, src, err, sizeof(err)) < 0) {
		fprintf(stderr, TOP_PROG ": %s\n", err);
		top_view_free(&v);
		return TSC_EXIT_ERROR;
	}
	uint64_t next = now + top_interval(o, &v);
	for (;;) {
		uint64_t until = next < deadline ? next : deadline;
		if (top_wait(sigfd, false, until, &resized) == 1)
			break;
		now = tsc_mono_ns();
		if (now < next && now < deadline)
			continue;
		int r = top_refresh(&v, src, err, sizeof(err));
		if (r < 0)
			fprintf(stderr, TOP_PROG ": %s\n", err);
		if (r > 0) {
			struct top_status st = {
				.source = top_source_name(src),
				.interval_s = (double)top_interval(o, &v) / 1e9,
			};
			struct top_line *l;
			size_t n = top_render(&v, &st, 0, 0, &l);
			for (size_t i = 0; i < n; i++)
				printf("%s\n", l[i].text);
			printf("\n");
			free(l);
			if (fflush(stdout) == EOF) {
				status = TSC_EXIT_ERROR; /* the reader left */
				break;
			}
			shown++;
		}
		if (o->iterations && shown >= o->iterations)
			break;
		if (now >= deadline)
			break;
		next += top_interval(o, &v);
		if (next <= now)
			next = now + top_interval(o, &v);
	}
	top_view_free(&v);
	return status;
}
