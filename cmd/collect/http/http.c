/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /metrics (Prometheus text) and /snapshot (the last snapshot as one JSON
 * line, what taskstat-top --connect reads) over HTTP with libmicrohttpd,
 * on the socket bound in setup; HTTPS and basic authentication with
 * --web-config (webconfig.c).
 *
 * Anyone who reaches the port can open connections, so nothing a client
 * does may stop the others from being served:
 *  - one epoll thread serves every connection without blocking: a slow
 *    client costs a slot, not a thread (libmicrohttpd splits the
 *    connection limit among a pool's threads, so with two one of them
 *    could refuse connections while the table as a whole, which the
 *    shedding below watches, still had room: seen in CI);
 *  - at most HTTP_PER_IP connections per client address, HTTP_CONN_MAX
 *    in all (less if RLIMIT_NOFILE is low);
 *  - libmicrohttpd closes a connection idle for HTTP_IDLE_S; it only
 *    measures inactivity, so a watchdog thread of ours also cuts a
 *    connection whose request is not done HTTP_DEADLINE_S after it
 *    began (a client sending a byte a second);
 *  - past HTTP_SHED_AT connections, each new one sheds the oldest
 *    connection that is not being answered (waiting for a request or
 *    trickling one) and is at least HTTP_SHED_AGE_MS old: clients from
 *    many addresses cannot fill the table;
 *  - answers being sent are bounded in bytes (HTTP_INFLIGHT_MIN, or
 *    HTTP_INFLIGHT_BODIES of the answer being queued): each holds its own
 *    copy of the text, so slow readers (a scraper reading a byte at a
 *    time, or many at once) would otherwise hold a copy each until the
 *    deadline. Past the budget the oldest answer still being sent after
 *    HTTP_SLOW_MS is cut to make room; with none that old, the request
 *    gets 503 and Retry-After. Answers of cut connections, until
 *    libmicrohttpd has freed them, may take at most one budget more;
 *  - once the open connections have fallen well below their peak, the
 *    watchdog gives the heap they used back (memtrim.h): after a burst
 *    the RSS returns near its start instead of staying at its high water;
 *  - libmicrohttpd's error log (a line per refused or broken connection)
 *    goes through httplog.h: rate-limited, and never waiting for stderr's
 *    reader, so that the attack cannot stall this thread through the log.
 * The handlers only copy the last formatted text under prom_lock, a lock
 * the listener threads never take: HTTP cannot slow the receive path.
 */
#include <errno.h>
#include <malloc.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "http_gzip.h"
#include "promproto.h"
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
#define HP "taskstat_collector_http_"
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
	uint64_t cut_deadline, cut_shed, auth_failed;
	size_t inflight;              /* bytes of answers being sent */
	size_t pending;               /* ... of cut ones, until freed */
	uint64_t cut_memory, refused_memory;
	struct memtrim trim;          /* heap given back after bursts */
	struct httplog log;           /* libmicrohttpd's messages */
};

/* Under h->lock. Shut the socket: libmicrohttpd sees EOF and closes the
 * connection in its own thread. The fd stays valid: libmicrohttpd closes
 * it only after the CLOSED notification, which takes the lock. */
static void cut(struct hconn *hc)
{
	if (hc->cut)
		return;
	hc->cut = true;
	shutdown(hc->fd, SHUT_RDWR);
}

/* Under h->lock: the oldest connection not being answered, if it has
 * waited HTTP_SHED_AGE_MS (a scraper sends its request at once). */
static struct hconn *shed_victim(struct http *h, uint64_t now)
{
	struct hconn *v = NULL;

	for (struct hconn *hc = h->head.next; hc != &h->head; hc = hc->next)
		if (!hc->busy && !hc->cut &&
		    now - hc->since_ns >= HTTP_SHED_AGE_MS * 1000000ull &&
		    (!v || hc->since_ns < v->since_ns))
			v = hc;
	return v;
}

/* Under h->lock: make room for new connections (cut ones are counted
 * until libmicrohttpd has closed them). */
static void shed(struct http *h, uint64_t now)
{
	unsigned ncut = 0;

	for (struct hconn *hc = h->head.next; hc != &h->head; hc = hc->next)
		ncut += hc->cut;
	while (h->nconn - ncut > h->shed_at) {
		struct hconn *v = shed_victim(h, now);
		if (!v)
			break;
		cut(v);
		h->cut_shed++;
		ncut++;
	}
}

