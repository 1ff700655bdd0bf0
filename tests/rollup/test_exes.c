/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Top executables per cgroup (cgs_rollup_opts.exes, issue 39) on
 * synthetic records: exact rankings by CPU, exits and crashes across
 * shards, what counts as a crash, records without an executable, folding,
 * the (other) entry; and the summary's stated error bound when it must
 * push executables out (many distinct ones, merged across shards).
 * Expected values are worked out by hand in the comments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>

#include <cmocka.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/fakeproc.h"
#include "support/skip.h"

static struct fakeproc F;

#define DEV 0x803u /* sda3, as huge_encode_dev() has it */

/* A task record of executable (DEV, ino) with this CPU and wait status. */
static struct cgs_record xrec(enum cgs_kind kind, uint32_t pid,
			      uint64_t ino, uint64_t cpu_us, uint32_t status)
{
	CGS_OPTS(cgs_record, r);
	r.kind = kind;
	r.version = 16;
	r.fields = CGS_HAS_DELAY | CGS_HAS_BASIC | CGS_HAS_TGID;
	r.pid = kind == CGS_KIND_TGID ? 0 : pid;
	r.tgid = kind == CGS_KIND_THREAD ? pid + 1 : pid;
	r.ppid = 1;
	r.exe_dev = ino ? DEV : 0;
	r.exe_inode = ino;
	r.utime_us = cpu_us;
	r.exit_status = status;
	snprintf(r.comm, sizeof(r.comm), "c%llu", (unsigned long long)ino);
	return r;
}

static void put(struct cgs_rollup *r, unsigned shard, const char *path,
		const struct cgs_record *x)
{
	fp_mkdir(&F, path);
	assert_int_equal(cgt_add_path(r, shard, x, path), 0);
}

static struct cgs_rollup *exe_rollup(unsigned shards, unsigned exes)
{
	struct cgs_rollup_opts o = fp_opts(&F);
	o.shards = shards;
	o.exes = exes;
	struct cgs_rollup *r = NULL;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	return r;
}

static struct cgs_snapshot *snap(struct cgs_rollup *r, unsigned fold,
				 uint64_t show)
{
	CGS_OPTS(cgs_snapshot_opts, o);
	o.fold_depth = fold;
	o.exes = show;
	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(r, &o, &s), 0);
	return s;
}

static size_t idx(const struct cgs_snapshot *s, const char *path)
{
	for (size_t i = 0; i < cgs_snapshot_count(s); i++)
		if (!strcmp(cgs_snapshot_get_cgroup(s, i)->path, path))
			return i;
	fail_msg("no cgroup %s", path);
	return 0;
}

/* Entry j of a ranking is executable ino (0: none) with an exact value. */
static void want(const struct cgs_snapshot *s, size_t i, enum cgs_exe_rank by,
		 size_t j, uint64_t ino, uint64_t value)
{
	const struct cgs_exe *x = cgs_snapshot_get_exe(s, i, by, j);
	assert_non_null(x);
	assert_int_equal(x->sz, sizeof(*x));
	assert_false(x->other);
	if (x->inode != ino || x->dev != (ino ? DEV : 0) ||
	    x->value != value || x->error)
		fail_msg("rank %d entry %zu: %llx:%llu value %llu error %llu, "
			 "want %x:%llu %llu exact",
			 (int)by, j, (unsigned long long)x->dev,
			 (unsigned long long)x->inode,
			 (unsigned long long)x->value,
			 (unsigned long long)x->error, ino ? DEV : 0,
			 (unsigned long long)ino, (unsigned long long)value);
}

#define TRUE_INO 100u  /* 30 clean exits, no CPU (/bin/true) */
#define SEGV_INO 200u  /* 10 crashes, one SIGKILL, one SIGSEGV thread */
#define BURN_INO 300u  /* one exit, most CPU */

