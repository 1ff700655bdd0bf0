/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The record <-> kernel entry join (lib/attribute/kjoin.c) with synthetic
 * entries: what pairs, what must never pair (a reused pid, a stale entry
 * whose record was dropped, another thread group, a task scheduled in a
 * way the record contradicts), candidate choice, expiry and eviction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "attribute/kjoin.h"

#define SEC 1000000000ull

/* A task that started at start_ns, ended (per the record) end_ns later. */
static struct cgs_record rec_of(uint32_t tid, uint32_t tgid, uint64_t start,
				uint64_t life_ns, uint64_t pcount,
				uint64_t run_delay)
{
	CGS_OPTS(cgs_record, r);
	r.kind = CGS_KIND_THREAD;
	r.fields = CGS_HAS_DELAY | CGS_HAS_BASIC | CGS_HAS_CTXSW |
		   CGS_HAS_BTIME64 | CGS_HAS_TGID;
	r.pid = tid;
	r.tgid = tgid;
	r.etime_us = life_ns / 1000;
	r.btime_s = (start + 100 * SEC) / SEC; /* real = mono + 100 s */
	r.delay[CGS_DELAY_CPU].count = pcount;
	r.delay[CGS_DELAY_CPU].total_ns = run_delay;
	r.nvcsw = pcount > 0 ? pcount - 1 : 0;
	r.minflt = 40;
	return r;
}

/* Its entry, taken gap_ns after the record. */
static struct cgsi_kentry ent_of(const struct cgs_record *r, uint64_t start,
				 uint64_t gap_ns, uint64_t cgid)
{
	struct cgsi_kentry e;
	memset(&e, 0, sizeof(e));
	e.tid = r->pid;
	e.tgid = r->tgid;
	e.cgid = cgid;
	e.start_ns = start;
	e.now_ns = start + r->etime_us * 1000 + 500 + gap_ns;
	e.pcount = r->delay[CGS_DELAY_CPU].count;
	e.run_delay = r->delay[CGS_DELAY_CPU].total_ns;
	e.csw = (uint32_t)(r->nvcsw + r->nivcsw);
	e.minflt = r->minflt;
	return e;
}

static const int64_t OFF = (int64_t)(100 * SEC);

