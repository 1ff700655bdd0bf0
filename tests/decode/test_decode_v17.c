/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct taskstats v17 (the *_delay_max_ts patch, linux-next 2026) and
 * version-0 group records, from captured-shaped messages: the real v16
 * exit of a multi-threaded process (data/v16_exit_tgid.bin, this host's
 * 6.18 kernel) re-encoded as v17 (version 17, the 560 bytes as sent, then
 * eight 16-byte timespecs at 560 + 16 * class, per the patch's
 * include/uapi/linux/taskstats.h), and with its TGID record's version set
 * to 0 as kernels before 16c4f0211aaa sent it. Offsets are this file's
 * own, not lib/decode/layout.h's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "cgstats.h"
#include "support/nlmsg.h"

#ifndef CGS_DECODE_DATA_DIR
#define CGS_DECODE_DATA_DIR "data"
#endif

#define V16 560u
#define V17 688u
#define TS_AT(c) (V16 + 16u * (unsigned)(c))

/* The real message's two payloads (PID, TGID) and ids. */
struct real {
	unsigned char pid_stats[V16], tgid_stats[V16];
	uint32_t pid, tgid;
};

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint16_t rd16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

/* Walk one AGGR nest of the captured message: its id and 560 stats. */
static void nest(const unsigned char *p, size_t n, uint32_t *id,
		 unsigned char *stats)
{
	bool got_id = false, got_stats = false;
	for (size_t off = 0; off + 4 <= n;) {
		uint16_t len = rd16(p + off), type = rd16(p + off + 2);
		assert_true(len >= 4 && off + len <= n);
		if (type == 1 || type == 2) {
			*id = rd32(p + off + 4);
			got_id = true;
		} else if (type == 3) {
			assert_int_equal(len - 4, V16);
			memcpy(stats, p + off + 4, V16);
			got_stats = true;
		}
		off += (len + 3u) & ~3u;
	}
	assert_true(got_id && got_stats);
}

static void load_real(struct real *r)
{
	static unsigned char buf[2048];
	char path[1024];
	snprintf(path, sizeof(path), "%s/v16_exit_tgid.bin",
		 CGS_DECODE_DATA_DIR);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(n, 1172);
	bool pid = false, tgid = false;
	for (size_t off = 20; off + 4 <= n;) { /* after nlmsghdr + genl */
		uint16_t len = rd16(buf + off), type = rd16(buf + off + 2);
		assert_true(len >= 4 && off + len <= n);
		if (type == 4) {
			nest(buf + off + 4, len - 4u, &r->pid, r->pid_stats);
			pid = true;
		} else if (type == 5) {
			nest(buf + off + 4, len - 4u, &r->tgid, r->tgid_stats);
			tgid = true;
		}
		off += (len + 3u) & ~3u;
	}
	assert_true(pid && tgid);
}

/* p (560 bytes of v16) as v17 with version v, the times ts[c] = {sec,
 * nsec} of every class appended. */
static void as_v17(unsigned char *out, const unsigned char *p, uint16_t v,
		   const int64_t ts[][2])
{
	memcpy(out, p, V16);
	memcpy(out, &v, 2);
	memset(out + V16, 0, V17 - V16);
	for (int c = 0; c < CGS_DELAY__COUNT; c++) {
		memcpy(out + TS_AT(c), &ts[c][0], 8);
		memcpy(out + TS_AT(c) + 8, &ts[c][1], 8);
	}
}

static int decode_flags(struct mb *m, unsigned flags, struct cgs_record *t,
			struct cgs_record *g, struct cgs_decode_stats *st)
{
	mb_finish(m);
	unsigned char *h = malloc(m->len); /* exact: ASan sees overreads */
	assert_non_null(h);
	memcpy(h, m->b, m->len);
	int r = cgs_decode_msg(h, m->len, flags, t, g, st);
	free(h);
	return r;
}

static int decode(struct mb *m, struct cgs_record *t, struct cgs_record *g,
		  struct cgs_decode_stats *st)
{
	return decode_flags(m, 0, t, g, st);
}

/* The captured pid + tgid message with both records cut to v16 (the
 * host's kernel), into m, decoded into t and g: the v16 reference. */
static void decode_v16(const struct real *r, struct mb *m,
		       struct cgs_record *t, struct cgs_record *g,
		       struct cgs_decode_stats *st)
{
	mb_init(m, 0x17, 2);
	mb_record(m, 4, 1, r->pid, r->pid_stats, V16);
	mb_record(m, 5, 2, r->tgid, r->tgid_stats, V16);
	assert_int_equal(decode(m, t, g, st), 3);
}

