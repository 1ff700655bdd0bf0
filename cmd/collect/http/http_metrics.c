/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The scrape server's own series (taskstat_collector_http_*), appended to
 * each /metrics answer as of the request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"
#include "ratelimit.h"

#define HP "taskstat_collector_http_"

/* The server's own series, after the snapshot's (as of this request). */
char *http_add_metrics(struct http *h, char *body, size_t *len)
{
	unsigned n, limit = h->limit;
	uint64_t dl, shed, auth, trims, log_rate, log_blocked, cutm, refm;
	size_t inflight, pending;
	char add[3072];

	pthread_mutex_lock(&h->lock);
	n = h->nconn;
	dl = h->cut_deadline;
	shed = h->cut_shed;
	auth = h->auth_failed;
	trims = h->trim.trims;
	cutm = h->cut_memory;
	refm = h->refused_memory;
	inflight = h->inflight;
	pending = h->pending;
	pthread_mutex_unlock(&h->lock);
	httplog_counts(&h->log, &log_rate, &log_blocked);
	int k = snprintf(add, sizeof(add),
		"# HELP " HP "connections Open HTTP connections.\n"
		"# TYPE " HP "connections gauge\n"
		HP "connections %u\n"
		"# HELP " HP "connection_limit Most HTTP connections served at "
		"once (%u per client address).\n"
		"# TYPE " HP "connection_limit gauge\n"
		HP "connection_limit %u\n"
		"# HELP " HP "connections_cut_total HTTP connections closed by "
		"the collector: request not done within %u s (deadline), "
		"the oldest one without a request when the table was full "
		"(shed), or the oldest answer still being sent after %u ms "
		"when the answers in flight filled their budget (memory).\n"
		"# TYPE " HP "connections_cut_total counter\n"
		HP "connections_cut_total{reason=\"deadline\"} %llu\n"
		HP "connections_cut_total{reason=\"shed\"} %llu\n"
		HP "connections_cut_total{reason=\"memory\"} %llu\n"
		"# HELP " HP "answer_bytes Bytes of answers being sent (each "
		"holds its own copy; this one not counted), and of those of "
		"connections cut until freed.\n"
		"# TYPE " HP "answer_bytes gauge\n"
		HP "answer_bytes{state=\"sending\"} %zu\n"
		HP "answer_bytes{state=\"cut\"} %zu\n"
		"# HELP " HP "requests_refused_total Scrapes answered 503: "
		"the answers in flight filled their budget (at least %u MiB, "
		"or %u answers of the size asked) and none was slow enough "
		"to cut.\n"
		"# TYPE " HP "requests_refused_total counter\n"
		HP "requests_refused_total{reason=\"memory\"} %llu\n"
		"# HELP " HP "auth_failures_total Requests refused for a "
		"missing or wrong user name or password, or a client "
		"certificate missing or not valid (mTLS).\n"
		"# TYPE " HP "auth_failures_total counter\n"
		HP "auth_failures_total %llu\n"
		"# HELP " HP "memory_trims_total Times the heap was given "
		"back to the system after a burst of connections.\n"
		"# TYPE " HP "memory_trims_total counter\n"
		HP "memory_trims_total %llu\n"
		"# HELP " HP "log_suppressed_total libmicrohttpd messages not "
		"printed: over the rate limit (%u a second after a burst of "
		"%u), or stderr had no room (its reader lags).\n"
		"# TYPE " HP "log_suppressed_total counter\n"
		HP "log_suppressed_total{reason=\"rate\"} %llu\n"
		HP "log_suppressed_total{reason=\"blocked\"} %llu\n",
		n, HTTP_PER_IP, limit, HTTP_DEADLINE_S, HTTP_SLOW_MS,
		(unsigned long long)dl, (unsigned long long)shed,
		(unsigned long long)cutm, inflight, pending,
		HTTP_INFLIGHT_MIN >> 20,
		HTTP_INFLIGHT_BODIES, (unsigned long long)refm,
		(unsigned long long)auth, (unsigned long long)trims,
		RATELIMIT_PER_S, RATELIMIT_BURST,
		(unsigned long long)log_rate,
		(unsigned long long)log_blocked);
	if (k < 0 || (size_t)k >= sizeof(add))
		return body;
	char web[1024];
	size_t wk = tsc_web_metrics(h->c, web, sizeof(web));
	char *nb = realloc(body, *len + (size_t)k + wk + 1);
	if (!nb)
		return body;
	memcpy(nb + *len, add, (size_t)k);
	memcpy(nb + *len + (size_t)k, web, wk);
	*len += (size_t)k + wk;
	nb[*len] = '\0';
	return nb;
}

