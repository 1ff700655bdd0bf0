/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where snapshots come from. Standalone: the collector's own pieces
 * (tsc_setup checks the options, tsc_live_start registers the listener,
 * builds the rollup, sheds privileges and starts the listener threads),
 * with no main output and the JSON line kept (json_on), snapshotted on
 * each fetch. --connect: GET /snapshot of a running collector, which
 * snapshots on its own interval.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "top.h"

#define FETCH_TIMEOUT_MS 3000

struct top_source {
	struct top_opts *o;
	bool live;
	struct tsc c;
	char name[300];
};

static int open_live(struct top_source *s)
{
	struct tsc *c = &s->c;
	int r = tsc_setup(c, &s->o->tsc);
	if (r)
		return r;
	c->io.out = NULL;      /* the screen is the output */
	c->srv.json_on = true;  /* tsc_snapshot keeps the line */
	if (tsc_live_start(c) < 0)
		return TSC_EXIT_ERROR;
	snprintf(s->name, sizeof(s->name), "live");
	return 0;
}

static int open_connect(struct top_source *s)
{
	struct top_opts *o = s->o;
	char err[256], *body;
	size_t len;
	bool v6 = o->connect_host && strchr(o->connect_host, ':');

	snprintf(s->name, sizeof(s->name), "http://%s%s%s:%s", v6 ? "[" : "",
		 o->connect_host && *o->connect_host ? o->connect_host
						     : "localhost",
		 v6 ? "]" : "", o->connect_port);
	/* a first GET: a wrong address is an error now, not a blank screen */
	int r = top_source_fetch(s, &body, &len, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, TOP_PROG ": --connect %s: %s\n", o->connect,
			err);
		return TSC_EXIT_ERROR;
	}
	free(body);
	return 0;
}

int top_source_open(struct top_source **out, struct top_opts *o)
{
	struct top_source *s = calloc(1, sizeof(*s));
	int r;

	*out = s;
	if (!s) {
		fprintf(stderr, TOP_PROG ": %s\n", strerror(ENOMEM));
		return TSC_EXIT_ERROR;
	}
	s->o = o;
	s->live = !o->connect;
	r = s->live ? open_live(s) : open_connect(s);
	return r;
}

int top_source_fetch(struct top_source *s, char **json, size_t *len,
		     char *err, size_t errlen)
{
	if (!s->live) {
		int r = top_http_get(s->o->connect_host, s->o->connect_port,
				     "/snapshot", FETCH_TIMEOUT_MS, json, len,
				     err, errlen);
		if (r == 0 && *len == 0) {
			free(*json);
			*json = NULL;
			snprintf(err, errlen, "/snapshot is empty");
			return -ENODATA;
		}
		return r;
	}
	struct tsc *c = &s->c;
	c->io.seq++;
	int r = tsc_snapshot(c, tsc_real_ns(), false);
	if (r < 0) {
		snprintf(err, errlen, "snapshot: %s", cgs_strerror(r));
		return r;
	}
	*json = tsc_json_copy(c, len);
	if (!*json) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

const char *top_source_name(const struct top_source *s)
{
	return s->name;
}

void top_source_close(struct top_source *s)
{
	if (!s)
		return;
	if (s->live) {
		if (s->c.src.l)
			cgs_listener_stop(s->c.src.l);
		tsc_teardown(&s->c);
	}
	free(s);
}