static void fill(struct cgs_rollup *r, const char *path)
{
	uint32_t pid = 1000;
	for (int k = 0; k < 30; k++) {
		struct cgs_record x = xrec(CGS_KIND_PROCESS, pid++, TRUE_INO,
					   0, 0);
		put(r, k % 2, path, &x);
	}
	for (int k = 0; k < 10; k++) {
		/* SIGSEGV with and without a core dump (0x80), SIGABRT */
		uint32_t st = k < 4 ? SIGSEGV : k < 8 ? (SIGSEGV | 0x80)
						      : SIGABRT;
		struct cgs_record x = xrec(CGS_KIND_PROCESS, pid++, SEGV_INO,
					   10, st);
		put(r, k % 2, path, &x);
	}
	/* not crashes: SIGKILL, exit(139), a thread's record (no exit) */
	struct cgs_record x = xrec(CGS_KIND_PROCESS, pid++, SEGV_INO, 0,
				   SIGKILL);
	put(r, 0, path, &x);
	x = xrec(CGS_KIND_PROCESS, pid++, SEGV_INO, 0, 139u << 8);
	put(r, 1, path, &x);
	x = xrec(CGS_KIND_THREAD, pid++, SEGV_INO, 5, SIGSEGV);
	put(r, 1, path, &x);
	/* the burner: a thread's 1,000 us, then the process's 5 s */
	x = xrec(CGS_KIND_THREAD, pid++, BURN_INO, 1000, 0);
	put(r, 0, path, &x);
	x = xrec(CGS_KIND_PROCESS, pid++, BURN_INO, 5000000, 0);
	put(r, 1, path, &x);
	/* no executable (a kernel thread): ranked as 0:0, counted */
	for (int k = 0; k < 3; k++) {
		x = xrec(CGS_KIND_PROCESS, pid++, 0, 0, 0);
		put(r, 0, path, &x);
	}
	/* a TGID record is no task: not ranked */
	x = xrec(CGS_KIND_TGID, pid++, BURN_INO, 99999999, 0);
	put(r, 0, path, &x);
}

static void test_exes_exact(void **state)
{
	(void)state;
	struct cgs_rollup *r = exe_rollup(2, 8);
	fill(r, "/w");
	struct cgs_snapshot *s = snap(r, 0, 0);
	size_t w = idx(s, "/w");
	/* by CPU: burner 5,001,000; segv 10 x 10 + 5 (its thread) = 105;
	 * true and the kernel threads none */
	assert_int_equal(cgs_snapshot_exe_count(s, w, CGS_EXES_BY_CPU), 2);
	want(s, w, CGS_EXES_BY_CPU, 0, BURN_INO, 5001000);
	want(s, w, CGS_EXES_BY_CPU, 1, SEGV_INO, 105);
	/* by exits: true 30, segv 12, none 3, burner 1 */
	assert_int_equal(cgs_snapshot_exe_count(s, w, CGS_EXES_BY_EXITS), 4);
	want(s, w, CGS_EXES_BY_EXITS, 0, TRUE_INO, 30);
	want(s, w, CGS_EXES_BY_EXITS, 1, SEGV_INO, 12);
	want(s, w, CGS_EXES_BY_EXITS, 2, 0, 3);
	want(s, w, CGS_EXES_BY_EXITS, 3, BURN_INO, 1);
	/* by crashes: segv's 10 (SIGSEGV with or without core, SIGABRT) */
	assert_int_equal(cgs_snapshot_exe_count(s, w, CGS_EXES_BY_CRASHES), 1);
	want(s, w, CGS_EXES_BY_CRASHES, 0, SEGV_INO, 10);
	assert_null(cgs_snapshot_get_exe(s, w, CGS_EXES_BY_CRASHES, 1));
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	assert_int_equal(t->exes, 8);
	assert_int_equal(t->exe_none, 3);
	assert_int_equal(t->comms, 0);
	/* commands are off: none */
	assert_int_equal(cgs_snapshot_comm_count(s, w, CGS_COMMS_BY_EXITS), 0);
	/* out of range, and a cgroup with nothing */
	assert_int_equal(cgs_snapshot_exe_count(s, w, 3), 0);
	assert_int_equal(cgs_snapshot_exe_count(s, cgs_snapshot_count(s), 0),
			 0);
	assert_int_equal(cgs_snapshot_exe_count(NULL, 0, 0), 0);
	assert_int_equal(cgs_snapshot_exe_count(s, idx(s, "/"), 0), 0);
	assert_null(cgs_snapshot_get_exe(s, w, 3, 0));
	assert_null(cgs_snapshot_get_exe(NULL, 0, 0, 0));
	assert_null(cgs_snapshot_get_exe(s, w, CGS_EXES_BY_CPU, SIZE_MAX));
	cgs_snapshot_free(s);

	/* one listed, then (other) */
	s = snap(r, 0, 1);
	w = idx(s, "/w");
	assert_int_equal(cgs_snapshot_exe_count(s, w, CGS_EXES_BY_EXITS), 2);
	want(s, w, CGS_EXES_BY_EXITS, 0, TRUE_INO, 30);
	const struct cgs_exe *o = cgs_snapshot_get_exe(s, w, CGS_EXES_BY_EXITS,
						       1);
	assert_non_null(o);
	assert_true(o->other);
	assert_int_equal(o->dev, 0);
	assert_int_equal(o->inode, 0);
	assert_int_equal(o->value, 16); /* 46 - 30 */
	assert_int_equal(o->error, 0);
	assert_int_equal(o->max_each, 12); /* segv */
	/* a ranking of one: no (other) */
	assert_int_equal(cgs_snapshot_exe_count(s, w, CGS_EXES_BY_CRASHES), 1);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);

	/* off: nothing ranked; capacity out of range */
	r = exe_rollup(2, 0);
	fill(r, "/w");
	s = snap(r, 0, 0);
	assert_int_equal(cgs_snapshot_exe_count(s, idx(s, "/w"), 0), 0);
	assert_int_equal(cgs_snapshot_get_totals(s)->exes, 0);
	assert_int_equal(cgs_snapshot_get_totals(s)->exe_none, 0);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
	struct cgs_rollup_opts ro = fp_opts(&F);
	ro.exes = 4097;
	assert_int_equal(cgs_rollup_new(&r, &ro), -EINVAL);
	assert_null(r);
}

