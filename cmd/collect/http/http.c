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
 *  - connections left waiting in the listen queue for a whole watchdog
 *    tick while libmicrohttpd took none shed as many such connections
 *    (unstick()): it stops accepting at its limit, and also below it
 *    when accept() runs out of fds or memory, and resumes only once a
 *    connection closes; and its epoll loop, after a batch of exactly
 *    128 events, waits again for the next event or idle timeout before
 *    handling them, with the listen socket out of its set at the limit.
 *    Slow clients send no event and close nothing, so a scrape waited
 *    for their 5 s idle timeout;
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
 * This file is the connection plumbing; http_request.c answers requests.
 */
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_int.h"

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

/* Connections waiting in a listening TCP socket's accept queue (its
 * TCP_INFO: tcpi_unacked), 0 when unknown. */
static unsigned listen_queue(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
	    ti.tcpi_state != TCP_LISTEN)
		return 0;
	return ti.tcpi_unacked;
}

/* Under h->lock, each watchdog tick: connections waited in the listen
 * queue at the last tick and still do, and libmicrohttpd took none
 * since: it is not accepting (see the top). Shed as many connections as
 * wait, at most the quarter of the table kept free (the oldest not being
 * answered, HTTP_SHED_AGE_MS or older): a close lets it accept again,
 * and the cut is an event that ends its wait. */
static void unstick(struct http *h, uint64_t now)
{
	unsigned queued = listen_queue(h->listen_fd);
	unsigned n = queued < h->limit - h->shed_at ? queued
						    : h->limit - h->shed_at;

	if (!queued || !h->queued_seen || h->started != h->started_seen)
		n = 0;
	h->queued_seen = queued;
	h->started_seen = h->started;
	while (n--) {
		struct hconn *v = shed_victim(h, now);
		if (!v)
			break;
		cut(v);
		h->cut_shed++;
	}
}

static void *watchdog(void *arg)
{
	struct http *h = arg;
	struct timespec ts;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		/* every 100 ms while a connection is open or one waits in
		 * the listen queue; idle, once a second (a first connection
		 * signals the cond): each wake-up costs an idle collector
		 * more than the checks it makes */
		long tick_ms = h->nconn || h->queued_seen ? 100 : 1000;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += tick_ms / 1000;
		ts.tv_nsec += tick_ms % 1000 * 1000 * 1000;
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
		unstick(h, now);
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
bool http_peer_ok(struct MHD_Connection *conn)
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
		h->started++;
		if (h->nconn == 1) /* the watchdog back to its 100 ms tick */
			pthread_cond_signal(&h->cond);
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

void http_set_busy(struct http *h, struct MHD_Connection *conn, bool busy)
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
	http_set_busy(cls, conn, false);
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
struct hold *http_hold_answer(struct http *h, struct MHD_Connection *conn,
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
void http_hold_free(void *cls)
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
	c->net.http_start_mono_ns = tsc_mono_ns();
	h->web0 = tsc_webcfg_ref(c->net.web);
	h->tls = c->net.web && c->net.web->tls;
	h->head.next = h->head.prev = &h->head;
	h->listen_fd = c->net.listen_fd;
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
	listen(c->net.listen_fd, HTTP_BACKLOG);
	bool tls = h->tls;
	if (tls)
		flags |= MHD_USE_TLS;
	struct MHD_OptionItem ops[] = {
		/* first: nothing printed by libmicrohttpd's own logger */
		{ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)httplog_cb, &h->log },
		{ MHD_OPTION_LISTEN_SOCKET, c->net.listen_fd, NULL },
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
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, http_handler, h,
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
	c->net.http = h;
	return 0;
}

void tsc_http_stop(struct tsc *c)
{
	struct http *h = c->net.http;

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
	c->net.http = NULL;
	c->net.listen_fd = -1; /* closed by MHD */
}
