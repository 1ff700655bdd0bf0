/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fork tracking (CGS_ROLLUP_TRACK_FORKS) with a fake /proc, a fake clock
 * and synthetic fork events injected into the tracker (a rollup over a
 * fake proc root opens no connector socket): the ancestor walk, a
 * reparented process, pid reuse of an ancestor and of the exiting pid
 * (seen through fork order and fork times), lost events, the hop limit,
 * cached ancestors, "disabled = no effect", `unattributed` counting
 * every record put in the unknown bucket, and a full table forgetting its
 * oldest forks (pid_max 4194304) without inventing anything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/fakeproc.h"
#include "fakeforks.h"
#include "rollup/rollup_int.h"

static struct fakeproc F;

/* Exit of a single-threaded process that lived life_ms. */
static const char *exit_of(struct cgs_rollup *r, uint32_t pid, uint32_t ppid,
			   uint64_t life_ms)
{
	struct cgs_record rec = fp_record(CGS_KIND_PROCESS, pid, pid, ppid, 1);
	rec.etime_us = rec.tgetime_us = life_ms * 1000;
	const char *path = NULL;
	assert_int_equal(cgt_add(r, 0, &rec, &path, NULL), 0);
	return path;
}

static struct cgs_rollup_totals totals(struct cgs_rollup *r)
{
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	return t;
}

/* bash (100, alive in /svc) -> subshell 200 -> cat 300; 300 and 200 are
 * reaped before the record of 300 is read. */
static void test_walk(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, CGS_ROLLUP_TRACK_FORKS);
	fp_set(&F, 100, "/svc");
	fp_fork(r, 100, 200, 30);
	fp_fork(r, 200, 300, 20);
	F.now_ms += 20;
	assert_string_equal(exit_of(r, 300, 200, 10), "/svc");
	/* its TGID record: the cache entry, no walk, not unknown */
	struct cgs_record g = fp_record(CGS_KIND_TGID, 0, 300, 0, 1);
	const char *path = NULL;
	assert_int_equal(cgt_add(r, 0, &g, &path, NULL), 0);
	assert_string_equal(path, "/svc");
	/* the subshell's own exit: via its live parent */
	assert_string_equal(exit_of(r, 200, 100, 40), "/svc");
	/* another subshell's child: bash is in the cache now */
	uint64_t reads = totals(r).proc_reads;
	fp_fork(r, 100, 201, 30);
	fp_fork(r, 201, 302, 25);
	assert_string_equal(exit_of(r, 302, 201, 5), "/svc");
	struct cgs_rollup_totals t = totals(r);
	assert_int_equal(t.via_ancestor, 2); /* 300, 302 */
	assert_int_equal(t.via_parent, 1);   /* 200: its parent is alive */
	assert_int_equal(t.unattributed, 0);
	assert_int_equal(t.fork_tracking, 1);
	assert_int_equal(t.fork_events, 4);
	/* 302: its own /proc and 201's; bash from the cache */
	assert_int_equal(t.proc_reads - reads, 2);
	cgs_rollup_free(r);
}

/* Reparented to a reaper (ac_ppid 1, in "/"): the fork ancestor wins. */
static void test_reparented(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, CGS_ROLLUP_TRACK_FORKS);
	fp_set(&F, 1, "/");
	fp_set(&F, 100, "/svc");
	fp_fork(r, 100, 200, 50);
	fp_fork(r, 200, 300, 40);
	assert_string_equal(exit_of(r, 300, 1, 30), "/svc");
	assert_int_equal(totals(r).via_ancestor, 1);
	/* nothing known above the fork parent: the reaper, as before */
	fp_fork(r, 999, 400, 40); /* 999: never in /proc */
	assert_string_equal(exit_of(r, 400, 1, 30), "/");
	assert_int_equal(totals(r).via_parent, 1);
	cgs_rollup_free(r);
}

/* An ancestor's pid forked again after its child: the new process must
 * not lend its cgroup. */
static void test_ancestor_reuse(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, CGS_ROLLUP_TRACK_FORKS);
	fp_set(&F, 100, "/svc");
	fp_set(&F, 50, "/other");
	fp_fork(r, 100, 200, 50);
	fp_fork(r, 200, 300, 40);
	/* 200 died, its pid went to a child of 50 in /other */
	fp_fork(r, 50, 200, 30);
	fp_set(&F, 200, "/other");
	/* ac_ppid 200 is the reused pid: not read, not walked through */
	assert_string_equal(exit_of(r, 300, 200, 20), CGS_UNKNOWN_CGROUP);
	/* the same one hop further up: 100 reused by a child of 50 */
	fp_fork(r, 100, 210, 50);
	fp_fork(r, 210, 310, 40);
	fp_fork(r, 50, 100, 30);
	fp_set(&F, 100, "/other");
	assert_string_equal(exit_of(r, 310, 210, 20), CGS_UNKNOWN_CGROUP);
	struct cgs_rollup_totals t = totals(r);
	assert_int_equal(t.via_ancestor, 0);
	assert_int_equal(t.unattributed, 2);
	cgs_rollup_free(r);
}

