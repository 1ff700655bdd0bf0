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

#include <linux/types.h>

#include "attribute/bpf/exitcg_abi.h"
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
	r.cpu_run_virtual_ns = life_ns / 3 + run_delay; /* ran a third */
	r.nvcsw = pcount > 0 ? pcount - 1 : 0;
	r.minflt = 40;
	return r;
}

/* Its entry, taken gap_ns after the record (not running in the gap),
 * its time lag_ns early (the time of an earlier exit in the same jiffy
 * on its CPU). */
static struct cgsi_kentry ent_lag(const struct cgs_record *r, uint64_t start,
				  uint64_t gap_ns, uint64_t lag_ns,
				  uint64_t cgid)
{
	struct cgsi_kentry e;
	memset(&e, 0, sizeof(e));
	e.tid = r->pid;
	e.tgid = r->tgid;
	e.cgid = cgid;
	e.start_ns = start;
	e.now_ns = start + r->etime_us * 1000 + 500 + gap_ns - lag_ns;
	e.runtime_ns = r->cpu_run_virtual_ns;
	e.pcount = (uint32_t)r->delay[CGS_DELAY_CPU].count;
	e.run_delay = r->delay[CGS_DELAY_CPU].total_ns;
	e.csw = (uint32_t)(r->nvcsw + r->nivcsw);
	e.minflt = (uint32_t)r->minflt;
	return e;
}

