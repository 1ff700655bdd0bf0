/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --check: what a run does before it collects (setup.c and live_open.c
 * say "ok ITEM: ..." as each step passes), then the rest here: the web
 * configuration read again as the --user (a reload reads it so), the
 * HTTP server started on the socket and stopped, and what the run would
 * do. Nothing is collected, nothing written to the outputs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "webconfig.h"

void tsc_check_ok(struct tsc *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->o->check)
		return;
	printf("ok %s: ", c->check_item ? c->check_item : "?");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void tsc_check_warn(struct tsc *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->o->check)
		return;
	printf("warn %s: ", c->check_item ? c->check_item : "?");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The status a run would exit with: 2 for what it rejects as an invalid
 * option or value (as --help says), else 1. */
int tsc_check_failed(struct tsc *c, int status)
{
	if (!status)
		return 0;
	printf("FAIL %s (the reason is on stderr)\n",
	       c->check_item ? c->check_item : "setup");
	fflush(stdout);
	return status == TSC_EXIT_USAGE ? TSC_EXIT_USAGE : TSC_EXIT_ERROR;
}

/* As the --user now: the files a reload will read. */
static int check_web_as_user(struct tsc *c)
{
	struct tsc_webcfg *w;
	char err[512];

	c->check_item = "web-config";
	if (tsc_export->webcfg_load(c->o->web_config, &w, err,
				    sizeof(err)) < 0) {
		tsc_err("--web-config: as --user %s: %s (a reload by SIGHUP "
			"would fail)\n", c->o->user, err);
		return TSC_EXIT_ERROR;
	}
	tsc_export->webcfg_free(w);
	tsc_check_ok(c, "%s: readable as the --user (reloads can read it)",
		     c->o->web_config);
	return 0;
}

static void say_run(struct tsc *c)
{
	const struct tsc_opts *o = c->o;

	c->check_item = "run";
	tsc_check_ok(c, "would %s, a snapshot every %g s to %s%s%s%s%s%s",
		     o->replay ? "replay the capture" : "collect task exits",
		     (double)o->interval_ns / 1e9,
		     o->output ? o->output : "stdout",
		     o->record ? ", records to " : "",
		     o->record ? o->record : "",
		     o->textfile ? ", Prometheus text to " : "",
		     o->textfile ? o->textfile : "",
		     o->listen ? ", served at --listen" : "");
}

int tsc_check(struct tsc *c)
{
	char err[256];
	int r;

	if (!c->o->replay && tsc_live_open(c) < 0)
		return tsc_check_failed(c, TSC_EXIT_ERROR);
	if (c->o->web_config && c->drop && check_web_as_user(c))
		return tsc_check_failed(c, TSC_EXIT_ERROR);
	if (c->net.listen_fd >= 0) {
		c->check_item = "http";
		r = tsc_export->http_start(c, err, sizeof(err));
		if (r < 0) {
			tsc_err("--listen: %s\n", err);
			return tsc_check_failed(c, TSC_EXIT_ERROR);
		}
		tsc_export->http_stop(c);
		tsc_check_ok(c, "the HTTP%s server starts", c->net.web &&
			     c->net.web->tls ? "S" : "");
	}
	say_run(c);
	return 0;
}
