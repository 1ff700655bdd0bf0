/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "capture.h"

/* CRC-32 (IEEE 802.3, reflected, as gzip's): zlib's */
uint32_t cap_crc32(uint32_t crc, const void *p, size_t n)
{
	return (uint32_t)crc32_z(crc, p, n);
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

void cap_encode_header(struct buf *b, uint64_t created_ns, unsigned shards,
		       const char *hostinfo)
{
	size_t info = hostinfo ? strlen(hostinfo) : 0;
	size_t len = CAP_HDR_FIXED + info;
	if (len > CAP_BODY_MAX) {
		info = CAP_BODY_MAX - CAP_HDR_FIXED;
		len = CAP_BODY_MAX;
	}
	if (!buf_reserve(b, len))
		return;
	unsigned char *h = (unsigned char *)b->p + b->len;
	memcpy(h, CAP_MAGIC, 8);
	put32(h + 8, CAP_VERSION);
	put32(h + 12, (uint32_t)len);
	put64(h + 16, created_ns);
	put32(h + 24, shards);
	put32(h + 28, 0);
	memcpy(h + CAP_HDR_FIXED, hostinfo ? hostinfo : "", info);
	put32(h + 28, cap_crc32(0, h, len));
	b->len += len;
	b->p[b->len] = '\0';
}

static unsigned char *rec_begin(struct buf *b, uint32_t type, size_t body)
{
	if (!buf_reserve(b, CAP_REC_HDR + body))
		return NULL;
	unsigned char *h = (unsigned char *)b->p + b->len;
	put32(h, CAP_REC_MARKER);
	put32(h + 4, type);
	put32(h + 8, (uint32_t)body);
	put32(h + 12, 0);
	return h;
}

static void rec_end(struct buf *b, unsigned char *h, size_t body)
{
	put32(h + 12, cap_crc32(0, h, CAP_REC_HDR + body));
	b->len += CAP_REC_HDR + body;
	b->p[b->len] = '\0';
}

int cap_encode_exit(struct buf *b, uint64_t recv_ns, unsigned shard,
		    const void *raw, size_t raw_len, const char *task_path,
		    const char *group_path)
{
	size_t tl = task_path ? strlen(task_path) : 0;
	size_t gl = group_path ? strlen(group_path) : 0;
	if (tl > CAP_PATH_MAX || gl > CAP_PATH_MAX)
		return -E2BIG;
	size_t body = 24 + raw_len + tl + gl;
	if (body > CAP_BODY_MAX)
		return -E2BIG;
	unsigned char *h = rec_begin(b, CAP_REC_EXIT, body);
	if (!h)
		return -ENOMEM;
	unsigned char *p = h + CAP_REC_HDR;
	put64(p, recv_ns);
	put32(p + 8, shard);
	put32(p + 12, (uint32_t)raw_len);
	put16(p + 16, (uint16_t)tl);
	put16(p + 18, (uint16_t)gl);
	put32(p + 20, 0);
	memcpy(p + 24, raw, raw_len);
	memcpy(p + 24 + raw_len, task_path ? task_path : "", tl);
	memcpy(p + 24 + raw_len + tl, group_path ? group_path : "", gl);
	rec_end(b, h, body);
	return 0;
}

void cap_encode_counters(struct buf *b, const struct cap_counters *c)
{
	const size_t body = 48;
	unsigned char *h = rec_begin(b, CAP_REC_COUNTERS, body);
	if (!h)
		return;
	unsigned char *p = h + CAP_REC_HDR;
	put64(p, c->time_ns);
	put64(p + 8, c->dropped);
	put64(p + 16, c->malformed);
	put64(p + 24, c->enobufs);
	put64(p + 32, c->seq_gaps);
	put64(p + 40, c->truncated);
	rec_end(b, h, body);
}

struct cap_reader {
	FILE *f;
	uint64_t off;      /* file offset of the next record */
	uint64_t records;  /* returned */
	uint64_t skipped;  /* unknown types */
	uint64_t created_ns;
	char *hostinfo;
	unsigned char *body;
	size_t body_cap;
	char *paths;       /* NUL-terminated copies of the two paths */
	size_t paths_cap;
};

/* Read exactly n bytes; returns n, or the short count at EOF, or -errno. */
static long read_n(FILE *f, void *p, size_t n)
{
	size_t got = fread(p, 1, n, f);
	if (got < n && ferror(f))
		return -EIO;
	return (long)got;
}

int cap_open_stream(struct cap_reader **out, FILE *f, char *err,
		    size_t errlen)
{
	unsigned char h[CAP_HDR_FIXED];
	struct cap_reader *r;
	long n;

	*out = NULL;
	n = read_n(f, h, sizeof(h));
	if (n < 0) {
		snprintf(err, errlen, "read error: %s", strerror(-(int)n));
		fclose(f);
		return (int)n;
	}
	if (n < 8 || memcmp(h, CAP_MAGIC, 8)) {
		snprintf(err, errlen, "not a taskstat-collect capture (bad "
			 "magic)");
		fclose(f);
		return -EBADMSG;
	}
	if (n < (long)CAP_HDR_FIXED) {
		snprintf(err, errlen, "truncated header (%ld of %u bytes)", n,
			 CAP_HDR_FIXED);
		fclose(f);
		return -EBADMSG;
	}
	uint32_t version = get32(h + 8);
	if (version != CAP_VERSION) {
		snprintf(err, errlen, "capture format version %" PRIu32
			 " is not supported (this build reads version %u)",
			 version, CAP_VERSION);
		fclose(f);
		return -EPROTO;
	}
	uint32_t hlen = get32(h + 12);
	if (hlen < CAP_HDR_FIXED || hlen > CAP_BODY_MAX) {
		snprintf(err, errlen, "corrupt header (length %" PRIu32 ")",
			 hlen);
		fclose(f);
		return -EBADMSG;
	}
	r = calloc(1, sizeof(*r));
	unsigned char *full = malloc(hlen);
	if (!r || !full) {
		free(r);
		free(full);
		fclose(f);
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	memcpy(full, h, CAP_HDR_FIXED);
	n = read_n(f, full + CAP_HDR_FIXED, hlen - CAP_HDR_FIXED);
	if (n != (long)(hlen - CAP_HDR_FIXED)) {
		snprintf(err, errlen, "truncated header (%ld of %" PRIu32
			 " bytes)", n < 0 ? 0 : n + (long)CAP_HDR_FIXED, hlen);
		goto bad;
	}
	uint32_t crc = get32(full + 28);
	put32(full + 28, 0);
	if (cap_crc32(0, full, hlen) != crc) {
		snprintf(err, errlen, "corrupt header (checksum mismatch)");
		goto bad;
	}
	r->hostinfo = strndup((char *)full + CAP_HDR_FIXED,
			      hlen - CAP_HDR_FIXED);
	if (!r->hostinfo) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto bad;
	}
	r->f = f;
	r->off = hlen;
	r->created_ns = get64(full + 16);
	free(full);
	*out = r;
	return 0;
bad:
	free(full);
	free(r);
	fclose(f);
	return -EBADMSG;
}

int cap_open(struct cap_reader **out, const char *path, char *err,
	     size_t errlen)
{
	FILE *f = fopen(path, "rbe");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s", strerror(e));
		*out = NULL;
		return -e;
	}
	return cap_open_stream(out, f, err, errlen);
}