static void test_pairs(void **state)
{
	(void)state;
	struct cgsi_kjoin j;
	assert_int_equal(cgsi_kjoin_init(&j, 128), 0);
	struct cgs_record r = rec_of(100, 100, 5 * SEC, 2000000, 3, 12345);
	struct cgsi_kentry e = ent_of(&r, 5 * SEC, 2000, 77);
	cgsi_kjoin_add(&j, &e);
	struct cgsi_kinfo cg = { 0 };
	assert_true(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	assert_int_equal(cg.cgid, 77);
	/* claimed: gone */
	assert_false(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	assert_int_equal(j.count, 0);
	cgsi_kjoin_fini(&j);
}

static void test_never_pairs(void **state)
{
	(void)state;
	struct cgsi_kjoin j;
	assert_int_equal(cgsi_kjoin_init(&j, 128), 0);
	struct cgsi_kinfo cg = { 0 };
	struct cgs_record r = rec_of(200, 200, 7 * SEC, 1000000, 4, 5000);
	struct cgsi_kentry e;

	/* another thread group with the same tid */
	e = ent_of(&r, 7 * SEC, 1000, 1);
	e.tgid = 201;
	cgsi_kjoin_add(&j, &e);
	/* a task that was scheduled once more than the record says, with
	 * no context switch more: not possible for the same task */
	e = ent_of(&r, 7 * SEC, 1000, 2);
	e.pcount = 5;
	cgsi_kjoin_add(&j, &e);
	/* same slices, another wait */
	e = ent_of(&r, 7 * SEC, 1000, 3);
	e.run_delay = 5001;
	cgsi_kjoin_add(&j, &e);
	/* a task whose life ended before the record's */
	e = ent_of(&r, 7 * SEC, 0, 4);
	e.now_ns -= 10000;
	cgsi_kjoin_add(&j, &e);
	/* preempted for longer than the gap allows */
	e = ent_of(&r, 7 * SEC, CGSI_KJOIN_GAP_MAX_NS + 1, 5);
	cgsi_kjoin_add(&j, &e);
	/* started three seconds off */
	e = ent_of(&r, 10 * SEC, 1000, 6);
	cgsi_kjoin_add(&j, &e);
	/* fewer faults than the record */
	e = ent_of(&r, 7 * SEC, 1000, 7);
	e.minflt = 39;
	cgsi_kjoin_add(&j, &e);
	assert_false(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	assert_int_equal(j.st.mismatched, 1);
	assert_int_equal(j.count, 7);
	cgsi_kjoin_fini(&j);
}

/* A pid reused while the old task's record is still queued (or was
 * dropped): each record takes its own entry, whatever the order. */
static void test_reuse(void **state)
{
	(void)state;
	struct cgsi_kjoin j;
	assert_int_equal(cgsi_kjoin_init(&j, 128), 0);
	struct cgs_record a = rec_of(300, 300, 20 * SEC, 800000, 2, 1500);
	struct cgs_record b = rec_of(300, 300, 20 * SEC + 900000, 800000, 2,
				     1700);
	struct cgsi_kentry ea = ent_of(&a, 20 * SEC, 1500, 10);
	struct cgsi_kentry eb = ent_of(&b, 20 * SEC + 900000, 1500, 11);
	cgsi_kjoin_add(&j, &ea);
	cgsi_kjoin_add(&j, &eb);
	struct cgsi_kinfo cg = { 0 };
	assert_true(cgsi_kjoin_claim(&j, &b, OFF, &cg));
	assert_int_equal(cg.cgid, 11);
	assert_true(cgsi_kjoin_claim(&j, &a, OFF, &cg));
	assert_int_equal(cg.cgid, 10);

	/* a's record was dropped by the kernel: b's record arrives before
	 * b's entry; a's stale entry must not answer for it */
	cgsi_kjoin_add(&j, &ea);
	assert_false(cgsi_kjoin_claim(&j, &b, OFF, &cg));
	cgsi_kjoin_add(&j, &eb);
	assert_true(cgsi_kjoin_claim(&j, &b, OFF, &cg));
	assert_int_equal(cg.cgid, 11);
	assert_int_equal(j.count, 1); /* a's, until it expires */
	cgsi_kjoin_fini(&j);
}

/* Scheduled once more in the gap: the wait grew by at most the gap. */
static void test_scheduled_in_gap(void **state)
{
	(void)state;
	struct cgsi_kjoin j;
	assert_int_equal(cgsi_kjoin_init(&j, 128), 0);
	struct cgs_record r = rec_of(400, 400, 3 * SEC, 5000000, 6, 90000);
	struct cgsi_kentry e = ent_of(&r, 3 * SEC, 40000, 5);
	e.pcount = 7;
	e.run_delay = 90000 + 30000; /* waited 30 us of the 40 us gap */
	e.csw++;
	cgsi_kjoin_add(&j, &e);
	struct cgsi_kinfo cg = { 0 };
	assert_true(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	assert_int_equal(cg.cgid, 5);
	/* waited longer than the gap: not this task */
	e.run_delay = 90000 + 60000;
	cgsi_kjoin_add(&j, &e);
	assert_false(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	cgsi_kjoin_fini(&j);
}

static void test_expire_evict(void **state)
{
	(void)state;
	struct cgsi_kjoin j;
	assert_int_equal(cgsi_kjoin_init(&j, 64), 0);
	assert_int_equal(j.cap, 64);
	for (uint32_t i = 0; i < 100; i++) {
		struct cgs_record r = rec_of(1000 + i, 1000 + i,
					     (uint64_t)i * SEC, 1000, 1, 0);
		struct cgsi_kentry e = ent_of(&r, (uint64_t)i * SEC, 0, i);
		cgsi_kjoin_add(&j, &e);
	}
	assert_int_equal(j.st.evicted, 36);
	assert_int_equal(j.count, 64);
	/* the evicted are gone, the newest are there */
	struct cgsi_kinfo cg = { 0 };
	struct cgs_record old = rec_of(1000, 1000, 0, 1000, 1, 0);
	assert_false(cgsi_kjoin_claim(&j, &old, OFF, &cg));
	/* why it found none: its entry was pushed out (the reason
	 * "expired"), not one of its tid that did not verify */
	assert_true(cgsi_kjoin_dropped(&j, 1000));
	assert_false(cgsi_kjoin_has_tid(&j, 1000));
	assert_true(cgsi_kjoin_has_tid(&j, 1099));
	assert_false(cgsi_kjoin_dropped(&j, 1099));
	struct cgs_record r99 = rec_of(1099, 1099, 99 * SEC, 1000, 1, 0);
	assert_true(cgsi_kjoin_claim(&j, &r99, OFF, &cg));
	assert_int_equal(cg.cgid, 99);
	/* entries taken more than 10 s before 98 s: 36..87 */
	assert_int_equal(cgsi_kjoin_expire(&j, 98 * SEC, 10 * SEC), 52);
	assert_int_equal(j.count, 11);
	assert_true(cgsi_kjoin_dropped(&j, 1087));
	assert_false(cgsi_kjoin_dropped(&j, 1088));
	struct cgs_record r90 = rec_of(1090, 1090, 90 * SEC, 1000, 1, 0);
	assert_true(cgsi_kjoin_claim(&j, &r90, OFF, &cg));
	assert_int_equal(cg.cgid, 90);
	cgsi_kjoin_fini(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_never_pairs),
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_scheduled_in_gap),
		cmocka_unit_test(test_expire_evict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