/* The exiting pid's entry is a newer process (forked after the exiting
 * one started): no walk. Its own entry (forked before) is fine. */
static void test_exiting_reuse(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, CGS_ROLLUP_TRACK_FORKS);
	fp_set(&F, 100, "/svc");
	fp_set(&F, 50, "/other");
	F.now_ms += 100000;
	fp_fork(r, 50, 300, 5); /* the pid's newest fork: 5 ms ago */
	/* 300 lived 10 s: the entry is another process */
	assert_string_equal(exit_of(r, 300, 77, 10000), CGS_UNKNOWN_CGROUP);
	/* a thread record of the same (reaped) process: same answer */
	fp_fork(r, 100, 301, 5000);
	struct cgs_record th = fp_record(CGS_KIND_THREAD, 302, 301, 77, 1);
	th.etime_us = 4000u * 1000u;
	const char *path = NULL;
	assert_int_equal(cgt_add(r, 0, &th, &path, NULL), 0);
	assert_string_equal(path, "/svc"); /* thread started after its fork */
	F.now_ms += 3000; /* grace over, the entry is gone */
	th.etime_us = 9000u * 1000u; /* impossible for the fork 8 s ago */
	th.pid = 303;
	assert_int_equal(cgt_add(r, 0, &th, &path, NULL), 0);
	assert_string_equal(path, CGS_UNKNOWN_CGROUP);
	assert_int_equal(totals(r).via_ancestor, 1);
	cgs_rollup_free(r);
}

/* Lost events: entries recorded before the loss are not trusted; those
 * recorded after are. */
static void test_lost(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, CGS_ROLLUP_TRACK_FORKS);
	fp_set(&F, 100, "/svc");
	fp_fork(r, 100, 200, 50);
	fp_fork(r, 200, 300, 40);
	fp_fork(r, 100, 220, 45);
	fp_lost(r, 3);
	assert_string_equal(exit_of(r, 300, 200, 20), CGS_UNKNOWN_CGROUP);
	fp_fork(r, 100, 210, 30);
	fp_fork(r, 210, 310, 20);
	assert_string_equal(exit_of(r, 310, 210, 10), "/svc");
	/* a trusted child whose parent's fork predates the loss: the
	 * parent itself is still right, nothing above it */
	fp_fork(r, 200, 320, 10); /* 200's entry predates the loss */
	fp_set(&F, 200, "/sub");
	assert_string_equal(exit_of(r, 320, 200, 5), "/sub");
	/* 220 reaped: what forked it (100 by its entry) is not trusted */
	fp_fork(r, 220, 340, 10);
	assert_string_equal(exit_of(r, 340, 220, 5), CGS_UNKNOWN_CGROUP);
	struct cgs_rollup_totals t = totals(r);
	assert_int_equal(t.fork_drops, 3);
	assert_int_equal(t.unattributed, 2);
	cgs_rollup_free(r);
}

static void chain(struct cgs_rollup *r, uint32_t top, uint32_t base, int n)
{
	uint32_t p = top;
	for (int i = 0; i < n; i++) {
		fp_fork(r, p, base + (uint32_t)i, (uint64_t)(100 - i));
		p = base + (uint32_t)i;
	}
}

/* At most CGSI_FORKS_MAX_HOPS ancestors are looked at. */
static void test_hop_limit(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, CGS_ROLLUP_TRACK_FORKS);
	fp_set(&F, 100, "/deep");
	/* 100 -> 1000 -> ... -> 1000+k-1: the last one exits with
	 * k-1 reaped ancestors between it and 100 */
	chain(r, 100, 1000, CGSI_FORKS_MAX_HOPS);
	assert_string_equal(exit_of(r, 1000 + CGSI_FORKS_MAX_HOPS - 1,
				    1000 + CGSI_FORKS_MAX_HOPS - 2, 1),
			    "/deep");
	chain(r, 100, 2000, CGSI_FORKS_MAX_HOPS + 1);
	assert_string_equal(exit_of(r, 2000 + CGSI_FORKS_MAX_HOPS,
				    2000 + CGSI_FORKS_MAX_HOPS - 1, 1),
			    CGS_UNKNOWN_CGROUP);
	cgs_rollup_free(r);
}

/* A cached ancestor answers only if it was read after its own fork. */
static void test_cached_ancestor(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, CGS_ROLLUP_TRACK_FORKS);
	fp_set(&F, 100, "/old");
	struct cgs_record th = fp_record(CGS_KIND_THREAD, 101, 100, 1, 1);
	assert_string_equal(cgs_rollup_add(r, 0, &th, NULL, NULL) ? "" : "ok",
			    "ok"); /* 100 cached (alive) in /old */
	F.now_ms += 100;
	/* pid 100 is a new process now (its exit was never seen) */
	fp_fork(r, 1, 100, 50);
	fp_set(&F, 100, "/new");
	fp_fork(r, 100, 200, 40);
	fp_fork(r, 200, 300, 30);
	assert_string_equal(exit_of(r, 300, 200, 10), "/new");
	/* read after its fork: the cache answers (a move since is not seen
	 * before revalidate_ms, as for any cached process) */
	fp_set(&F, 100, "/newer");
	fp_fork(r, 100, 201, 20);
	fp_fork(r, 201, 301, 15);
	uint64_t reads = totals(r).proc_reads;
	assert_string_equal(exit_of(r, 301, 201, 10), "/new");
	assert_int_equal(totals(r).proc_reads - reads, 2); /* 301, 201 */
	assert_int_equal(totals(r).via_ancestor, 2);
	cgs_rollup_free(r);
}

