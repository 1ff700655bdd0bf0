/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /metrics (Prometheus text) and /snapshot (the last snapshot as one JSON
 * line, what taskstat-top --connect reads) over HTTP with libmicrohttpd,
 * on the socket bound in setup. */
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define JSON_TYPE "application/json"

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     const char *type, char *body, size_t len,
			     bool head)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	/* HEAD: MHD sends the headers (with Content-Length) and no body. */
	(void)head;
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

static enum MHD_Result text(struct MHD_Connection *conn, unsigned status,
			    const char *msg, bool head)
{
	char *b = strdup(msg);
	if (!b)
		return MHD_NO;
	return reply(conn, status, "text/plain; charset=utf-8", b, strlen(b),
		     head);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **req_cls)
{
	struct tsc *c = cls;
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);

	if (!head && strcmp(method, MHD_HTTP_METHOD_GET))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "method not allowed\n", false);
	if (!strcmp(url, "/"))
		return text(conn, MHD_HTTP_OK, "taskstat-collect: metrics at "
			    "/metrics, the last snapshot (JSON) at "
			    "/snapshot\n", head);
	bool json = !strcmp(url, "/snapshot");
	if (!json && strcmp(url, "/metrics"))
		return text(conn, MHD_HTTP_NOT_FOUND, "not found; metrics "
			    "are at /metrics\n", head);
	size_t len;
	char *body = json ? tsc_json_copy(c, &len) : tsc_prom_copy(c, &len);
	if (!body)
		return MHD_NO;
	return reply(conn, MHD_HTTP_OK, json ? JSON_TYPE : PROM_TYPE, body,
		     len, head);
}

int tsc_http_start(struct tsc *c, char *err, size_t errlen)
{
	struct MHD_Daemon *d;

	d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG,
			     0, NULL, NULL, handler, c,
			     MHD_OPTION_LISTEN_SOCKET, (MHD_socket)c->listen_fd,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
			     MHD_OPTION_END);
	if (!d) {
		snprintf(err, errlen, "cannot start the HTTP server");
		return -EIO;
	}
	c->http = (struct http *)d;
	return 0;
}

void tsc_http_stop(struct tsc *c)
{
	if (!c->http)
		return;
	MHD_stop_daemon((struct MHD_Daemon *)c->http);
	c->http = NULL;
	c->listen_fd = -1; /* closed by MHD */
}