static void *watchdog(void *arg)
{
	struct http *h = arg;
	struct timespec ts;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&h->cond, &h->lock, &ts);
		uint64_t now = tsc_mono_ns();
		for (struct hconn *hc = h->head.next; hc != &h->head;
		     hc = hc->next) {
			if (!hc->cut && now - hc->since_ns >=
			    HTTP_DEADLINE_S * 1000000000ull) {
				cut(hc);
				h->cut_deadline++;
			}
		}
		shed(h, now);
		httplog_tick(&h->log, now);
		if (memtrim_due(&h->trim, h->nconn, now)) {
			/* unlocked: it walks every malloc arena */
			pthread_mutex_unlock(&h->lock);
			malloc_trim(0);
			pthread_mutex_lock(&h->lock);
		}
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static struct hconn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* A new TLS connection gets the current configuration (reloaded
 * certificates, client CA, min_version), before its handshake. */
static int tls_setup(struct http *h, struct MHD_Connection *conn,
		     struct hconn *hc)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);

	hc->web = tsc_web_get(h->c);
	if (!ci || !ci->tls_session || !hc->web)
		return -EIO;
	return tsc_webcfg_session(hc->web, ci->tls_session);
}

/* mTLS, behind the handshake's own check. */
static bool peer_ok(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	struct hconn *hc = conn_of(conn);

	return ci && ci->tls_session && hc && hc->web &&
	       tsc_webcfg_peer_ok(hc->web, ci->tls_session);
}

static void on_connection(void *cls, struct MHD_Connection *conn,
			  void **socket_ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct http *h = cls;
	struct hconn *hc = *socket_ctx;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		hc = calloc(1, sizeof(*hc));
		if (!hc || !ci) {
			/* untracked: only the idle timeout applies */
			free(hc);
			return;
		}
		hc->fd = ci->connect_fd;
		hc->since_ns = tsc_mono_ns();
		if (h->tls && tls_setup(h, conn, hc) < 0) {
			/* never served with the start's configuration */
			shutdown(hc->fd, SHUT_RDWR);
			hc->cut = true;
		}
		pthread_mutex_lock(&h->lock);
		hc->prev = h->head.prev;
		hc->next = &h->head;
		h->head.prev->next = hc;
		h->head.prev = hc;
		memtrim_seen(&h->trim, ++h->nconn);
		if (h->nconn > h->shed_at)
			shed(h, hc->since_ns);
		pthread_mutex_unlock(&h->lock);
		*socket_ctx = hc;
	} else if (what == MHD_CONNECTION_NOTIFY_CLOSED && hc) {
		pthread_mutex_lock(&h->lock);
		hc->prev->next = hc->next;
		hc->next->prev = hc->prev;
		h->nconn--;
		pthread_mutex_unlock(&h->lock);
		tsc_webcfg_free(hc->web);
		free(hc);
		*socket_ctx = NULL;
	}
}

static void set_busy(struct http *h, struct MHD_Connection *conn, bool busy)
{
	struct hconn *hc = conn_of(conn);
	if (!hc)
		return;
	pthread_mutex_lock(&h->lock);
	hc->busy = busy;
	if (!busy)
		hc->since_ns = tsc_mono_ns(); /* the next request's deadline */
	pthread_mutex_unlock(&h->lock);
}

static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **req_cls, enum MHD_RequestTerminationCode toe)
{
	(void)req_cls;
	(void)toe;
	set_busy(cls, conn, false);
}

/* Under h->lock: ho's connection is cut. Its bytes leave the budget's
 * count (a new scrape may take their place) but stay counted in
 * h->pending until libmicrohttpd frees the answer. */
static void cut_hold_locked(struct http *h, struct hold *ho)
{
	if (ho && !ho->released) {
		ho->released = true;
		h->inflight -= ho->len;
		h->pending += ho->len;
	}
}

/* Under h->lock: the oldest answer other than me's, being sent for
 * HTTP_SLOW_MS or more. */
static struct hconn *slow_victim(struct http *h, const struct hconn *me,
				 uint64_t now)
{
	struct hconn *v = NULL;

	for (struct hconn *hc = h->head.next; hc != &h->head; hc = hc->next)
		if (hc != me && hc->hold && !hc->hold->released && !hc->cut &&
		    now - hc->answer_ns >= HTTP_SLOW_MS * 1000000ull &&
		    (!v || hc->answer_ns < v->answer_ns))
			v = hc;
	return v;
}

