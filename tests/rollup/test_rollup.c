/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the rollup: /proc/<pid>/cgroup parsing, mount discovery,
 * counter math, subtree sums, folding, snapshot deltas, attribution paths
 * (cache, /proc, parent, unknown), pid reuse and moves with a fake clock,
 * removed/recreated cgroups, retirement, and bounded memory under churn.
 * A fake /proc and cgroup2 mount live in a temp dir (fakeproc.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/fakeproc.h"
#include "support/skip.h"
#include "support/snap.h"
#include "attribute/proc_stat.h"
#include "rollup/counters.h"
#include "rollup/rollup_int.h"
#include "util/cpulist.h"

static struct fakeproc F;

/*
 * What a cgroup's counters must be, worked out by hand from the workload,
 * not by redoing the library's arithmetic: fp_record(seed) gives every
 * field its own value 1000 * seed + k, k distinct per field (fakeproc.c).
 * So task records (thread and process kinds) whose seeds add up to S add
 * 1000 * S + tasks * k to each summed field; a peak is 1000 * the highest
 * seed + k, not a sum; a TGID record only counts itself.
 */
struct want {
	uint64_t tasks, processes, tgid_records;
	uint64_t seeds;     /* the task records' seeds added up */
	uint64_t peak_seed; /* the highest of them */
	uint64_t termed;    /* process exits by SIGTERM (the others exit 0) */
};

/* Each field of struct cgs_counters, by name, is checked in
 * assert_want(): a field added there and not here must fail the build.
 * The 27 u64s: tasks, processes, tgid_records, 4 cpu, 2 faults, 4 chars
 * and syscalls, 3 bytes, 2 switches, 2 mbus, 2 peaks, 4 exit outcomes,
 * oom_kills. fp_record()'s processes exit with status 0. */
_Static_assert(sizeof(struct cgs_counters) ==
		       sizeof(size_t) + 27 * sizeof(uint64_t) +
			       CGS_DELAY_SLOTS * sizeof(struct cgs_delay_sum),
	       "struct cgs_counters changed: check the new field by name in "
	       "assert_want() and give it a distinct value in fp_record()");

static void want_field(const char *name, uint64_t got, uint64_t want)
{
	if (got != want)
		fail_msg("%s: got %llu want %llu", name,
			 (unsigned long long)got, (unsigned long long)want);
}

static void assert_want(const struct cgs_counters *c, struct want w)
{
#define SUM(k) (1000 * w.seeds + w.tasks * (k))
#define PEAK(k) (w.tasks ? 1000 * w.peak_seed + (k) : 0)
#define WANT(field, v) want_field(#field, c->field, v)
	WANT(tasks, w.tasks);
	WANT(processes, w.processes);
	WANT(tgid_records, w.tgid_records);
	WANT(utime_us, SUM(1));
	WANT(stime_us, SUM(2));
	WANT(cpu_run_real_ns, SUM(3));
	WANT(cpu_run_virtual_ns, SUM(4));
	for (int i = 0; i < CGS_DELAY_SLOTS; i++) {
		/* slots past the classes this build knows stay empty */
		bool known = i < CGS_DELAY__COUNT;
		WANT(delay[i].count, known ? SUM(10 + i) : 0);
		WANT(delay[i].total_ns, known ? SUM(20 + i) : 0);
	}
	WANT(minflt, SUM(30));
	WANT(majflt, SUM(31));
	WANT(coremem_mbus, SUM(32));
	WANT(virtmem_mbus, SUM(33));
	WANT(hiwater_rss_kb_max, PEAK(34));
	WANT(hiwater_vm_kb_max, PEAK(35));
	WANT(read_char, SUM(36));
	WANT(write_char, SUM(37));
	WANT(read_syscalls, SUM(38));
	WANT(write_syscalls, SUM(39));
	WANT(read_bytes, SUM(40));
	WANT(write_bytes, SUM(41));
	WANT(cancelled_write_bytes, SUM(42));
	WANT(nvcsw, SUM(43));
	WANT(nivcsw, SUM(44));
	WANT(exit_clean, w.processes - w.termed);
	WANT(exit_nonzero, 0);
	WANT(exit_signaled, w.termed);
	WANT(exit_core_dumped, 0);
	WANT(oom_kills, 0);
#undef WANT
#undef PEAK
#undef SUM
}

static const struct want nothing = { 0 };

static const struct cgs_cgroup_stats *find(const struct cgs_snapshot *s,
					   const char *path, bool removed)
{
	return cgt_cgroup_at(s, path, removed ? CGT_REMOVED : CGT_LIVE);
}

static struct cgs_snapshot *snap(struct cgs_rollup *r, unsigned fold,
				 bool no_delta)
{
	return cgt_snap(r, fold, no_delta, 0);
}

static const char *acct(struct cgs_rollup *r, unsigned shard,
			const struct cgs_record *rec)
{
	const char *p = NULL;
	assert_int_equal(cgt_add(r, shard, rec, &p, NULL), 0);
	return p;
}

/* Account rec on shard: it must land in path, attributed as src. */
static void expect_acct(struct cgs_rollup *r, unsigned shard,
			const struct cgs_record *rec, const char *path,
			enum cgs_source src)
{
	const char *p = NULL;
	enum cgs_source how = CGS_SOURCE_NONE;
	assert_int_equal(cgt_add(r, shard, rec, &p, &how), 0);
	assert_string_equal(p, path);
	assert_int_equal(how, src);
}

/* ---- parser and mounts ---------------------------------------------- */

static void test_parse(void **state)
{
	(void)state;
	char buf[64];
	const char *t = "12:pids:/x\n4:cpu,cpuacct:/c/d\n1:name=systemd:/s\n"
			"0::/system.slice/nginx.service\n";
	assert_int_equal(cgs_parse_proc_cgroup(t, strlen(t), "v2", buf,
					       sizeof(buf)),
			 (int)strlen("/system.slice/nginx.service"));
	assert_string_equal(buf, "/system.slice/nginx.service");
	assert_int_equal(cgs_parse_proc_cgroup(t, strlen(t), NULL, buf,
					       sizeof(buf)),
			 27);
	assert_int_equal(cgs_parse_proc_cgroup(t, strlen(t), "cpuacct", buf,
					       sizeof(buf)),
			 4);
	assert_string_equal(buf, "/c/d");
	assert_int_equal(cgs_parse_proc_cgroup(t, strlen(t), "cpu", buf,
					       sizeof(buf)),
			 4);
	assert_int_equal(cgs_parse_proc_cgroup(t, strlen(t), "name=systemd",
					       buf, sizeof(buf)),
			 2);
	assert_string_equal(buf, "/s");
	assert_int_equal(cgs_parse_proc_cgroup(t, strlen(t), "memory", buf,
					       sizeof(buf)),
			 -ENOENT);
	assert_int_equal(cgs_parse_proc_cgroup(t, strlen(t), "cpu", buf, 4),
			 -ENAMETOOLONG);
	/* a zombie in a removed cgroup2 cgroup */
	const char *z = "0::/gone (deleted)\n";
	assert_int_equal(cgs_parse_proc_cgroup(z, strlen(z), "v2", buf,
					       sizeof(buf)),
			 5);
	assert_string_equal(buf, "/gone");
	/* no trailing newline, v2 root */
	assert_int_equal(cgs_parse_proc_cgroup("0::/", 4, "v2", buf,
					       sizeof(buf)),
			 1);
	assert_string_equal(buf, "/");
	const char *bad[] = { "garbage", "x:y:/z\n", "0::relative\n", "0:/\n",
			      "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(cgs_parse_proc_cgroup(bad[i], strlen(bad[i]),
						       "v2", buf, sizeof(buf)),
				 -EBADMSG);
	/* only v1 lines: no "0::" */
	const char *v1 = "3:memory:/m\n";
	assert_int_equal(cgs_parse_proc_cgroup(v1, strlen(v1), "v2", buf,
					       sizeof(buf)),
			 -ENOENT);
}

/* /proc/<pid>/stat: a command with spaces and parentheses, this very
 * process (running, not exiting, started before now), garbage. */
static void test_proc_stat(void **state)
{
	(void)state;
	struct cgsi_proc_stat st;
	const char *t = "77 (a) b (c)) Z 1 77 77 0 -1 4194308 0 0 0 0 0 0 0 0 "
			"20 0 1 0 123456 0 0";
	assert_int_equal(cgsi_proc_stat_parse(t, strlen(t), &st), 0);
	assert_int_equal(st.state, 'Z');
	assert_int_equal(st.flags, 4194308);
	assert_true(st.flags & CGSI_PF_EXITING);
	assert_int_equal(st.start_ticks, 123456);
	/* this process: running, not exiting, started after boot */
	char buf[1024];
	int n = cgsi_read_file("/proc/self/stat", buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(cgsi_proc_stat_parse(buf, (size_t)n, &st), 0);
	assert_int_equal(st.state, 'R');
	assert_false(st.flags & CGSI_PF_EXITING);
	assert_true(st.start_ticks > 0);
	const char *bad[] = { "", "1 (x)", "1 (x) S 1 2", "1 x S 1 1 1 0 -1 4",
			      "1 (x) S 1 1 1 0 -1 q 0 0 0 0 0 0 0 0 0 0 0 0 1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(cgsi_proc_stat_parse(bad[i], strlen(bad[i]),
						      &st),
				 -EBADMSG);
}

