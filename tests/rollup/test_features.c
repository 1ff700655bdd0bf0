/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of issue 11's rollup features on synthetic records (no
 * kernel): exit outcomes and per-signal counts, histograms (bucket
 * boundaries, sums, old callers), top commands (exact and evicting
 * summaries, the (other) entry's bounds), all of them across shards,
 * folding, subtree sums, deltas and retirement; and OOM counting from the
 * cgroups' own counters (CGS_OOM_CGROUP) in a fake cgroup tree. Expected
 * values are worked out by hand in the comments, not by redoing the
 * library's arithmetic. A fake /proc and cgroup tree live in a temp dir
 * (tests/support/fakeproc.c).
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/fakeproc.h"
#include "support/skip.h"
#include "support/snap.h"
#include "rollup/rollup_int.h"

static struct fakeproc F;

/* Retire what is removed: a cgroup goes grace_ms (2 s) after its removal
 * was first seen, so that a late exit still finds it. */
static int retire_graced(struct cgs_rollup *r)
{
	assert_int_equal(cgs_rollup_retire_removed(r), 0);
	F.now_ms += 2000;
	return cgs_rollup_retire_removed(r);
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ---------------------------------------------------------- */

/* A zeroed record: every counter 0, so each test sets what it checks. */
static struct cgs_record rec(enum cgs_kind kind, uint32_t pid, uint32_t tgid)
{
	CGS_OPTS(cgs_record, r);
	r.kind = kind;
	r.version = 16;
	r.fields = CGS_HAS_DELAY | CGS_HAS_BASIC;
	r.pid = kind == CGS_KIND_TGID ? 0 : pid;
	r.tgid = tgid;
	r.ppid = 1;
	return r;
}

static struct cgs_record proc_exit(uint32_t pid, uint32_t status)
{
	struct cgs_record r = rec(CGS_KIND_PROCESS, pid, pid);
	r.exit_status = status;
	return r;
}

/* A record in cgroup path (its directory made: a cgroup without one shows
 * as removed). */
static void put(struct cgs_rollup *r, unsigned shard, const char *path,
		const struct cgs_record *x)
{
	if (path[0] == '/')
		fp_mkdir(&F, path);
	assert_int_equal(cgt_add_path(r, shard, x, path), 0);
}

/* Index of the (not removed) cgroup at path; fails the case if absent. */
static size_t idx(const struct cgs_snapshot *s, const char *path)
{
	for (size_t i = 0; i < cgs_snapshot_count(s); i++) {
		const struct cgs_cgroup_stats *c = cgs_snapshot_get_cgroup(s, i);
		if (!strcmp(c->path, path) && !c->removed)
			return i;
	}
	fail_msg("no cgroup %s in the snapshot", path);
	return 0;
}

static bool has(const struct cgs_snapshot *s, const char *path)
{
	return cgt_cgroup_at(s, path, CGT_ANY) != NULL;
}

/* The cgroup at path, removed or not; fails the case if absent. */
static const struct cgs_cgroup_stats *any_of(const struct cgs_snapshot *s,
					     const char *path)
{
	const struct cgs_cgroup_stats *c = cgt_cgroup_at(s, path, CGT_ANY);

	if (!c)
		fail_msg("no cgroup %s in the snapshot", path);
	return c;
}

static const struct cgs_counters *set_of(const struct cgs_snapshot *s,
					 size_t i, enum cgs_counter_set set)
{
	const struct cgs_cgroup_stats *c = cgs_snapshot_get_cgroup(s, i);
	switch (set) {
	case CGS_SET_SELF:
		return c->self;
	case CGS_SET_SUBTREE:
		return c->subtree;
	case CGS_SET_SELF_DELTA:
		return c->self_delta;
	default:
		return c->subtree_delta;
	}
}

/* Exit outcomes of one set: clean, nonzero, signaled, core, oom. */
struct outc {
	uint64_t clean, nonzero, signaled, core, oom;
};

static void want_outc(const struct cgs_snapshot *s, const char *path,
		      enum cgs_counter_set set, struct outc w)
{
	const struct cgs_counters *c = set_of(s, idx(s, path), set);
	if (c->exit_clean != w.clean || c->exit_nonzero != w.nonzero ||
	    c->exit_signaled != w.signaled ||
	    c->exit_core_dumped != w.core || c->oom_kills != w.oom)
		fail_msg("%s set %d: clean/nonzero/signaled/core/oom got "
			 "%llu/%llu/%llu/%llu/%llu want %llu/%llu/%llu/%llu/"
			 "%llu",
			 path, (int)set, (unsigned long long)c->exit_clean,
			 (unsigned long long)c->exit_nonzero,
			 (unsigned long long)c->exit_signaled,
			 (unsigned long long)c->exit_core_dumped,
			 (unsigned long long)c->oom_kills,
			 (unsigned long long)w.clean,
			 (unsigned long long)w.nonzero,
			 (unsigned long long)w.signaled,
			 (unsigned long long)w.core,
			 (unsigned long long)w.oom);
}

static struct cgs_signal_counts sigs(const struct cgs_snapshot *s,
				     const char *path,
				     enum cgs_counter_set set)
{
	struct cgs_signal_counts c = { .sz = sizeof(c) };
	assert_int_equal(cgs_snapshot_get_signals(s, idx(s, path), set, &c), 0);
	assert_int_equal(c.sz, sizeof(c));
	return c;
}

/* Signal counts are exactly the (signal, count) pairs given, 0 ends. */
static void want_sigs(const struct cgs_snapshot *s, const char *path,
		      enum cgs_counter_set set, const int *pairs)
{
	struct cgs_signal_counts c = sigs(s, path, set);
	uint64_t want[CGS_SIGNAL_SLOTS] = { 0 }, sum = 0;
	for (; pairs[0]; pairs += 2)
		want[pairs[0]] = (uint64_t)pairs[1];
	for (int i = 0; i < CGS_SIGNAL_SLOTS; i++) {
		if (c.n[i] != want[i])
			fail_msg("%s set %d: signal %d: got %llu want %llu",
				 path, (int)set, i,
				 (unsigned long long)c.n[i],
				 (unsigned long long)want[i]);
		sum += c.n[i];
	}
	/* their sum is the set's exit_signaled */
	assert_int_equal(sum, set_of(s, idx(s, path), set)->exit_signaled);
}

static struct cgs_hist hist(const struct cgs_snapshot *s, size_t i,
			    enum cgs_counter_set set, enum cgs_hist_kind k)
{
	struct cgs_hist h;
	memset(&h, 0, sizeof(h));
	h.sz = sizeof(h);
	assert_int_equal(cgs_snapshot_get_hist(s, i, set, k, &h), 0);
	assert_int_equal(h.sz, sizeof(h));
	assert_int_equal(h.nbuckets, 19);
	/* cumulative along b, +Inf last and equal to count */
	for (unsigned b = 1; b < h.nbuckets; b++)
		assert_true(h.cumulative[b] >= h.cumulative[b - 1]);
	assert_true(h.le_ns[h.nbuckets - 1] == UINT64_MAX);
	assert_int_equal(h.cumulative[h.nbuckets - 1], h.count);
	/* the fine buckets (schema 0, 2^-19 .. 2^17 s): the classic ones are
	 * theirs two by two, the zeros in the first */
	assert_int_equal(h.schema, 0);
	assert_int_equal(h.fine_first, -19);
	assert_int_equal(h.nfine, 37);
	uint64_t c = h.zero_count;
	for (unsigned b = 0; b < h.nfine; b++) {
		c += h.fine[b];
		if (b % 2 && b / 2 + 1 < h.nbuckets)
			assert_int_equal(c, h.cumulative[b / 2]);
	}
	assert_int_equal(c, h.count);
	return h;
}

/* A histogram holding n observations all in bucket b (0: the zeros,
 * else fine[b - 1], of upper bound 2^(b - 20) s), and their sum. */
static void want_one_bucket(const struct cgs_hist *h, unsigned b, uint64_t n,
			    uint64_t sum_ns, const char *what)
{
	for (unsigned j = 0; j <= h->nfine; j++) {
		uint64_t want = j == b ? n : 0;
		uint64_t got = j ? h->fine[j - 1] : h->zero_count;
		if (got != want)
			fail_msg("%s: bucket %u got %llu want %llu (all "
				 "in bucket %u)",
				 what, j, (unsigned long long)got,
				 (unsigned long long)want, b);
	}
	assert_int_equal(h->count, n);
	if (h->sum_ns != sum_ns)
		fail_msg("%s: sum_ns got %llu want %llu", what,
			 (unsigned long long)h->sum_ns,
			 (unsigned long long)sum_ns);
}

/* Everything issue 11 keeps per cgroup and set, to compare snapshots. */
struct view {
	struct outc o;
	struct cgs_signal_counts sig;
	struct cgs_hist h[CGS_HIST__COUNT];
};

static void view_of(const struct cgs_snapshot *s, const char *path,
		    enum cgs_counter_set set, bool hists, struct view *v)
{
	memset(v, 0, sizeof(*v));
	size_t i = idx(s, path);
	const struct cgs_counters *c = set_of(s, i, set);
	v->o = (struct outc){ c->exit_clean, c->exit_nonzero,
			      c->exit_signaled, c->exit_core_dumped,
			      c->oom_kills };
	v->sig = sigs(s, path, set);
	for (int k = 0; hists && k < CGS_HIST__COUNT; k++)
		v->h[k] = hist(s, i, set, (enum cgs_hist_kind)k);
}

static void want_view_eq(const struct view *a, const struct view *b,
			 const char *what)
{
	if (memcmp(&a->o, &b->o, sizeof(a->o)))
		fail_msg("%s: outcomes differ", what);
	for (int i = 0; i < CGS_SIGNAL_SLOTS; i++)
		if (a->sig.n[i] != b->sig.n[i])
			fail_msg("%s: signal %d: %llu vs %llu", what, i,
				 (unsigned long long)a->sig.n[i],
				 (unsigned long long)b->sig.n[i]);
	for (int k = 0; k < CGS_HIST__COUNT; k++) {
		if (a->h[k].count != b->h[k].count ||
		    a->h[k].sum_ns != b->h[k].sum_ns ||
		    memcmp(a->h[k].cumulative, b->h[k].cumulative,
			   sizeof(a->h[k].cumulative)))
			fail_msg("%s: histogram %s differs", what,
				 cgs_hist_name((enum cgs_hist_kind)k));
	}
}

static void want_view_zero(const struct view *v, const char *what)
{
	struct view z;
	memset(&z, 0, sizeof(z));
	for (int k = 0; k < CGS_HIST__COUNT; k++) {
		/* bounds are not counts */
		memcpy(z.h[k].le_ns, v->h[k].le_ns, sizeof(z.h[k].le_ns));
	}
	want_view_eq(v, &z, what);
}

/* ---- 1. outcomes from wait statuses ------------------------------------ */

static void test_outcome_classify(void **state)
{
	(void)state;
	static const struct {
		uint32_t status;
		enum cgs_exit_outcome want;
		int sig;
	} cases[] = {
		{ 0, CGS_EXIT_CLEAN, 0 },
		{ 1u << 8, CGS_EXIT_NONZERO, 0 },
		{ 42u << 8, CGS_EXIT_NONZERO, 0 },
		{ 255u << 8, CGS_EXIT_NONZERO, 0 },
		{ 9, CGS_EXIT_SIGNALED, 9 },
		{ 15, CGS_EXIT_SIGNALED, 15 },
		{ 11 | 0x80, CGS_EXIT_CORE_DUMPED, 11 },
		{ 6 | 0x80, CGS_EXIT_CORE_DUMPED, 6 },
		{ 0x7f, CGS_EXIT_NONZERO, 0 },             /* stopped-ish */
		{ (19u << 8) | 0x7f, CGS_EXIT_NONZERO, 0 }, /* SIGSTOP stop */
		{ 0xffff, CGS_EXIT_NONZERO, 0 },           /* continued */
		{ 126, CGS_EXIT_SIGNALED, 126 },
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		int sig = -1;
		assert_int_equal(cgs_exit_classify(cases[i].status, &sig),
				 cases[i].want);
		assert_int_equal(sig, cases[i].sig);
		assert_int_equal(cgs_exit_classify(cases[i].status, NULL),
				 cases[i].want);
	}

	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ 1, "SIGHUP" },      { 2, "SIGINT" },
		{ 6, "SIGABRT" },     { 9, "SIGKILL" },
		{ 11, "SIGSEGV" },    { 15, "SIGTERM" },
		{ 17, "SIGCHLD" },    { 19, "SIGSTOP" },
		{ 31, "SIGSYS" },     { 32, "SIG32" },
		{ 33, "SIG33" },      { 34, "SIGRTMIN" },
		{ 35, "SIGRTMIN+1" }, { 64, "SIGRTMIN+30" },
		{ 127, "SIGRTMIN+93" },
	};
	for (size_t i = 0; i < NELEM(names); i++) {
		const char *n = cgs_signal_name(names[i].sig);
		assert_non_null(n);
		assert_string_equal(n, names[i].name);
	}
	/* every slot 1..127 has a name */
	for (int i = 1; i < CGS_SIGNAL_SLOTS; i++)
		assert_non_null(cgs_signal_name(i));
	assert_null(cgs_signal_name(0));
	assert_null(cgs_signal_name(128));
	assert_null(cgs_signal_name(-1));
	assert_null(cgs_signal_name(1000));
}

