/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decoder's two paths give the same bytes.
 *
 * cgs_decode_msg() reads a message of the kernel's exact shape by fixed
 * offsets and walks the attributes of any other (lib/decode/msg.c). Every
 * message here is decoded three ways -- as cgs_decode_msg() does, by the
 * walk alone, by the fixed offsets alone -- into records that start out
 * alike, and the results (return value, both records, the counters) are
 * compared byte for byte. Messages of the kernel's shape (every struct
 * version, with and without a TGID record, a version-0 TGID record) must
 * be taken by the fixed offsets; messages of any other shape (an extra or
 * unknown attribute, NULL padding, a truncated or reordered message, a
 * payload longer or shorter than its version's, a flagged nest) must be
 * left to the walk. Payload bytes are pseudo-random, so every field of
 * every layout differs from its neighbours.
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
#include "decode/layout.h"
#include "support/nlmsg.h"

#define FAMILY 0x17
#define T_PID 1
#define T_TGID 2
#define T_STATS 3
#define T_AGGR_PID 4
#define T_AGGR_TGID 5
#define T_NULL 6

static const unsigned flag_sets[] = { 0, CGS_NO_TGID, CGS_DECODE_REUSE,
				      CGS_NO_TGID | CGS_DECODE_REUSE };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint8_t rnd8(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint8_t)(rng >> 24);
}

/* n pseudo-random bytes, `version` in the header; AGROUP in ac_flag as
 * asked (v2+ layouts: ac_flag at 8). */
static void payload(unsigned char *p, size_t n, uint16_t version, bool agroup)
{
	for (size_t i = 0; i < n; i++)
		p[i] = rnd8();
	memcpy(p, &version, sizeof(version));
	if (n > 8) {
		p[8] = (uint8_t)(agroup ? p[8] | CGS_AC_AGROUP
					: p[8] & ~CGS_AC_AGROUP);
	}
}

struct out {
	struct cgs_record t, g;
	struct cgs_decode_stats st;
	int rc;
};

/* The listener's own records for CGS_DECODE_REUSE, one pair per path:
 * each decodes the same sequence of messages, so they start out alike. */
static struct cgs_record reuse_t[3], reuse_g[3];

static void decode_path(const struct mb *m, size_t len, unsigned flags,
			enum cgsi_decode_path path, struct out *o)
{
	/* an exact heap copy: ASan sees a read past the end */
	unsigned char *h = malloc(len ? len : 1);
	struct cgs_record *t = &o->t, *g = &o->g;

	assert_non_null(h);
	memcpy(h, m->b, len);
	memset(o, 0, sizeof(*o));
	o->st.sz = sizeof(o->st);
	if (flags & CGS_DECODE_REUSE) {
		t = &reuse_t[path];
		g = &reuse_g[path];
	} else {
		memset(t, 0xa5, sizeof(*t)); /* the decoder clears it */
		memset(g, 0xa5, sizeof(*g));
		t->sz = g->sz = sizeof(*t);
	}
	if (path == CGSI_PATH_AUTO)
		o->rc = cgs_decode_msg(h, len, flags, t, g, &o->st);
	else
		o->rc = cgsi_decode_msg_path(h, len, flags, path, t, g,
					     &o->st);
	if (t != &o->t) {
		o->t = *t;
		o->g = *g;
	}
	free(h);
}

static void same(const struct out *a, const struct out *b, const char *what,
		 unsigned flags)
{
	if (a->rc != b->rc)
		fail_msg("%s, flags %#x: rc %d vs %d", what, flags, a->rc,
			 b->rc);
	if (a->rc > 0 && (a->rc & CGS_DECODED_TASK) &&
	    memcmp(&a->t, &b->t, sizeof(a->t)))
		fail_msg("%s, flags %#x: task records differ", what, flags);
	if (a->rc > 0 && (a->rc & CGS_DECODED_GROUP) &&
	    memcmp(&a->g, &b->g, sizeof(a->g)))
		fail_msg("%s, flags %#x: group records differ", what, flags);
	if (memcmp(&a->st, &b->st, sizeof(a->st)))
		fail_msg("%s, flags %#x: counters differ", what, flags);
}

/* m (finished) of len bytes, under every flag set: the walk and the auto
 * path agree, and the fixed offsets take it (fixed) or leave it (0). */
