/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef TSC_HTTP_GZIP_H
#define TSC_HTTP_GZIP_H
#include <stdbool.h>
#include <stddef.h>

/**
 * http_wants_gzip() - whether an Accept-Encoding value lets us send gzip
 * @ae: the header's value, NULL when the request has none
 *
 * RFC 9110 12.5.3: "gzip" (or "x-gzip") with a q-value above 0, or "*"
 * above 0 when gzip is not named. q=0 refuses; unknown codings and bad
 * parameters are ignored (identity is then sent).
 */
bool http_wants_gzip(const char *ae);

/**
 * http_wants_protobuf() - whether an Accept value prefers the protobuf
 * exposition
 * @accept: the header's value, NULL when the request has none
 *
 * "application/vnd.google.protobuf" with exactly the parameters
 * proto=io.prometheus.client.MetricFamily and encoding=delimited (and q),
 * its q above 0 and above every text range's (text/plain, text/ *, * / *).
 * Unknown types, parameters or bad q-values leave the text (the default).
 */
bool http_wants_protobuf(const char *accept);

/**
 * http_gzip() - gzip @len bytes of @in into a new buffer
 * @in: the body
 * @len: its length
 * @outlen: the compressed length
 *
 * Return: a malloc'ed buffer the caller frees, NULL on failure (the caller
 * then sends @in uncompressed).
 */
char *http_gzip(const char *in, size_t len, size_t *outlen);
#endif