/* Every field but the struct's own description and the times equal. */
static void same_fields(const struct cgs_record *a, const struct cgs_record *b)
{
	struct cgs_record x = *a, y = *b;
	x.version = y.version = 0;
	x.layout = y.layout = 0;
	x.payload_len = y.payload_len = 0;
	x.fields = y.fields = 0;
	memset(x.delay_max_at_ns, 0, sizeof(x.delay_max_at_ns));
	memset(y.delay_max_at_ns, 0, sizeof(y.delay_max_at_ns));
	assert_memory_equal(&x, &y, sizeof(x));
}

static void test_v17_times(void **state)
{
	(void)state;
	struct real r;
	load_real(&r);
	/* the v16 decoding, for comparison */
	CGS_OPTS(cgs_record, t16);
	CGS_OPTS(cgs_record, g16);
	CGS_OPTS(cgs_decode_stats, st);
	struct mb m;
	decode_v16(&r, &m, &t16, &g16, &st);
	assert_int_equal(t16.version, 16);
	for (int c = 0; c < CGS_DELAY__COUNT; c++)
		assert_int_equal(t16.delay_max_at_ns[c], 0);

	/* cpu at a plain time, blkio with nsec 999999999, swapin zero (no
	 * such delay), freepages with a bad nsec (not a time: 0) */
	const int64_t ts[CGS_DELAY__COUNT][2] = {
		{ 1768489618, 123456789 }, { 1768489600, 999999999 },
		{ 0, 0 },                  { 1768489601, 1000000000 },
		{ 1, 0 },                  { 1768489602, 0 },
		{ -5, 10 },                { 1768489603, 7 },
	};
	const uint64_t want[CGS_DELAY__COUNT] = {
		1768489618123456789ull, 1768489600999999999ull, 0, 0,
		1000000000ull, 1768489602000000000ull, 0,
		1768489603000000007ull,
	};
	unsigned char p[V17], g[V17];
	as_v17(p, r.pid_stats, 17, ts);
	as_v17(g, r.tgid_stats, 17, ts);
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, gr);
	mb_init(&m, 0x17, 2);
	mb_record(&m, 4, 1, r.pid, p, V17);
	mb_record(&m, 5, 2, r.tgid, g, V17);
	assert_int_equal(decode(&m, &t, &gr, &st), 3);
	assert_int_equal(t.version, 17);
	assert_int_equal(t.layout, 17);
	assert_int_equal(t.payload_len, V17);
	assert_int_equal(t.unknown_bytes, 0);
	assert_int_equal(t.fields, t16.fields | CGS_HAS_DELAY_MAX_TS);
	assert_int_equal(cgs_taskstats_size(17), V17);
	same_fields(&t, &t16);
	same_fields(&gr, &g16);
	for (int c = 0; c < CGS_DELAY__COUNT; c++) {
		assert_int_equal(t.delay_max_at_ns[c], want[c]);
		assert_int_equal(gr.delay_max_at_ns[c], want[c]);
	}
	for (int c = CGS_DELAY__COUNT; c < CGS_DELAY_SLOTS; c++)
		assert_int_equal(t.delay_max_at_ns[c], 0);
	assert_int_equal(st.unknown_version + st.unknown_bytes +
				 st.layout_guesses + st.version0,
			 0);

	/* the listener's reuse of its records: the times of a v17 record
	 * are cleared by the next (v16) one */
	mb_init(&m, 0x17, 2);
	mb_record(&m, 4, 1, r.pid, r.pid_stats, V16);
	mb_finish(&m);
	assert_int_equal(cgs_decode_msg(m.b, m.len, CGS_DECODE_REUSE |
				       CGS_NO_TGID, &t, NULL, &st), 1);
	for (int c = 0; c < CGS_DELAY_SLOTS; c++)
		assert_int_equal(t.delay_max_at_ns[c], 0);

	/* the bare payload: the same */
	assert_int_equal(cgs_decode_payload(p, V17, CGS_KIND_THREAD, &t, &st),
			 0);
	assert_int_equal(t.delay_max_at_ns[CGS_DELAY_CPU], want[0]);
	/* shorter than v17 needs: refused */
	assert_int_equal(cgs_decode_payload(p, V17 - 1, CGS_KIND_THREAD, &t,
					    &st),
			 -EBADMSG);
}

/* Group records of older kernels: version 0, read by their size (or the
 * layout of the task record beside them) and counted. */