/* Room for an answer of len bytes on conn (body: malloc'd, owned by the
 * hold from here on): the slowest readers cut to make it. NULL when there
 * is none (body freed). */
static struct hold *hold_answer(struct http *h, struct MHD_Connection *conn,
				char *body, size_t len)
{
	struct hconn *me = conn_of(conn);
	size_t budget = HTTP_INFLIGHT_BODIES * len;
	struct hold *ho = calloc(1, sizeof(*ho));

	if (budget < HTTP_INFLIGHT_MIN)
		budget = HTTP_INFLIGHT_MIN;
	if (!ho) {
		free(body);
		return NULL;
	}
	*ho = (struct hold){ .h = h, .body = body, .len = len };
	pthread_mutex_lock(&h->lock);
	uint64_t now = tsc_mono_ns();
	while (h->inflight + len > budget) {
		struct hconn *v = slow_victim(h, me, now);
		if (!v)
			break;
		cut(v);
		cut_hold_locked(h, v->hold);
		h->cut_memory++;
	}
	/* answers of cut connections not freed yet: at most a budget more */
	bool room = h->inflight + len <= budget &&
		    h->inflight + h->pending + len <= 2 * budget;
	if (room) {
		h->inflight += len;
		if (me) {
			me->hold = ho;
			me->answer_ns = now;
		}
	} else {
		h->refused_memory++;
	}
	pthread_mutex_unlock(&h->lock);
	if (!room) {
		free(body);
		free(ho);
		return NULL;
	}
	return ho;
}

/* libmicrohttpd is done with the answer (sent, or its connection gone). */
static void hold_free(void *cls)
{
	struct hold *ho = cls;
	struct http *h = ho->h;

	pthread_mutex_lock(&h->lock);
	if (ho->released)
		h->pending -= ho->len;
	else
		h->inflight -= ho->len;
	for (struct hconn *hc = h->head.next; hc != &h->head; hc = hc->next)
		if (hc->hold == ho)
			hc->hold = NULL;
	pthread_mutex_unlock(&h->lock);
	free(ho->body);
	free(ho);
}

