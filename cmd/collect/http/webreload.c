/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --web-config reloads: rotated certificates, new users, another client
 * CA or min_version without a restart. SIGHUP reloads at once; otherwise
 * the main loop looks at the files' identity and mtime once a second
 * (tsc_webcfg_stamp: the YAML file and the cert, key and CA files it
 * names) and reloads when one changed. The new configuration applies to
 * connections opened from then on (each TLS connection keeps the one it
 * was set up with until it closes; a reference holds it). A file that
 * does not load, or that would switch between HTTP and HTTPS (the server
 * would need a restart), keeps the old configuration; the reason is
 * logged and the failure counted. After --user the files are read as
 * that user.
 */
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "webconfig.h"

#define POLL_NS 1000000000ull
#define WP "taskstat_collector_web_config_"

static void note(struct tsc *c, bool ok)
{
	struct tsc_webstate *ws = &c->net.webstate;

	__atomic_store_n(&ws->last_ok, ok, __ATOMIC_RELAXED);
	if (ok)
		__atomic_store_n(&ws->last_ok_s, tsc_real_ns() / 1000000000u,
				 __ATOMIC_RELAXED);
}

/* setup.c, after the first load. */
void tsc_web_loaded(struct tsc *c)
{
	c->net.webstate.stamp = tsc_webcfg_stamp(c->o->web_config, c->net.web);
	c->net.webstate.next_poll_ns = tsc_mono_ns() + POLL_NS;
	note(c, true);
}

void tsc_web_reload(struct tsc *c, const char *why)
{
	struct tsc_webstate *ws = &c->net.webstate;
	struct tsc_webcfg *w = NULL, *old;
	char err[512], what[320];
	int r;

	if (!c->o->web_config || !c->net.web)
		return;
	/* first: a file changing meanwhile is seen by the next poll */
	ws->stamp = tsc_webcfg_stamp(c->o->web_config, c->net.web);
	r = tsc_webcfg_load(c->o->web_config, &w, err, sizeof(err));
	if (!r && w->tls != c->net.web->tls) {
		snprintf(err, sizeof(err), "%s: %s", c->o->web_config,
			 w->tls ? "tls_server_config added: switching to HTTPS "
			 "needs a restart" : "tls_server_config removed: "
			 "switching to plain HTTP needs a restart");
		tsc_webcfg_free(w);
		r = -1;
	}
	if (r) {
		__atomic_add_fetch(&ws->failed, 1, __ATOMIC_RELAXED);
		note(c, false);
		tsc_err("--web-config: reload (%s) failed, keeping the "
			"configuration loaded before: %s\n", why, err);
		return;
	}
	ws->stamp = tsc_webcfg_stamp(c->o->web_config, w);
	pthread_mutex_lock(&ws->lock);
	old = c->net.web;
	c->net.web = w;
	pthread_mutex_unlock(&ws->lock);
	tsc_webcfg_free(old); /* connections still using it keep it */
	__atomic_add_fetch(&ws->ok, 1, __ATOMIC_RELAXED);
	note(c, true);
	tsc_webcfg_describe(w, what, sizeof(what));
	tsc_info("--web-config: reloaded %s (%s): %s\n", c->o->web_config,
		 why, what);
}

void tsc_web_poll(struct tsc *c, uint64_t now_ns)
{
	struct tsc_webstate *ws = &c->net.webstate;

	if (!c->net.web || now_ns < ws->next_poll_ns)
		return;
	ws->next_poll_ns = now_ns + POLL_NS;
	uint64_t st = tsc_webcfg_stamp(c->o->web_config, c->net.web);
	if (st == ws->stamp)
		return;
	tsc_debug("--web-config: %s or a file it names changed\n",
		  c->o->web_config);
	tsc_web_reload(c, "a file changed");
}

uint64_t tsc_web_deadline(const struct tsc *c)
{
	return c->net.web ? c->net.webstate.next_poll_ns : UINT64_MAX;
}

struct tsc_webcfg *tsc_web_get(struct tsc *c)
{
	struct tsc_webcfg *w;

	pthread_mutex_lock(&c->net.webstate.lock);
	w = tsc_webcfg_ref(c->net.web);
	pthread_mutex_unlock(&c->net.webstate.lock);
	return w;
}

size_t tsc_web_metrics(struct tsc *c, char *buf, size_t len)
{
	struct tsc_webstate *ws = &c->net.webstate;

	if (!c->o->web_config)
		return 0;
	int k = snprintf(buf, len,
		"# HELP " WP "reloads_total Reloads of --web-config (SIGHUP or "
		"a changed file), by result; a failed one keeps the "
		"configuration loaded before.\n"
		"# TYPE " WP "reloads_total counter\n"
		WP "reloads_total{result=\"success\"} %llu\n"
		WP "reloads_total{result=\"failure\"} %llu\n"
		"# HELP " WP "last_reload_successful Whether the last load of "
		"--web-config succeeded.\n"
		"# TYPE " WP "last_reload_successful gauge\n"
		WP "last_reload_successful %d\n"
		"# HELP " WP "last_reload_success_timestamp_seconds When "
		"--web-config was last loaded successfully (at the start or "
		"by a reload).\n"
		"# TYPE " WP "last_reload_success_timestamp_seconds gauge\n"
		WP "last_reload_success_timestamp_seconds %llu\n",
		(unsigned long long)__atomic_load_n(&ws->ok, __ATOMIC_RELAXED),
		(unsigned long long)__atomic_load_n(&ws->failed,
						    __ATOMIC_RELAXED),
		(int)__atomic_load_n(&ws->last_ok, __ATOMIC_RELAXED),
		(unsigned long long)__atomic_load_n(&ws->last_ok_s,
						    __ATOMIC_RELAXED));
	return k > 0 && (size_t)k < len ? (size_t)k : 0;
}
