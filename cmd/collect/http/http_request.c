/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a request to the scrape server is answered: /metrics (text or
 * protobuf by Accept, gzip by Accept-Encoding), /snapshot, /healthz and
 * /ready, basic authentication and client certificates (--web-config).
 * The connection plumbing and the answers' budget are http.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "http_gzip.h"
#include "http_int.h"
#include "promproto.h"

#define TEXT_TYPE "text/plain; charset=utf-8"

/* A constant text answer: 503 with Retry-After (busy) or 401 with
 * WWW-Authenticate: Basic (unauthorized). */
static enum MHD_Result canned(struct MHD_Connection *conn, bool auth,
			      const char *msg)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		strlen(msg), (void *)msg, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, TEXT_TYPE);
	enum MHD_Result ret;
	if (auth) {
		ret = MHD_queue_basic_auth_fail_response(
			conn, "taskstat-collect", resp);
	} else {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
		ret = MHD_queue_response(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
					 resp);
	}
	MHD_destroy_response(resp);
	return ret;
}

/* 503: answers in flight fill their budget, none slow enough to cut. */
static enum MHD_Result busy(struct MHD_Connection *conn)
{
	return canned(conn, false, "too many answers being sent; retry\n");
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
	struct hold *ho = http_hold_answer(h, conn, body, len);
	if (!ho)
		return busy(conn);
	struct MHD_Response *resp =
		MHD_create_response_from_buffer_with_free_callback_cls(
			len, body, http_hold_free, ho);
	if (!resp) {
		http_hold_free(ho);
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
	return reply(conn, status, TEXT_TYPE, b, strlen(b));
}

/* 401 with WWW-Authenticate: Basic. */
static enum MHD_Result unauthorized(struct MHD_Connection *conn)
{
	return canned(conn, true, "unauthorized\n");
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
		body = http_add_metrics(h, body, &len);
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
	uint64_t last = __atomic_load_n(&c->srv.last_snap_mono_ns,
					__ATOMIC_RELAXED);
	uint64_t now = tsc_mono_ns(), slack = 3 * c->o->interval_ns +
					     10000000000ull;
	if (!last)
		last = c->net.http_start_mono_ns;
	return now < last + slack;
}

static enum MHD_Result health(struct MHD_Connection *conn, bool ready,
			      const struct tsc *c)
{
	if (ready)
		return c->src.rollup && c->src.l
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

enum MHD_Result http_handler(void *cls, struct MHD_Connection *conn,
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
	http_set_busy(h, conn, true);
	if (h->tls && !http_peer_ok(conn)) {
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
		body = http_add_metrics(h, body, &len);
	if (!body)
		return MHD_NO;
	return answer(h, conn, json ? JSON_TYPE : PROM_TYPE, body,
		     len);
}

