/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GET of one small document from the collector's HTTP server: HTTP/1.0
 * (the server closes after the body), every step bounded by a timeout so
 * a stuck collector shows as an error line, never as a frozen screen.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "top.h"

#define BODY_MAX (256u << 20) /* a snapshot of a very large host */

static int dial(const char *host, const char *port, int timeout_ms,
		char *err, size_t errlen)
{
	struct addrinfo hints, *res = NULL;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd = -1, e = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	int r = getaddrinfo(host && *host ? host : "localhost", port, &hints,
			    &res);
	if (r) {
		snprintf(err, errlen, "%s: %s", host, gai_strerror(r));
		return -EHOSTUNREACH;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		/* SO_SNDTIMEO bounds connect() too */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		e = errno == EINPROGRESS ? ETIMEDOUT : errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect: %s", strerror(e));
		return -e;
	}
	return fd;
}

int top_http_get(const char *host, const char *port, const char *path,
		 int timeout_ms, char **body, size_t *len, char *err,
		 size_t errlen)
{
	struct buf b;
	char req[512];
	int fd, r = 0;

	*body = NULL;
	*len = 0;
	fd = dial(host, port, timeout_ms, err, errlen);
	if (fd < 0)
		return fd;
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s\r\n"
			 "User-Agent: " TOP_PROG "\r\nAccept: application/json"
			 "\r\n\r\n", path, host && *host ? host : "localhost");
	r = write_all(fd, req, (size_t)n);
	if (r < 0) {
		snprintf(err, errlen, "send: %s", strerror(-r));
		close(fd);
		return r;
	}
	buf_init(&b);
	for (;;) {
		if (!buf_reserve(&b, 65536)) {
			r = -ENOMEM;
			break;
		}
		ssize_t got = read(fd, b.p + b.len, b.cap - b.len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = errno == EAGAIN ? -ETIMEDOUT : -errno;
			break;
		}
		if (got == 0)
			break;
		b.len += (size_t)got;
		if (b.len > BODY_MAX) {
			r = -EFBIG;
			break;
		}
	}
	close(fd);
	if (r < 0) {
		snprintf(err, errlen, "receive: %s", strerror(-r));
		buf_free(&b);
		return r;
	}
	b.p[b.len] = '\0';
	unsigned status = 0;
	char *hdr_end = strstr(b.p, "\r\n\r\n");
	if (sscanf(b.p, "HTTP/%*u.%*u %u", &status) != 1 || !hdr_end) {
		snprintf(err, errlen, "not an HTTP response");
		buf_free(&b);
		return -EPROTO;
	}
	if (status != 200) {
		char *eol = strchr(b.p, '\r');
		snprintf(err, errlen, "%s: %.*s", path,
			 (int)(eol ? eol - b.p : 40), b.p);
		buf_free(&b);
		return status == 404 ? -ENOENT : -EPROTO;
	}
	*len = b.len - (size_t)(hdr_end + 4 - b.p);
	memmove(b.p, hdr_end + 4, *len + 1);
	*body = b.p; /* the buffer's memory, handed over */
	return 0;
}