/* Commands and executables side by side; folding merges both. */
static void test_exes_fold(void **state)
{
	(void)state;
	struct cgs_rollup_opts o = fp_opts(&F);
	o.shards = 2;
	o.exes = 8;
	o.comms = 8;
	struct cgs_rollup *r = NULL;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	fill(r, "/f/x");
	struct cgs_record x = xrec(CGS_KIND_PROCESS, 50, TRUE_INO, 0, 0);
	put(r, 1, "/f", &x);
	x = xrec(CGS_KIND_PROCESS, 51, SEGV_INO, 0, SIGBUS);
	put(r, 0, "/f/x/y", &x);
	for (unsigned k = 0; k < 2; k++) {
		const char *m = k ? "/n" : "/m";
		x = xrec(CGS_KIND_PROCESS, 60 + k, TRUE_INO, 0, 0);
		put(r, k, m, &x);
		x = xrec(CGS_KIND_PROCESS, 62 + k, TRUE_INO, 0, 0);
		put(r, k, m, &x);
		x = xrec(CGS_KIND_PROCESS, 64 + k, SEGV_INO, 0, SIGILL);
		put(r, 1 - k, m, &x);
	}
	struct cgs_snapshot *s = snap(r, 1, 0);
	size_t f = idx(s, "/f");
	/* /f's own, /f/x's and /f/x/y's: true 31, segv 13, crashes 11 */
	want(s, f, CGS_EXES_BY_EXITS, 0, TRUE_INO, 31);
	want(s, f, CGS_EXES_BY_EXITS, 1, SEGV_INO, 13);
	want(s, f, CGS_EXES_BY_CRASHES, 0, SEGV_INO, 11);
	/* the commands are the records' own (c<ino>): true's 31 exits */
	const struct cgs_comm *c = cgs_snapshot_get_comm(s, f,
							 CGS_COMMS_BY_EXITS, 0);
	assert_non_null(c);
	assert_string_equal(c->comm, "c100");
	assert_int_equal(c->value, 31);
	cgs_snapshot_free(s);
	/* unfolded: self only */
	s = snap(r, 0, 0);
	f = idx(s, "/f");
	/* a ranking made on one shard only (summaries are made with their
	 * first key), either way round */
	for (int k = 0; k < 2; k++) {
		size_t m = idx(s, k ? "/n" : "/m");
		assert_int_equal(cgs_snapshot_exe_count(s, m,
							CGS_EXES_BY_CRASHES),
				 1);
		want(s, m, CGS_EXES_BY_CRASHES, 0, SEGV_INO, 1);
		want(s, m, CGS_EXES_BY_EXITS, 0, TRUE_INO, 2);
		want(s, m, CGS_EXES_BY_EXITS, 1, SEGV_INO, 1);
	}
	assert_int_equal(cgs_snapshot_exe_count(s, f, CGS_EXES_BY_EXITS), 1);
	want(s, f, CGS_EXES_BY_EXITS, 0, TRUE_INO, 1);
	assert_int_equal(cgs_snapshot_exe_count(s, f, CGS_EXES_BY_CRASHES), 0);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

#define NEXE 60

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* A ranking against the true values tv[ino - 1]: the stated bounds. */
static void check(const struct cgs_snapshot *s, size_t ci,
		  enum cgs_exe_rank by, const uint64_t *tv, uint64_t total,
		  unsigned cap)
{
	size_t n = cgs_snapshot_exe_count(s, ci, by);
	assert_true(n >= 2);
	bool listed[NEXE] = { false };
	uint64_t rest = total;
	for (size_t j = 0; j + 1 < n; j++) {
		const struct cgs_exe *x = cgs_snapshot_get_exe(s, ci, by, j);
		assert_false(x->other);
		assert_true(x->inode >= 1 && x->inode <= NEXE);
		uint64_t v = tv[x->inode - 1];
		listed[x->inode - 1] = true;
		if (v < x->value || v > x->value + x->error)
			fail_msg("rank %d ino %llu: true %llu not in [%llu, "
				 "%llu]",
				 (int)by, (unsigned long long)x->inode,
				 (unsigned long long)v,
				 (unsigned long long)x->value,
				 (unsigned long long)(x->value + x->error));
		assert_true(x->error <= total / cap);
		rest -= v;
	}
	const struct cgs_exe *o = cgs_snapshot_get_exe(s, ci, by, n - 1);
	assert_true(o->other);
	assert_true(rest >= o->value && rest <= o->value + o->error);
	for (int k = 0; k < NEXE; k++)
		if (!listed[k] && (tv[k] > o->max_each || tv[k] > total / cap))
			fail_msg("rank %d ino %d: %llu unlisted, max_each "
				 "%llu, total/cap %llu",
				 (int)by, k + 1, (unsigned long long)tv[k],
				 (unsigned long long)o->max_each,
				 (unsigned long long)(total / cap));
}

static void test_exes_evicted(void **state)
{
	(void)state;
	const unsigned cap = 8;
	struct cgs_rollup *r = exe_rollup(2, cap);
	uint64_t cpu[NEXE] = { 0 }, exits[NEXE] = { 0 }, crashes[NEXE] = { 0 };
	uint64_t cpu_t = 0, exits_t = 0, crashes_t = 0, seed = 39;
	for (uint32_t i = 0; i < 3000; i++) {
		/* half from 3 heavy executables, the rest over 57 light */
		unsigned k = lcg(&seed) % 2 ? lcg(&seed) % 3
					    : 3 + lcg(&seed) % (NEXE - 3);
		uint64_t c = 1 + lcg(&seed) % 100;
		bool crash = lcg(&seed) % 4 == 0;
		struct cgs_record x = xrec(CGS_KIND_PROCESS, 100 + i, k + 1, c,
					   crash ? SIGSEGV : 0);
		put(r, i % 2, "/e", &x);
		cpu[k] += c;
		cpu_t += c;
		exits[k]++;
		exits_t++;
		crashes[k] += crash;
		crashes_t += crash;
	}
	struct cgs_snapshot *s = snap(r, 0, 0);
	size_t e = idx(s, "/e");
	check(s, e, CGS_EXES_BY_CPU, cpu, cpu_t, cap);
	check(s, e, CGS_EXES_BY_EXITS, exits, exits_t, cap);
	check(s, e, CGS_EXES_BY_CRASHES, crashes, crashes_t, cap);
	/* the heavy three lead every ranking */
	for (int by = 0; by < 3; by++)
		for (size_t j = 0; j < 3; j++)
			assert_true(cgs_snapshot_get_exe(s, e, by, j)->inode <= 3);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- per workload ---- */

#define NWX 4 /* executables 1..4 */

/* What the workload's cgroups were fed, per executable: the expectation
 * (every ranking exact: fewer executables than counters). */
struct wx_sum {
	uint64_t v[3][NWX + 1]; /* by enum cgs_exe_rank, by inode */
};

static void wx_put(struct cgs_rollup *r, struct wx_sum *e, const char *path,
		   uint32_t pid, uint64_t ino, uint64_t cpu, uint32_t st)
{
	struct cgs_record x = xrec(CGS_KIND_PROCESS, pid, ino, cpu, st);
	put(r, pid % 2, path, &x);
	e->v[CGS_EXES_BY_CPU][ino] += cpu;
	e->v[CGS_EXES_BY_EXITS][ino]++;
	e->v[CGS_EXES_BY_CRASHES][ino] += st == SIGSEGV;
}

/* A snapshot folded into the view. */
static void wx_update(struct cgs_rollup *r, struct cgs_workloads *w)
{
	struct cgs_snapshot *s = snap(r, 0, 0);
	F.now_ms += 1000;
	assert_int_equal(cgs_workloads_update(w, s, F.now_ms), 0);
	cgs_snapshot_free(s);
}

/* The unit's rankings are e's, exact, largest first, no (other). */
static void wx_check(const struct cgs_workloads *w, const struct wx_sum *e)
{
	assert_int_equal(cgs_workloads_count(w), 1);
	for (int by = 0; by < 3; by++) {
		size_t n = 0;
		for (uint64_t k = 1; k <= NWX; k++)
			n += e->v[by][k] != 0;
		assert_int_equal(cgs_workloads_exe_count(w, 0, by), n);
		uint64_t last = UINT64_MAX;
		for (size_t j = 0; j < n; j++) {
			const struct cgs_exe *x = cgs_workloads_get_exe(w, 0, by,
									j);
			assert_non_null(x);
			assert_false(x->other);
			assert_int_equal(x->dev, DEV);
			assert_true(x->inode >= 1 && x->inode <= NWX);
			assert_int_equal(x->value, e->v[by][x->inode]);
			assert_int_equal(x->error, 0);
			assert_true(x->value <= last);
			last = x->value;
		}
		assert_null(cgs_workloads_get_exe(w, 0, by, n));
	}
}

/* One unit, two cgroups (its own and a child): the workload ranks their
 * sum; the child removed (retired by the rollup: gone from snapshots)
 * its counts stay; a new child (a restart) adds to them. */
static void test_exes_workload(void **state)
{
	(void)state;
	struct cgs_rollup *r = exe_rollup(2, 8);
	struct cgs_workloads *w = NULL;
	struct cgs_workloads_opts wo = { .sz = sizeof(wo) };
	assert_int_equal(cgs_workloads_new(&w, &wo), 0);
	struct wx_sum e = { 0 };
	const char *a = "/system.slice/wx.service";
	const char *b = "/system.slice/wx.service/b";
	const char *c = "/system.slice/wx.service/c";
	uint32_t pid = 5000;
	for (int k = 0; k < 3; k++)
		wx_put(r, &e, a, pid++, 1, 10, 0);
	wx_put(r, &e, a, pid++, 2, 5, SIGSEGV);
	wx_put(r, &e, b, pid++, 1, 7, 0);
	wx_put(r, &e, b, pid++, 3, 50, 0);
	wx_update(r, w);
	wx_check(w, &e);
	/* more in b, then b goes: the rollup retires it */
	wx_put(r, &e, b, pid++, 2, 1, SIGSEGV);
	wx_update(r, w);
	wx_check(w, &e);
	fp_rmdir(&F, b);
	wx_update(r, w); /* the removal seen */
	F.now_ms += 3000; /* the rollup's grace (2 s) */
	assert_true(cgs_rollup_retire_removed(r) >= 0);
	wx_update(r, w);
	F.now_ms += 3000;
	assert_true(cgs_rollup_retire_removed(r) >= 0);
	wx_update(r, w);
	struct cgs_workload_view v = { .sz = sizeof(v) };
	assert_int_equal(cgs_workloads_find(w, b, &v), -ENOENT); /* gone */
	assert_int_equal(cgs_workloads_find(w, a, &v), 0);
	assert_int_equal(v.cgroups_live, 1);
	wx_check(w, &e);
	/* the restart: c, the same executables and a new one */
	wx_put(r, &e, c, pid++, 3, 50, 0);
	wx_put(r, &e, c, pid++, 2, 2, SIGSEGV);
	wx_put(r, &e, c, pid++, 4, 1, 0);
	wx_put(r, &e, a, pid++, 1, 10, 0);
	wx_update(r, w);
	wx_check(w, &e);
	wx_update(r, w); /* nothing new: the same */
	wx_check(w, &e);
	cgs_workloads_free(w);
	cgs_rollup_free(r);
}

/* Executables off: no ranking, no cost. */
static void test_exes_workload_off(void **state)
{
	(void)state;
	struct cgs_rollup *r = exe_rollup(1, 0);
	struct cgs_workloads *w = NULL;
	assert_int_equal(cgs_workloads_new(&w, NULL), 0);
	struct wx_sum e = { 0 };
	wx_put(r, &e, "/system.slice/wy.service", 6000, 1, 10, SIGSEGV);
	wx_update(r, w);
	assert_int_equal(cgs_workloads_count(w), 1);
	for (int by = 0; by < 3; by++) {
		assert_int_equal(cgs_workloads_exe_count(w, 0, by), 0);
		assert_null(cgs_workloads_get_exe(w, 0, by, 0));
	}
	assert_int_equal(cgs_workloads_exe_count(NULL, 0, 0), 0);
	assert_int_equal(cgs_workloads_exe_count(w, 1, 0), 0);
	assert_int_equal(cgs_workloads_exe_count(w, 0, 3), 0);
	cgs_workloads_free(w);
	cgs_rollup_free(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		fp_unit_test(test_exes_exact, &F),
		fp_unit_test(test_exes_fold, &F),
		fp_unit_test(test_exes_evicted, &F),
		fp_unit_test(test_exes_workload, &F),
		fp_unit_test(test_exes_workload_off, &F),
	};
	return CGT_RUN(argc, argv, tests);
}