void cap_close(struct cap_reader *r)
{
	if (!r)
		return;
	fclose(r->f);
	free(r->hostinfo);
	free(r->body);
	free(r->paths);
	free(r);
}

uint64_t cap_created_ns(const struct cap_reader *r) { return r->created_ns; }
const char *cap_hostinfo(const struct cap_reader *r) { return r->hostinfo; }
uint64_t cap_records(const struct cap_reader *r) { return r->records; }
uint64_t cap_skipped(const struct cap_reader *r) { return r->skipped; }

static bool grow(unsigned char **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap : 4096;
	while (c < need)
		c *= 2;
	void *n = realloc(*p, c);
	if (!n)
		return false;
	*p = n;
	*cap = c;
	return true;
}

#define FAIL(code, ...)                                                     \
	do {                                                                \
		int _l = snprintf(err, errlen, "record %" PRIu64            \
				  " at offset %" PRIu64 ": ",               \
				  r->records + r->skipped + 1, r->off);     \
		if (_l >= 0 && (size_t)_l < errlen)                         \
			snprintf(err + _l, errlen - (size_t)_l, __VA_ARGS__); \
		return (code);                                              \
	} while (0)

int cap_next(struct cap_reader *r, struct cap_exit *ex,
	     struct cap_counters *ctr, char *err, size_t errlen)
{
	unsigned char h[CAP_REC_HDR];