static void test_mounts(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	assert_string_equal(cgs_rollup_hierarchy(r), "v2");
	assert_string_equal(r->mount.mnt, F.mnt);
	cgs_rollup_free(r);

	struct cgs_rollup_opts o = fp_opts(&F);
	o.hierarchy = "memory";
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	assert_string_equal(cgs_rollup_hierarchy(r), "memory");
	fp_set(&F, 10, "/mm/x");
	struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 10, 10, 1, 1);
	assert_string_equal(acct(r, 0, &rec), "/mm/x");
	cgs_rollup_free(r);

	o.hierarchy = "hugetlb";
	assert_int_equal(cgs_rollup_new(&r, &o), -ENOENT);

	/* hybrid host without cgroup2: the first v1 controller */
	char mi[512];
	snprintf(mi, sizeof(mi), "%s/mi-v1", F.root);
	FILE *fp = fopen(mi, "w");
	fprintf(fp, "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup "
		    "cgroup rw,cpu,cpuacct\n"
		    "40 31 0:37 / /sys/fs/cgroup/with\\040space rw - cgroup "
		    "cgroup rw,xattr,name=systemd\n");
	fclose(fp);
	o.hierarchy = NULL;
	o.mountinfo = mi;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	assert_string_equal(cgs_rollup_hierarchy(r), "cpu");
	assert_string_equal(r->mount.mnt, "/sys/fs/cgroup/cpu,cpuacct");
	cgs_rollup_free(r);
	o.hierarchy = "name=systemd";
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	assert_string_equal(r->mount.mnt, "/sys/fs/cgroup/with space");
	cgs_rollup_free(r);
}

/* ---- counters, subtree sums, TGID records --------------------------- */

static void test_math(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	fp_set(&F, 100, "/a");
	fp_set(&F, 200, "/a/b");
	fp_set(&F, 300, "/a/b");
	fp_set(&F, 400, "/z");
	struct cgs_record recs[] = {
		fp_record(CGS_KIND_THREAD, 101, 100, 1, 1),
		fp_record(CGS_KIND_PROCESS, 100, 100, 1, 2),
		fp_record(CGS_KIND_TGID, 0, 100, 0, 3),
		fp_record(CGS_KIND_PROCESS, 200, 200, 1, 7),
		fp_record(CGS_KIND_THREAD, 301, 300, 1, 4),
		fp_record(CGS_KIND_PROCESS, 400, 400, 1, 5),
	};
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		acct(r, (unsigned)i % 2, &recs[i]);
	/* /a: the thread (seed 1), the process (2), a TGID record (3);
	 * /a/b: 200's process (7), 300's thread (4); /z: 400's process (5) */
	const struct want a = { .tasks = 2, .processes = 1, .tgid_records = 1,
				.seeds = 1 + 2, .peak_seed = 2 };
	const struct want b = { .tasks = 2, .processes = 1,
				.seeds = 7 + 4, .peak_seed = 7 };
	const struct want z = { .tasks = 1, .processes = 1,
				.seeds = 5, .peak_seed = 5 };
	const struct want sub_a = { .tasks = 4, .processes = 2,
				    .tgid_records = 1, .seeds = 1 + 2 + 7 + 4,
				    .peak_seed = 7 };
	const struct want all = { .tasks = 5, .processes = 3,
				  .tgid_records = 1,
				  .seeds = 1 + 2 + 7 + 4 + 5, .peak_seed = 7 };

	struct cgs_snapshot *s = snap(r, 0, false);
	/* "/", "/a", "/a/b", "/z", "(unknown)" in path order */
	assert_int_equal(cgs_snapshot_count(s), 5);
	const char *order[] = { "/", "/a", "/a/b", "/z", CGS_UNKNOWN_CGROUP };
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(cgs_snapshot_get_cgroup(s, i)->path, order[i]);
	const struct cgs_cgroup_stats *ca = find(s, "/a", false),
				      *cb = find(s, "/a/b", false),
				      *root = find(s, "/", false),
				      *cz = find(s, "/z", false),
				      *cu = find(s, CGS_UNKNOWN_CGROUP, false);
	assert_non_null(ca);
	assert_non_null(cb);
	assert_non_null(root);
	assert_non_null(cu);
	assert_int_equal(ca->depth, 1);
	assert_int_equal(cb->depth, 2);
	assert_int_equal(root->depth, 0);
	assert_want(ca->self, a);
	assert_want(cb->self, b);
	assert_want(cz->self, z);
	assert_want(ca->subtree, sub_a);
	assert_want(cb->subtree, b);
	assert_want(root->subtree, all);
	assert_want(root->self, nothing);
	assert_want(ca->self_delta, a);
	assert_want(ca->subtree_delta, sub_a);
	/* the unknown bucket is visible and empty */
	assert_want(cu->self, nothing);
	assert_true(ca->ino != 0);
	assert_false(ca->removed);
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	assert_int_equal(t->records, 6);
	assert_int_equal(t->unattributed, 0);
	assert_int_equal(t->cgroups, 4);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);

	/* NO_TGID: TGID records are not even counted */
	r = fp_rollup(&F, 1, CGS_NO_TGID);
	acct(r, 0, &recs[1]);
	const char *p = (const char *)1;
	assert_int_equal(cgt_add(r, 0, &recs[2], &p, NULL), 0);
	assert_null(p);
	s = snap(r, 0, false);
	assert_int_equal(find(s, "/a", false)->self->tgid_records, 0);
	assert_int_equal(cgs_snapshot_get_totals(s)->records, 1);
	cgs_snapshot_free(s);
	/* bad arguments */
	assert_int_equal(cgs_rollup_add(r, 1, &recs[0], NULL, NULL), -EINVAL);
	struct cgs_record bad = recs[0];
	bad.kind = 0;
	assert_int_equal(cgs_rollup_add(r, 0, &bad, NULL, NULL), -EINVAL);
	cgs_rollup_free(r);
}

