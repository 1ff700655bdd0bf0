/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Delay peaks (cgs_snapshot_get_delay_peaks()) on synthetic records: the
 * maximum of the task records' delay[c].max_ns per class with the time of
 * the record that holds it, TGID aggregates ignored, across shards,
 * subtrees, folding, deltas (a quiet period has none, the cumulative set
 * keeps them) and retirement (a retired child's peaks stay in its
 * parent's subtree). Expected values are written out, not recomputed.
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
#include "support/add.h"
#include "support/fakeproc.h"
#include "support/snap.h"

static struct fakeproc F;

/* A task record with peaks (v16 shape; at: v17's times, 0: none). */
static struct cgs_record task(enum cgs_kind kind, uint32_t pid, uint64_t cpu,
			      uint64_t blkio, uint64_t at)
{
	struct cgs_record r = fp_record(kind, pid, pid, 1, pid);
	r.fields |= CGS_HAS_DELAY_MAXMIN;
	r.delay[CGS_DELAY_CPU].max_ns = cpu;
	r.delay[CGS_DELAY_BLKIO].max_ns = blkio;
	if (at) {
		r.fields |= CGS_HAS_DELAY_MAX_TS;
		r.delay_max_at_ns[CGS_DELAY_CPU] = at;
		r.delay_max_at_ns[CGS_DELAY_BLKIO] = at + 1;
	}
	return r;
}

static void put(struct cgs_rollup *r, unsigned shard, const char *path,
		const struct cgs_record *x)
{
	fp_mkdir(&F, path);
	assert_int_equal(cgt_add_path(r, shard, x, path), 0);
}

static struct cgs_delay_peaks peaks(const struct cgs_snapshot *s,
				    const char *path, enum cgs_counter_set set)
{
	struct cgs_delay_peaks p = { .sz = sizeof(p) };
	for (size_t i = 0; i < cgs_snapshot_count(s); i++)
		if (!strcmp(cgs_snapshot_get_cgroup(s, i)->path, path)) {
			assert_int_equal(cgs_snapshot_get_delay_peaks(s, i, set,
								  &p),
					 0);
			assert_int_equal(p.nclasses, cgs_delay_classes());
			return p;
		}
	fail_msg("no cgroup %s", path);
	return p;
}

static void want(const struct cgs_snapshot *s, const char *path,
		 enum cgs_counter_set set, uint64_t cpu, uint64_t cpu_at,
		 uint64_t blkio)
{
	struct cgs_delay_peaks p = peaks(s, path, set);
	if (p.c[CGS_DELAY_CPU].max_ns != cpu ||
	    p.c[CGS_DELAY_CPU].at_ns != cpu_at ||
	    p.c[CGS_DELAY_BLKIO].max_ns != blkio)
		fail_msg("%s set %d: cpu %llu at %llu, blkio %llu; want %llu "
			 "at %llu, %llu",
			 path, (int)set,
			 (unsigned long long)p.c[CGS_DELAY_CPU].max_ns,
			 (unsigned long long)p.c[CGS_DELAY_CPU].at_ns,
			 (unsigned long long)p.c[CGS_DELAY_BLKIO].max_ns,
			 (unsigned long long)cpu, (unsigned long long)cpu_at,
			 (unsigned long long)blkio);
	for (unsigned c = CGS_DELAY_SWAPIN; c < CGS_DELAY_SLOTS; c++)
		assert_int_equal(p.c[c].max_ns, 0);
}

static void test_peaks(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	/* /p/a on both shards, /p/b, /p itself; a TGID aggregate with the
	 * largest max of all (the last thread's: never a peak) */
	struct cgs_record a1 = task(CGS_KIND_THREAD, 10, 500, 7, 1000);
	struct cgs_record a2 = task(CGS_KIND_PROCESS, 11, 900, 3, 2000);
	struct cgs_record b1 = task(CGS_KIND_PROCESS, 12, 700, 40, 0);
	struct cgs_record p1 = task(CGS_KIND_PROCESS, 13, 100, 0, 3000);
	struct cgs_record g = task(CGS_KIND_TGID, 11, 99999, 99999, 4000);
	put(r, 0, "/p/a", &a1);
	put(r, 1, "/p/a", &a2);
	put(r, 1, "/p/a", &g);
	put(r, 0, "/p/b", &b1);
	put(r, 1, "/p", &p1);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	want(s, "/p/a", CGS_SET_SELF, 900, 2000, 7);
	want(s, "/p/a", CGS_SET_SELF_DELTA, 900, 2000, 7);
	want(s, "/p/b", CGS_SET_SELF, 700, 0, 40);
	want(s, "/p", CGS_SET_SELF, 100, 3000, 0);
	want(s, "/p", CGS_SET_SUBTREE, 900, 2000, 40);
	want(s, "/p", CGS_SET_SUBTREE_DELTA, 900, 2000, 40);
	want(s, "/", CGS_SET_SUBTREE, 900, 2000, 40);
	want(s, "/", CGS_SET_SELF, 0, 0, 0);
	cgs_snapshot_free(s);

	/* folded at depth 1: /p holds all of its subtree */
	s = cgt_snap(r, 1, true, 0);
	want(s, "/p", CGS_SET_SELF, 900, 2000, 40);
	cgs_snapshot_free(s);

	/* a quiet period: no delta peaks, the cumulative ones stay */
	s = cgt_snap(r, 0, false, 0);
	want(s, "/p/a", CGS_SET_SELF_DELTA, 0, 0, 0);
	want(s, "/p", CGS_SET_SUBTREE_DELTA, 0, 0, 0);
	want(s, "/p/a", CGS_SET_SELF, 900, 2000, 7);
	want(s, "/p", CGS_SET_SUBTREE, 900, 2000, 40);
	cgs_snapshot_free(s);

	/* a smaller peak: the period's max is it, the cumulative one is not */
	struct cgs_record a3 = task(CGS_KIND_THREAD, 14, 300, 9, 5000);
	put(r, 0, "/p/a", &a3);
	s = cgt_snap(r, 0, false, 0);
	want(s, "/p/a", CGS_SET_SELF_DELTA, 300, 5000, 9);
	want(s, "/p/a", CGS_SET_SELF, 900, 2000, 9);
	want(s, "/p", CGS_SET_SUBTREE_DELTA, 300, 5000, 9);
	cgs_snapshot_free(s);

	/* /p/b goes with a record since the last snapshot that advanced
	 * (one that did not shows its final counts, so it may be retired):
	 * retired into /p's carry, its peaks still in /p's subtree, the new
	 * one in its delta */
	struct cgs_record b2 = task(CGS_KIND_THREAD, 15, 800, 41, 6000);
	put(r, 1, "/p/b", &b2);
	fp_rmdir(&F, "/p/b");
	cgs_snapshot_free(cgt_snap(r, 0, true, 0));
	assert_int_equal(cgs_rollup_retire_removed(r), 0);
	F.now_ms += 2000;
	assert_true(cgs_rollup_retire_removed(r) >= 1);
	s = cgt_snap(r, 0, false, 0);
	assert_null(cgt_cgroup_at(s, "/p/b", CGT_ANY));
	want(s, "/p", CGS_SET_SUBTREE, 900, 2000, 41);
	want(s, "/p", CGS_SET_SUBTREE_DELTA, 800, 6000, 41);
	want(s, "/p", CGS_SET_SELF, 100, 3000, 0);
	cgs_snapshot_free(s);
	s = cgt_snap(r, 0, false, 0);
	want(s, "/p", CGS_SET_SUBTREE_DELTA, 0, 0, 0);
	want(s, "/p", CGS_SET_SUBTREE, 900, 2000, 41);

	/* bad arguments */
	struct cgs_delay_peaks p = { .sz = sizeof(p) };
	assert_int_equal(cgs_snapshot_get_delay_peaks(NULL, 0, 0, &p), -EINVAL);
	assert_int_equal(cgs_snapshot_get_delay_peaks(s, cgs_snapshot_count(s), 0,
						  &p),
			 -EINVAL);
	assert_int_equal(cgs_snapshot_get_delay_peaks(s, 0, 4, &p), -EINVAL);
	assert_int_equal(cgs_snapshot_get_delay_peaks(s, 0, 0, NULL), -EINVAL);
	/* an older caller's smaller struct: its bytes only */
	struct {
		size_t sz;
		unsigned n;
		struct cgs_delay_peak c[1];
	} old = { .sz = sizeof(old) };
	assert_int_equal(cgs_snapshot_get_delay_peaks(s, 0, CGS_SET_SUBTREE,
						  (struct cgs_delay_peaks *)&old),
			 0);
	assert_int_equal(old.c[0].max_ns, 900);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* Records without peaks (before v15) make none, and no node memory. */
static void test_no_peaks(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	struct cgs_record x = task(CGS_KIND_PROCESS, 20, 5, 5, 0);
	x.fields &= ~CGS_HAS_DELAY_MAXMIN;
	put(r, 0, "/old", &x);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	want(s, "/old", CGS_SET_SELF, 0, 0, 0);
	want(s, "/", CGS_SET_SUBTREE, 0, 0, 0);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* CGS_ROLLUP_NO_DELAY_PEAKS: records with peaks make none, and the flag
 * is accepted (an unknown one is not). */
static void test_peaks_off(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, CGS_ROLLUP_NO_DELAY_PEAKS);
	struct cgs_record x = task(CGS_KIND_PROCESS, 21, 700, 7, 0);
	assert_true(x.fields & CGS_HAS_DELAY_MAXMIN);
	put(r, 0, "/off", &x);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	want(s, "/off", CGS_SET_SELF, 0, 0, 0);
	want(s, "/", CGS_SET_SUBTREE, 0, 0, 0);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
	struct cgs_rollup_opts o = fp_opts(&F);
	o.flags = CGS_ROLLUP_NO_DELAY_PEAKS << 1;
	struct cgs_rollup *bad = NULL;
	assert_int_equal(cgs_rollup_new(&bad, &o), -EINVAL);
}

/* A workload's peaks: the largest of its cgroups' own, across its
 * restarts (one unit, two cgroups), from its first snapshot on (1.3:
 * no hold). */
static void test_workload_peaks(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	struct cgs_workloads *w = NULL;
	struct cgs_workloads_opts o = { .sz = sizeof(o) };
	assert_int_equal(cgs_workloads_new(&w, &o), 0);
	struct cgs_record a = task(CGS_KIND_PROCESS, 30, 400, 0, 7000);
	struct cgs_record b = task(CGS_KIND_PROCESS, 31, 600, 5, 8000);
	struct cgs_record c = task(CGS_KIND_PROCESS, 32, 500, 9, 9000);
	put(r, 0, "/system.slice/pk.service", &a);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	assert_int_equal(cgs_workloads_update(w, s, 1), 0);
	struct cgs_workload_view v = { .sz = sizeof(v) };
	assert_int_equal(cgs_workloads_find(w, "/system.slice/pk.service",
					    &v),
			 0);
	assert_non_null(v.peaks);
	assert_int_equal(v.peaks->c[CGS_DELAY_CPU].max_ns, 400);
	assert_int_equal(v.peaks->c[CGS_DELAY_CPU].at_ns, 7000);
	cgs_snapshot_free(s);
	/* the next period: one more record there, one in a sub-cgroup of
	 * the unit (the same workload) */
	put(r, 0, "/system.slice/pk.service", &b);
	put(r, 0, "/system.slice/pk.service/x", &c);
	s = cgt_snap(r, 0, false, 0);
	assert_int_equal(cgs_workloads_update(w, s, 2), 0);
	assert_int_equal(cgs_workloads_find(w, "/system.slice/pk.service",
					    &v),
			 0);
	assert_int_equal(v.peaks->c[CGS_DELAY_CPU].max_ns, 600);
	assert_int_equal(v.peaks->c[CGS_DELAY_CPU].at_ns, 8000);
	assert_int_equal(v.peaks->c[CGS_DELAY_BLKIO].max_ns, 9);
	cgs_snapshot_free(s);
	cgs_workloads_free(w);
	cgs_rollup_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		fp_unit_test(test_peaks, &F),
		fp_unit_test(test_no_peaks, &F),
		fp_unit_test(test_peaks_off, &F),
		fp_unit_test(test_workload_peaks, &F),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
