/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: cgs_decode_msg() and cgs_decode_payload().
 *
 * Input: one control byte, then the bytes to decode.
 *   bit 0     CGS_NO_TGID
 *   bits 1-3  misalignment (0..7) of the copy handed to the decoder
 *   bit 7     decode as a bare payload (cgs_decode_payload) instead of a
 *             netlink message; bits 4-5 then pick the record kind
 * The copy is malloc'ed at exactly its size so ASan sees any read past the
 * end. Besides "no crash", the target checks what the API promises: return
 * values, counters, NUL-terminated comm, lengths, independence from
 * alignment, that NO_TGID changes nothing in the task record, that a
 * message cut short (a datagram larger than the receive slot) is never
 * read as a record, that v17's times appear only from its layout, and
 * that CGS_DECODE_REUSE into records filled before gives the same bytes,
 * and that the fixed offsets of the kernel's own message shape give what
 * the attribute walk gives (cgsi_decode_msg_path()).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "cgstats.h"
#include "decode/layout.h"

static void check_record(const struct cgs_record *r, size_t max_len)
{
	CHECK(r->comm[CGS_COMM_LEN] == '\0');
	CHECK(r->payload_len <= max_len);
	CHECK(r->unknown_bytes <= r->payload_len);
	CHECK(r->layout != 0);
	if (r->kind == CGS_KIND_TGID)
		CHECK(r->pid == 0);
	/* times of the maxima: only from the v17 layout (or a newer one
	 * read by its prefix), never in the slots no kernel fills */
	for (unsigned c = 0; c < CGS_DELAY_SLOTS; c++)
		CHECK(!r->delay_max_at_ns[c] ||
		      (c < cgs_delay_classes() &&
		       (r->fields & CGS_HAS_DELAY_MAX_TS)));
}

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* A message larger than the receive slot arrives cut to the slot (the
 * listener counts MSG_TRUNC and drops it; a caller that does not check
 * hands the prefix over): every prefix shorter than nlmsg_len is refused,
 * never read as a record. */
static int decode_at(const uint8_t *src, size_t len, unsigned off,
		     unsigned flags, struct cgs_record *t,
		     struct cgs_record *g, struct cgs_decode_stats *st);
static void fuzz_cut(const uint8_t *m, size_t len, unsigned ctl)
{
	if (len < 16)
		return;
	size_t want = ld32(m);
	size_t cuts[3] = { len / 2, len - 1 - (ctl % (len - 1)), 1024 };
	for (int k = 0; k < 3; k++) {
		size_t cut = cuts[k];
		if (cut >= len || cut >= want)
			continue;
		CGS_OPTS(cgs_record, t);
		CGS_OPTS(cgs_record, g);
		CGS_OPTS(cgs_decode_stats, st);
		int rc = decode_at(m, cut, 0, 0, &t, &g, &st);
		CHECK(rc == -EBADMSG || rc == -ENOMSG);
		CHECK(st.records == 0);
	}
}

static int decode_at(const uint8_t *src, size_t len, unsigned off,
		     unsigned flags, struct cgs_record *t,
		     struct cgs_record *g, struct cgs_decode_stats *st)
{
	uint8_t *mem = malloc(off + len + 1);
	int rc;

	CHECK(mem);
	memcpy(mem + off, src, len);
	rc = cgs_decode_msg(mem + off, len, flags, t, g, st);
	free(mem);
	return rc;
}

/* The walk alone gives the bytes cgs_decode_msg() gave (t, g, st, rc),
 * and so do the fixed offsets when they take the message. */
static void fuzz_paths(const uint8_t *m, size_t len, unsigned flags, int rc,
		       const struct cgs_record *t, const struct cgs_record *g,
		       const struct cgs_decode_stats *st)
{
	for (int path = CGSI_PATH_WALK; path <= CGSI_PATH_FIXED; path++) {
		CGS_OPTS(cgs_record, pt);
		CGS_OPTS(cgs_record, pg);
		CGS_OPTS(cgs_decode_stats, pst);
		uint8_t *h = malloc(len ? len : 1);
		int prc;

		CHECK(h);
		memcpy(h, m, len);
		memset(&pt, 0x5a, sizeof(pt));
		memset(&pg, 0x5a, sizeof(pg));
		pt.sz = pg.sz = sizeof(pt);
		prc = cgsi_decode_msg_path(h, len, flags, path, &pt, &pg,
					   &pst);
		free(h);
		if (path == CGSI_PATH_FIXED && prc == 0)
			continue; /* not the kernel's shape: walked */
		CHECK(prc == rc);
		CHECK(!memcmp(&pst, st, sizeof(pst)));
		if (rc > 0 && (rc & 1))
			CHECK(!memcmp(&pt, t, sizeof(pt)));
		if (rc > 0 && (rc & 2))
			CHECK(!memcmp(&pg, g, sizeof(pg)));
	}
}