static struct cgsi_kentry ent_of(const struct cgs_record *r, uint64_t start,
				 uint64_t gap_ns, uint64_t cgid)
{
	return ent_lag(r, start, gap_ns, 0, cgid);
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
	/* a task whose life ended before the record's (by more than the
	 * clock's lag) */
	e = ent_of(&r, 7 * SEC, 0, 4);
	e.now_ns -= CGSI_KJOIN_COARSE_NS + 10000;
	cgsi_kjoin_add(&j, &e);
	/* preempted for longer than the gap allows */
	e = ent_of(&r, 7 * SEC, CGSI_KJOIN_GAP_MAX_NS + 2000, 5);
	cgsi_kjoin_add(&j, &e);
	/* started three seconds off */
	e = ent_of(&r, 10 * SEC, 1000, 6);
	cgsi_kjoin_add(&j, &e);
	/* fewer faults than the record */
	e = ent_of(&r, 7 * SEC, 1000, 7);
	e.minflt = 39;
	cgsi_kjoin_add(&j, &e);
	/* less run time than the record: another task */
	e = ent_of(&r, 7 * SEC, 1000, 8);
	e.runtime_ns--;
	cgsi_kjoin_add(&j, &e);
	/* ran longer in the gap than the gap lasted (to the tick) */
	e = ent_of(&r, 7 * SEC, 1000, 9);
	e.runtime_ns += CGSI_KJOIN_COARSE_NS + 3000;
	cgsi_kjoin_add(&j, &e);
	assert_false(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	assert_int_equal(j.st.mismatched, 1);
	assert_int_equal(j.count, 9);
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
	/* waited longer than the gap (to the clock's tick): not
	 * this task */
	e.run_delay = 90000 + CGSI_KJOIN_COARSE_NS + 60000;
	cgsi_kjoin_add(&j, &e);
	assert_false(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	/* ran and waited, each within the gap, both together longer */
	e.run_delay = 90000 + CGSI_KJOIN_COARSE_NS / 2 + 30000;
	e.runtime_ns = r.cpu_run_virtual_ns + CGSI_KJOIN_COARSE_NS / 2 + 30000;
	cgsi_kjoin_add(&j, &e);
	assert_false(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	e.runtime_ns = r.cpu_run_virtual_ns + 5000;
	cgsi_kjoin_add(&j, &e);
	assert_true(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	cgsi_kjoin_fini(&j);
}

/* The entry's time is read once a jiffy: up to a tick before the exit,
 * even before a start taken since then; the run time tells
 * two tasks of one tid apart whose lives end within a tick. */
static void test_clock_to_a_tick(void **state)
{
	(void)state;
	struct cgsi_kjoin j;
	assert_int_equal(cgsi_kjoin_init(&j, 128), 0);
	struct cgsi_kinfo cg = { 0 };
	/* lived 300 us, the clock's last tick 4 ms before its exit */
	struct cgs_record r = rec_of(500, 500, 9 * SEC, 300000, 1, 800);
	struct cgsi_kentry e = ent_lag(&r, 9 * SEC, 1500, 4000000, 21);
	assert_true(e.now_ns < e.start_ns);
	cgsi_kjoin_add(&j, &e);
	assert_true(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	assert_int_equal(cg.cgid, 21);
	/* an upper bound of the exit's time (cgroup walks, ksrc.c) */
	assert_true(cg.exit_ns >= 9 * SEC + 300000);
	/* pid 500 again, started and ended within the same tick, same
	 * slices and waits: the run time pairs each with its own */
	struct cgs_record a = rec_of(500, 500, 9 * SEC + 400000, 200000, 1, 0);
	struct cgs_record b = a;
	b.cpu_run_virtual_ns += 70000;
	struct cgsi_kentry ea = ent_lag(&a, 9 * SEC + 400000, 900, 2000000, 1);
	struct cgsi_kentry eb = ent_lag(&b, 9 * SEC + 400000, 900, 2000000, 2);
	cgsi_kjoin_add(&j, &eb);
	cgsi_kjoin_add(&j, &ea);
	assert_true(cgsi_kjoin_claim(&j, &a, OFF, &cg));
	assert_int_equal(cg.cgid, 1);
	assert_true(cgsi_kjoin_claim(&j, &b, OFF, &cg));
	assert_int_equal(cg.cgid, 2);
	/* a's entry alone for b's record (b's entry not there yet, or
	 * lost): a ran less than b's record says, so it is not b's */
	cgsi_kjoin_add(&j, &ea);
	assert_false(cgsi_kjoin_claim(&j, &b, OFF, &cg));
	assert_int_equal(j.st.mismatched, 1);
	cgsi_kjoin_fini(&j);
}

/* Counters the entry carries in 32 bits (pcount, minflt, csw) compare
 * modulo 2^32; a kernel without sched_info says so by a flag. */
static void test_narrow_fields(void **state)
{
	(void)state;
	struct cgsi_kjoin j;
	assert_int_equal(cgsi_kjoin_init(&j, 128), 0);
	struct cgsi_kinfo cg = { 0 };
	struct cgs_record r = rec_of(600, 600, 2 * SEC, 1000000, 0, 10);
	r.delay[CGS_DELAY_CPU].count = (1ull << 32) + 5;
	r.minflt = (1ull << 32) - 3;
	r.nvcsw = (1ull << 32) + 4;
	struct cgsi_kentry e = ent_of(&r, 2 * SEC, 1000, 31);
	e.minflt += 5; /* wrapped past 2^32 in the gap */
	assert_int_equal(e.pcount, 5);
	cgsi_kjoin_add(&j, &e);
	assert_true(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	assert_int_equal(cg.cgid, 31);
	/* no sched_info: the slices and waits are not compared */
	e = ent_of(&r, 2 * SEC, 1000, 32);
	e.pcount = 0xffffffffu;
	e.run_delay = 0;
	cgsi_kjoin_add(&j, &e);
	assert_false(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	e.flags = CGSK_F_NOSCHED;
	cgsi_kjoin_add(&j, &e);
	assert_true(cgsi_kjoin_claim(&j, &r, OFF, &cg));
	assert_int_equal(cg.cgid, 32);
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
		cmocka_unit_test(test_clock_to_a_tick),
		cmocka_unit_test(test_narrow_fields),
		cmocka_unit_test(test_expire_evict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
