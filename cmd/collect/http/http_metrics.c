/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The scrape server's own series (taskstat_collector_http_*), appended to
 * each /metrics answer as of the request. */
#include <stdlib.h>
#include <string.h>

#include "http_int.h"
#include "ratelimit.h"

#include "selfmetric.h"

/* what the registry's help texts say of the limits (selfmetric.c) */
_Static_assert(HTTP_PER_IP == 64 && HTTP_DEADLINE_S == 10 &&
		       HTTP_SLOW_MS == 1000 && HTTP_INFLIGHT_MIN >> 20 == 64 &&
		       HTTP_INFLIGHT_BODIES == 8,
	       "the help of the collector_http_* series names these limits");
_Static_assert(RATELIMIT_PER_S == 1 && RATELIMIT_BURST == 5,
	       "the help of collector_http_log_suppressed_total names these");

/* The server's own series, after the snapshot's (as of this request). */
char *http_add_metrics(struct http *h, char *body, size_t *len)
{
	struct tsc_sm_http v = { .limit = h->limit };

	pthread_mutex_lock(&h->lock);
	v.conns = h->nconn;
	v.cut_deadline = h->cut_deadline;
	v.cut_shed = h->cut_shed;
	v.auth_failed = h->auth_failed;
	v.trims = h->trim.trims;
	v.cut_memory = h->cut_memory;
	v.refused_memory = h->refused_memory;
	v.sending = h->inflight;
	v.cut_bytes = h->pending;
	pthread_mutex_unlock(&h->lock);
	httplog_counts(&h->log, &v.log_rate, &v.log_blocked);
	struct buf add;
	buf_init(&add);
	tsc_sm_prom_of(&add, TSC_SMG_HTTP, &v);
	if (add.oom) {
		buf_free(&add);
		return body;
	}
	char web[1024];
	size_t wk = tsc_web_metrics(h->c, web, sizeof(web));
	char *nb = realloc(body, *len + add.len + wk + 1);
	if (!nb) {
		buf_free(&add);
		return body;
	}
	memcpy(nb + *len, add.p, add.len);
	memcpy(nb + *len + add.len, web, wk);
	*len += add.len + wk;
	nb[*len] = '\0';
	buf_free(&add);
	return nb;
}
