// SPDX-License-Identifier: LGPL-2.1-or-later
/* gzip Content-Encoding for the scrape endpoints (zlib). */
#include "http_gzip.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* The q of one element's parameters ("; q=0.5"), 1 when none, -1 bad. */
static double qvalue(const char *p, const char *end)
{
	double q = 1;

	while (p < end) {
		while (p < end && (*p == ';' || isspace((unsigned char)*p)))
			p++;
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') &&
		    p[1] == '=') {
			char *e;
			q = strtod(p + 2, &e);
			if (e == p + 2 || q < 0 || q > 1)
				return -1;
			p = e;
		}
		while (p < end && *p != ';')
			p++;
	}
	return q;
}

bool http_wants_gzip(const char *ae)
{
	double gz = -1, star = -1;

	while (ae && *ae) {
		const char *end = strchr(ae, ',');
		if (!end)
			end = ae + strlen(ae);
		while (ae < end && isspace((unsigned char)*ae))
			ae++;
		size_t n = 0;
		while (ae + n < end && ae[n] != ';' &&
		       !isspace((unsigned char)ae[n]))
			n++;
		double q = qvalue(ae + n, end);
		if (q >= 0) {
			if ((n == 4 && !strncasecmp(ae, "gzip", 4)) ||
			    (n == 6 && !strncasecmp(ae, "x-gzip", 6)))
				gz = q;
			else if (n == 1 && *ae == '*')
				star = q;
		}
		ae = *end ? end + 1 : end;
	}
	return gz >= 0 ? gz > 0 : star > 0;
}

/* Whether p[0..n) is "name=value" (value bare or quoted, any case). */
static bool param_is(const char *p, size_t n, const char *name,
		     const char *value)
{
	size_t k = strlen(name), v = strlen(value);
	if (n < k + 1 || strncasecmp(p, name, k) || p[k] != '=')
		return false;
	p += k + 1;
	n -= k + 1;
	if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
		p++;
		n -= 2;
	}
	return n == v && !strncasecmp(p, value, v);
}

/* The protobuf range's parameters: proto and encoding as we serve them,
 * q; anything else (or a different value) and it is not ours. */
static bool protobuf_params(const char *p, const char *end)
{
	bool proto = false, enc = false;
	while (p < end) {
		while (p < end && (*p == ';' || isspace((unsigned char)*p)))
			p++;
		size_t n = 0;
		while (p + n < end && p[n] != ';' &&
		       !isspace((unsigned char)p[n]))
			n++;
		if (!n)
			break;
		if (param_is(p, n, "proto", "io.prometheus.client.MetricFamily"))
			proto = true;
		else if (param_is(p, n, "encoding", "delimited"))
			enc = true;
		else if (!(n >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '='))
			return false;
		p += n;
	}
	return proto && enc;
}

bool http_wants_protobuf(const char *accept)
{
	static const char pb[] = "application/vnd.google.protobuf";
	double qpb = 0, qtext = 0;

	while (accept && *accept) {
		const char *end = strchr(accept, ',');
		if (!end)
			end = accept + strlen(accept);
		while (accept < end && isspace((unsigned char)*accept))
			accept++;
		size_t n = 0;
		while (accept + n < end && accept[n] != ';' &&
		       !isspace((unsigned char)accept[n]))
			n++;
		double q = qvalue(accept + n, end);
		if (q >= 0) {
			if (n == sizeof(pb) - 1 && !strncasecmp(accept, pb, n)) {
				if (protobuf_params(accept + n, end) && q > qpb)
					qpb = q;
			} else if ((n == 10 && !strncasecmp(accept, "text/plain",
							    10)) ||
				   (n == 6 && !strncasecmp(accept, "text/*", 6)) ||
				   (n == 3 && !strncmp(accept, "*/*", 3))) {
				if (q > qtext)
					qtext = q;
			}
		}
		accept = *end ? end + 1 : end;
	}
	return qpb > 0 && qpb > qtext;
}

char *http_gzip(const char *in, size_t len, size_t *outlen)
{
	z_stream z = { 0 };
	/* 15 + 16: the gzip wrapper; level 1, a scrape's text compresses
	 * ~10x at it and costs a fraction of level 6's CPU */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	size_t cap = deflateBound(&z, len);
	char *out = malloc(cap ? cap : 1);
	if (!out) {
		deflateEnd(&z);
		return NULL;
	}
	z.next_in = (Bytef *)in;
	z.next_out = (Bytef *)out;
	z.avail_out = cap;
	int rc = Z_OK;
	/* avail_in is 32 bits: feed a large body in pieces */
	while (rc == Z_OK) {
		size_t left = len - (size_t)((const char *)z.next_in - in);
		z.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
		rc = deflate(&z, left > (1u << 30) ? Z_NO_FLUSH : Z_FINISH);
	}
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	*outlen = z.total_out;
	return out;
}