/* Without the flag: no tracker, old behaviour, counters zero. */
static void test_disabled(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, 0);
	assert_null(r->at.forks);
	fp_set(&F, 100, "/svc");
	assert_string_equal(exit_of(r, 300, 200, 10), CGS_UNKNOWN_CGROUP);
	struct cgs_rollup_totals t = totals(r);
	assert_int_equal(t.fork_tracking, 0);
	assert_int_equal(t.fork_events, 0);
	assert_int_equal(t.via_ancestor, 0);
	assert_int_equal(t.unattributed, 1);
	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(r, NULL, &s), 0);
	assert_int_equal(cgs_snapshot_get_totals(s)->fork_tracking, 0);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* `unattributed` counts records put in the unknown bucket, whichever
 * way: a TGID record answered by a cache entry pointing at it, and
 * cgs_add_opts.path alike. */
static void test_unattributed_records(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, 0);
	struct cgs_record p = fp_record(CGS_KIND_PROCESS, 900, 900, 899, 1);
	struct cgs_record g = fp_record(CGS_KIND_TGID, 0, 900, 0, 1);
	const char *path = NULL;
	assert_int_equal(cgt_add(r, 0, &p, &path, NULL), 0);
	assert_string_equal(path, CGS_UNKNOWN_CGROUP);
	assert_int_equal(cgt_add(r, 0, &g, &path, NULL), 0);
	assert_string_equal(path, CGS_UNKNOWN_CGROUP);
	assert_int_equal(totals(r).unattributed, 2);
	assert_int_equal(cgt_add_path(r, 0, &p, CGS_UNKNOWN_CGROUP),
			 0);
	assert_int_equal(cgt_add_path(r, 0, &g, CGS_UNKNOWN_CGROUP),
			 0);
	assert_int_equal(totals(r).unattributed, 4);
	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(r, NULL, &s), 0);
	assert_int_equal(cgs_snapshot_get_totals(s)->unattributed, 4);
	assert_int_equal(cgs_snapshot_get_totals(s)->records, 4);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* Forks unrelated to the case, to fill the table: pids 2000000 on. */
static void filler(struct cgs_rollup *r, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		fp_fork(r, 999, 2000000 + i, 5);
}

/* More forks than the table holds: the oldest are forgotten, memory stays
 * at CGSI_FORKS_KEEP nodes, a forgotten process is unknown (never
 * guessed), a live one is still found, and the reuse check still holds
 * for an ancestor whose earlier fork was forgotten. */
static void test_forgotten(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, CGS_ROLLUP_TRACK_FORKS);
	fp_set(&F, 100, "/svc");
	fp_fork(r, 100, 200, 60);
	fp_fork(r, 200, 300, 50);
	fp_fork(r, 100, 210, 60);
	fp_set(&F, 210, "/sub");
	fp_fork(r, 100, 220, 60);
	filler(r, CGSI_FORKS_KEEP);
	assert_int_equal(r->at.forks->nused, CGSI_FORKS_KEEP);
	assert_int_equal(r->at.forks->evictions, 4);
	/* 300 and its parent 200 reaped and forgotten: unknown */
	assert_string_equal(exit_of(r, 300, 200, 50), CGS_UNKNOWN_CGROUP);
	/* 210's fork forgotten, 210 alive: its child is found */
	fp_fork(r, 210, 310, 10);
	assert_string_equal(exit_of(r, 310, 210, 5), "/sub");
	/* 220's first fork forgotten; it forks 320, dies, and its pid is
	 * reused by a process in /other: 320 must not land there */
	fp_fork(r, 220, 320, 10);
	fp_fork(r, 100, 220, 5);
	fp_set(&F, 220, "/other");
	assert_string_equal(exit_of(r, 320, 220, 8), CGS_UNKNOWN_CGROUP);
	struct cgs_rollup_totals t = totals(r);
	assert_int_equal(t.fork_events, 4 + CGSI_FORKS_KEEP + 3);
	assert_int_equal(t.unattributed, 2);
	assert_int_equal(r->at.forks->nused, CGSI_FORKS_KEEP);
	cgs_rollup_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		fp_unit_test(test_walk, &F),
		fp_unit_test(test_reparented, &F),
		fp_unit_test(test_ancestor_reuse, &F),
		fp_unit_test(test_exiting_reuse, &F),
		fp_unit_test(test_lost, &F),
		fp_unit_test(test_hop_limit, &F),
		fp_unit_test(test_cached_ancestor, &F),
		fp_unit_test(test_disabled, &F),
		fp_unit_test(test_unattributed_records, &F),
		fp_unit_test(test_forgotten, &F),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