static void fuzz_msg(const uint8_t *m, size_t len, unsigned ctl)
{
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, g);
	CGS_OPTS(cgs_record, t2);
	CGS_OPTS(cgs_record, g2);
	CGS_OPTS(cgs_record, t3);
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_decode_stats, st2);
	unsigned off = (ctl >> 1) & 7, flags = ctl & 1;
	int rc, rc2, rc3;

	memset(&t, 0xa5, sizeof(t));
	memset(&g, 0xa5, sizeof(g));
	t.sz = g.sz = sizeof(t);
	rc = decode_at(m, len, off, flags, &t, &g, &st);
	/* 0 (nothing filled) only for a TGID-only message with NO_TGID,
	 * which st->tgid_skipped counts */
	CHECK(rc == -EBADMSG || rc == -ENOMSG || (rc >= 1 && rc <= 3) ||
	      (rc == 0 && flags && st.tgid_skipped == 1));
	CHECK(st.messages == 1);
	CHECK(st.malformed == (rc == -EBADMSG));
	if (rc > 0)
		CHECK(st.records == (uint64_t)__builtin_popcount((unsigned)rc));
	CHECK(st.version0 <= st.records && st.version0 <= st.layout_guesses);
	fuzz_cut(m, len, ctl);
	fuzz_paths(m, len, flags, rc, &t, &g, &st);
	if (flags)
		CHECK(rc <= 0 || !(rc & 2));
	if (rc > 0 && (rc & 1)) {
		check_record(&t, len);
		CHECK(t.kind == CGS_KIND_THREAD || t.kind == CGS_KIND_PROCESS);
	}
	if (rc > 0 && (rc & 2)) {
		check_record(&g, len);
		CHECK(g.kind == CGS_KIND_TGID);
	}

	/* another alignment gives the same answer, byte for byte */
	memset(&t2, 0xa5, sizeof(t2));
	memset(&g2, 0xa5, sizeof(g2));
	rc2 = decode_at(m, len, (off + 3) & 7, flags, &t2, &g2, &st2);
	CHECK(rc2 == rc);
	if (rc > 0 && (rc & 1))
		CHECK(!memcmp(&t, &t2, sizeof(t)));
	if (rc > 0 && (rc & 2))
		CHECK(!memcmp(&g, &g2, sizeof(g)));

	/* CGS_DECODE_REUSE into records the earlier inputs filled (as the
	 * listener's own): byte for byte what the cleared decode gives */
	static struct cgs_record kt = { .sz = sizeof(kt) },
				 kg = { .sz = sizeof(kg) };
	rc2 = decode_at(m, len, off, flags | CGS_DECODE_REUSE, &kt, &kg,
			NULL);
	CHECK(rc2 == rc);
	if (rc > 0 && (rc & 1))
		CHECK(!memcmp(&t, &kt, sizeof(t)));
	if (rc > 0 && (rc & 2))
		CHECK(!memcmp(&g, &kg, sizeof(g)));

	/* skipping TGID records never changes (or loses) the task record,
	 * except the tgid that pre-v12 structs only get from the nest */
	if (!flags && rc > 0 && (rc & 1)) {
		rc3 = decode_at(m, len, off, CGS_NO_TGID, &t3, NULL,
				NULL);
		CHECK(rc3 == 1);
		t3.tgid = t.tgid;
		CHECK(!memcmp(&t, &t3, sizeof(t)));
	}
}

static void fuzz_payload(const uint8_t *p, size_t len, unsigned ctl)
{
	static const enum cgs_kind kinds[4] = { CGS_KIND_THREAD,
		CGS_KIND_PROCESS, CGS_KIND_TGID, CGS_KIND_THREAD };
	enum cgs_kind kind = kinds[(ctl >> 4) & 3];
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, r);
	uint8_t *mem = malloc(len + 8);
	unsigned off = (ctl >> 1) & 7;
	int rc;

	CHECK(mem);
	memcpy(mem + off, p, len);
	rc = cgs_decode_payload(mem + off, len, kind, &r, &st);
	free(mem);
	CHECK(rc == 0 || rc == -EBADMSG);
	CHECK(st.malformed == (rc != 0));
	if (rc == 0) {
		check_record(&r, len);
		CHECK(r.payload_len == len);
		CHECK(r.kind == kind);
		CHECK(st.unknown_bytes == r.unknown_bytes);
		if (r.version >= 1 && r.version <= CGS_TASKSTATS_VERSION_MAX)
			CHECK(len >= cgs_taskstats_size(r.version));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 0x80)
		fuzz_payload(data + 1, size - 1, data[0]);
	else
		fuzz_msg(data + 1, size - 1, data[0]);
	return 0;
}
