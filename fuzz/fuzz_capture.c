/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the capture reader of taskstat-collect --replay
 * (cmd/collect/run/capture.c), fed through fmemopen() as the collector feeds it a file,
 * and every exit message it returns through the decoder, as replay does.
 *
 * Input: one mode byte, then the capture file.
 *   bit 0  recompute the header and record CRC-32s before reading, so that
 *          mutations get past the checksums and reach the length checks
 * Checked: return values, error text on failure, consistent lengths,
 * NUL-terminated paths without embedded NULs, record counters.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "capture.h"
#include "cgstats.h"

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Walk header and records as the reader would and rewrite their CRCs. */
static void fix_crcs(uint8_t *f, size_t n)
{
	size_t off;

	if (n < CAP_HDR_FIXED)
		return;
	off = rd32(f + 12);
	if (off < CAP_HDR_FIXED || off > n)
		return;
	wr32(f + 28, 0);
	wr32(f + 28, cap_crc32(0, f, off));
	while (n - off >= CAP_REC_HDR) {
		uint32_t blen = rd32(f + off + 8);

		if (blen > n - off - CAP_REC_HDR)
			return;
		wr32(f + off + 12, 0);
		wr32(f + off + 12, cap_crc32(0, f + off, CAP_REC_HDR + blen));
		off += CAP_REC_HDR + blen;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	CGS_OPTS(cgs_decode_stats, st);
	struct cap_reader *r;
	struct cap_counters ctr;
	struct cap_exit ex;
	char err[256];
	uint8_t *copy;
	FILE *f;
	int rc;

	if (size < 1)
		return 0;
	copy = malloc(size);
	CHECK(copy);
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 1)
		fix_crcs(copy, size - 1);
	/* fmemopen() refuses a zero size */
	f = fmemopen(size > 1 ? copy : (void *)"", size > 1 ? size - 1 : 1,
		     "rb");
	CHECK(f);
	if (size == 1)
		(void)fgetc(f);

	err[0] = '\0';
	rc = cap_open_stream(&r, f, err, sizeof(err));
	if (rc < 0) {
		CHECK(rc == -EBADMSG || rc == -EPROTO || rc == -EIO);
		CHECK(r == NULL && err[0] != '\0');
		free(copy);
		return 0;
	}
	CHECK(rc == 0 && r);
	CHECK(cap_hostinfo(r) != NULL);

	for (unsigned i = 0; i < 100000; i++) {
		CGS_OPTS(cgs_record, t);
		CGS_OPTS(cgs_record, g);

		err[0] = '\0';
		memset(&ex, 0, sizeof(ex));
		rc = cap_next(r, &ex, &ctr, err, sizeof(err));
		if (rc <= 0) {
			CHECK(rc == 0 || rc == -EBADMSG || rc == -EIO);
			CHECK(rc == 0 || err[0] != '\0');
			break;
		}
		CHECK(rc == CAP_REC_EXIT || rc == CAP_REC_COUNTERS);
		if (rc != CAP_REC_EXIT)
			continue;
		CHECK(ex.raw && ex.task_path && ex.group_path);
		CHECK(ex.raw_len <= size);
		CHECK(strlen(ex.task_path) <= size);
		CHECK(strlen(ex.group_path) <= size);
		(void)cgs_decode_msg(ex.raw, ex.raw_len, 0, &t, &g, &st);
	}
	CHECK(cap_records(r) + cap_skipped(r) <= size / CAP_REC_HDR);
	cap_close(r);
	free(copy);
	return 0;
}