static void test_order_fold(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	const char *paths[] = { "/a-b", "/a/b/c/d/e", "/a/b", "/a", "/a/b/c",
				"/b" };
	for (size_t i = 0; i < 6; i++)
		fp_mkdir(&F, paths[i]);
	for (size_t i = 0; i < 6; i++) {
		struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 0, 0, 0,
						  i + 1);
		assert_int_equal(cgt_add_path(r, 0, &rec, paths[i]),
				 0);
	}
	struct cgs_snapshot *s = snap(r, 0, true);
	const char *order[] = { "/", "/a", "/a/b", "/a/b/c", "/a/b/c/d",
				"/a/b/c/d/e", "/a-b", "/b",
				CGS_UNKNOWN_CGROUP };
	assert_int_equal(cgs_snapshot_count(s), 9);
	for (size_t i = 0; i < 9; i++)
		assert_string_equal(cgs_snapshot_get_cgroup(s, i)->path, order[i]);
	/* /a/b/c/d exists only as an ancestor; its subtree is /a/b/c/d/e */
	assert_int_equal(find(s, "/a/b/c/d", false)->self->tasks, 0);
	const struct want e = { .tasks = 1, .processes = 1, .seeds = 2,
				.peak_seed = 2 };
	assert_want(find(s, "/a/b/c/d", false)->subtree, e);
	assert_int_equal(find(s, "/a/b/c/d/e", false)->depth, 5);
	assert_int_equal(find(s, "/", false)->subtree->tasks, 6);
	assert_int_equal(find(s, "/a", false)->subtree->tasks, 4);
	cgs_snapshot_free(s);

	/* fold deeper than 2 into /a/b */
	s = snap(r, 2, true);
	const char *forder[] = { "/", "/a", "/a/b", "/a-b", "/b",
				 CGS_UNKNOWN_CGROUP };
	assert_int_equal(cgs_snapshot_count(s), 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(cgs_snapshot_get_cgroup(s, i)->path, forder[i]);
	/* /a/b (seed 3), /a/b/c (5), /a/b/c/d/e (2) */
	const struct want ab = { .tasks = 3, .processes = 3,
				 .seeds = 3 + 5 + 2, .peak_seed = 5 };
	assert_want(find(s, "/a/b", false)->self, ab);
	assert_want(find(s, "/a/b", false)->subtree, ab);
	assert_int_equal(find(s, "/a", false)->subtree->tasks, 4);
	assert_int_equal(find(s, "/", false)->subtree->tasks, 6);
	cgs_snapshot_free(s);

	/* fold to depth 1 */
	s = snap(r, 1, true);
	assert_int_equal(cgs_snapshot_count(s), 5);
	assert_int_equal(find(s, "/a", false)->self->tasks, 4);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

static void test_deltas(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	fp_set(&F, 500, "/d/e");
	struct cgs_record r1 = fp_record(CGS_KIND_THREAD, 501, 500, 1, 9);
	struct cgs_record r2 = fp_record(CGS_KIND_THREAD, 502, 500, 1, 2);
	struct cgs_record r3 = fp_record(CGS_KIND_PROCESS, 500, 500, 1, 3);
	const struct want c1 = { .tasks = 1, .seeds = 9, .peak_seed = 9 };
	const struct want c2 = { .tasks = 2, .processes = 1, .seeds = 2 + 3,
				 .peak_seed = 3 };
	const struct want cum = { .tasks = 3, .processes = 1,
				  .seeds = 9 + 2 + 3, .peak_seed = 9 };
	acct(r, 0, &r1);
	struct cgs_snapshot *s = snap(r, 0, false);
	assert_want(find(s, "/d/e", false)->self_delta, c1);
	assert_want(find(s, "/d", false)->subtree_delta, c1);
	cgs_snapshot_free(s);

	acct(r, 1, &r2);
	acct(r, 0, &r3);
	/* no_delta: look without moving the baseline */
	s = snap(r, 0, true);
	assert_want(find(s, "/d/e", false)->self_delta, c2);
	cgs_snapshot_free(s);
	s = snap(r, 0, false);
	const struct cgs_cgroup_stats *e = find(s, "/d/e", false);
	/* the delta's peak is the peak since the previous snapshot (r3's),
	 * below the cumulative peak (r1's) */
	assert_want(e->self_delta, c2);
	assert_want(e->self, cum);
	assert_want(find(s, "/", false)->subtree, cum);
	assert_want(find(s, "/", false)->subtree_delta, c2);
	cgs_snapshot_free(s);
	s = snap(r, 0, false);
	assert_want(find(s, "/d/e", false)->self_delta, nothing);
	assert_want(find(s, "/", false)->subtree_delta, nothing);
	assert_want(find(s, "/d/e", false)->self, cum);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- attribution ----------------------------------------------------- */

static void test_attribution_paths(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	fp_set(&F, 600, "/svc");
	/* threads of a known process: one /proc read */
	for (uint32_t i = 0; i < 50; i++) {
		struct cgs_record rec = fp_record(CGS_KIND_THREAD, 601 + i,
						  600, 1, i);
		assert_string_equal(acct(r, 0, &rec), "/svc");
	}
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	assert_int_equal(t.proc_reads, 1);
	assert_int_equal(t.via_proc, 1);
	assert_int_equal(t.via_cache, 49);
	/* a child reaped before we look: via its parent, whose entry then
	 * serves its siblings without syscalls */
	for (uint32_t c = 0; c < 10; c++) {
		struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 700 + c,
						  700 + c, 600, c);
		assert_string_equal(acct(r, 0, &rec), "/svc");
		/* the TGID record after it: answered from the cache */
		rec = fp_record(CGS_KIND_TGID, 0, 700 + c, 0, c);
		assert_string_equal(acct(r, 0, &rec), "/svc");
	}
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	assert_int_equal(t.via_parent, 10);
	assert_int_equal(t.proc_reads, 11);
	assert_int_equal(t.via_cache, 59);
	/* parent unknown too: the unknown bucket, counted */
	struct cgs_record orphan = fp_record(CGS_KIND_PROCESS, 900, 900, 899,
					     1);
	assert_string_equal(acct(r, 0, &orphan), CGS_UNKNOWN_CGROUP);
	struct cgs_record nopid = fp_record(CGS_KIND_THREAD, 0, 0, 0, 1);
	assert_string_equal(acct(r, 0, &nopid), CGS_UNKNOWN_CGROUP);
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	assert_int_equal(t.unattributed, 2);
	assert_int_equal(t.records, 72);
	struct cgs_snapshot *s = snap(r, 0, false);
	assert_int_equal(find(s, CGS_UNKNOWN_CGROUP, false)->self->tasks, 2);
	assert_int_equal(find(s, "/svc", false)->self->tasks, 60);
	assert_int_equal(find(s, "/svc", false)->self->processes, 10);
	assert_int_equal(find(s, "/svc", false)->self->tgid_records, 10);
	cgs_snapshot_free(s);
	/* a short totals struct gets only its own size */
	struct { size_t sz; uint64_t records; } small = { sizeof(small), 0 };
	assert_int_equal(cgs_rollup_get_totals(r, (struct cgs_rollup_totals *)&small),
			 0);
	assert_int_equal(small.records, 72);
	cgs_rollup_free(r);
}

static void test_pid_reuse(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	/* process 1000 in /old; its death is seen */
	fp_set(&F, 1000, "/old");
	struct cgs_record th = fp_record(CGS_KIND_THREAD, 1001, 1000, 1, 1);
	struct cgs_record ex = fp_record(CGS_KIND_PROCESS, 1000, 1000, 1, 1);
	assert_string_equal(acct(r, 0, &th), "/old");
	assert_string_equal(acct(r, 0, &ex), "/old");
	fp_reap(&F, 1000);
	/* a late thread of it on the same shard within grace: still /old */
	F.now_ms += 500;
	assert_string_equal(acct(r, 0, &th), "/old");
	/* pid 1000 reused by a process in /new */
	fp_set(&F, 1000, "/new");
	/* its exit inside the grace period: a process exits once, so this
	 * is a new process and does not inherit /old */
	assert_string_equal(acct(r, 0, &ex), "/new");
	/* after the grace period its threads are not /old either */
	fp_set(&F, 1000, "/new2");
	F.now_ms += 2001;
	assert_string_equal(acct(r, 0, &th), "/new2");

	/* cross-shard: shard 0 knows 2000 in /x; its exit arrives on shard 1 */
	fp_set(&F, 2000, "/x");
	struct cgs_record th2 = fp_record(CGS_KIND_THREAD, 2001, 2000, 1, 1);
	struct cgs_record ex2 = fp_record(CGS_KIND_PROCESS, 2000, 2000, 1, 1);
	assert_string_equal(acct(r, 0, &th2), "/x");
	assert_string_equal(acct(r, 1, &ex2), "/x");
	fp_reap(&F, 2000);
	F.now_ms += 100;
	/* a late record of it on shard 0 (within grace): /x */
	assert_string_equal(acct(r, 0, &th2), "/x");
	fp_set(&F, 2000, "/y");
	/* shard 0 sees the new process's exit: not /x (died on shard 1) */
	assert_string_equal(acct(r, 0, &ex2), "/y");
	/* and after grace, a thread on shard 1 re-resolves */
	fp_set(&F, 2000, "/y2");
	F.now_ms += 2100;
	assert_string_equal(acct(r, 1, &th2), "/y2");
	fp_set(&F, 2000, "/y3");
	/* shard 0's entry for the /y process was marked dead by its exit:
	 * after grace its threads re-resolve too */
	assert_string_equal(acct(r, 0, &th2), "/y3");

	/* a parent pid reused: a reaped child of the new parent must not be
	 * attributed through the dead parent's entry */
	fp_set(&F, 4400, "/p-old");
	struct cgs_record pold = fp_record(CGS_KIND_PROCESS, 4400, 4400, 1, 1);
	assert_string_equal(acct(r, 0, &pold), "/p-old");
	fp_reap(&F, 4400);
	F.now_ms += 20;
	fp_set(&F, 4400, "/p-new");
	struct cgs_record kid = fp_record(CGS_KIND_PROCESS, 4401, 4401, 4400,
					  1);
	assert_string_equal(acct(r, 0, &kid), "/p-new");
	/* a thread of a new process that reused a pid 20 ms after the old
	 * one died is found in /proc, not inherited */
	fp_set(&F, 4500, "/t-old");
	struct cgs_record told = fp_record(CGS_KIND_PROCESS, 4500, 4500, 1, 1);
	assert_string_equal(acct(r, 1, &told), "/t-old");
	fp_reap(&F, 4500);
	F.now_ms += 20;
	fp_set(&F, 4500, "/t-new");
	struct cgs_record tnew = fp_record(CGS_KIND_THREAD, 4501, 4500, 1, 1);
	assert_string_equal(acct(r, 1, &tnew), "/t-new");

	/* once /proc was seen gone, a dead entry answers late records for
	 * the whole grace period without looking again; a thread whose group
	 * started after the death (ac_tgetime) is a new process's */
	fp_set(&F, 4600, "/g-old");
	struct cgs_record gth = fp_record(CGS_KIND_THREAD, 4601, 4600, 1, 1);
	struct cgs_record gex = fp_record(CGS_KIND_PROCESS, 4600, 4600, 1, 1);
	gth.tgetime_us = 5000000; /* the group lived 5 s */
	assert_string_equal(acct(r, 0, &gth), "/g-old");
	assert_string_equal(acct(r, 0, &gex), "/g-old");
	fp_reap(&F, 4600);
	F.now_ms += 150;
	assert_string_equal(acct(r, 0, &gth), "/g-old"); /* late, /proc gone */
	F.now_ms += 300;
	fp_set(&F, 4600, "/g-new");
	struct cgs_record gnew = fp_record(CGS_KIND_THREAD, 4602, 4600, 1, 1);
	gnew.tgetime_us = 200000; /* started 200 ms ago: after the death */
	assert_string_equal(acct(r, 0, &gnew), "/g-new");
	cgs_rollup_free(r);
}

/* A new rollup that saw process pid alive in path (a thread record),
 * then found it reaped by the background re-read (stepped by a record of
 * another process 1.2 s later). */
static struct cgs_rollup *found_reaped(const struct cgs_rollup_opts *o,
				       uint32_t pid, const char *path)
{
	struct cgs_rollup *r = NULL;
	assert_int_equal(cgs_rollup_new(&r, o), 0);
	fp_set(&F, pid, path);
	struct cgs_record th = fp_record(CGS_KIND_THREAD, pid + 1, pid, 1, 1);
	assert_string_equal(acct(r, 0, &th), path);
	fp_reap(&F, pid);
	struct cgs_record tick = fp_record(CGS_KIND_THREAD, 9001, 9000, 1, 1);
	F.now_ms += 1200;
	acct(r, 0, &tick);
	return r;
}

static void test_move(void **state)
{
	(void)state;
	struct cgs_rollup_opts o = fp_opts(&F);
	o.revalidate_ms = 1000;
	struct cgs_rollup *r = NULL;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	fp_set(&F, 3000, "/m1");
	struct cgs_record th = fp_record(CGS_KIND_THREAD, 3001, 3000, 1, 1);
	assert_string_equal(acct(r, 0, &th), "/m1");
	fp_set(&F, 3000, "/m2"); /* moved */
	F.now_ms += 100;
	assert_string_equal(acct(r, 0, &th), "/m1"); /* within the bound */
	F.now_ms += 900;
	assert_string_equal(acct(r, 0, &th), "/m2"); /* seen */
	F.now_ms += 10;
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	assert_string_equal(acct(r, 0, &th), "/m2");
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	assert_int_equal(t.proc_reads, 2);
	/* revalidation of a process already reaped keeps its last cgroup */
	fp_reap(&F, 3000);
	F.now_ms += 5000;
	struct cgs_record ex = fp_record(CGS_KIND_PROCESS, 3000, 3000, 1, 1);
	ex.tgetime_us = 6000000; /* it started before it was found gone */
	assert_string_equal(acct(r, 0, &ex), "/m2");
	cgs_rollup_free(r);

	/* Found reaped by the background re-read before its exit record
	 * came: that exit is still its own; a younger process's exit with
	 * the pid (its exit record first, on a lagging shard) is not. */
	r = found_reaped(&o, 3050, "/f1");
	F.now_ms += 200;
	fp_set(&F, 3050, "/f2"); /* a new process with the pid, exited */
	struct cgs_record young = fp_record(CGS_KIND_PROCESS, 3050, 3050, 1, 2);
	young.tgetime_us = 100000; /* started after the re-read */
	assert_string_equal(acct(r, 0, &young), "/f2");
	cgs_rollup_free(r);
	r = found_reaped(&o, 3060, "/g1");
	struct cgs_record own = fp_record(CGS_KIND_PROCESS, 3060, 3060, 1, 2);
	own.tgetime_us = 1500000; /* started before it was found gone */
	expect_acct(r, 0, &own, "/g1", CGS_SOURCE_PROC);
	cgs_rollup_free(r);

	/* A mover whose exit is accounted on another shard first: the late
	 * thread records on the shard with the stale entry must not go to
	 * the old cgroup (the zombie is re-read). */
	o.shards = 2;
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	fp_set(&F, 3100, "/n1");
	struct cgs_record t1 = fp_record(CGS_KIND_THREAD, 3101, 3100, 1, 1);
	struct cgs_record x1 = fp_record(CGS_KIND_PROCESS, 3100, 3100, 1, 1);
	assert_string_equal(acct(r, 0, &t1), "/n1");
	fp_set(&F, 3100, "/n2");
	F.now_ms += 1500;
	assert_string_equal(acct(r, 1, &x1), "/n2");
	assert_string_equal(acct(r, 0, &t1), "/n2");
	/* once reaped, the entry answers without syscalls until grace ends */
	fp_reap(&F, 3100);
	struct cgs_rollup_totals t0 = { .sz = sizeof(t0) }, t2 = t0;
	assert_int_equal(cgs_rollup_get_totals(r, &t0), 0);
	F.now_ms += 1001;
	assert_string_equal(acct(r, 0, &t1), "/n2"); /* stale: one read */
	assert_string_equal(acct(r, 0, &t1), "/n2");
	F.now_ms += 400;
	assert_string_equal(acct(r, 0, &t1), "/n2");
	assert_int_equal(cgs_rollup_get_totals(r, &t2), 0);
	assert_int_equal(t2.proc_reads, t0.proc_reads + 1);
	cgs_rollup_free(r);
}

/*
 * A parent that moved itself before forking (a shell that joined a
 * cgroup, cgexec) and was reaped before its own exit record was read:
 * its cgroup is what was read of it as a live parent when one of its
 * children's exits was read from /proc, not its own parent's cgroup (the
 * guess of step 3, wrong exactly there). Still there at its own exit, it
 * is read again (a move after the note counts).
 */
static void test_parent_noted(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	struct cgs_rollup_totals t0 = { .sz = sizeof(t0) }, t1 = t0;
	fp_set(&F, 5000, "/launcher");
	fp_set(&F, 5001, "/job"); /* the shell, moved to /job, forks: */
	for (uint32_t c = 0; c < 3; c++) {
		fp_set(&F, 5010 + c, "/job"); /* a zombie: readable */
		struct cgs_record kid = fp_record(CGS_KIND_PROCESS, 5010 + c,
						  5010 + c, 5001, c + 1);
		expect_acct(r, 0, &kid, "/job", CGS_SOURCE_PROC);
		fp_reap(&F, 5010 + c);
	}
	assert_int_equal(cgs_rollup_get_totals(r, &t0), 0);
	/* three children, the shell once: its siblings' notes cost nothing */
	assert_int_equal(t0.proc_reads, 4);
	/* the shell's exit, after its launcher reaped it */
	fp_reap(&F, 5001);
	F.now_ms += 5;
	struct cgs_record sh = fp_record(CGS_KIND_PROCESS, 5001, 5001, 5000, 4);
	sh.tgetime_us = 50000;
	expect_acct(r, 0, &sh, "/job", CGS_SOURCE_PROC);
	assert_int_equal(cgs_rollup_get_totals(r, &t1), 0);
	assert_int_equal(t1.via_parent, 0);
	assert_int_equal(t1.proc_reads, t0.proc_reads + 1); /* its own try */

	/* noted in /a, moved to /b, exits while still there: /b */
	fp_set(&F, 5101, "/a");
	fp_set(&F, 5102, "/a");
	struct cgs_record kid = fp_record(CGS_KIND_PROCESS, 5102, 5102, 5101,
					  5);
	expect_acct(r, 0, &kid, "/a", CGS_SOURCE_PROC);
	fp_reap(&F, 5102);
	fp_set(&F, 5101, "/b");
	F.now_ms += 5;
	struct cgs_record mv = fp_record(CGS_KIND_PROCESS, 5101, 5101, 5000, 6);
	mv.tgetime_us = 50000;
	expect_acct(r, 0, &mv, "/b", CGS_SOURCE_PROC);

	/* a noted parent's threads: one read of its own, then the cache */
	fp_set(&F, 5201, "/c");
	fp_set(&F, 5202, "/c");
	kid = fp_record(CGS_KIND_PROCESS, 5202, 5202, 5201, 7);
	expect_acct(r, 0, &kid, "/c", CGS_SOURCE_PROC);
	fp_set(&F, 5201, "/d");
	assert_int_equal(cgs_rollup_get_totals(r, &t0), 0);
	for (uint32_t i = 0; i < 4; i++) {
		struct cgs_record th = fp_record(CGS_KIND_THREAD, 5203 + i,
						 5201, 5000, 8);
		expect_acct(r, 0, &th, "/d", CGS_SOURCE_PROC);
	}
	assert_int_equal(cgs_rollup_get_totals(r, &t1), 0);
	assert_int_equal(t1.proc_reads, t0.proc_reads + 1);
	cgs_rollup_free(r);
}

/*
 * The background re-read keeps the bound on moves for a process whose
 * records come after it was reaped: every live entry is re-read within
 * revalidate_ms (+ one step), wherever the sweep's cursor was when the
 * process moved, and also when the steps came late (no records for a
 * while: the step that comes covers what was missed).
 */
static void test_sweep_bound(void **state)
{
	(void)state;
	struct cgs_rollup_opts o = fp_opts(&F);
	o.revalidate_ms = 1000;
	/* a dead pid's records drive the steps without growing the table */
	struct cgs_record tick = fp_record(CGS_KIND_THREAD, 9001, 9000, 1, 1);
	for (unsigned off = 0; off < 1000; off += 130) {
		for (unsigned gap = 50; gap <= 400; gap += 350) {
			struct cgs_rollup *r = NULL;
			assert_int_equal(cgs_rollup_new(&r, &o), 0);
			acct(r, 0, &tick);
			for (unsigned t = 0; t < off; t += 50) {
				F.now_ms += 50;
				acct(r, 0, &tick);
			}
			fp_set(&F, 3200, "/s1");
			struct cgs_record th =
				fp_record(CGS_KIND_THREAD, 3201, 3200, 1, 1);
			assert_string_equal(acct(r, 0, &th), "/s1");
			F.now_ms += 10;
			fp_set(&F, 3200, "/s2"); /* moved */
			for (unsigned t = 0; t < 1000 + 2 * 50 + gap;
			     t += gap) {
				F.now_ms += gap;
				acct(r, 0, &tick);
			}
			fp_reap(&F, 3200); /* then its late record */
			if (strcmp(acct(r, 0, &th), "/s2"))
				fail_msg("offset %u, steps every %u ms: the "
					 "move was not seen", off, gap);
			cgs_rollup_free(r);
		}
	}
}

/* Holds a shard's lock for hold_ms (the shard busy with a record, a
 * /proc read or a snapshot) once `locked` says so. */
struct busy {
	struct cgsi_flock *lock;
	unsigned hold_ms;
	_Atomic int locked;
};

static void *hold_lock(void *arg)
{
	struct busy *b = arg;
	cgsi_flock_lock(b->lock);
	b->locked = 1;
	struct timespec ts = { 0, (long)b->hold_ms * 1000000L };
	nanosleep(&ts, NULL);
	cgsi_flock_unlock(b->lock);
	return NULL;
}

static void busy_start(struct busy *b, pthread_t *t, struct cgs_rollup *r,
		       unsigned shard, unsigned hold_ms)
{
	b->lock = &r->shards[shard].lock;
	b->hold_ms = hold_ms;
	b->locked = 0;
	assert_int_equal(pthread_create(t, NULL, hold_lock, b), 0);
	while (!b->locked)
		sched_yield();
}

/*
 * A process reaped before the shard with its exit looked, seen alive by
 * another shard that is busy at that moment: the busy shard is waited
 * for, in either direction (a lower or a higher shard index), and the
 * exit goes to the process's own cgroup, not inferred from its parent.
 * A process nobody saw alive (churn) does not wait.
 */
static void test_peer_busy(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	fp_set(&F, 1, "/parent");
	for (unsigned known = 0; known < 2; known++) {
		unsigned other = 1 - known;
		uint32_t pid = 3300 + 10 * known;
		char own[32];
		snprintf(own, sizeof(own), "/mover%u", known);
		fp_set(&F, pid, own);
		struct cgs_record th = fp_record(CGS_KIND_THREAD, pid + 1, pid,
						 1, 1);
		struct cgs_record ex = fp_record(CGS_KIND_PROCESS, pid, pid, 1,
						 2);
		assert_string_equal(acct(r, known, &th), own);
		fp_reap(&F, pid);
		uint64_t waits = r->at.sh[other].st.peer_waits;
		struct busy b;
		pthread_t t;
		busy_start(&b, &t, r, known, 50);
		expect_acct(r, other, &ex, own, CGS_SOURCE_PROC);
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_int_equal(r->at.sh[other].st.peer_waits, waits + 1);
	}
	/* never read alive: straight to the parent, inferred, no wait */
	struct cgs_record ex = fp_record(CGS_KIND_PROCESS, 3400, 3400, 1, 3);
	uint64_t waits = r->at.sh[0].st.peer_waits;
	struct busy b;
	pthread_t t;
	busy_start(&b, &t, r, 1, 50);
	expect_acct(r, 0, &ex, "/parent", CGS_SOURCE_INFERRED);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(r->at.sh[0].st.peer_waits, waits);

	/* Late thread records on a shard that never saw the process, after
	 * its exit was accounted on the other one and it was reaped: its own
	 * cgroup (within grace), not the parent's; a thread of a group that
	 * started after that death, or the next process with the pid, not. */
	fp_set(&F, 3500, "/late");
	struct cgs_record lt = fp_record(CGS_KIND_THREAD, 3501, 3500, 1, 4);
	struct cgs_record lx = fp_record(CGS_KIND_PROCESS, 3500, 3500, 1, 5);
	assert_string_equal(acct(r, 0, &lt), "/late");
	assert_string_equal(acct(r, 0, &lx), "/late");
	fp_reap(&F, 3500);
	F.now_ms += 200;
	expect_acct(r, 1, &lt, "/late", CGS_SOURCE_PROC);
	struct cgs_record young = lt;
	young.pid = 3502;
	young.tgetime_us = 1000; /* its group started 1 ms ago */
	expect_acct(r, 0, &young, "/parent", CGS_SOURCE_INFERRED);
	fp_set(&F, 3500, "/reuser");
	assert_string_equal(acct(r, 1, &lx), "/reuser");

	/* The shard that saw the process alive found it gone from /proc on a
	 * re-read (reaped) before its exit arrived on the other shard: that
	 * exit is still its own (no exit was accounted in between). */
	fp_set(&F, 3700, "/gone");
	struct cgs_record gt = fp_record(CGS_KIND_THREAD, 3701, 3700, 1, 6);
	struct cgs_record gx = fp_record(CGS_KIND_PROCESS, 3700, 3700, 1, 7);
	assert_string_equal(acct(r, 0, &gt), "/gone");
	fp_reap(&F, 3700);
	F.now_ms += r->o.revalidate_ms + 1;
	assert_string_equal(acct(r, 0, &gt), "/gone"); /* re-read: gone */
	expect_acct(r, 1, &gx, "/gone", CGS_SOURCE_PROC);

	/* A child reaped before a lagging shard read its exit, its parent
	 * reaped too, but seen alive by the other shard (busy): the
	 * parent's cgroup from there, inferred, not the grandparent's or
	 * nothing; a parent nobody saw: nothing (no fork tracking here). */
	fp_set(&F, 3800, "/sup");
	struct cgs_record st = fp_record(CGS_KIND_THREAD, 3801, 3800, 1, 8);
	assert_string_equal(acct(r, 0, &st), "/sup");
	fp_reap(&F, 3800);
	struct cgs_record cx =
		fp_record(CGS_KIND_PROCESS, 3810, 3810, 3800, 9);
	uint64_t w1 = r->at.sh[1].st.peer_waits;
	busy_start(&b, &t, r, 0, 50);
	expect_acct(r, 1, &cx, "/sup", CGS_SOURCE_INFERRED);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(r->at.sh[1].st.peer_waits, w1 + 1);
	struct cgs_record nx =
		fp_record(CGS_KIND_PROCESS, 3820, 3820, 3890, 10);
	expect_acct(r, 1, &nx, "(unknown)", CGS_SOURCE_NONE);
	cgs_rollup_free(r);
}

/*
 * The pid of a reaped process held by another one when its record is
 * read (ns_last_pid; a wrap of the pid space while records lag): never
 * the holder's cgroup. A process exit whose holder is not exiting, a
 * thread record of a group older than the holder: the process is taken
 * as reaped (here: the parent's cgroup, counted as inferred). The real
 * process, a zombie or a holder that started before the group, is read.
 */
static void test_reused_pid(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	fp_set(&F, 1, "/parent");
	fp_set(&F, 3600, "/holder");
	fp_set_stat(&F, 3600, 'S', 0, 0); /* alive, not exiting */
	struct cgs_record ex = fp_record(CGS_KIND_PROCESS, 3600, 3600, 1, 1);
	expect_acct(r, 0, &ex, "/parent", CGS_SOURCE_INFERRED);
	/* a zombie, or exiting: its own */
	fp_set(&F, 3610, "/own");
	struct cgs_record ex2 = fp_record(CGS_KIND_PROCESS, 3610, 3610, 1, 2);
	expect_acct(r, 0, &ex2, "/own", CGS_SOURCE_PROC);

	/* a thread of a group 5 s old; the holder started 1 s ago */
	uint64_t tck = (uint64_t)r->at.clk_tck;
	uint64_t boot = cgsi_now_boot_ms();
	fp_set(&F, 3620, "/holder");
	fp_set_stat(&F, 3620, 'S', 0, (boot - 1000) * tck / 1000);
	struct cgs_record th = fp_record(CGS_KIND_THREAD, 3621, 3620, 1, 3);
	th.tgetime_us = 5000000;
	expect_acct(r, 0, &th, "/parent", CGS_SOURCE_INFERRED);
	/* the holder started 6 s ago: it can be the group */
	fp_set(&F, 3630, "/own2");
	fp_set_stat(&F, 3630, 'S', 0, (boot - 6000) * tck / 1000);
	struct cgs_record th2 = fp_record(CGS_KIND_THREAD, 3631, 3630, 1, 4);
	th2.tgetime_us = 5000000;
	expect_acct(r, 0, &th2, "/own2", CGS_SOURCE_PROC);

	/* a process exit read late: its group's age (1 ms) bounds nothing
	 * past the lag, its btime (epoch seconds) says it started 4-6 s
	 * ago; a holder, exiting too, that started 1 s ago is another; one
	 * that started 5 s ago can be it */
	uint64_t real_s = cgsi_now_real_ns() / 1000000000u;
	fp_set(&F, 3650, "/holder");
	fp_set_stat(&F, 3650, 'Z', CGSI_PF_EXITING, (boot - 1000) * tck / 1000);
	struct cgs_record bt = fp_record(CGS_KIND_PROCESS, 3650, 3650, 1, 7);
	bt.etime_us = bt.tgetime_us = 1000;
	bt.btime_s = real_s - 5;
	expect_acct(r, 0, &bt, "/parent", CGS_SOURCE_INFERRED);
	fp_set(&F, 3660, "/own3");
	fp_set_stat(&F, 3660, 'Z', CGSI_PF_EXITING, (boot - 5000) * tck / 1000);
	struct cgs_record bt2 = bt;
	bt2.pid = bt2.tgid = 3660;
	expect_acct(r, 0, &bt2, "/own3", CGS_SOURCE_PROC);

	/* a late thread record of a process whose exit was accounted and
	 * whose pid a younger process holds now: re-read, not taken */
	fp_set(&F, 3640, "/dead");
	struct cgs_record lt = fp_record(CGS_KIND_THREAD, 3641, 3640, 1, 5);
	struct cgs_record lx = fp_record(CGS_KIND_PROCESS, 3640, 3640, 1, 6);
	lt.tgetime_us = 5000000;
	assert_string_equal(acct(r, 0, &lt), "/dead");
	assert_string_equal(acct(r, 0, &lx), "/dead");
	fp_set(&F, 3640, "/next");
	fp_set_stat(&F, 3640, 'S', 0, (boot - 100) * tck / 1000);
	F.now_ms += 150;
	assert_string_equal(acct(r, 0, &lt), "/dead");
	cgs_rollup_free(r);
}

/* ---- removed cgroups -------------------------------------------------- */

static void test_removed_retire(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	fp_set(&F, 4000, "/rm/child");
	fp_set(&F, 4100, "/rm");
	struct cgs_record a = fp_record(CGS_KIND_PROCESS, 4000, 4000, 1, 1);
	struct cgs_record b = fp_record(CGS_KIND_PROCESS, 4100, 4100, 1, 2);
	acct(r, 0, &a);
	acct(r, 1, &b);
	fp_reap(&F, 4000);
	fp_reap(&F, 4100);
	fp_rmdir(&F, "/rm/child");
	/* not reported yet: nothing retired */
	assert_int_equal(cgs_rollup_retire_removed(r), 0);
	struct cgs_snapshot *s = snap(r, 0, false);
	assert_non_null(find(s, "/rm/child", true));
	assert_non_null(find(s, "/rm", false));
	/* a (seed 1) and b (2), wherever the tree retires them to */
	const struct want root_sub = { .tasks = 2, .processes = 2,
				       .seeds = 1 + 2, .peak_seed = 2 };
	assert_want(find(s, "/", false)->subtree, root_sub);
	cgs_snapshot_free(s);
	/* reported, but cache entries still point to it (grace) */
	assert_int_equal(cgs_rollup_retire_removed(r), 0);
	F.now_ms += 2001;
	assert_int_equal(cgs_rollup_retire_removed(r), 1);
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	assert_int_equal(t.cache_entries, 0);
	s = snap(r, 0, false);
	assert_null(find(s, "/rm/child", true));
	/* the parent keeps the retired child's totals in its subtree */
	assert_int_equal(find(s, "/rm", false)->subtree->tasks, 2);
	assert_int_equal(find(s, "/rm", false)->self->tasks, 1);
	assert_int_equal(find(s, "/rm", false)->subtree_delta->tasks, 0);
	assert_want(find(s, "/", false)->subtree, root_sub);
	cgs_snapshot_free(s);
	/* the whole tree goes: /rm retires into /, once removed for the
	 * grace period (an exit can still be on its way) */
	fp_rmdir(&F, "/rm");
	assert_int_equal(cgs_rollup_retire_removed(r), 0);
	F.now_ms += 1999;
	assert_int_equal(cgs_rollup_retire_removed(r), 0);
	F.now_ms += 1;
	assert_int_equal(cgs_rollup_retire_removed(r), 2); /* both shards */
	s = snap(r, 0, false);
	assert_int_equal(cgs_snapshot_count(s), 2); /* "/" and unknown */
	assert_want(find(s, "/", false)->subtree, root_sub);
	assert_int_equal(find(s, "/", false)->subtree_delta->tasks, 0);
	assert_int_equal(find(s, "/", false)->self->tasks, 0);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

static void test_recreated(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	fp_set(&F, 5000, "/re");
	struct cgs_record a = fp_record(CGS_KIND_PROCESS, 5000, 5000, 1, 1);
	acct(r, 0, &a);
	char p[512];
	struct stat st1, st2;
	snprintf(p, sizeof(p), "%s/re", F.mnt);
	assert_int_equal(stat(p, &st1), 0);
	fp_rmdir(&F, "/re");
	fp_mkdir(&F, "/hold"); /* takes the freed inode number, if recycled */
	fp_mkdir(&F, "/re");
	assert_int_equal(stat(p, &st2), 0);
	if (st1.st_ino == st2.st_ino)
		cgt_skip("%s reused the inode number of a removed "
			 "directory: a re-creation looks like the same cgroup",
			 F.root);
	/* re-created at once: 5 ms later */
	F.now_ms += 5;
	/* a zombie left in the removed incarnation */
	fp_set_text(&F, 5002, "0::/re (deleted)\n");
	struct cgs_record z = fp_record(CGS_KIND_PROCESS, 5002, 5002, 1, 3);
	assert_string_equal(acct(r, 0, &z), "/re");
	fp_set(&F, 5001, "/re");
	struct cgs_record b = fp_record(CGS_KIND_PROCESS, 5001, 5001, 1, 2);
	acct(r, 0, &b);
	/* another zombie of the removed one, after the new one was seen */
	fp_set_text(&F, 5003, "0::/re (deleted)\n");
	struct cgs_record z2 = fp_record(CGS_KIND_PROCESS, 5003, 5003, 1, 4);
	acct(r, 0, &z2);
	struct cgs_snapshot *s = snap(r, 0, false);
	const struct cgs_cgroup_stats *old = find(s, "/re", true),
				      *cur = find(s, "/re", false);
	assert_non_null(old);
	assert_non_null(cur);
	assert_int_equal(old->self->tasks, 3);
	assert_int_equal(cur->self->tasks, 1);
	assert_int_equal(old->ino, st1.st_ino);
	assert_int_equal(cur->ino, st2.st_ino);
	assert_true(old < cur); /* the older incarnation first */
	assert_int_equal(find(s, "/", false)->subtree->tasks, 4);
	cgs_snapshot_free(s);
	/* the removed incarnation retires once its entries are gone */
	F.now_ms += 2001;
	assert_int_equal(cgs_rollup_retire_removed(r), 1);
	s = snap(r, 0, false);
	assert_null(find(s, "/re", true));
	assert_int_equal(find(s, "/re", false)->self->tasks, 1);
	assert_int_equal(find(s, "/", false)->subtree->tasks, 4);
	cgs_snapshot_free(s);
	/* a zombie of a removed incarnation after it was retired: the
	 * current node (nothing older is left) */
	fp_set_text(&F, 5004, "0::/re (deleted)\n");
	struct cgs_record z3 = fp_record(CGS_KIND_PROCESS, 5004, 5004, 1, 5);
	assert_string_equal(acct(r, 0, &z3), "/re");
	cgs_rollup_free(r);
}

/* Exits of one cgroup id in shard sh (by the kernel source's id). */
static void acct_id(struct cgs_rollup *r, unsigned sh, const char *path,
		    uint64_t id, unsigned tasks)
{
	struct cgsi_rshard *s = &r->shards[sh];
	cgsi_flock_lock(&s->lock);
	struct cgsi_cgnode *n = cgsi_intern_id(r, s, path, strlen(path), id,
					       F.now_ms);
	assert_non_null(n);
	assert_int_equal(n->ino, id);
	for (unsigned i = 0; i < tasks; i++) {
		struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 6000 + i,
						  6000 + i, 1, i);
		cgsi_counters_account(&n->cum, &rec);
	}
	cgsi_flock_unlock(&s->lock);
}

/* Three incarnations of one path (ids growing in creation order) whose exits reach two shards in different orders: a shard that
 * never saw the newer one holds its incarnation unsuperseded, a late exit
 * of an older one reaches a shard after the newer one. A snapshot shows
 * one row per incarnation (the shards' nodes merged), oldest first, only
 * the newest live; the late one does not take the current one's place. */
static void test_recreated_shards(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	fp_mkdir(&F, "/inc");
	char p[512];
	struct stat st;
	snprintf(p, sizeof(p), "%s/inc", F.mnt);
	assert_int_equal(stat(p, &st), 0);
	if (st.st_ino <= 200)
		cgt_skip("inode %ju of %s: too small for two older ids",
			 (uintmax_t)st.st_ino, p);
	/* the current one is the directory there */
	const uint64_t ino[] = { st.st_ino - 200, st.st_ino - 100, st.st_ino },
		       tasks[] = { 3, 5, 6 };
	acct_id(r, 0, "/inc", ino[0], 2);
	acct_id(r, 1, "/inc", ino[0], 1); /* shard 1 sees no newer one */
	acct_id(r, 0, "/inc", ino[2], 6);
	acct_id(r, 0, "/inc", ino[1], 5); /* late, after the newest */
	struct cgsi_cgnode *cur = cgsi_cgtab_find(
		&r->shards[0].cgs, "/inc", 4, cgsi_path_hash("/inc", 4));
	assert_non_null(cur);
	assert_int_equal(cur->ino, ino[2]);
	struct cgs_snapshot *s = snap(r, 0, false);
	size_t k = 0;
	for (size_t i = 0; i < cgs_snapshot_count(s); i++) {
		const struct cgs_cgroup_stats *g = cgs_snapshot_get_cgroup(s, i);
		if (strcmp(g->path, "/inc"))
			continue;
		assert_true(k < 3);
		assert_int_equal(g->ino, ino[k]);
		assert_int_equal(g->self->tasks, tasks[k]);
		assert_int_equal(g->removed, k < 2);
		k++;
	}
	assert_int_equal(k, 3);
	assert_int_equal(find(s, "/", false)->subtree->tasks, 14);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- memory bound ------------------------------------------------------ */

static void test_churn_bounded(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	fp_set(&F, 1, "/init");
	fp_set(&F, 7, "/live");
	uint32_t max_cap = 0, max_entries = 0;
	/* 100,000 distinct short-lived processes, 1 ms apart: each has a
	 * thread record and an exit; half are already reaped (via parent) */
	for (uint32_t i = 0; i < 100000; i++) {
		uint32_t pid = 10000 + i * 3;
		if (i % 2 == 0 && i < 2000)
			fp_set(&F, pid, "/live");
		struct cgs_record th = fp_record(CGS_KIND_THREAD, pid + 1, pid,
						 i % 2 ? 1 : 7, 1);
		struct cgs_record ex = fp_record(CGS_KIND_PROCESS, pid, pid,
						 i % 2 ? 1 : 7, 1);
		acct(r, 0, &th);
		acct(r, 0, &ex);
		F.now_ms += 1;
		uint32_t cap = r->at.sh[0].cache.mask + 1;
		if (cap > max_cap)
			max_cap = cap;
		if (r->at.sh[0].cache.count > max_entries)
			max_entries = r->at.sh[0].cache.count;
	}
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	/* at most grace (2000 ms) worth of dead processes, plus slack for
	 * the incremental sweep */
	printf("churn: max entries %u, capacity %u, final entries %llu\n",
	       max_entries, max_cap, (unsigned long long)t.cache_entries);
	assert_true(max_entries <= 2 * 2000 + 64);
	assert_true(max_cap <= 16384);
	assert_int_equal(t.records, 200000);
	assert_int_equal(t.unattributed, 0);
	/* after the grace period everything dies with its processes */
	F.now_ms += 2001;
	assert_true(cgs_rollup_retire_removed(r) >= 0);
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	assert_int_equal(t.cache_entries, 2); /* the live parents 1 and 7 */
	struct cgs_snapshot *s = snap(r, 0, false);
	assert_int_equal(find(s, "/live", false)->self->tasks +
				 find(s, "/init", false)->self->tasks,
			 200000);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- shards written concurrently while snapshots are taken --------- */

struct writer {
	struct cgs_rollup *r;
	unsigned shard;
	uint32_t n;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	for (uint32_t i = 0; i < w->n; i++) {
		struct cgs_record rec = fp_record(CGS_KIND_THREAD, 10 + i,
						  8000 + w->shard, 1, 1);
		if (cgs_rollup_add(w->r, w->shard, &rec, NULL, NULL) < 0)
			abort();
	}
	return NULL;
}

static void test_shards_concurrent(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, 0);
	fp_set(&F, 8000, "/s/zero");
	fp_set(&F, 8001, "/s/one");
	struct writer w[2] = { { r, 0, 200000 }, { r, 1, 200000 } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, writer_main, &w[i]);
	uint64_t seen = 0;
	for (int k = 0; k < 20; k++) {
		struct cgs_snapshot *s = snap(r, 0, false);
		const struct cgs_cgroup_stats *c = find(s, "/s", false);
		if (c) {
			seen += c->subtree_delta->tasks;
			assert_int_equal(c->subtree->tasks, seen);
		}
		cgs_snapshot_free(s);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	struct cgs_snapshot *s = snap(r, 0, false);
	seen += find(s, "/s", false)->subtree_delta->tasks;
	assert_int_equal(seen, 400000);
	assert_int_equal(find(s, "/s/zero", false)->self->tasks, 200000);
	assert_int_equal(find(s, "/s/one", false)->self->tasks, 200000);
	assert_int_equal(cgs_snapshot_get_totals(s)->proc_reads, 2);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* ---- snapshots freed by another thread ------------------------------- */

/* One slot between the thread that makes snapshots and the one that
 * frees them. */
struct handoff {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct cgs_snapshot *s;
	bool done;
};

static void *freer_main(void *arg)
{
	struct handoff *h = arg;
	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->s && !h->done)
			pthread_cond_wait(&h->cond, &h->lock);
		if (!h->s)
			break;
		struct cgs_snapshot *s = h->s;
		h->s = NULL;
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
		cgs_snapshot_free(s); /* into the pool, or freed */
		pthread_mutex_lock(&h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/*
 * The pool is shared by the threads that free snapshots and the one that
 * makes them (a writer accounting meanwhile): each snapshot is handed to
 * another thread to be freed, sometimes while the next is made, and the
 * last ones outlive the rollup. Under ASan, a snapshot reused while alive
 * or freed twice shows.
 */
static void test_snapshot_free_threads(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 2, CGS_ROLLUP_HISTOGRAMS);
	fp_set(&F, 8100, "/t/a");
	fp_set(&F, 8101, "/t/b");
	fp_set(&F, 8001, "/t/w"); /* the writer's records */
	struct writer w = { r, 1, 50000 };
	struct handoff h = { .lock = PTHREAD_MUTEX_INITIALIZER,
			     .cond = PTHREAD_COND_INITIALIZER };
	pthread_t wt, ft;
	pthread_create(&wt, NULL, writer_main, &w);
	pthread_create(&ft, NULL, freer_main, &h);
	uint64_t seen = 0;
	struct cgs_snapshot *kept = NULL;
	for (int k = 0; k < 200; k++) {
		struct cgs_rollup_totals t = { 0 };
		struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 8100 + k % 2,
						  8100 + k % 2, 1, 1);
		assert_int_equal(cgs_rollup_add(r, 0, &rec, NULL, NULL), 0);
		struct cgs_snapshot *s = snap(r, 0, false);
		const struct cgs_cgroup_stats *c = find(s, "/t", false);
		assert_non_null(c);
		seen += c->subtree_delta->tasks;
		assert_int_equal(c->subtree->tasks, seen);
		t = *cgs_snapshot_get_totals(s);
		assert_int_equal(t.records, seen);
		if (k == 150) { /* one kept to the end */
			kept = s;
			continue;
		}
		pthread_mutex_lock(&h.lock);
		while (h.s)
			pthread_cond_wait(&h.cond, &h.lock);
		h.s = s;
		pthread_cond_broadcast(&h.cond);
		pthread_mutex_unlock(&h.lock);
	}
	pthread_join(wt, NULL);
	struct cgs_snapshot *last = snap(r, 0, false);
	seen += find(last, "/t", false)->subtree_delta->tasks;
	assert_int_equal(seen, 50000 + 200);
	cgs_rollup_free(r); /* the freer may still hold one */
	pthread_mutex_lock(&h.lock);
	h.done = true;
	pthread_cond_broadcast(&h.cond);
	pthread_mutex_unlock(&h.lock);
	pthread_join(ft, NULL);
	assert_non_null(find(kept, "/t", false));
	cgs_snapshot_free(kept);
	cgs_snapshot_free(last);
}

/* ---- snapshots against a model --------------------------------------- */

/*
 * Random workloads on a tree of cgroups, checked after every snapshot
 * against what was accounted, kept by this test per cgroup: self and
 * subtree, cumulative and since the last baseline, with records spread
 * over the shards, idle intervals, snapshots that keep the baseline
 * (no_delta), and leaves removed and retired (their totals then live on
 * in the ancestors' subtrees). The snapshot takes shortcuts for idle
 * cgroups, leaves and cgroups with no retired descendant, and reuses the
 * memory of the last one freed (a cgroup unchanged since it keeps the
 * counters that one copied, unless moved or merged there): each must
 * give what the long way gives.
 */
#define M_MAX 64
struct mnode {
	char path[48];
	int parent;          /* -1 for "/" */
	bool removed, retired;
	bool node; /* the rollup has a node for it: it had records, or a
		    * retired child's totals */
	struct want cum, ivl; /* self: cumulative, since the baseline */
};

static void want_add(struct want *d, const struct want *s)
{
	d->tasks += s->tasks;
	d->processes += s->processes;
	d->seeds += s->seeds;
	d->termed += s->termed;
	if (s->tasks && s->peak_seed > d->peak_seed)
		d->peak_seed = s->peak_seed;
}

static bool m_under(const struct mnode *m, int y, int x)
{
	for (; y >= 0; y = m[y].parent)
		if (y == x)
			return true;
	return false;
}

/* The index of c in s. */
static size_t index_of(const struct cgs_snapshot *s,
		       const struct cgs_cgroup_stats *c)
{
	size_t i = 0;
	while (cgs_snapshot_get_cgroup(s, i) != c)
		i++;
	return i;
}

/* With CGS_ROLLUP_HISTOGRAMS: set `set` of cgroup c counts w's tasks
 * (lifetime), processes (process lifetime) and CPU (fp_record: utime
 * 1000 * seed + 1, stime 1000 * seed + 2); and in every case its SIGTERM
 * exits, no other signal. */
static void assert_hist(const struct cgs_snapshot *s,
			const struct cgs_cgroup_stats *c,
			enum cgs_counter_set set, struct want w)
{
	size_t i = index_of(s, c);
	struct cgs_hist h = { .sz = sizeof(h) };
	assert_int_equal(cgs_snapshot_get_hist(s, i, set, CGS_HIST_LIFETIME, &h),
			 0);
	want_field("lifetime count", h.count, w.tasks);
	assert_int_equal(cgs_snapshot_get_hist(s, i, set, CGS_HIST_PROC_LIFETIME,
					   &h),
			 0);
	want_field("process lifetime count", h.count, w.processes);
	assert_int_equal(cgs_snapshot_get_hist(s, i, set, CGS_HIST_CPU, &h), 0);
	want_field("cpu count", h.count, w.tasks);
	want_field("cpu sum", h.sum_ns, (2000 * w.seeds + 3 * w.tasks) * 1000);
}

#define M_SIGTERM 15 /* a wait status: killed by SIGTERM */

static void assert_signals(const struct cgs_snapshot *s,
			   const struct cgs_cgroup_stats *c,
			   enum cgs_counter_set set, struct want w)
{
	size_t i = index_of(s, c);
	struct cgs_signal_counts g = { .sz = sizeof(g) };
	assert_int_equal(cgs_snapshot_get_signals(s, i, set, &g), 0);
	for (int k = 1; k < CGS_SIGNAL_SLOTS; k++)
		want_field("signal count", g.n[k], k == M_SIGTERM ? w.termed : 0);
}

static uint64_t mix(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* A digest of what a snapshot shows, to see that it stays as it was
 * while other snapshots are made and freed (the pool must reuse only the
 * memory of freed ones). */
static uint64_t snap_digest(const struct cgs_snapshot *s, bool hist)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < cgs_snapshot_count(s); i++) {
		const struct cgs_cgroup_stats *c = cgs_snapshot_get_cgroup(s, i);
		const struct cgs_counters *k[4] = { c->self, c->self_delta,
						    c->subtree,
						    c->subtree_delta };
		h = mix(h, c->path, strlen(c->path));
		h = mix(h, &c->ino, sizeof(c->ino));
		h = mix(h, &c->removed, sizeof(c->removed));
		for (int j = 0; j < 4; j++)
			h = mix(h, k[j], sizeof(*k[j]));
		for (int set = 0; set < 4; set++) {
			struct cgs_signal_counts g = { .sz = sizeof(g) };
			assert_int_equal(cgs_snapshot_get_signals(s, i, set, &g), 0);
			h = mix(h, g.n, sizeof(g.n));
			for (int kd = 0; hist && kd < CGS_HIST__COUNT; kd++) {
				struct cgs_hist hh = { .sz = sizeof(hh) };
				assert_int_equal(cgs_snapshot_get_hist(s, i, set, kd,
								   &hh),
						 0);
				h = mix(h, hh.cumulative, sizeof(hh.cumulative));
				h = mix(h, &hh.sum_ns, sizeof(hh.sum_ns));
			}
		}
	}
	return h;
}

static void model_run(unsigned shards, uint64_t seed, unsigned flags)
{
	bool hist = flags & CGS_ROLLUP_HISTOGRAMS;
	/* a snapshot kept alive while later ones are made and freed */
	struct cgs_snapshot *held = NULL;
	uint64_t held_digest = 0;
	struct mnode m[M_MAX] = { 0 };
	int n = 0;
	uint64_t x = seed;
	/* "/", /m, /m/aI (I < 4), /m/aI/bJ (J < 3), /m/aI/bJ/c0 where J = 0 */
	snprintf(m[n].path, sizeof(m[n].path), "/");
	m[n++].parent = -1;
	snprintf(m[n].path, sizeof(m[n].path), "/m");
	m[n++].parent = 0;
	fp_mkdir(&F, "/m");
	for (int i = 0; i < 4; i++) {
		int a = n;
		snprintf(m[n].path, sizeof(m[n].path), "/m/a%d", i);
		m[n++].parent = 1;
		fp_mkdir(&F, m[a].path);
		for (int j = 0; j < 3; j++) {
			int b = n;
			snprintf(m[n].path, sizeof(m[n].path), "/m/a%d/b%d", i,
				 j);
			m[n++].parent = a;
			fp_mkdir(&F, m[b].path);
			if (j)
				continue;
			snprintf(m[n].path, sizeof(m[n].path), "/m/a%d/b0/c0",
				 i);
			m[n].parent = b;
			fp_mkdir(&F, m[n++].path);
		}
	}
	struct cgs_rollup *r = fp_rollup(&F, shards, flags);
	for (int round = 0; round < 40; round++) {
		for (int i = 1; i < n; i++) {
			if (m[i].removed || cgt_xorshift(&x) % 10 >= 3)
				continue; /* most cgroups idle this round */
			int nk = 1 + (int)(cgt_xorshift(&x) % 3);
			for (int k = nk; k > 0; k--) {
				bool proc = cgt_xorshift(&x) & 1;
				/* a few cgroups get exits by signal: their sets
				 * carry signal counts, the others' do not */
				bool term = proc && i % 5 == 0 &&
					    cgt_xorshift(&x) % 3 == 0;
				uint64_t sd = 1 + cgt_xorshift(&x) % 50;
				struct cgs_record rec = fp_record(
					proc ? CGS_KIND_PROCESS
					     : CGS_KIND_THREAD,
					7000 + i, 7000 + i, 1, sd);
				if (term)
					rec.exit_status = M_SIGTERM;
				struct want w = { .tasks = 1,
						  .processes = proc,
						  .seeds = sd,
						  .peak_seed = sd,
						  .termed = term };
				unsigned sh =
					(unsigned)(cgt_xorshift(&x) % shards);
				assert_int_equal(cgt_add_path(
							 r, sh, &rec,
							 m[i].path),
						 0);
				want_add(&m[i].cum, &w);
				want_add(&m[i].ivl, &w);
				m[i].node = true;
			}
		}
		/* now and then a leaf goes (its records are all in) */
		if (round % 4 == 3) {
			int i = 2 + (int)(cgt_xorshift(&x) % (uint64_t)(n - 2));
			bool leaf = !m[i].removed;
			for (int j = 0; leaf && j < n; j++)
				leaf = m[j].parent != i || m[j].removed;
			if (leaf) {
				fp_rmdir(&F, m[i].path);
				m[i].removed = true;
			}
		}
		bool keep = cgt_xorshift(&x) % 5 == 0;
		struct cgs_snapshot *s = snap(r, 0, keep);
		for (int i = 0; i < n; i++) {
			/* listed: a node of its own, or a listed descendant */
			bool listed = false;
			for (int j = 0; j < n && !listed; j++)
				listed = m[j].node && !m[j].retired &&
					 m_under(m, j, i);
			const struct cgs_cgroup_stats *c =
				find(s, m[i].path, m[i].removed);
			if (!listed && !m[i].retired && i) {
				if (c)
					fail_msg("round %d: %s listed", round,
						 m[i].path);
				continue;
			}
			if (m[i].retired)
				continue;
			if (!c)
				fail_msg("round %d: %s missing", round,
					 m[i].path);
			struct want sub = { 0 }, subd = { 0 };
			for (int j = 0; j < n; j++)
				if (m_under(m, j, i)) {
					want_add(&sub, &m[j].cum);
					want_add(&subd, &m[j].ivl);
				}
			assert_want(c->self, m[i].cum);
			assert_want(c->self_delta, m[i].ivl);
			assert_want(c->subtree, sub);
			assert_want(c->subtree_delta, subd);
			assert_signals(s, c, CGS_SET_SELF, m[i].cum);
			assert_signals(s, c, CGS_SET_SELF_DELTA, m[i].ivl);
			assert_signals(s, c, CGS_SET_SUBTREE, sub);
			assert_signals(s, c, CGS_SET_SUBTREE_DELTA, subd);
			if (hist) {
				assert_hist(s, c, CGS_SET_SELF, m[i].cum);
				assert_hist(s, c, CGS_SET_SELF_DELTA, m[i].ivl);
				assert_hist(s, c, CGS_SET_SUBTREE, sub);
				assert_hist(s, c, CGS_SET_SUBTREE_DELTA, subd);
			}
		}
		/* now and then a snapshot stays alive across the next two
		 * (two or three alive at once), then the two are freed in
		 * either order */
		if (held) {
			assert_true(snap_digest(held, hist) == held_digest);
			if (cgt_xorshift(&x) & 1) {
				cgs_snapshot_free(held);
				cgs_snapshot_free(s);
			} else {
				cgs_snapshot_free(s);
				cgs_snapshot_free(held);
			}
			held = NULL;
		} else if (cgt_xorshift(&x) % 3 == 0) {
			held = s;
			held_digest = snap_digest(s, hist);
		} else {
			cgs_snapshot_free(s);
		}
		if (!keep)
			for (int i = 0; i < n; i++)
				m[i].ivl = (struct want){ 0 };
		/* reported and removed for the grace period: removed cgroups
		 * retire, gone from the next one */
		F.now_ms += 2000;
		assert_true(cgs_rollup_retire_removed(r) >= 0);
		for (int i = 0; i < n; i++)
			if (m[i].removed && !m[i].retired) {
				m[i].retired = true;
				if (m[i].node)
					m[m[i].parent].node = true;
			}
		s = snap(r, 0, true);
		for (int i = 0; i < n; i++)
			if (m[i].retired && find(s, m[i].path, true))
				fail_msg("round %d: %s not retired", round,
					 m[i].path);
		if (held)
			assert_true(snap_digest(held, hist) == held_digest);
		cgs_snapshot_free(s);
	}
	if (!held) /* one to outlive the rollup */
		held_digest = snap_digest(held = snap(r, 0, true), hist);
	cgs_rollup_free(r);
	assert_true(snap_digest(held, hist) == held_digest);
	cgs_snapshot_free(held);
	for (int i = n; i-- > 1;)
		if (!m[i].removed)
			fp_rmdir(&F, m[i].path);
}

/*
 * A host that shrinks: 12,000 cgroups (paths with no directory, so seen
 * removed by the round-robin checks and retired), then none of them.
 * The pool gives back what the smaller snapshots no longer need (a chunk
 * far too big, spare blocks), and the counts stay right through it.
 */
static void test_snapshot_pool_shrinks(void **state)
{
	(void)state;
	enum { N = 12000 };
	fp_mkdir(&F, "/big"); /* its children have no directory */
	struct cgs_rollup *r = fp_rollup(&F, 1, CGS_ROLLUP_HISTOGRAMS);
	struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 9000, 9000, 1, 1);
	char path[64];
	for (int i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "/big/c%05d", i);
		assert_int_equal(cgt_add_path(r, 0, &rec, path), 0);
	}
	size_t left = N;
	for (int k = 0; k < 80 && left; k++) {
		struct cgs_snapshot *s = snap(r, 0, false);
		const struct cgs_cgroup_stats *c = find(s, "/big", false);
		assert_non_null(c);
		assert_int_equal(c->subtree->tasks, N);
		struct cgs_hist h = { .sz = sizeof(h) };
		assert_int_equal(cgs_snapshot_get_hist(s, index_of(s, c),
						   CGS_SET_SUBTREE,
						   CGS_HIST_LIFETIME, &h),
				 0);
		assert_int_equal(h.count, N);
		left = cgs_snapshot_count(s) - 3; /* "/", /big, unknown */
		cgs_snapshot_free(s);
		F.now_ms += 2001;
		assert_true(cgs_rollup_retire_removed(r) >= 0);
	}
	assert_int_equal(left, 0);
	cgs_rollup_free(r);
	fp_rmdir(&F, "/big");
}

