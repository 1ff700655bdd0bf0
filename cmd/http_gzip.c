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
