/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the screen (screen.c) and the plain table (plain.c) loops share:
 * the view set up from the options, a refresh from the source, the wait
 * for input, a signal or the next refresh, and the refresh interval.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "top.h"

void top_view_setup(struct top_view *v, const struct top_opts *o)
{
	top_view_init(v);
	v->tree = !o->flat;
	v->sort = o->sort;
	v->max_depth = o->max_depth;
	v->match = o->match;
}

int top_refresh(struct top_view *v, struct top_source *src, char *err,
		size_t errlen)
{
	struct top_frame f;
	char *json;
	size_t len;
	int r;

	r = top_source_fetch(src, &json, &len, err, errlen);
	if (r < 0)
		return r;
	r = top_frame_parse(json, len, &f, err, errlen);
	free(json);
	if (r < 0)
		return r;
	/* a collector that has not snapshotted since: nothing new */
	if (v->cur.cg && f.seq == v->cur.seq && f.time == v->cur.time) {
		top_frame_free(&f);
		return 0;
	}
	r = top_view_push(v, &f);
	top_frame_free(&f);
	if (r < 0) {
		snprintf(err, errlen, "%s", strerror(-r));
		return r;
	}
	return 1;
}

uint64_t top_interval(const struct top_opts *o, const struct top_view *v)
{
	if (o->connect && !o->tsc.interval_set && v->cur.interval_s >= 0.01)
		return (uint64_t)(v->cur.interval_s * 1e9);
	return o->tsc.interval_ns;
}

int top_wait(int sigfd, bool watch_input, uint64_t until, bool *resized)
{
	struct pollfd pf[2] = {
		{ .fd = sigfd, .events = POLLIN },
		{ .fd = STDIN_FILENO, .events = POLLIN },
	};
	uint64_t now = tsc_mono_ns();
	struct timespec ts = { 0, 0 };

	if (until > now) {
		ts.tv_sec = (time_t)((until - now) / 1000000000u);
		ts.tv_nsec = (long)((until - now) % 1000000000u);
	}
	if (ppoll(pf, watch_input ? 2 : 1, &ts, NULL) < 0)
		return 0; /* EINTR: look again */
	if (pf[0].revents & POLLIN) {
		struct signalfd_siginfo si;
		if (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGWINCH) {
				*resized = true;
				return 0;
			}
			return 1;
		}
	}
	if (watch_input && (pf[1].revents & (POLLIN | POLLHUP)))
		return 2;
	return 0;
}