static void test_snapshot_model(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 8; seed++)
		model_run(seed % 3 ? 3 : 1, seed * 0x9e3779b97f4a7c15ull,
			  seed & 1 ? CGS_ROLLUP_HISTOGRAMS : 0);
}

/* Issue 27: a record the rollup cannot take is counted, never silent;
 * the default shard count is the default listener's. */
static void test_refused(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	fp_set(&F, 100, "/a");
	struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 100, 100, 1, 1);
	assert_int_equal(cgs_rollup_add(r, 1, &rec, NULL, NULL), -EINVAL);
	assert_int_equal(cgt_add_path(r, 0, &rec, "rel"), -EINVAL);
	struct cgs_record bad = rec;
	bad.kind = 77;
	assert_int_equal(cgs_rollup_add(r, 0, &bad, NULL, NULL), -EINVAL);
	struct cgs_exit ev = { .sz = sizeof(ev), .task = &rec, .shard = 5 };
	assert_int_equal(cgs_rollup_account_exit(&ev, r), 0);
	ev.shard = 0;
	assert_int_equal(cgs_rollup_account_exit(&ev, r), 0);
	CGS_OPTS(cgs_rollup_totals, t);
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	assert_int_equal(t.refused, 4);
	assert_int_equal(t.records, 1);
	cgs_rollup_free(r);

	r = fp_rollup(&F, 0, 0);
	int n = cgs_possible_cpus();
	assert_true(n > 0);
	assert_int_equal(r->nshards, cgsi_default_shards((unsigned)n));
	cgs_rollup_free(r);
}