static void compare_len(const struct mb *m, size_t len, bool fixed,
			const char *what)
{
	for (size_t i = 0; i < sizeof(flag_sets) / sizeof(flag_sets[0]);
	     i++) {
		unsigned fl = flag_sets[i];
		struct out a, w, f;

		decode_path(m, len, fl, CGSI_PATH_AUTO, &a);
		decode_path(m, len, fl, CGSI_PATH_WALK, &w);
		decode_path(m, len, fl, CGSI_PATH_FIXED, &f);
		same(&a, &w, what, fl);
		if (fixed) {
			if (f.rc <= 0)
				fail_msg("%s, flags %#x: not taken by the "
					 "fixed offsets (%d)", what, fl, f.rc);
			same(&f, &w, what, fl);
		} else if (f.rc > 0) {
			fail_msg("%s, flags %#x: taken by the fixed offsets",
				 what, fl);
		}
	}
}

static void compare(struct mb *m, bool fixed, const char *what)
{
	mb_finish(m);
	compare_len(m, m->len, fixed, what);
}

/* The kernel's message: AGGR_PID { PID, STATS } [AGGR_TGID { TGID,
 * STATS }], payloads of n and tn bytes. */
static void kernel_msg(struct mb *m, uint16_t v, size_t n, bool agroup,
		       int tgid_v, size_t tn)
{
	unsigned char p[1024];

	mb_init(m, FAMILY, 2);
	payload(p, n, v, agroup || tgid_v >= 0);
	mb_record(m, T_AGGR_PID, T_PID, 4321, p, n);
	if (tgid_v >= 0) {
		payload(p, tn, (uint16_t)tgid_v, false);
		mb_record(m, T_AGGR_TGID, T_TGID, 4320, p, tn);
	}
}

static void test_every_version(void **state)
{
	char what[64];
	struct mb m;

	(void)state;
	for (uint16_t v = 1; v <= CGS_TASKSTATS_VERSION_MAX; v++) {
		size_t n = cgs_taskstats_size(v);

		for (int agroup = 0; agroup < 2; agroup++) {
			snprintf(what, sizeof(what), "v%u agroup %d", v,
				 agroup);
			kernel_msg(&m, v, n, agroup, -1, 0);
			compare(&m, true, what);
		}
		snprintf(what, sizeof(what), "v%u + TGID v%u", v, v);
		kernel_msg(&m, v, n, true, v, n);
		compare(&m, true, what);
		snprintf(what, sizeof(what), "v%u + TGID v0", v);
		kernel_msg(&m, v, n, true, 0, n);
		compare(&m, true, what);
	}
}

/* What the fixed offsets must leave to the walk, which then decodes it
 * (or refuses it) the same way whichever path was asked for. */