static void test_version0_groups(void **state)
{
	(void)state;
	struct real r;
	load_real(&r);
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, g);
	CGS_OPTS(cgs_record, g16);
	CGS_OPTS(cgs_decode_stats, st);
	struct mb m;
	decode_v16(&r, &m, &t, &g16, &st);

	/* v16 task record, v0 group record of 560 bytes */
	unsigned char g0[V17];
	memcpy(g0, r.tgid_stats, V16);
	memset(g0, 0, 2);
	mb_init(&m, 0x17, 2);
	mb_record(&m, 4, 1, r.pid, r.pid_stats, V16);
	mb_record(&m, 5, 2, r.tgid, g0, V16);
	assert_int_equal(decode(&m, &t, &g, &st), 3);
	assert_int_equal(g.version, 0);
	assert_int_equal(g.layout, 16);
	assert_int_equal(g.kind, CGS_KIND_TGID);
	assert_int_equal(g.tgid, r.tgid);
	same_fields(&g, &g16);
	assert_int_equal(st.version0, 1);
	assert_int_equal(st.layout_guesses, 1);

	/* alone (a group record with no task record beside it): by size */
	mb_init(&m, 0x17, 2);
	mb_record(&m, 5, 2, r.tgid, g0, V16);
	assert_int_equal(decode(&m, &t, &g, &st), CGS_DECODED_GROUP);
	assert_int_equal(g.layout, 16);
	same_fields(&g, &g16);
	assert_int_equal(st.version0, 2);

	/* a v17-sized version-0 group record: read as v17, its times too */
	const int64_t ts[CGS_DELAY__COUNT][2] = { { 1768489618, 5 } };
	as_v17(g0, r.tgid_stats, 0, ts);
	mb_init(&m, 0x17, 2);
	mb_record(&m, 5, 2, r.tgid, g0, V17);
	assert_int_equal(decode(&m, &t, &g, &st), CGS_DECODED_GROUP);
	assert_int_equal(g.layout, 17);
	assert_int_equal(g.delay_max_at_ns[CGS_DELAY_CPU],
			 1768489618000000005ull);
	same_fields(&g, &g16);
	assert_int_equal(st.version0, 3);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.records, 2 + 2 + 1 + 1);
}

/* CGS_DECODE_REUSE across versions: a record refilled message after
 * message (v17 with times, v16, a short v8, v15, v17, v16) holds, byte
 * for byte, what a record cleared by the decoder (no flag, garbage
 * before) holds after the same message. */
static void test_reuse_across_versions(void **state)
{
	(void)state;
	struct real r;
	load_real(&r);
	static const uint16_t seq[] = { 17, 16, 8, 15, 17, 16, 1, 16 };
	static const int64_t ts[CGS_DELAY__COUNT][2] = {
		{ 1768489618, 5 }, { 1768489619, 7 }, { 0, 0 },
		{ 1768489620, 9 }, { 1768489621, 0 }, { 0, 0 },
		{ 1768489622, 1 }, { 1768489623, 2 },
	};
	static const uint16_t sizes[18] = { [1] = 72, [8] = 328, [15] = V16,
					    [16] = V16, [17] = V17 };
	CGS_OPTS(cgs_record, rt);
	CGS_OPTS(cgs_record, rg);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		unsigned char p[V17], g[V17];
		uint16_t v = seq[i];
		as_v17(p, r.pid_stats, v, ts);
		as_v17(g, r.tgid_stats, v, ts);
		struct mb m;
		mb_init(&m, 0x17, 2);
		mb_record(&m, 4, 1, r.pid, p, sizes[v]);
		mb_record(&m, 5, 2, r.tgid, g, sizes[v]);
		struct cgs_record ft, fg;
		memset(&ft, 0xa5, sizeof(ft));
		memset(&fg, 0x5a, sizeof(fg));
		ft.sz = fg.sz = sizeof(ft);
		assert_int_equal(decode_flags(&m, CGS_DECODE_REUSE, &rt, &rg,
					      NULL),
				 3);
		assert_int_equal(decode_flags(&m, 0, &ft, &fg, NULL), 3);
		assert_int_equal(rt.version, v);
		assert_memory_equal(&rt, &ft, sizeof(ft));
		assert_memory_equal(&rg, &fg, sizeof(fg));
		if (v == 17)
			assert_int_equal(rt.delay_max_at_ns[CGS_DELAY_BLKIO],
					 1768489619000000007ull);
		else
			assert_int_equal(rt.delay_max_at_ns[CGS_DELAY_BLKIO],
					 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v17_times),
		cmocka_unit_test(test_version0_groups),
		cmocka_unit_test(test_reuse_across_versions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