/* The one rule that cuts CPUs into shards (listener and kernel source):
 * contiguous groups, sizes within one, larger ones first, at most 16 by
 * default. */
static void test_cpus_split(void **state)
{
	(void)state;
	unsigned char *set = calloc(CGSI_MAX_CPUS, 1);
	int *owner = calloc(CGSI_MAX_CPUS, sizeof(*owner));
	assert_non_null(set);
	assert_non_null(owner);
	for (unsigned ncpus = 1; ncpus <= 300; ncpus += ncpus < 40 ? 1 : 37) {
		unsigned d = cgsi_default_shards(ncpus);
		assert_true(d >= 1 && d <= CGSI_DEFAULT_MAX_SHARDS);
		if (ncpus <= CGSI_DEFAULT_MAX_SHARDS)
			assert_int_equal(d, ncpus);
		memset(set, 0, CGSI_MAX_CPUS);
		/* every other CPU, so that holes are skipped */
		for (unsigned i = 0; i < ncpus; i++)
			set[2 * i + 1] = 1;
		for (unsigned n = 1; n <= ncpus && n <= 20; n++) {
			cgsi_cpus_split(set, n, owner);
			unsigned size[20] = { 0 };
			int last = 0;
			for (int c = 0; c < CGSI_MAX_CPUS; c++) {
				if (!set[c]) {
					assert_int_equal(owner[c], -1);
					continue;
				}
				assert_true(owner[c] == last ||
					    owner[c] == last + 1);
				last = owner[c];
				size[owner[c]]++;
			}
			assert_int_equal(last, (int)n - 1);
			for (unsigned i = 0; i < n; i++)
				assert_int_equal(size[i],
						 ncpus / n + (i < ncpus % n));
		}
	}
	free(set);
	free(owner);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_proc_stat),
		fp_unit_test(test_mounts, &F),
		fp_unit_test(test_math, &F),
		fp_unit_test(test_order_fold, &F),
		fp_unit_test(test_deltas, &F),
		fp_unit_test(test_attribution_paths, &F),
		fp_unit_test(test_pid_reuse, &F),
		fp_unit_test(test_move, &F),
		fp_unit_test(test_parent_noted, &F),
		fp_unit_test(test_sweep_bound, &F),
		fp_unit_test(test_peer_busy, &F),
		fp_unit_test(test_reused_pid, &F),
		fp_unit_test(test_removed_retire, &F),
		fp_unit_test(test_recreated, &F),
		fp_unit_test(test_recreated_shards, &F),
		fp_unit_test(test_churn_bounded, &F),
		fp_unit_test(test_shards_concurrent, &F),
		fp_unit_test(test_snapshot_model, &F),
		fp_unit_test(test_snapshot_free_threads, &F),
		fp_unit_test(test_snapshot_pool_shrinks, &F),
		fp_unit_test(test_refused, &F),
		cmocka_unit_test(test_cpus_split),
	};
	return CGT_RUN(argc, argv, tests);
}