static void test_other_shapes(void **state)
{
	unsigned char p[1024];
	struct mb m;
	size_t at;

	(void)state;
	/* a TGID record of another version than its PID record's */
	kernel_msg(&m, 16, 560, true, 15, 560);
	compare(&m, false, "v16 + TGID v15");
	/* payloads longer than the version's: v14 of a 6.14-rc kernel,
	 * v16 with bytes of a newer kernel, a TGID record longer */
	kernel_msg(&m, 14, 560, false, -1, 0);
	compare(&m, false, "v14 of 560 bytes");
	kernel_msg(&m, 14, 496, false, -1, 0);
	compare(&m, false, "v14 of 496 bytes");
	kernel_msg(&m, 16, 600, false, -1, 0);
	compare(&m, false, "v16 of 600 bytes");
	kernel_msg(&m, 16, 560, true, 0, 688);
	compare(&m, false, "v16 + TGID v0 of 688 bytes");
	/* versions the table does not know */
	kernel_msg(&m, 18, 720, false, -1, 0);
	compare(&m, false, "v18");
	kernel_msg(&m, 0, 560, false, -1, 0);
	compare(&m, false, "PID record v0");
	kernel_msg(&m, 0, 328, false, 0, 328);
	compare(&m, false, "PID v0 + TGID v0");
	/* an unknown attribute after the nests, inside a nest; NULL pad */
	kernel_msg(&m, 16, 560, false, -1, 0);
	mb_put(&m, 9, &(uint32_t){ 7 }, 4);
	compare(&m, false, "unknown attribute after");
	kernel_msg(&m, 16, 560, true, 16, 560);
	mb_put(&m, T_NULL, NULL, 0);
	compare(&m, false, "NULL pad after");
	mb_init(&m, FAMILY, 2);
	payload(p, 560, 16, false);
	at = mb_nest(&m, T_AGGR_PID);
	mb_put(&m, T_PID, &(uint32_t){ 4321 }, 4);
	mb_put(&m, T_NULL, NULL, 0);
	mb_put(&m, T_STATS, p, 560);
	mb_nest_end(&m, at);
	compare(&m, false, "NULL pad before STATS");
	/* reordered: STATS before PID; the TGID nest first */
	mb_init(&m, FAMILY, 2);
	at = mb_nest(&m, T_AGGR_PID);
	mb_put(&m, T_STATS, p, 560);
	mb_put(&m, T_PID, &(uint32_t){ 4321 }, 4);
	mb_nest_end(&m, at);
	compare(&m, false, "STATS before PID");
	mb_init(&m, FAMILY, 2);
	mb_record(&m, T_AGGR_TGID, T_TGID, 4320, p, 560);
	mb_record(&m, T_AGGR_PID, T_PID, 4321, p, 560);
	compare(&m, false, "TGID nest first");
	/* a TGID record alone; top-level PID and STATS */
	mb_init(&m, FAMILY, 2);
	mb_record(&m, T_AGGR_TGID, T_TGID, 4320, p, 560);
	compare(&m, false, "TGID record alone");
	mb_init(&m, FAMILY, 2);
	mb_put(&m, T_PID, &(uint32_t){ 4321 }, 4);
	mb_put(&m, T_STATS, p, 560);
	compare(&m, false, "top-level PID and STATS");
	/* NLA_F_NESTED on the nest (the walk strips it) */
	kernel_msg(&m, 16, 560, false, -1, 0);
	m.b[23] |= 0x80;
	compare(&m, false, "NLA_F_NESTED");
	/* two PID records */
	kernel_msg(&m, 16, 560, false, -1, 0);
	mb_record(&m, T_AGGR_PID, T_PID, 4322, p, 560);
	compare(&m, false, "two PID records");
	/* nlmsg_len past the nest (trailing bytes shorter than a header) */
	kernel_msg(&m, 8, 328, false, -1, 0);
	m.len += 2;
	compare(&m, false, "2 trailing bytes");
}

/* Truncated: nlmsg_len cut short of the attributes it announces, and the
 * buffer cut short of nlmsg_len; a wrong PID attribute length. */
static void test_truncated(void **state)
{
	char what[64];
	struct mb m;

	(void)state;
	for (uint16_t v = 1; v <= CGS_TASKSTATS_VERSION_MAX; v += 3) {
		size_t n = cgs_taskstats_size(v);
		size_t cuts[] = { 20, 24, 36, 38, 36 + n - 8, 36 + n - 1,
				  36 + n + 16, 36 + 2 * n + 15 };

		kernel_msg(&m, v, n, true, v, n);
		mb_finish(&m);
		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			struct mb c = m;
			uint32_t l = (uint32_t)cuts[i];

			snprintf(what, sizeof(what), "v%u len %u", v, l);
			memcpy(c.b, &l, 4); /* nlmsg_len cut */
			compare_len(&c, l, false, what);
			/* the buffer cut, nlmsg_len not */
			compare_len(&m, l, false, what);
		}
	}
	kernel_msg(&m, 16, 560, false, -1, 0);
	m.b[24] = 6; /* PID attribute of 6 bytes */
	compare(&m, false, "PID attribute of 6 bytes");
}

/* A sequence through the same reused records, as the listener decodes:
 * a v0 TGID record after a v17 one, a short layout after a long one. */
static void test_sequence(void **state)
{
	static const uint16_t seq[] = { 17, 16, 8, 15, 1, 17, 12, 16 };
	char what[64];
	struct mb m;

	(void)state;
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		size_t n = cgs_taskstats_size(seq[i]);
		/* every third with a TGID record, of version 0 or its own */
		int tgid_v = i % 3 ? -1 : (i & 1 ? seq[i] : 0);

		snprintf(what, sizeof(what), "sequence %zu (v%u)", i, seq[i]);
		kernel_msg(&m, seq[i], n, i & 1, tgid_v, n);
		compare(&m, true, what);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_version),
		cmocka_unit_test(test_other_shapes),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_sequence),
	};

	for (unsigned i = 0; i < 3; i++)
		reuse_t[i].sz = reuse_g[i].sz = sizeof(reuse_t[i]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