	for (;;) {
		long n = read_n(r->f, h, sizeof(h));
		if (n < 0)
			FAIL(-EIO, "read error");
		if (n == 0)
			return 0;
		if (n < (long)CAP_REC_HDR)
			FAIL(-EBADMSG, "truncated record header (%ld of %u "
			     "bytes; the file ends early)", n, CAP_REC_HDR);
		if (get32(h) != CAP_REC_MARKER)
			FAIL(-EBADMSG, "bad record marker (corrupt file)");
		uint32_t type = get32(h + 4);
		uint32_t blen = get32(h + 8);
		uint32_t crc = get32(h + 12);
		if (blen > CAP_BODY_MAX)
			FAIL(-EBADMSG, "record length %" PRIu32 " out of range "
			     "(corrupt file)", blen);
		if (!grow(&r->body, &r->body_cap, CAP_REC_HDR + blen))
			FAIL(-ENOMEM, "%s", strerror(ENOMEM));
		n = read_n(r->f, r->body + CAP_REC_HDR, blen);
		if (n < 0)
			FAIL(-EIO, "read error");
		if (n < (long)blen)
			FAIL(-EBADMSG, "truncated record (%ld of %" PRIu32
			     " body bytes; the file ends early)", n, blen);
		memcpy(r->body, h, CAP_REC_HDR);
		put32(r->body + 12, 0);
		if (cap_crc32(0, r->body, CAP_REC_HDR + blen) != crc)
			FAIL(-EBADMSG, "checksum mismatch (corrupt record)");
		const unsigned char *b = r->body + CAP_REC_HDR;
		if (type == CAP_REC_EXIT) {
			if (blen < 24)
				FAIL(-EBADMSG, "exit record too short (%" PRIu32
				     " bytes)", blen);
			uint32_t raw_len = get32(b + 12);
			uint16_t tl = get16(b + 16), gl = get16(b + 18);
			if ((uint64_t)24 + raw_len + tl + gl != blen)
				FAIL(-EBADMSG, "inconsistent lengths in exit "
				     "record");
			if (!grow((unsigned char **)&r->paths, &r->paths_cap,
				  (size_t)tl + gl + 2))
				FAIL(-ENOMEM, "%s", strerror(ENOMEM));
			memcpy(r->paths, b + 24 + raw_len, tl);
			r->paths[tl] = '\0';
			memcpy(r->paths + tl + 1, b + 24 + raw_len + tl, gl);
			r->paths[tl + 1 + gl] = '\0';
			if (memchr(r->paths, '\0', tl) ||
			    memchr(r->paths + tl + 1, '\0', gl))
				FAIL(-EBADMSG, "NUL byte in a cgroup path");
			ex->recv_ns = get64(b);
			ex->shard = get32(b + 8);
			ex->raw = b + 24;
			ex->raw_len = raw_len;
			ex->task_path = r->paths;
			ex->group_path = r->paths + tl + 1;
		} else if (type == CAP_REC_COUNTERS) {
			if (blen < 48)
				FAIL(-EBADMSG, "counters record too short (%"
				     PRIu32 " bytes)", blen);
			ctr->time_ns = get64(b);
			ctr->dropped = get64(b + 8);
			ctr->malformed = get64(b + 16);
			ctr->enobufs = get64(b + 24);
			ctr->seq_gaps = get64(b + 32);
			ctr->truncated = get64(b + 40);
		}
		r->off += CAP_REC_HDR + blen;
		if (type != CAP_REC_EXIT && type != CAP_REC_COUNTERS) {
			r->skipped++;
			continue;
		}
		r->records++;
		return (int)type;
	}
}