/* 503: answers in flight fill their budget, none slow enough to cut. */
static enum MHD_Result busy(struct MHD_Connection *conn)
{
	static const char msg[] = "too many answers being sent; retry\n";
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	enum MHD_Result ret = MHD_queue_response(
		conn, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A short answer of ours (body malloc'd, freed here). */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     const char *type, char *body, size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A scrape's answer (/metrics, /snapshot; body malloc'd, owned from here
 * on): gzip when Accept-Encoding asks (HEAD too, so its Content-Length is
 * what a GET would get; MHD sends HEAD's headers only), held against the
 * budget of answers in flight. */
static enum MHD_Result answer(struct http *h, struct MHD_Connection *conn,
			      const char *type, char *body, size_t len)
{
	const bool metrics = strcmp(type, JSON_TYPE) != 0;
	const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
				MHD_HTTP_HEADER_ACCEPT_ENCODING);
	size_t zlen;
	char *z = http_wants_gzip(ae) ? http_gzip(body, len, &zlen) : NULL;
	if (z) {
		free(body);
		body = z;
		len = zlen;
	}
	struct hold *ho = hold_answer(h, conn, body, len);
	if (!ho)
		return busy(conn);
	struct MHD_Response *resp =
		MHD_create_response_from_buffer_with_free_callback_cls(
			len, body, hold_free, ho);
	if (!resp) {
		hold_free(ho);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	/* /metrics: text or protobuf, by Accept */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY,
				metrics ? MHD_HTTP_HEADER_ACCEPT ", "
				MHD_HTTP_HEADER_ACCEPT_ENCODING
					: MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (z)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned status,
			    const char *msg)
{
	char *b = strdup(msg);
	if (!b)
		return MHD_NO;
	return reply(conn, status, "text/plain; charset=utf-8", b, strlen(b));
}

/* 401 with WWW-Authenticate: Basic. */
static enum MHD_Result unauthorized(struct MHD_Connection *conn)
{
	static const char msg[] = "unauthorized\n";
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	enum MHD_Result ret = MHD_queue_basic_auth_fail_response(
		conn, "taskstat-collect", resp);
	MHD_destroy_response(resp);
	return ret;
}

static void auth_failed(struct http *h)
{
	pthread_mutex_lock(&h->lock);
	h->auth_failed++;
	pthread_mutex_unlock(&h->lock);
}

/* Basic authentication, with the configuration of now. */
static bool authorized(struct http *h, struct MHD_Connection *conn)
{
	struct tsc_webcfg *w = tsc_web_get(h->c);
	char *pass = NULL, *user = NULL;
	bool ok = !w || !w->nusers;

	if (!ok) {
		user = MHD_basic_auth_get_username_password(conn, &pass);
		ok = user && pass && tsc_webcfg_check(w, user, pass);
		MHD_free(user);
		MHD_free(pass);
		if (!ok)
			auth_failed(h);
	}
	tsc_webcfg_free(w);
	return ok;
}

/* The server's own series, after the snapshot's (as of this request). */
static char *add_http_metrics(struct http *h, char *body, size_t *len)
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

/*
 * /metrics in protobuf: the snapshot's native histograms, then every other
 * family of the text (with the server's own) converted. Until a snapshot
 * made the native part (the first one after the first protobuf scrape),
 * the text, as for any scraper.
 */
static enum MHD_Result metrics_protobuf(struct http *h,
					struct MHD_Connection *conn)
{
	size_t len, pblen;
	char *pbn, *body = tsc_prom_copy_pb(h->c, &len, &pbn, &pblen);
	if (body)
		body = add_http_metrics(h, body, &len);
	if (!body) {
		free(pbn);
		return MHD_NO;
	}
	if (!pbn)
		return answer(h, conn, PROM_TYPE, body, len);
	struct buf pb = { .p = pbn, .len = pblen, .cap = pblen };
	prom_text2pb(&pb, body, len);
	free(body);
	if (pb.oom) {
		buf_free(&pb);
		return MHD_NO;
	}
	return answer(h, conn, PROMPROTO_TYPE, pb.p, pb.len);
}

/*
 * /healthz: the main loop is alive, its last snapshot (or, before the
 * first, the start) no older than three intervals plus 10 s. /ready: the
 * listener is registered and self-tested and the attribution source is
 * decided, which is true once this server runs (it starts after them).
 * Both answer without credentials: they say ok or not, nothing else.
 */
static bool healthy(const struct tsc *c)
{
	uint64_t last = __atomic_load_n(&c->last_snap_mono_ns,
					__ATOMIC_RELAXED);
	uint64_t now = tsc_mono_ns(), slack = 3 * c->o->interval_ns +
					     10000000000ull;
	if (!last)
		last = c->http_start_mono_ns;
	return now < last + slack;
}

static enum MHD_Result health(struct MHD_Connection *conn, bool ready,
			      const struct tsc *c)
{
	if (ready)
		return c->rollup && c->l
			       ? text(conn, MHD_HTTP_OK, "ready\n")
			       : text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				      "not ready\n");
	return healthy(c) ? text(conn, MHD_HTTP_OK, "ok\n")
			  : text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				 "snapshots stalled\n");
}

static bool is_ready(const char *url)
{
	return !strcmp(url, "/ready") || !strcmp(url, "/-/ready");
}

static bool is_health(const char *url)
{
	return !strcmp(url, "/healthz") || !strcmp(url, "/-/healthy") ||
	       is_ready(url);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **req_cls)
{
	struct http *h = cls;
	struct tsc *c = h->c;
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	set_busy(h, conn, true);
	if (h->tls && !peer_ok(conn)) {
		auth_failed(h);
		return text(conn, MHD_HTTP_FORBIDDEN, "client certificate "
			    "required\n");
	}
	if (is_health(url) && (head || !strcmp(method, MHD_HTTP_METHOD_GET)))
		return health(conn, is_ready(url), c);
	if (!authorized(h, conn))
		return unauthorized(conn);
	if (!head && strcmp(method, MHD_HTTP_METHOD_GET))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "method not allowed\n");
	if (!strcmp(url, "/"))
		return text(conn, MHD_HTTP_OK, "taskstat-collect: metrics at "
			    "/metrics, the last snapshot (JSON) at "
			    "/snapshot, liveness at /healthz, readiness at "
			    "/ready\n");
	bool json = !strcmp(url, "/snapshot");
	if (!json && strcmp(url, "/metrics"))
		return text(conn, MHD_HTTP_NOT_FOUND, "not found; metrics "
			    "are at /metrics\n");
	size_t len;
	if (!json && http_wants_protobuf(MHD_lookup_connection_value(
			     conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT)))
		return metrics_protobuf(h, conn);
	char *body = json ? tsc_json_copy(c, &len) : tsc_prom_copy(c, &len);
	if (body && !json)
		body = add_http_metrics(h, body, &len);
	if (!body)
		return MHD_NO;
	return answer(h, conn, json ? JSON_TYPE : PROM_TYPE, body,
		     len);
}

/* What RLIMIT_NOFILE leaves for connections, at most HTTP_CONN_MAX. */
static unsigned conn_limit(void)
{
	struct rlimit rl;
	unsigned n = HTTP_CONN_MAX;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur > 128 + 64 ? (unsigned)rl.rlim_cur - 128 : 64;
	return n < HTTP_CONN_MAX ? n : HTTP_CONN_MAX;
}

static void http_free(struct http *h)
{
	tsc_webcfg_free(h->web0);
	httplog_free(&h->log);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	free(h);
}

int tsc_http_start(struct tsc *c, char *err, size_t errlen)
{
	unsigned limit = conn_limit();
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			 MHD_USE_ERROR_LOG;
	pthread_condattr_t ca;
	struct http *h;

	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	h->c = c;
	c->http_start_mono_ns = tsc_mono_ns();
	h->web0 = tsc_webcfg_ref(c->web);
	h->tls = c->web && c->web->tls;
	h->head.next = h->head.prev = &h->head;
	/* keep a quarter free for the connections that shed others */
	h->limit = limit;
	h->shed_at = limit - limit / 4;
	pthread_mutex_init(&h->lock, NULL);
	httplog_init(&h->log);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cond, &ca);
	pthread_condattr_destroy(&ca);