static void test_outcome_counts(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	const uint32_t st[] = { 0,	  1u << 8,	       42u << 8, 9,
				11 | 0x80, 0x7f, (19u << 8) | 0x7f, 15 };
	for (size_t i = 0; i < NELEM(st); i++) {
		struct cgs_record x = proc_exit(100 + (uint32_t)i, st[i]);
		put(r, 0, "/o", &x);
	}
	/* thread records with a status never count as process exits */
	struct cgs_record t = rec(CGS_KIND_THREAD, 201, 200);
	t.exit_status = 9;
	put(r, 0, "/o", &t);
	t.pid = 202;
	t.exit_status = 1u << 8;
	put(r, 0, "/o", &t);
	/* nor do TGID records */
	struct cgs_record g = rec(CGS_KIND_TGID, 0, 200);
	g.exit_status = 9;
	put(r, 0, "/o", &g);

	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	const struct cgs_counters *c = set_of(s, idx(s, "/o"), CGS_SET_SELF);
	assert_int_equal(c->tasks, 10);
	assert_int_equal(c->processes, 8);
	assert_int_equal(c->tgid_records, 1);
	/* clean: 0; nonzero: 1<<8, 42<<8, 0x7f, 0x137f; signaled: 9,
	 * 11|0x80, 15, of which one core dump; no OOM source */
	const struct outc w = { 1, 4, 3, 1, 0 };
	want_outc(s, "/o", CGS_SET_SELF, w);
	want_outc(s, "/o", CGS_SET_SUBTREE, w);
	want_outc(s, "/o", CGS_SET_SELF_DELTA, w);
	want_outc(s, "/", CGS_SET_SUBTREE, w);
	want_outc(s, "/", CGS_SET_SELF, (struct outc){ 0 });
	const int p[] = { 9, 1, 11, 1, 15, 1, 0 };
	want_sigs(s, "/o", CGS_SET_SELF, p);
	want_sigs(s, "/o", CGS_SET_SUBTREE_DELTA, p);
	want_sigs(s, "/", CGS_SET_SUBTREE, p);
	const int none[] = { 0 };
	want_sigs(s, "/", CGS_SET_SELF, none);
	want_sigs(s, CGS_UNKNOWN_CGROUP, CGS_SET_SELF, none);

	/* bad arguments; a smaller (older) struct gets only its bytes */
	size_t io = idx(s, "/o");
	struct cgs_signal_counts sc = { .sz = sizeof(sc) };
	assert_int_equal(cgs_snapshot_get_signals(NULL, io, 0, &sc), -EINVAL);
	assert_int_equal(cgs_snapshot_get_signals(s, io, 0, NULL), -EINVAL);
	assert_int_equal(cgs_snapshot_get_signals(s, cgs_snapshot_count(s), 0,
					      &sc),
			 -EINVAL);
	assert_int_equal(cgs_snapshot_get_signals(s, io, 4, &sc), -EINVAL);
	assert_int_equal(cgs_snapshot_get_signals(s, io, (enum cgs_counter_set)-1,
					      &sc),
			 -EINVAL);
	sc.sz = 0;
	assert_int_equal(cgs_snapshot_get_signals(s, io, 0, &sc), -EINVAL);
	sc.sz = sizeof(size_t) - 1;
	assert_int_equal(cgs_snapshot_get_signals(s, io, 0, &sc), -EINVAL);
	memset(&sc, 0xab, sizeof(sc));
	sc.sz = offsetof(struct cgs_signal_counts, n) + 12 * sizeof(uint64_t);
	assert_int_equal(cgs_snapshot_get_signals(s, io, 0, &sc), 0);
	assert_int_equal(sc.sz, offsetof(struct cgs_signal_counts, n) +
					12 * sizeof(uint64_t));
	assert_int_equal(sc.n[9], 1);
	assert_int_equal(sc.n[11], 1);
	assert_int_equal(sc.n[10], 0);
	assert_true(sc.n[12] == 0xababababababababull); /* not written */
	assert_true(sc.n[15] == 0xababababababababull);

	/* the next snapshot: deltas are 0 */
	cgs_snapshot_free(s);
	s = cgt_snap(r, 0, false, 0);
	want_outc(s, "/o", CGS_SET_SELF, w);
	want_outc(s, "/o", CGS_SET_SELF_DELTA, (struct outc){ 0 });
	want_sigs(s, "/o", CGS_SET_SELF_DELTA, none);
	want_sigs(s, "/o", CGS_SET_SELF, p);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- 2. shards, folding, subtrees, deltas, retirement ------------------ */

static void test_outcome_merge_fold(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, CGS_ROLLUP_HISTOGRAMS);
	struct cgs_record k = proc_exit(10, SIGKILL);
	struct cgs_record tm = proc_exit(11, SIGTERM);
	struct cgs_record seg = proc_exit(12, SIGSEGV | 0x80);
	struct cgs_record one = proc_exit(13, 1u << 8);
	struct cgs_record ok = proc_exit(14, 0);
	/* /p/c: SIGKILL on both shards, SIGTERM on shard 1; /p/c/d: exit 1
	 * and a core dump; /p: a clean exit */
	put(r, 0, "/p/c", &k);
	put(r, 1, "/p/c", &k);
	put(r, 1, "/p/c", &tm);
	put(r, 0, "/p/c/d", &one);
	put(r, 1, "/p/c/d", &seg);
	put(r, 1, "/p", &ok);

	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	want_outc(s, "/p/c", CGS_SET_SELF, (struct outc){ 0, 0, 3, 0, 0 });
	want_outc(s, "/p/c", CGS_SET_SUBTREE, (struct outc){ 0, 1, 4, 1, 0 });
	want_outc(s, "/p/c/d", CGS_SET_SELF, (struct outc){ 0, 1, 1, 1, 0 });
	want_outc(s, "/p", CGS_SET_SELF, (struct outc){ 1, 0, 0, 0, 0 });
	want_outc(s, "/p", CGS_SET_SUBTREE, (struct outc){ 1, 1, 4, 1, 0 });
	want_outc(s, "/p", CGS_SET_SUBTREE_DELTA,
		  (struct outc){ 1, 1, 4, 1, 0 });
	const int pc[] = { SIGKILL, 2, SIGTERM, 1, 0 };
	const int pcsub[] = { SIGKILL, 2, SIGTERM, 1, SIGSEGV, 1, 0 };
	const int none[] = { 0 };
	want_sigs(s, "/p/c", CGS_SET_SELF, pc);
	want_sigs(s, "/p/c", CGS_SET_SUBTREE, pcsub);
	want_sigs(s, "/p", CGS_SET_SELF, none);
	want_sigs(s, "/p", CGS_SET_SUBTREE, pcsub);
	want_sigs(s, "/", CGS_SET_SUBTREE, pcsub);
	want_sigs(s, "/", CGS_SET_SUBTREE_DELTA, pcsub);
	/* histograms merge too: /p/c's lifetime has its 3 records (etime 0:
	 * bucket 0), /p's subtree all 6 */
	struct cgs_hist h = hist(s, idx(s, "/p/c"), CGS_SET_SELF,
				 CGS_HIST_LIFETIME);
	want_one_bucket(&h, 0, 3, 0, "/p/c lifetime");
	h = hist(s, idx(s, "/p"), CGS_SET_SUBTREE, CGS_HIST_PROC_LIFETIME);
	want_one_bucket(&h, 0, 6, 0, "/p subtree process lifetime");
	cgs_snapshot_free(s);

	/* one more SIGKILL in /p/c/d */
	put(r, 0, "/p/c/d", &k);
	/* folded at depth 1, without advancing the baseline: /p's self gets
	 * its descendants (self of the ancestor), deltas since the last
	 * snapshot only the new SIGKILL */
	s = cgt_snap(r, 1, true, 0);
	assert_false(has(s, "/p/c"));
	assert_false(has(s, "/p/c/d"));
	const struct outc all = { 1, 1, 5, 1, 0 };
	want_outc(s, "/p", CGS_SET_SELF, all);
	want_outc(s, "/p", CGS_SET_SUBTREE, all);
	want_outc(s, "/p", CGS_SET_SELF_DELTA, (struct outc){ 0, 0, 1, 0, 0 });
	want_outc(s, "/", CGS_SET_SUBTREE_DELTA,
		  (struct outc){ 0, 0, 1, 0, 0 });
	const int pall[] = { SIGKILL, 3, SIGTERM, 1, SIGSEGV, 1, 0 };
	const int pk1[] = { SIGKILL, 1, 0 };
	want_sigs(s, "/p", CGS_SET_SELF, pall);
	want_sigs(s, "/p", CGS_SET_SELF_DELTA, pk1);
	want_sigs(s, "/", CGS_SET_SUBTREE, pall);
	want_sigs(s, "/", CGS_SET_SELF, none);
	h = hist(s, idx(s, "/p"), CGS_SET_SELF, CGS_HIST_CPU);
	want_one_bucket(&h, 0, 7, 0, "/p folded cpu");
	h = hist(s, idx(s, "/p"), CGS_SET_SELF_DELTA, CGS_HIST_CPU);
	want_one_bucket(&h, 0, 1, 0, "/p folded cpu delta");
	cgs_snapshot_free(s);

	/* no_delta kept the baseline: the same delta again, unfolded */
	s = cgt_snap(r, 0, false, 0);
	want_sigs(s, "/p/c/d", CGS_SET_SELF_DELTA, pk1);
	want_sigs(s, "/p/c", CGS_SET_SUBTREE_DELTA, pk1);
	want_outc(s, "/p/c/d", CGS_SET_SELF_DELTA,
		  (struct outc){ 0, 0, 1, 0, 0 });
	cgs_snapshot_free(s);
	/* and now it advanced */
	s = cgt_snap(r, 0, false, 0);
	want_sigs(s, "/", CGS_SET_SUBTREE_DELTA, none);
	want_sigs(s, "/", CGS_SET_SUBTREE, pall);
	want_outc(s, "/", CGS_SET_SUBTREE_DELTA, (struct outc){ 0 });
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

static void retire_case(unsigned flags)
{
	bool hists = flags & CGS_ROLLUP_HISTOGRAMS;
	struct cgs_rollup *r = fp_rollup(&F, 2, flags);
	fp_mkdir(&F, "/r/child");
	struct cgs_record k = proc_exit(10, SIGKILL);
	struct cgs_record seg = proc_exit(11, SIGSEGV | 0x80);
	struct cgs_record ok = proc_exit(12, 0);
	struct cgs_record tm = proc_exit(13, SIGTERM);
	k.etime_us = 5;     /* lifetime bucket 2 */
	seg.utime_us = 17;  /* cpu bucket 3 */
	ok.delay[CGS_DELAY_CPU].total_ns = 1001; /* delay bucket 1 */
	put(r, 0, "/r/child", &k);
	put(r, 1, "/r/child", &seg);
	put(r, 1, "/r/child", &ok);
	put(r, 0, "/r", &tm);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	struct view sub1, root1, d;
	view_of(s, "/r", CGS_SET_SUBTREE, hists, &sub1);
	view_of(s, "/", CGS_SET_SUBTREE, hists, &root1);
	const int want[] = { SIGKILL, 1, SIGSEGV, 1, SIGTERM, 1, 0 };
	want_sigs(s, "/r", CGS_SET_SUBTREE, want);
	want_outc(s, "/r", CGS_SET_SUBTREE, (struct outc){ 1, 0, 3, 1, 0 });
	if (hists) {
		struct cgs_hist h = hist(s, idx(s, "/r"), CGS_SET_SUBTREE,
					 CGS_HIST_LIFETIME);
		assert_int_equal(h.count, 4);
		assert_int_equal(h.zero_count, 3); /* etime 0 */
		assert_int_equal(h.fine[2], 1);    /* etime 5 us */
		assert_int_equal(h.sum_ns, 5000);
	} else {
		struct cgs_hist h = { .sz = sizeof(h) };
		assert_int_equal(cgs_snapshot_get_hist(s, idx(s, "/r"),
						   CGS_SET_SUBTREE,
						   CGS_HIST_LIFETIME, &h),
				 -ENODATA);
	}
	cgs_snapshot_free(s);

	/* the child goes: retired on both shards into /r's carry */
	fp_rmdir(&F, "/r/child");
	assert_int_equal(retire_graced(r), 2);
	s = cgt_snap(r, 0, false, 0);
	assert_false(has(s, "/r/child"));
	struct view sub2, root2;
	view_of(s, "/r", CGS_SET_SUBTREE, hists, &sub2);
	view_of(s, "/", CGS_SET_SUBTREE, hists, &root2);
	want_view_eq(&sub2, &sub1, "/r subtree after retiring /r/child");
	want_view_eq(&root2, &root1, "/ subtree after retiring /r/child");
	view_of(s, "/r", CGS_SET_SUBTREE_DELTA, hists, &d);
	want_view_zero(&d, "/r subtree delta after retiring /r/child");
	view_of(s, "/", CGS_SET_SUBTREE_DELTA, hists, &d);
	want_view_zero(&d, "/ subtree delta after retiring /r/child");
	/* /r's self is its own SIGTERM only */
	const int selfr[] = { SIGTERM, 1, 0 };
	want_sigs(s, "/r", CGS_SET_SELF, selfr);
	cgs_snapshot_free(s);

	/* a new exit in /r, then /r goes too */
	put(r, 1, "/r", &k);
	s = cgt_snap(r, 0, false, 0);
	view_of(s, "/", CGS_SET_SUBTREE, hists, &root1);
	view_of(s, "/", CGS_SET_SUBTREE_DELTA, hists, &d);
	assert_int_equal(d.sig.n[SIGKILL], 1);
	assert_int_equal(d.o.signaled, 1);
	if (hists)
		assert_int_equal(d.h[CGS_HIST_LIFETIME].count, 1);
	cgs_snapshot_free(s);
	fp_rmdir(&F, "/r");
	assert_int_equal(retire_graced(r), 2);
	s = cgt_snap(r, 0, false, 0);
	assert_false(has(s, "/r"));
	view_of(s, "/", CGS_SET_SUBTREE, hists, &root2);
	want_view_eq(&root2, &root1, "/ subtree after retiring /r");
	assert_int_equal(root2.sig.n[SIGKILL], 2);
	view_of(s, "/", CGS_SET_SUBTREE_DELTA, hists, &d);
	want_view_zero(&d, "/ subtree delta after retiring /r");
	view_of(s, "/", CGS_SET_SELF, hists, &d);
	want_view_zero(&d, "/ self after retiring /r");
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- 2b. extra sets made when first needed (issue 22 point 3) ---------- */

/* The node of path in shard 0 (internals). */
static struct cgsi_cgnode *node_of(struct cgs_rollup *r, const char *path)
{
	size_t len = strlen(path);
	return cgsi_cgtab_find(&r->shards[0].cgs, path, len,
			       cgsi_path_hash(path, len));
}

/* A cgroup's histogram words come with its first record, its signal
 * words with its first exit by signal (the histograms kept), its carry
 * with the first descendant retired into it; what the snapshots show is
 * the same as if all had been there from the start. */
static void test_lazy_sets(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, CGS_ROLLUP_HISTOGRAMS);
	struct cgs_record a = proc_exit(100, 0);
	a.etime_us = 3000;
	put(r, 0, "/l", &a);
	put(r, 0, "/l/c", &a);
	struct cgsi_cgnode *n = node_of(r, "/l");
	assert_non_null(n);
	assert_non_null(n->x);
	assert_false(n->sigs);
	assert_null(n->carry);
	assert_null(node_of(r, "/")); /* nothing accounted there: no node */
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	assert_int_equal(hist(s, idx(s, "/l"), CGS_SET_SELF,
			      CGS_HIST_LIFETIME).count, 1);
	cgs_snapshot_free(s);

	/* a kill: widened, the histogram kept, the signal counted */
	struct cgs_record k = proc_exit(101, SIGKILL);
	k.etime_us = 3000;
	put(r, 0, "/l", &k);
	put(r, 0, "/l/c", &k);
	assert_true(n->sigs);
	assert_null(n->carry);
	s = cgt_snap(r, 0, false, 0);
	struct view v, d;
	view_of(s, "/l", CGS_SET_SELF, true, &v);
	assert_int_equal(v.h[CGS_HIST_LIFETIME].count, 2);
	assert_int_equal(v.h[CGS_HIST_LIFETIME].sum_ns, 6000000);
	assert_int_equal(v.sig.n[SIGKILL], 1);
	assert_int_equal(v.o.clean, 1);
	view_of(s, "/l", CGS_SET_SELF_DELTA, true, &d);
	assert_int_equal(d.h[CGS_HIST_LIFETIME].count, 1);
	assert_int_equal(d.sig.n[SIGKILL], 1);
	struct view sub;
	view_of(s, "/l", CGS_SET_SUBTREE, true, &sub);
	cgs_snapshot_free(s);

	/* /l/c goes: /l's carry is made, its subtree unchanged */
	fp_rmdir(&F, "/l/c");
	assert_int_equal(retire_graced(r), 1);
	assert_non_null(n->carry);
	assert_non_null(n->carry->x);
	s = cgt_snap(r, 0, false, 0);
	struct view sub2;
	view_of(s, "/l", CGS_SET_SUBTREE, true, &sub2);
	want_view_eq(&sub2, &sub, "/l subtree after retiring /l/c");
	assert_int_equal(sub2.sig.n[SIGKILL], 2);
	assert_int_equal(sub2.h[CGS_HIST_LIFETIME].count, 4);
	view_of(s, "/l", CGS_SET_SUBTREE_DELTA, true, &d);
	want_view_zero(&d, "/l subtree delta after retiring /l/c");
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* A cgroup's histogram words are sparse (extra.h, struct cgsi_xnode):
 * slots given as buckets are first used, grown past the first 8, kept
 * when the signal counts come; every bucket shows as if dense, and the
 * delta of each snapshot only what came since the one before. */
static void test_sparse_sets(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, CGS_ROLLUP_HISTOGRAMS);
	struct cgs_record a = proc_exit(200, 0);
	/* lifetimes 2^i us, i = 0..29: fine buckets 10 .. 39 - 19 apart */
	for (unsigned i = 0; i < 20; i++) {
		a.etime_us = 1ull << i;
		put(r, 0, "/sp", &a);
	}
	struct cgsi_cgnode *n = node_of(r, "/sp");
	assert_non_null(n);
	assert_false(n->sigs);
	assert_true(n->x->cap < CGSI_XSET_HIST_WORDS); /* not all 156 */
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	struct cgs_hist h = hist(s, idx(s, "/sp"), CGS_SET_SELF,
				 CGS_HIST_LIFETIME);
	assert_int_equal(h.count, 20);
	for (unsigned i = 0; i < 20; i++) {
		/* 2^i us = 2^(i - 19.93) s: bucket e with 2^(e-20) < v <=
		 * 2^(e-19), e = i (the 2^-10 of 1e-6 rounded) */
		uint64_t ns = 1000ull << i;
		unsigned b = cgsi_hist_bucket(ns) - 1;
		assert_int_equal(h.fine[b], 1);
	}
	cgs_snapshot_free(s);
	/* a kill with a new bucket: widened, every slot kept */
	struct cgs_record k = proc_exit(201, SIGKILL);
	k.etime_us = 1ull << 25;
	put(r, 0, "/sp", &k);
	a.etime_us = 1ull << 26; /* and a new bucket after */
	put(r, 0, "/sp", &a);
	assert_true(n->sigs);
	s = cgt_snap(r, 0, false, 0);
	h = hist(s, idx(s, "/sp"), CGS_SET_SELF, CGS_HIST_LIFETIME);
	assert_int_equal(h.count, 22);
	for (unsigned i = 0; i < 27; i++) {
		unsigned b = cgsi_hist_bucket(1000ull << i) - 1;
		assert_int_equal(h.fine[b], i < 20 || i > 24 ? 1 : 0);
	}
	struct view d;
	view_of(s, "/sp", CGS_SET_SELF_DELTA, true, &d);
	assert_int_equal(d.h[CGS_HIST_LIFETIME].count, 2);
	assert_int_equal(d.h[CGS_HIST_LIFETIME].sum_ns,
			 (1000ull << 25) + (1000ull << 26));
	assert_int_equal(d.sig.n[SIGKILL], 1);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

static void test_retire_kept(void **state)
{
	(void)state;
	retire_case(CGS_ROLLUP_HISTOGRAMS);
}

static void test_retire_kept_nohist(void **state)
{
	(void)state;
	retire_case(0);
}

/* cgs_rollup_retire() with the given consumer state; what it did. */
static struct cgs_retire_result retire_for(struct cgs_rollup *r,
					   uint64_t served, uint64_t wait_ms,
					   uint64_t max_waiting)
{
	struct cgs_retire_opts o = { .sz = sizeof(o), .served = served,
				     .wait_ms = wait_ms,
				     .max_waiting = max_waiting };
	struct cgs_retire_result res = { .sz = sizeof(res) };
	assert_int_equal(cgs_rollup_retire(r, &o, &res), 0);
	assert_int_equal(res.sz, sizeof(res));
	return res;
}

/* A snapshot's generation, freed. */
static uint64_t snap_gen(struct cgs_rollup *r)
{
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	uint64_t g = cgs_snapshot_get_totals(s)->snapshot_gen;
	cgs_snapshot_free(s);
	return g;
}

#define RETIRED(res, n, uns, frc, wait)                                     \
	do {                                                                 \
		struct cgs_retire_result r_ = (res);                         \
		assert_int_equal(r_.retired, n);                             \
		assert_int_equal(r_.unserved, uns);                          \
		assert_int_equal(r_.forced, frc);                            \
		assert_int_equal(r_.waiting, wait);                          \
	} while (0)

/* Removed cgroups wait for a consumer: those whose final counts it got
 * go; the others wait wait_ms since their removal was seen, and no more
 * than max_waiting of them (the longest removed go first), counted. A
 * cgroup spread over two shards counts once. */
static void test_retire_consumer(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	struct cgs_record ok = proc_exit(30, 0);
	put(r, 0, "/w/a", &ok);
	put(r, 1, "/w/a", &ok);
	put(r, 0, "/w/b", &ok);
	put(r, 1, "/w/c", &ok);
	fp_rmdir(&F, "/w/a");
	fp_rmdir(&F, "/w/b");
	fp_rmdir(&F, "/w/c");
	uint64_t g1 = snap_gen(r); /* shows them removed, seen now */
	assert_true(g1 >= 1);
	RETIRED(retire_for(r, 0, 5000, 0), 0, 0, 0, 0); /* grace: 2 s */
	F.now_ms += 2000;
	RETIRED(retire_for(r, 0, 5000, 0), 0, 0, 0, 3);
	RETIRED(retire_for(r, g1 - 1, 5000, 0), 0, 0, 0, 3);
	/* a late exit of /w/c: its final counts are in the next snapshot */
	assert_int_equal(cgt_add_path(r, 1, &ok, "/w/c"), 0);
	uint64_t g2 = snap_gen(r);
	assert_true(g2 > g1);
	/* the consumer got g1: /w/a and /w/b are done, /w/c waits */
	RETIRED(retire_for(r, g1, 5000, 0), 2, 0, 0, 1);
	F.now_ms += 2999;
	RETIRED(retire_for(r, g1, 5000, 0), 0, 0, 0, 1);
	F.now_ms += 1; /* 5 s since its removal was seen: retired unserved */
	RETIRED(retire_for(r, g1, 5000, 0), 1, 1, 0, 0);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	assert_false(has(s, "/w/a") || has(s, "/w/b") || has(s, "/w/c"));
	assert_int_equal(set_of(s, idx(s, "/w"), CGS_SET_SUBTREE)->tasks, 5);
	cgs_snapshot_free(s);

	/* three removed 100 ms apart, at most one may wait: the two
	 * removed first are forced out, whatever wait_ms says */
	const char *x[] = { "/x/1", "/x/2", "/x/3" };
	for (size_t i = 0; i < NELEM(x); i++)
		put(r, 0, x[i], &ok);
	for (size_t i = 0; i < NELEM(x); i++) {
		fp_rmdir(&F, x[i]);
		snap_gen(r);
		F.now_ms += 100;
	}
	F.now_ms += 2000;
	RETIRED(retire_for(r, 0, 60000, 1), 2, 2, 2, 1);
	s = cgt_snap(r, 0, false, 0);
	assert_false(has(s, "/x/1") || has(s, "/x/2"));
	assert_true(any_of(s, "/x/3")->removed);
	assert_int_equal(set_of(s, idx(s, "/x"), CGS_SET_SUBTREE)->tasks, 3);
	cgs_snapshot_free(s);
	/* no options: every snapshot counts as consumed */
	struct cgs_retire_result res = { .sz = sizeof(res) };
	assert_int_equal(cgs_rollup_retire(r, NULL, &res), 0);
	RETIRED(res, 1, 0, 0, 0);
	/* what it refuses */
	struct { struct cgs_retire_opts o; uint64_t more; } big = {
		.o = { .sz = sizeof(big) }, .more = 1 };
	assert_int_equal(cgs_rollup_retire(r, &big.o, NULL), -E2BIG);
	res.sz = 0;
	assert_int_equal(cgs_rollup_retire(r, NULL, &res), -EINVAL);
	assert_int_equal(cgs_rollup_retire(NULL, NULL, NULL), -EINVAL);
	cgs_rollup_free(r);
}

/* A removed cgroup whose exits were split over two shards, one of them
 * arriving after the snapshot that first showed it removed: neither node
 * is retired until a snapshot has shown both, so the path's cumulative
 * count never drops and its final value is shown (a bug the cgroup churn
 * test found: shard 0's node went alone, the count went 2 -> 1). */
static void test_retire_split(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	struct cgs_record ok = proc_exit(20, 0);
	put(r, 0, "/s/c", &ok);
	put(r, 0, "/s/c", &ok);
	fp_rmdir(&F, "/s/c");
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	const struct cgs_cgroup_stats *c = any_of(s, "/s/c");
	assert_int_equal(c->self->tasks, 2);
	assert_true(c->removed);
	cgs_snapshot_free(s);
	/* the late exit, on the other shard */
	assert_int_equal(cgt_add_path(r, 1, &ok, "/s/c"), 0);
	assert_int_equal(cgs_rollup_retire_removed(r), 0);
	s = cgt_snap(r, 0, false, 0);
	c = any_of(s, "/s/c");
	assert_int_equal(c->self->tasks, 3);
	assert_int_equal(c->self_delta->tasks, 1);
	cgs_snapshot_free(s);
	/* now shown whole: both nodes go, into /s's carry */
	F.now_ms += 2000; /* removed since the first snapshot above */
	assert_int_equal(cgs_rollup_retire_removed(r), 2);
	s = cgt_snap(r, 0, false, 0);
	assert_false(has(s, "/s/c"));
	const struct cgs_counters *sub = set_of(s, idx(s, "/s"),
						 CGS_SET_SUBTREE);
	assert_int_equal(sub->tasks, 3);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- 3. histograms ------------------------------------------------------ */

/* The bucket as it was computed before cgsi_hist_steps (extra.h): with
 * c = ceil(ns * 2^19 / 1e9), e the bit length of c - 1. */
static unsigned hist_bucket_div(uint64_t ns)
{
	if (!ns)
		return 0;
	if (ns > (1000000000ull << CGSI_HIST_FINE_MAX))
		return CGSI_HIST_BUCKETS - 1;
	uint64_t c = (ns * 1024u + 1953124u) / 1953125u;
	unsigned e = c > 1 ? 64u - (unsigned)__builtin_clzll(c - 1) : 0;
	return 1 + e;
}

static void want_bucket(uint64_t ns)
{
	unsigned want = hist_bucket_div(ns), got = cgsi_hist_bucket(ns);
	if (want != got)
		fail_msg("ns %llu: bucket %u, the division says %u",
			 (unsigned long long)ns, got, want);
}

/* The table gives the division's bucket: every value below 2^21 ns,
 * every one within 4096 of each bound and of each power of 2, and 2^20
 * random values of every bit length. */
static void test_hist_steps(void **state)
{
	(void)state;
	for (uint64_t ns = 0; ns < (1u << 21); ns++)
		want_bucket(ns);
	for (int e = CGSI_HIST_FINE_MIN; e <= CGSI_HIST_FINE_MAX; e++) {
		/* bound 2^e s in ns, rounded down: 5^9 * 2^(e + 9) */
		uint64_t le = e + 9 >= 0 ? 1953125ull << (e + 9)
					 : 1953125ull >> -(e + 9);
		for (uint64_t d = 0; d <= 4096; d++) {
			want_bucket(le + d);
			if (d <= le)
				want_bucket(le - d);
		}
	}
	for (unsigned b = 0; b < 64; b++)
		for (uint64_t d = 0; d <= 4096; d++) {
			want_bucket((1ull << b) + d);
			want_bucket((1ull << b) - d);
		}
	want_bucket(UINT64_MAX);
	uint64_t x = 0x9e3779b97f4a7c15ull; /* xorshift64 */
	for (unsigned i = 0; i < (1u << 20); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		want_bucket(x >> (i % 64));
	}
}

static void test_hist_buckets(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, CGS_ROLLUP_HISTOGRAMS);
	const uint64_t top = 65536000000000ull; /* 2^16 s, ns */
	/* a task lifetime (etime_us) -> its bucket (want_one_bucket()), one
	 * cgroup each; bounds 2^(b - 20) s: 1.9, 3.8, 7.6, 15.3, 30.5 us */
	static const struct {
		uint64_t us;
		unsigned b;
	} life[] = {
		{ 0, 0 },  { 1, 1 },  { 2, 2 },	  { 3, 2 },  { 4, 3 },
		{ 7, 3 },  { 8, 4 }, { 16, 5 },  { 17, 5 }, { 64, 7 },
		{ 1000000, 20 }, { 1000001, 21 }, { 65536000000ull, 36 },
		{ 65536000001ull, 37 }, { UINT64_MAX / 1000, 37 },
	};
	char path[64];
	for (size_t i = 0; i < NELEM(life); i++) {
		struct cgs_record t = rec(CGS_KIND_THREAD, 1001, 1000);
		t.etime_us = life[i].us;
		snprintf(path, sizeof(path), "/life%zu", i);
		put(r, 0, path, &t);
	}
	/* CPU: utime + stime, us */
	static const struct {
		uint64_t u, s;
		unsigned b;
	} cpu[] = {
		{ 0, 0, 0 }, { 1, 0, 1 }, { 0, 1, 1 }, { 1, 1, 2 },
		{ 3, 2, 3 }, { 16, 0, 5 }, { 8, 9, 5 }, { 0, 33, 6 },
	};
	for (size_t i = 0; i < NELEM(cpu); i++) {
		struct cgs_record t = rec(CGS_KIND_THREAD, 1001, 1000);
		t.utime_us = cpu[i].u;
		t.stime_us = cpu[i].s;
		snprintf(path, sizeof(path), "/cpu%zu", i);
		put(r, 0, path, &t);
	}
	/* CPU delay, ns: 2^-19 s is 1907.3 ns, 2^-18 s 3814.7 */
	static const struct {
		uint64_t ns;
		unsigned b;
	} dly[] = {
		{ 0, 0 },	   { 1, 1 },	      { 999, 1 },
		{ 1907, 1 },	   { 1908, 2 },	      { 3814, 2 },
		{ 3815, 3 },	   { 1000000000, 20 }, { 1000000001, 21 },
		{ top, 36 },	   { top + 1, 37 },
		{ UINT64_MAX, 37 }, { UINT64_MAX - 998, 37 },
	};
	for (size_t i = 0; i < NELEM(dly); i++) {
		struct cgs_record t = rec(CGS_KIND_THREAD, 1001, 1000);
		t.delay[CGS_DELAY_CPU].total_ns = dly[i].ns;
		snprintf(path, sizeof(path), "/dly%zu", i);
		put(r, 0, path, &t);
	}
	/* process lifetime: tgetime_us with CGS_HAS_TGID, else etime_us;
	 * process records only */
	struct cgs_record pa = proc_exit(2000, 0);
	pa.fields |= CGS_HAS_TGID;
	pa.etime_us = 5;     /* lifetime bucket 3 */
	pa.tgetime_us = 17;  /* process lifetime bucket 5 */
	put(r, 0, "/pl/tgid", &pa);
	struct cgs_record pb = proc_exit(2001, 0);
	pb.etime_us = 17;    /* both bucket 5 */
	pb.tgetime_us = 1;   /* ignored: no CGS_HAS_TGID */
	put(r, 0, "/pl/old", &pb);
	struct cgs_record th = rec(CGS_KIND_THREAD, 2003, 2002);
	th.fields |= CGS_HAS_TGID;
	th.etime_us = 2;
	th.tgetime_us = 64;
	put(r, 0, "/pl/thread", &th);
	struct cgs_record tg = rec(CGS_KIND_TGID, 0, 2002);
	tg.etime_us = 100;
	put(r, 0, "/pl/thread", &tg); /* no observation at all */

	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	char what[96];
	for (size_t i = 0; i < NELEM(life); i++) {
		snprintf(path, sizeof(path), "/life%zu", i);
		snprintf(what, sizeof(what), "lifetime %llu us",
			 (unsigned long long)life[i].us);
		size_t ci = idx(s, path);
		struct cgs_hist h = hist(s, ci, CGS_SET_SELF,
					 CGS_HIST_LIFETIME);
		want_one_bucket(&h, life[i].b, 1, life[i].us * 1000, what);
		/* a thread: no process lifetime; cpu and delay 0: bucket 0 */
		h = hist(s, ci, CGS_SET_SELF, CGS_HIST_PROC_LIFETIME);
		want_one_bucket(&h, 0, 0, 0, "thread: no process lifetime");
		h = hist(s, ci, CGS_SET_SELF, CGS_HIST_CPU);
		want_one_bucket(&h, 0, 1, 0, "zero cpu");
	}
	for (size_t i = 0; i < NELEM(cpu); i++) {
		snprintf(path, sizeof(path), "/cpu%zu", i);
		snprintf(what, sizeof(what), "cpu %llu+%llu us",
			 (unsigned long long)cpu[i].u,
			 (unsigned long long)cpu[i].s);
		struct cgs_hist h = hist(s, idx(s, path), CGS_SET_SELF,
					 CGS_HIST_CPU);
		want_one_bucket(&h, cpu[i].b, 1,
				(cpu[i].u + cpu[i].s) * 1000, what);
	}
	for (size_t i = 0; i < NELEM(dly); i++) {
		snprintf(path, sizeof(path), "/dly%zu", i);
		snprintf(what, sizeof(what), "cpu delay %llu ns",
			 (unsigned long long)dly[i].ns);
		struct cgs_hist h = hist(s, idx(s, path), CGS_SET_SELF,
					 CGS_HIST_CPU_DELAY);
		want_one_bucket(&h, dly[i].b, 1, dly[i].ns, what);
	}
	struct cgs_hist h = hist(s, idx(s, "/pl/tgid"), CGS_SET_SELF,
				 CGS_HIST_PROC_LIFETIME);
	want_one_bucket(&h, 5, 1, 17000, "process lifetime from tgetime");
	h = hist(s, idx(s, "/pl/tgid"), CGS_SET_SELF, CGS_HIST_LIFETIME);
	want_one_bucket(&h, 3, 1, 5000, "its task lifetime");
	h = hist(s, idx(s, "/pl/old"), CGS_SET_SELF, CGS_HIST_PROC_LIFETIME);
	want_one_bucket(&h, 5, 1, 17000, "process lifetime from etime");
	h = hist(s, idx(s, "/pl/thread"), CGS_SET_SELF,
		 CGS_HIST_PROC_LIFETIME);
	want_one_bucket(&h, 0, 0, 0, "a thread has no process lifetime");
	h = hist(s, idx(s, "/pl/thread"), CGS_SET_SELF, CGS_HIST_LIFETIME);
	want_one_bucket(&h, 2, 1, 2000, "thread lifetime, TGID record not");
	/* subtree of /pl: 2 process lifetimes (buckets 5, 5), 3 lifetimes
	 * (3, 5, 2) */
	h = hist(s, idx(s, "/pl"), CGS_SET_SUBTREE, CGS_HIST_PROC_LIFETIME);
	want_one_bucket(&h, 5, 2, 34000, "/pl subtree process lifetime");
	h = hist(s, idx(s, "/pl"), CGS_SET_SUBTREE, CGS_HIST_LIFETIME);
	assert_int_equal(h.zero_count, 0);
	assert_int_equal(h.fine[1], 1);
	assert_int_equal(h.fine[2], 1);
	assert_int_equal(h.fine[4], 1);
	assert_int_equal(h.cumulative[0], 1);
	assert_int_equal(h.cumulative[1], 2);
	assert_int_equal(h.cumulative[2], 3);
	assert_int_equal(h.sum_ns, 2000 + 5000 + 17000);
	h = hist(s, idx(s, "/pl"), CGS_SET_SELF, CGS_HIST_LIFETIME);
	want_one_bucket(&h, 0, 0, 0, "/pl self: nothing");

	/* classic bounds: 4^(b - 9) s in ns rounded down, then +Inf */
	assert_true(h.le_ns[0] == 3814 && h.le_ns[1] == 15258 &&
		    h.le_ns[8] == 250000000 && h.le_ns[9] == 1000000000 &&
		    h.le_ns[17] == top && h.le_ns[18] == UINT64_MAX);
	for (unsigned b = 10; b < 18; b++)
		assert_true(h.le_ns[b] == 4 * h.le_ns[b - 1]);

	/* quantiles, in the fine buckets: one observation in
	 * (3814.7, 7629.4] ns */
	h = hist(s, idx(s, "/cpu4"), CGS_SET_SELF, CGS_HIST_CPU);
	assert_int_equal(cgs_hist_quantile(&h, 0.5), 5722);
	assert_int_equal(cgs_hist_quantile(&h, 1), 7629);
	assert_int_equal(cgs_hist_quantile(&h, 2), 7629);
	/* a caller of 1.2 (no fine buckets): the classic (3814, 15258] */
	h.sz = offsetof(struct cgs_hist, schema);
	assert_int_equal(cgs_hist_quantile(&h, 0.5), 9536);
	/* in the unbounded bucket: the last finite bound */
	h = hist(s, idx(s, "/life13"), CGS_SET_SELF, CGS_HIST_LIFETIME);
	assert_true(cgs_hist_quantile(&h, 0.5) == top);
	h.sz = offsetof(struct cgs_hist, schema);
	assert_true(cgs_hist_quantile(&h, 0.5) == top);
	h = hist(s, idx(s, "/pl"), CGS_SET_SELF, CGS_HIST_LIFETIME);
	assert_int_equal(cgs_hist_quantile(&h, 0.5), 0); /* empty */
	assert_int_equal(cgs_hist_quantile(NULL, 0.5), 0);

	/* names */
	assert_string_equal(cgs_hist_name(CGS_HIST_LIFETIME), "lifetime");
	assert_string_equal(cgs_hist_name(CGS_HIST_PROC_LIFETIME),
			    "process_lifetime");
	assert_string_equal(cgs_hist_name(CGS_HIST_CPU), "cpu");
	assert_string_equal(cgs_hist_name(CGS_HIST_CPU_DELAY), "cpu_delay");
	assert_null(cgs_hist_name(CGS_HIST__COUNT));
	assert_null(cgs_hist_name((enum cgs_hist_kind)-1));
	assert_int_equal(cgs_snapshot_get_totals(s)->histograms, 1);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

static void test_hist_api(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, CGS_ROLLUP_HISTOGRAMS);
	struct cgs_record t = rec(CGS_KIND_THREAD, 11, 10);
	t.etime_us = 17;   /* bucket 5 */
	t.utime_us = 2;    /* cpu bucket 2 */
	put(r, 0, "/h/a", &t);
	put(r, 1, "/h/a", &t);
	t.etime_us = 1;    /* bucket 1 */
	put(r, 1, "/h/a/b", &t);

	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	size_t ia = idx(s, "/h/a");
	struct cgs_hist h = hist(s, ia, CGS_SET_SELF, CGS_HIST_LIFETIME);
	want_one_bucket(&h, 5, 2, 34000, "two shards' /h/a");
	h = hist(s, ia, CGS_SET_SUBTREE, CGS_HIST_LIFETIME);
	assert_int_equal(h.fine[0], 1);
	assert_int_equal(h.fine[4], 2);
	assert_int_equal(h.cumulative[0], 1);
	assert_int_equal(h.cumulative[1], 1);
	assert_int_equal(h.cumulative[2], 3);
	assert_int_equal(h.sum_ns, 35000);

	/* bad arguments */
	struct cgs_hist o = { .sz = sizeof(o) };
	assert_int_equal(cgs_snapshot_get_hist(NULL, 0, 0, 0, &o), -EINVAL);
	assert_int_equal(cgs_snapshot_get_hist(s, ia, 0, 0, NULL), -EINVAL);
	assert_int_equal(cgs_snapshot_get_hist(s, cgs_snapshot_count(s), 0, 0,
					   &o),
			 -EINVAL);
	assert_int_equal(cgs_snapshot_get_hist(s, ia, 4, 0, &o), -EINVAL);
	assert_int_equal(cgs_snapshot_get_hist(s, ia, 0, CGS_HIST__COUNT, &o),
			 -EINVAL);
	assert_int_equal(cgs_snapshot_get_hist(s, ia, 0, (enum cgs_hist_kind)-1,
					   &o),
			 -EINVAL);
	o.sz = 0;
	assert_int_equal(cgs_snapshot_get_hist(s, ia, 0, 0, &o), -EINVAL);
	o.sz = 4;
	assert_int_equal(cgs_snapshot_get_hist(s, ia, 0, 0, &o), -EINVAL);
	/* an old caller's struct, up to (not including) count */
	memset(&o, 0xcd, sizeof(o));
	o.sz = offsetof(struct cgs_hist, count);
	assert_int_equal(cgs_snapshot_get_hist(s, ia, CGS_SET_SELF,
					   CGS_HIST_LIFETIME, &o),
			 0);
	assert_int_equal(o.sz, offsetof(struct cgs_hist, count));
	assert_int_equal(o.nbuckets, 19);
	assert_int_equal(o.cumulative[2], 2);
	assert_true(o.count == 0xcdcdcdcdcdcdcdcdull);
	assert_true(o.sum_ns == 0xcdcdcdcdcdcdcdcdull);
	cgs_snapshot_free(s);

	/* fold /h/a/b into /h/a, cumulative never decreasing */
	put(r, 0, "/h/a/b", &t);
	s = cgt_snap(r, 2, false, 0);
	assert_false(has(s, "/h/a/b"));
	h = hist(s, idx(s, "/h/a"), CGS_SET_SELF, CGS_HIST_LIFETIME);
	assert_int_equal(h.count, 4);
	assert_int_equal(h.cumulative[0], 2);
	assert_int_equal(h.cumulative[3], 4);
	h = hist(s, idx(s, "/h/a"), CGS_SET_SELF_DELTA, CGS_HIST_LIFETIME);
	want_one_bucket(&h, 1, 1, 1000, "folded delta");
	struct cgs_hist before = hist(s, idx(s, "/"), CGS_SET_SUBTREE,
				      CGS_HIST_CPU);
	assert_int_equal(before.count, 4);
	cgs_snapshot_free(s);
	put(r, 1, "/h", &t);
	s = cgt_snap(r, 0, false, 0);
	h = hist(s, idx(s, "/"), CGS_SET_SUBTREE, CGS_HIST_CPU);
	for (unsigned b = 0; b < h.nbuckets; b++)
		assert_true(h.cumulative[b] >= before.cumulative[b]);
	assert_int_equal(h.count, 5);
	h = hist(s, idx(s, "/"), CGS_SET_SUBTREE_DELTA, CGS_HIST_CPU);
	want_one_bucket(&h, 2, 1, 2000, "one new cpu observation");
	cgs_snapshot_free(s);
	cgs_rollup_free(r);

	/* without CGS_ROLLUP_HISTOGRAMS: -ENODATA, signals still there */
	r = fp_rollup(&F, 1, 0);
	struct cgs_record k = proc_exit(20, SIGKILL);
	put(r, 0, "/n", &k);
	s = cgt_snap(r, 0, false, 0);
	o.sz = sizeof(o);
	assert_int_equal(cgs_snapshot_get_hist(s, idx(s, "/n"), CGS_SET_SELF,
					   CGS_HIST_LIFETIME, &o),
			 -ENODATA);
	assert_int_equal(cgs_snapshot_get_totals(s)->histograms, 0);
	const int pk[] = { SIGKILL, 1, 0 };
	want_sigs(s, "/n", CGS_SET_SELF, pk);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- 4. commands ------------------------------------------------------- */

static struct cgs_record comm_rec(enum cgs_kind kind, uint32_t pid,
				  uint32_t tgid, const char *comm,
				  uint64_t utime, uint64_t stime)
{
	struct cgs_record x = rec(kind, pid, tgid);
	snprintf(x.comm, sizeof(x.comm), "%s", comm);
	x.utime_us = utime;
	x.stime_us = stime;
	return x;
}

static struct cgs_rollup *comm_rollup(unsigned shards, unsigned comms)
{
	struct cgs_rollup_opts o = fp_opts(&F);
	o.shards = shards;
	o.comms = comms;
	struct cgs_rollup *r = NULL;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	return r;
}

static void want_comm(const struct cgs_snapshot *s, size_t i,
		      enum cgs_comm_rank by, size_t j, const char *comm,
		      uint64_t value)
{
	const struct cgs_comm *c = cgs_snapshot_get_comm(s, i, by, j);
	assert_non_null(c);
	assert_int_equal(c->sz, sizeof(*c));
	assert_string_equal(c->comm, comm);
	assert_false(c->other);
	if (c->value != value || c->error)
		fail_msg("rank %d entry %zu %s: value %llu error %llu, want "
			 "%llu exact",
			 (int)by, j, comm, (unsigned long long)c->value,
			 (unsigned long long)c->error,
			 (unsigned long long)value);
}

static void test_comms_exact(void **state)
{
	(void)state;
	struct cgs_rollup *r = comm_rollup(2, 8);
	/* shard 0: make 100+50, cc1 thread 300, cc1 process 200, sh 5;
	 * shard 1: make 10, ld 40, cc1 thread 1000 */
	struct cgs_record x;
	x = comm_rec(CGS_KIND_PROCESS, 10, 10, "make", 100, 50);
	put(r, 0, "/w", &x);
	x = comm_rec(CGS_KIND_THREAD, 21, 20, "cc1", 300, 0);
	put(r, 0, "/w", &x);
	x = comm_rec(CGS_KIND_PROCESS, 20, 20, "cc1", 150, 50);
	put(r, 0, "/w", &x);
	x = comm_rec(CGS_KIND_PROCESS, 30, 30, "sh", 0, 5);
	put(r, 0, "/w", &x);
	x = comm_rec(CGS_KIND_PROCESS, 11, 11, "make", 10, 0);
	put(r, 1, "/w", &x);
	x = comm_rec(CGS_KIND_PROCESS, 40, 40, "ld", 30, 10);
	put(r, 1, "/w", &x);
	x = comm_rec(CGS_KIND_THREAD, 51, 50, "cc1", 600, 400);
	put(r, 1, "/w", &x);
	/* TGID records are not commands */
	x = comm_rec(CGS_KIND_TGID, 0, 20, "tgid", 99999, 0);
	put(r, 0, "/w", &x);
	/* another cgroup has its own ranking */
	x = comm_rec(CGS_KIND_PROCESS, 60, 60, "other", 7, 0);
	put(r, 1, "/v", &x);

	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	size_t w = idx(s, "/w");
	/* by CPU: cc1 300+200+1000 = 1500, make 160, ld 40, sh 5 */
	assert_int_equal(cgs_snapshot_comm_count(s, w, CGS_COMMS_BY_CPU), 4);
	want_comm(s, w, CGS_COMMS_BY_CPU, 0, "cc1", 1500);
	want_comm(s, w, CGS_COMMS_BY_CPU, 1, "make", 160);
	want_comm(s, w, CGS_COMMS_BY_CPU, 2, "ld", 40);
	want_comm(s, w, CGS_COMMS_BY_CPU, 3, "sh", 5);
	assert_null(cgs_snapshot_get_comm(s, w, CGS_COMMS_BY_CPU, 4));
	/* by exits: make 2, then cc1, ld, sh 1 each (ties in byte order) */
	assert_int_equal(cgs_snapshot_comm_count(s, w, CGS_COMMS_BY_EXITS), 4);
	want_comm(s, w, CGS_COMMS_BY_EXITS, 0, "make", 2);
	want_comm(s, w, CGS_COMMS_BY_EXITS, 1, "cc1", 1);
	want_comm(s, w, CGS_COMMS_BY_EXITS, 2, "ld", 1);
	want_comm(s, w, CGS_COMMS_BY_EXITS, 3, "sh", 1);
	size_t v = idx(s, "/v");
	assert_int_equal(cgs_snapshot_comm_count(s, v, CGS_COMMS_BY_CPU), 1);
	want_comm(s, v, CGS_COMMS_BY_CPU, 0, "other", 7);
	/* nothing counted: no entries */
	assert_int_equal(cgs_snapshot_comm_count(s, idx(s, "/"),
						 CGS_COMMS_BY_CPU),
			 0);
	assert_null(cgs_snapshot_get_comm(s, idx(s, "/"), CGS_COMMS_BY_CPU, 0));
	/* out of range */
	assert_int_equal(cgs_snapshot_comm_count(s, cgs_snapshot_count(s),
						 CGS_COMMS_BY_CPU),
			 0);
	assert_int_equal(cgs_snapshot_comm_count(s, w, 2), 0);
	assert_int_equal(cgs_snapshot_comm_count(NULL, 0, 0), 0);
	assert_null(cgs_snapshot_get_comm(s, w, 2, 0));
	assert_null(cgs_snapshot_get_comm(s, cgs_snapshot_count(s), 0, 0));
	assert_null(cgs_snapshot_get_comm(NULL, 0, 0, 0));
	assert_null(cgs_snapshot_get_comm(s, w, CGS_COMMS_BY_CPU, SIZE_MAX));
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	assert_int_equal(t->comms, 8);
	/* the two thread records (pid != tgid) ranked under their own */
	assert_int_equal(t->comm_own, 2);
	cgs_snapshot_free(s);

	/* two listed, then (other) */
	s = cgt_snap(r, 0, false, 2);
	w = idx(s, "/w");
	assert_int_equal(cgs_snapshot_comm_count(s, w, CGS_COMMS_BY_CPU), 3);
	want_comm(s, w, CGS_COMMS_BY_CPU, 0, "cc1", 1500);
	want_comm(s, w, CGS_COMMS_BY_CPU, 1, "make", 160);
	const struct cgs_comm *o = cgs_snapshot_get_comm(s, w, CGS_COMMS_BY_CPU,
						     2);
	assert_non_null(o);
	assert_true(o->other);
	assert_string_equal(o->comm, "");
	assert_int_equal(o->value, 45); /* 1705 - 1500 - 160 */
	assert_int_equal(o->error, 0);
	assert_int_equal(o->max_each, 40); /* ld */
	assert_int_equal(cgs_snapshot_comm_count(s, w, CGS_COMMS_BY_EXITS), 3);
	want_comm(s, w, CGS_COMMS_BY_EXITS, 0, "make", 2);
	want_comm(s, w, CGS_COMMS_BY_EXITS, 1, "cc1", 1);
	o = cgs_snapshot_get_comm(s, w, CGS_COMMS_BY_EXITS, 2);
	assert_true(o->other);
	assert_int_equal(o->value, 2); /* ld, sh */
	assert_int_equal(o->max_each, 1);
	/* a ranking with one command and show 2: no (other) */
	assert_int_equal(cgs_snapshot_comm_count(s, idx(s, "/v"),
						 CGS_COMMS_BY_EXITS),
			 1);
	cgs_snapshot_free(s);

	cgs_rollup_free(r);

	/* off */
	r = comm_rollup(1, 0);
	x = comm_rec(CGS_KIND_PROCESS, 10, 10, "make", 1, 1);
	put(r, 0, "/w", &x);
	s = cgt_snap(r, 0, false, 0);
	assert_int_equal(cgs_snapshot_comm_count(s, idx(s, "/w"),
						 CGS_COMMS_BY_CPU),
			 0);
	assert_null(cgs_snapshot_get_comm(s, idx(s, "/w"), CGS_COMMS_BY_CPU, 0));
	assert_int_equal(cgs_snapshot_get_totals(s)->comms, 0);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);

	/* capacity out of range */
	struct cgs_rollup_opts ro = fp_opts(&F);
	ro.comms = 4097;
	assert_int_equal(cgs_rollup_new(&r, &ro), -EINVAL);
	ro.comms = 4096;
	assert_int_equal(cgs_rollup_new(&r, &ro), 0);
	cgs_rollup_free(r);
}

static void test_comms_fold(void **state)
{
	(void)state;
	struct cgs_rollup *r = comm_rollup(2, 8);
	struct cgs_record x;
	x = comm_rec(CGS_KIND_PROCESS, 10, 10, "a", 10, 0);
	put(r, 0, "/f/x", &x);
	x = comm_rec(CGS_KIND_PROCESS, 11, 11, "b", 20, 0);
	put(r, 1, "/f/x/y", &x);
	x = comm_rec(CGS_KIND_PROCESS, 12, 12, "a", 5, 0);
	put(r, 1, "/f", &x);
	struct cgs_snapshot *s = cgt_snap(r, 1, false, 0);
	size_t f = idx(s, "/f");
	/* /f's self: a 10+5, b 20 */
	assert_int_equal(cgs_snapshot_comm_count(s, f, CGS_COMMS_BY_CPU), 2);
	want_comm(s, f, CGS_COMMS_BY_CPU, 0, "b", 20);
	want_comm(s, f, CGS_COMMS_BY_CPU, 1, "a", 15);
	want_comm(s, f, CGS_COMMS_BY_EXITS, 0, "a", 2);
	want_comm(s, f, CGS_COMMS_BY_EXITS, 1, "b", 1);
	cgs_snapshot_free(s);
	/* unfolded: self only (no subtree rankings) */
	s = cgt_snap(r, 0, false, 0);
	f = idx(s, "/f");
	assert_int_equal(cgs_snapshot_comm_count(s, f, CGS_COMMS_BY_CPU), 1);
	want_comm(s, f, CGS_COMMS_BY_CPU, 0, "a", 5);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* A deterministic stream of many distinct commands, exact counts beside. */
#define NCOMM 60
struct truth {
	uint64_t cpu[NCOMM], exits[NCOMM];
	uint64_t cpu_total, exits_total;
};

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

static int comm_index(const char *c)
{
	int i;
	if (sscanf(c, "cmd%d", &i) != 1 || i < 0 || i >= NCOMM)
		fail_msg("unexpected command '%s'", c);
	return i;
}

static void check_ranking(const struct cgs_snapshot *s, size_t ci,
			  enum cgs_comm_rank by, const uint64_t *tv,
			  uint64_t total, unsigned cap, unsigned show)
{
	size_t n = cgs_snapshot_comm_count(s, ci, by);
	assert_true(n >= 2);
	bool listed[NCOMM] = { false };
	uint64_t upper = 0, errs = 0, prev = UINT64_MAX, rest = total;
	size_t nl = n - 1;
	if (show)
		assert_true(nl <= show);
	for (size_t j = 0; j < nl; j++) {
		const struct cgs_comm *c = cgs_snapshot_get_comm(s, ci, by, j);
		assert_non_null(c);
		assert_false(c->other);
		int k = comm_index(c->comm);
		assert_false(listed[k]);
		listed[k] = true;
		/* true value within [value, value + error] */
		if (tv[k] < c->value || tv[k] > c->value + c->error)
			fail_msg("rank %d %s: true %llu not in [%llu, %llu]",
				 (int)by, c->comm, (unsigned long long)tv[k],
				 (unsigned long long)c->value,
				 (unsigned long long)(c->value + c->error));
		/* error at most total / capacity */
		assert_true(c->error <= total / cap);
		/* largest value first */
		assert_true(c->value <= prev);
		prev = c->value;
		upper += c->value + c->error;
		errs += c->error;
		rest -= tv[k];
	}
	/* the (other) entry last */
	const struct cgs_comm *o = cgs_snapshot_get_comm(s, ci, by, nl);
	assert_non_null(o);
	assert_true(o->other);
	assert_string_equal(o->comm, "");
	assert_null(cgs_snapshot_get_comm(s, ci, by, n));
	/* total minus the listed upper bounds (merged summaries' counts may
	 * add up to more than the total: then 0) */
	assert_int_equal(o->value, total > upper ? total - upper : 0);
	assert_int_equal(o->error, errs);
	/* what it folds lies within [value, value + error] */
	assert_true(rest >= o->value && rest <= o->value + o->error);
	for (int k = 0; k < NCOMM; k++) {
		if (listed[k])
			continue;
		if (tv[k] > o->max_each)
			fail_msg("rank %d cmd%d: unlisted with %llu > "
				 "max_each %llu",
				 (int)by, k, (unsigned long long)tv[k],
				 (unsigned long long)o->max_each);
		/* everything above total / capacity is listed */
		if (!show && tv[k] > total / cap)
			fail_msg("rank %d cmd%d: %llu > total/cap %llu not "
				 "listed",
				 (int)by, k, (unsigned long long)tv[k],
				 (unsigned long long)(total / cap));
	}
}

static void test_comms_evicted(void **state)
{
	(void)state;
	const unsigned cap = 8;
	struct cgs_rollup *r = comm_rollup(2, cap);
	struct truth t;
	memset(&t, 0, sizeof(t));
	uint64_t seed = 42;
	for (uint32_t i = 0; i < 3000; i++) {
		/* half the records from 3 heavy commands, the rest spread
		 * over 57 light ones */
		uint64_t a = lcg(&seed), b = lcg(&seed), c = lcg(&seed);
		int k = a % 100 < 50 ? (int)(b % 3) : 3 + (int)(b % (NCOMM - 3));
		uint64_t cpu = k < 3 ? 50 + c % 100 : c % 40;
		bool proc = c % 3 != 0;
		char name[16];
		snprintf(name, sizeof(name), "cmd%d", k);
		struct cgs_record x = comm_rec(proc ? CGS_KIND_PROCESS
						    : CGS_KIND_THREAD,
					       proc ? 1000 + i : 5001 + i,
					       proc ? 1000 + i : 5000,
					       name, cpu / 2, cpu - cpu / 2);
		put(r, i % 2, "/e", &x);
		t.cpu[k] += cpu;
		t.cpu_total += cpu;
		t.exits[k] += proc;
		t.exits_total += proc;
	}
	unsigned shows[] = { 0, 3, 8, 100 };
	for (size_t si = 0; si < NELEM(shows); si++) {
		struct cgs_snapshot *s = cgt_snap(r, 0, false, shows[si]);
		size_t e = idx(s, "/e");
		check_ranking(s, e, CGS_COMMS_BY_CPU, t.cpu, t.cpu_total, cap,
			      shows[si]);
		check_ranking(s, e, CGS_COMMS_BY_EXITS, t.exits,
			      t.exits_total, cap, shows[si]);
		/* the 3 heavy ones lead both rankings */
		for (size_t j = 0; j < 3 && (!shows[si] || j < shows[si]);
		     j++) {
			const struct cgs_comm *c = cgs_snapshot_get_comm(
				s, e, CGS_COMMS_BY_CPU, j);
			assert_true(comm_index(c->comm) < 3);
		}
		cgs_snapshot_free(s);
	}
	cgs_rollup_free(r);
}

/* A thread's record via cgs_rollup_add(): its process's command from
 * /proc/<tgid>/comm, its own when that is gone (comm_own). */
static void test_comms_proc(void **state)
{
	(void)state;
	struct cgs_rollup *r = comm_rollup(1, 8);
	fp_set(&F, 700, "/q");
	fp_set(&F, 800, "/q");
	char p[512];
	snprintf(p, sizeof(p), "%s/700/comm", F.proc);
	FILE *fp = fopen(p, "w");
	assert_non_null(fp);
	fputs("leader\n", fp);
	fclose(fp);
	struct cgs_record x = comm_rec(CGS_KIND_THREAD, 701, 700, "worker", 10,
				       0);
	const char *path = NULL;
	assert_int_equal(cgt_add(r, 0, &x, &path, NULL), 0);
	assert_string_equal(path, "/q");
	/* 800 has no comm file: its thread is ranked under its own name */
	x = comm_rec(CGS_KIND_THREAD, 801, 800, "lonely", 3, 0);
	assert_int_equal(cgt_add(r, 0, &x, &path, NULL), 0);
	x = comm_rec(CGS_KIND_PROCESS, 700, 700, "leader", 1, 0);
	assert_int_equal(cgt_add(r, 0, &x, &path, NULL), 0);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	size_t q = idx(s, "/q");
	assert_int_equal(cgs_snapshot_comm_count(s, q, CGS_COMMS_BY_CPU), 2);
	want_comm(s, q, CGS_COMMS_BY_CPU, 0, "leader", 11);
	want_comm(s, q, CGS_COMMS_BY_CPU, 1, "lonely", 3);
	assert_int_equal(cgs_snapshot_comm_count(s, q, CGS_COMMS_BY_EXITS), 1);
	want_comm(s, q, CGS_COMMS_BY_EXITS, 0, "leader", 1);
	assert_int_equal(cgs_snapshot_get_totals(s)->comm_own, 1);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- 5. OOM kills from the cgroups' own counters ------------------------ */

static void write_at(const char *dir, const char *rel, const char *file,
		     const char *text)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s%s/%s", dir, rel, file);
	FILE *fp = fopen(p, "w");
	if (!fp)
		fail_msg("cannot write %s", p);
	fputs(text, fp);
	fclose(fp);
}

/* v1 memory.oom_control as the kernel shows it */
static void oom_v1(const char *rel, unsigned kills)
{
	char mem[320], text[128];
	snprintf(mem, sizeof(mem), "%s/mem", F.root);
	snprintf(text, sizeof(text),
		 "oom_kill_disable 0\nunder_oom 0\noom_kill %u\n", kills);
	write_at(mem, rel, "memory.oom_control", text);
}

static const char *acct_exit(struct cgs_rollup *r, unsigned shard, uint32_t pid,
			uint32_t status)
{
	struct cgs_record x = proc_exit(pid, status);
	x.flag = 0x20;
	const char *p = NULL;
	assert_int_equal(cgt_add(r, shard, &x, &p, NULL), 0);
	return p;
}

static void test_oom_cgroup_v1(void **state)
{
	(void)state;
	/* before the rollup: /a has had 3 kills, / 7, /c none */
	fp_set(&F, 100, "/a");
	fp_set(&F, 101, "/a");
	fp_set(&F, 102, "/a");
	fp_set(&F, 103, "/a");
	fp_set(&F, 300, "/c");
	oom_v1("/a", 3);
	oom_v1("", 7);
	oom_v1("/c", 0);
	struct cgs_rollup_opts o = fp_opts(&F);
	o.hierarchy = "memory";
	o.shards = 2;
	struct cgs_rollup *r = NULL;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	assert_string_equal(cgs_rollup_hierarchy(r), "memory");

	/* 2 more kills in /a; a clean exit does not look */
	oom_v1("/a", 5);
	assert_string_equal(acct_exit(r, 0, 100, 0), "/a");
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	assert_int_equal(t->oom_source, CGS_OOM_CGROUP);
	want_outc(s, "/a", CGS_SET_SELF, (struct outc){ 1, 0, 0, 0, 0 });
	cgs_snapshot_free(s);
	/* SIGKILL exits on both shards: the 2 counted once */
	assert_string_equal(acct_exit(r, 0, 101, SIGKILL), "/a");
	assert_string_equal(acct_exit(r, 1, 102, SIGKILL), "/a");
	s = cgt_snap(r, 0, false, 0);
	want_outc(s, "/a", CGS_SET_SELF, (struct outc){ 1, 0, 2, 0, 2 });
	want_outc(s, "/a", CGS_SET_SELF_DELTA, (struct outc){ 0, 0, 2, 0, 2 });
	want_outc(s, "/", CGS_SET_SUBTREE, (struct outc){ 1, 0, 2, 0, 2 });
	/* / had 7 before and no SIGKILL since: 0 */
	want_outc(s, "/", CGS_SET_SELF, (struct outc){ 0 });
	assert_int_equal(cgs_snapshot_get_totals(s)->oom_unreadable, 0);
	cgs_snapshot_free(s);
	/* the counter grows, no new SIGKILL: not read */
	oom_v1("/a", 6);
	s = cgt_snap(r, 0, false, 0);
	want_outc(s, "/a", CGS_SET_SELF, (struct outc){ 1, 0, 2, 0, 2 });
	want_outc(s, "/a", CGS_SET_SELF_DELTA, (struct outc){ 0 });
	cgs_snapshot_free(s);
	/* now one on shard 1: 6 - 3 in all */
	assert_string_equal(acct_exit(r, 1, 103, SIGKILL), "/a");
	s = cgt_snap(r, 0, false, 0);
	want_outc(s, "/a", CGS_SET_SELF, (struct outc){ 1, 0, 3, 0, 3 });
	want_outc(s, "/a", CGS_SET_SELF_DELTA, (struct outc){ 0, 0, 1, 0, 1 });
	cgs_snapshot_free(s);

	/* a cgroup made after the rollup counts from 0 */
	fp_set(&F, 200, "/b");
	oom_v1("/b", 2);
	assert_string_equal(acct_exit(r, 1, 200, SIGKILL), "/b");
	/* records put by path are not this host's cgroups: /c's counter
	 * is not read */
	oom_v1("/c", 4);
	struct cgs_record x = proc_exit(301, SIGKILL);
	put(r, 0, "/c", &x);
	s = cgt_snap(r, 0, false, 0);
	want_outc(s, "/b", CGS_SET_SELF, (struct outc){ 0, 0, 1, 0, 2 });
	want_outc(s, "/c", CGS_SET_SELF, (struct outc){ 0, 0, 1, 0, 0 });
	assert_int_equal(cgs_snapshot_get_totals(s)->oom_unreadable, 0);
	cgs_snapshot_free(s);

	/* no counter file: unreadable, once per look */
	fp_set(&F, 400, "/d");
	assert_string_equal(acct_exit(r, 0, 400, SIGKILL), "/d");
	s = cgt_snap(r, 0, false, 0);
	want_outc(s, "/d", CGS_SET_SELF, (struct outc){ 0, 0, 1, 0, 0 });
	assert_int_equal(cgs_snapshot_get_totals(s)->oom_unreadable, 1);
	cgs_snapshot_free(s);
	s = cgt_snap(r, 0, false, 0); /* no new SIGKILL: no look */
	assert_int_equal(cgs_snapshot_get_totals(s)->oom_unreadable, 1);
	cgs_snapshot_free(s);

	/* the root cgroup had 7 before the rollup: a kill there is 1 (a
	 * thread's record puts its process in the cache: v1 shows exiting
	 * processes in "/", so the process's own read would not say) */
	fp_set(&F, 500, "/");
	struct cgs_record th = rec(CGS_KIND_THREAD, 501, 500);
	const char *tp = NULL;
	assert_int_equal(cgt_add(r, 0, &th, &tp, NULL), 0);
	assert_string_equal(tp, "/");
	oom_v1("", 8);
	assert_string_equal(acct_exit(r, 0, 500, SIGKILL), "/");
	s = cgt_snap(r, 0, false, 0);
	want_outc(s, "/", CGS_SET_SELF, (struct outc){ 0, 0, 1, 0, 1 });
	cgs_snapshot_free(s);

	/* a SIGKILL exit of a process with no /proc entry lands in the
	 * unknown bucket, which has no counter to read: not an unreadable
	 * counter */
	assert_string_equal(acct_exit(r, 0, 999, SIGKILL), CGS_UNKNOWN_CGROUP);
	s = cgt_snap(r, 0, false, 0);
	want_outc(s, CGS_UNKNOWN_CGROUP, CGS_SET_SELF,
		  (struct outc){ 0, 0, 1, 0, 0 });
	assert_int_equal(cgs_snapshot_get_totals(s)->oom_unreadable, 1);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* A cgroup removed and created again under its path before the snapshot:
 * the old incarnation's node must not read the new one's counter (the new
 * node counts those kills: they would be counted twice). */
static void test_oom_recreated(void **state)
{
	(void)state;
	fp_set(&F, 100, "/z");
	oom_v1("/z", 0);
	struct cgs_rollup_opts o = fp_opts(&F);
	o.hierarchy = "memory";
	struct cgs_rollup *r = NULL;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	assert_string_equal(acct_exit(r, 0, 100, SIGKILL), "/z");
	/* the old incarnation goes (its kill uncounted: its counter is
	 * gone), a new one comes and has 2 kills */
	char dir[512], file[600];
	struct stat st1, st2;
	snprintf(dir, sizeof(dir), "%s/mem/z", F.root);
	snprintf(file, sizeof(file), "%s/memory.oom_control", dir);
	assert_int_equal(stat(dir, &st1), 0);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rmdir(dir), 0);
	snprintf(file, sizeof(file), "%s/mem/hold", F.root);
	assert_int_equal(mkdir(file, 0755), 0); /* takes the freed inode */
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(stat(dir, &st2), 0);
	if (st1.st_ino == st2.st_ino)
		cgt_skip("%s reused the inode number of a removed directory",
			 F.root);
	oom_v1("/z", 2);
	F.now_ms += 10;
	fp_set(&F, 101, "/z");
	assert_string_equal(acct_exit(r, 0, 101, SIGKILL), "/z");
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	/* both incarnations' SIGKILLs, the new one's 2 kills once */
	want_outc(s, "/", CGS_SET_SUBTREE, (struct outc){ 0, 0, 2, 0, 2 });
	want_outc(s, "/z", CGS_SET_SELF, (struct outc){ 0, 0, 1, 0, 2 });
	/* the old one's counter could not be read */
	assert_int_equal(cgs_snapshot_get_totals(s)->oom_unreadable, 1);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* Cgroups come and go: the OOM baselines of retired ones are dropped
 * (memory stays bounded, as the rollup's does). */
static void test_oom_churn(void **state)
{
	(void)state;
	oom_v1("", 0);
	struct cgs_rollup_opts o = fp_opts(&F);
	o.hierarchy = "memory";
	o.shards = 2;
	struct cgs_rollup *r = NULL;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	size_t base = cgsi_oom_entries(r);
	assert_int_equal(base, 1); /* "/" */
	uint64_t kills = 0;
	for (uint32_t i = 0; i < 300; i++) {
		char path[64], dir[512], file[600];
		snprintf(path, sizeof(path), "/job%u", i);
		fp_set(&F, 1000 + i, path);
		oom_v1(path, i % 3);
		kills += i % 3;
		assert_string_equal(acct_exit(r, i % 2, 1000 + i, SIGKILL),
				    path);
		fp_reap(&F, 1000 + i);
		struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
		want_outc(s, "/", CGS_SET_SUBTREE,
			  (struct outc){ 0, 0, i + 1, 0, kills });
		cgs_snapshot_free(s);
		snprintf(dir, sizeof(dir), "%s/mem%s", F.root, path);
		snprintf(file, sizeof(file), "%s/memory.oom_control", dir);
		assert_int_equal(unlink(file), 0);
		assert_int_equal(rmdir(dir), 0);
		fp_rmdir(&F, path);
		F.now_ms += 5000; /* past the cache's grace */
		assert_true(retire_graced(r) >= 1);
		assert_true(cgsi_oom_entries(r) <= base + 2);
	}
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	want_outc(s, "/", CGS_SET_SUBTREE, (struct outc){ 0, 0, 300, 0, kills });
	assert_int_equal(cgs_snapshot_get_totals(s)->oom_unreadable, 0);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

static void test_oom_cgroup_v2(void **state)
{
	(void)state;
	/* cgroup2 without cgroup.controllers, or without "memory" in it */
	const char *ctl[] = { NULL, "cpu io pids\n", "memoryx cpu\n" };
	for (size_t i = 0; i < NELEM(ctl); i++) {
		if (ctl[i])
			write_at(F.mnt, "", "cgroup.controllers", ctl[i]);
		struct cgs_rollup *r = fp_rollup(&F, 1, 0);
		assert_string_equal(cgs_rollup_hierarchy(r), "v2");
		fp_set(&F, 100 + (uint32_t)i, "/x");
		write_at(F.mnt, "/x", "memory.events.local", "oom_kill 3\n");
		assert_string_equal(acct_exit(r, 0, 100 + (uint32_t)i, SIGKILL),
				    "/x");
		struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
		assert_int_equal(cgs_snapshot_get_totals(s)->oom_source,
				 CGS_OOM_NONE);
		assert_int_equal(cgs_snapshot_get_totals(s)->oom_unreadable, 0);
		want_outc(s, "/x", CGS_SET_SELF,
			  (struct outc){ 0, 0, 1, 0, 0 });
		cgs_snapshot_free(s);
		cgs_rollup_free(r);
	}
	/* with the memory controller: memory.events.local's oom_kill, not
	 * its oom or oom_group_kill lines */
	write_at(F.mnt, "", "cgroup.controllers", "cpuset cpu io memory pids\n");
	fp_set(&F, 200, "/y");
	write_at(F.mnt, "/y", "memory.events.local",
		 "low 0\nhigh 0\nmax 9\noom 8\noom_kill 1\noom_group_kill 6\n");
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	write_at(F.mnt, "/y", "memory.events.local",
		 "low 0\nhigh 0\nmax 9\noom 8\noom_kill 4\noom_group_kill 6\n");
	assert_string_equal(acct_exit(r, 0, 200, SIGKILL), "/y");
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	assert_int_equal(cgs_snapshot_get_totals(s)->oom_source, CGS_OOM_CGROUP);
	want_outc(s, "/y", CGS_SET_SELF, (struct outc){ 0, 0, 1, 0, 3 });
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcome_classify),
		fp_unit_test(test_outcome_counts, &F),
		fp_unit_test(test_outcome_merge_fold, &F),
		fp_unit_test(test_retire_kept, &F),
		fp_unit_test(test_retire_kept_nohist, &F),
		fp_unit_test(test_retire_split, &F),
		fp_unit_test(test_retire_consumer, &F),
		fp_unit_test(test_lazy_sets, &F),
		fp_unit_test(test_sparse_sets, &F),
		cmocka_unit_test(test_hist_steps),
		fp_unit_test(test_hist_buckets, &F),
		fp_unit_test(test_hist_api, &F),
		fp_unit_test(test_comms_exact, &F),
		fp_unit_test(test_comms_fold, &F),
		fp_unit_test(test_comms_evicted, &F),
		fp_unit_test(test_comms_proc, &F),
		fp_unit_test(test_oom_cgroup_v1, &F),
		fp_unit_test(test_oom_recreated, &F),
		fp_unit_test(test_oom_churn, &F),
		fp_unit_test(test_oom_cgroup_v2, &F),
	};
	return CGT_RUN(argc, argv, tests);
}
