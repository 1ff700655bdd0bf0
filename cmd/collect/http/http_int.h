/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The HTTP server's shared state (http.c: connections, their limits and
 * the answers' memory budget; http_request.c: what a request is answered;
 * http_metrics.c: the server's own series). */
#ifndef TSC_HTTP_INT_H
#define TSC_HTTP_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "httplog.h"
#include "memtrim.h"
#include "webconfig.h"

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define JSON_TYPE "application/json"

#define HTTP_PER_IP 64u
#define HTTP_CONN_MAX 1024u
#define HTTP_IDLE_S 5u
#define HTTP_DEADLINE_S 10u
#define HTTP_BACKLOG 1024
#define HTTP_SHED_AGE_MS 250u
#define HTTP_INFLIGHT_MIN (64u << 20) /* bytes of answers being sent */
#define HTTP_INFLIGHT_BODIES 8u       /* ... or 8 answers of the new size */
#define HTTP_SLOW_MS 1000u            /* an answer that may be cut for room */
#define HTTP_POOL_BYTES (16u * 1024u) /* per connection: request headers */
#define HTTP_MALLOC_FIXED (128 * 1024) /* glibc's initial thresholds */

struct http;

/* An answer being sent: its bytes count against the budget until it is
 * freed (by libmicrohttpd) or its connection is cut. Under http.lock. */
struct hold {
	struct http *h;
	char *body;
	size_t len;
	bool released; /* its connection was cut: counted in pending */
};

struct hconn {
	struct hconn *prev, *next;
	struct hold *hold;  /* the answer it is being sent, or NULL */
	uint64_t answer_ns; /* when that answer was queued */
	struct tsc_webcfg *web; /* TLS: the configuration of its session */
	int fd;
	bool busy;         /* a request is being answered */
	bool cut;          /* shut down by us */
	uint64_t since_ns; /* opened, or the last request completed */
};

struct http {
	struct MHD_Daemon *d;
	struct tsc *c;
	struct tsc_webcfg *web0;      /* the configuration started with */
	bool tls;                     /* HTTPS (a reload cannot change it) */
	pthread_mutex_t lock;         /* conns, nconn, the counters */
	pthread_cond_t cond;
	bool stopping;
	pthread_t watchdog;
	bool watchdog_on;
	struct hconn head;            /* list of open connections */
	unsigned nconn, limit, shed_at;
	int listen_fd;                /* libmicrohttpd's (it closes it) */
	uint64_t started;             /* connections taken from its queue */
	uint64_t started_seen;        /* ... at the watchdog's last tick */
	unsigned queued_seen;         /* its queue at the last tick */
	uint64_t cut_deadline, cut_shed, auth_failed;
	size_t inflight;              /* bytes of answers being sent */
	size_t pending;               /* ... of cut ones, until freed */
	uint64_t cut_memory, refused_memory;
	struct memtrim trim;          /* heap given back after bursts */
	struct httplog log;           /* libmicrohttpd's messages */
};

/* http.c */
void http_set_busy(struct http *h, struct MHD_Connection *conn, bool busy);
bool http_peer_ok(struct MHD_Connection *conn);
/* An answer's hold against the budget, or NULL (refuse: 503). */
struct hold *http_hold_answer(struct http *h, struct MHD_Connection *conn,
			      char *body, size_t len);
void http_hold_free(void *cls);
/* http_request.c: libmicrohttpd's access handler (cls: struct http). */
enum MHD_Result http_handler(void *cls, struct MHD_Connection *conn,
			     const char *url, const char *method,
			     const char *version, const char *upload_data,
			     size_t *upload_data_size, void **req_cls);
/* http_metrics.c: the server's own series appended to body (realloc'd;
 * on failure body is returned as it was). */
char *http_add_metrics(struct http *h, char *body, size_t *len);

#endif