	/* malloc_trim() gives back the free pages inside a thread's arena
	 * but not its top chunk (glibc shrinks that only in free(), past
	 * M_TRIM_THRESHOLD), and glibc raises the threshold to twice the
	 * largest mmapped block freed (seen: 10.5 MiB, after the id table
	 * of a host churning cgroups grew): the HTTP arena's top, ~0.7 MiB
	 * after a burst, stayed resident. Fixed thresholds keep free()
	 * trimming it (and blocks over 128 KiB mmapped, given back at once). */
	mallopt(M_MMAP_THRESHOLD, HTTP_MALLOC_FIXED);
	mallopt(M_TRIM_THRESHOLD, HTTP_MALLOC_FIXED);
	/* setup's backlog is small: a burst of connections must wait in
	 * the kernel's queue, not be refused or delayed by SYN retries */
	listen(c->listen_fd, HTTP_BACKLOG);
	bool tls = h->tls;
	if (tls)
		flags |= MHD_USE_TLS;
	struct MHD_OptionItem ops[] = {
		/* first: nothing printed by libmicrohttpd's own logger */
		{ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)httplog_cb, &h->log },
		{ MHD_OPTION_LISTEN_SOCKET, c->listen_fd, NULL },
		/* one internal polling thread (see the top): no thread pool
		 * option at all, which libmicrohttpd would answer for a size
		 * of 1 with a warning that it is ignored */
		{ MHD_OPTION_CONNECTION_LIMIT, limit, NULL },
		{ MHD_OPTION_PER_IP_CONNECTION_LIMIT, HTTP_PER_IP, NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, HTTP_IDLE_S, NULL },
		{ MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_POOL_BYTES, NULL },
		{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, h },
		{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, h },
		/* the start's key pair: each connection gets the current
		 * one (tls_setup), MHD needs one to start */
		{ tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0,
		  tls ? h->web0->cert_pem : NULL },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, tls ? h->web0->key_pem : NULL },
		{ MHD_OPTION_END, 0, NULL },
	};
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, h,
				MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "cannot start the HTTP%s server",
			 tls ? "S" : "");
		http_free(h);
		return -EIO;
	}
	if (pthread_create(&h->watchdog, NULL, watchdog, h) == 0)
		h->watchdog_on = true;
	else
		tsc_warn("--listen: no request deadline "
			"(cannot start its thread); only the %u s idle "
			"timeout applies\n", HTTP_IDLE_S);
	c->http = h;
	return 0;
}

void tsc_http_stop(struct tsc *c)
{
	struct http *h = c->http;

	if (!h)
		return;
	if (h->watchdog_on) {
		pthread_mutex_lock(&h->lock);
		h->stopping = true;
		pthread_cond_signal(&h->cond);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->watchdog, NULL);
	}
	MHD_stop_daemon(h->d);
	http_free(h);
	c->http = NULL;
	c->listen_fd = -1; /* closed by MHD */
}
