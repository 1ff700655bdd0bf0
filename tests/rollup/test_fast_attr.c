/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fast attribution (CGS_ROLLUP_FAST_ATTRIBUTION) with a fake /proc, a fake
 * clock and synthetic fork events: a new process's exit takes its fork
 * parent's cached cgroup with no /proc read, and only when that entry is
 * trustworthy (alive, fresh, read after the parent's own fork, the fork
 * event consistent); every other case reads /proc exactly as without the
 * flag, and without the flag (or without fork tracking) the path is never
 * taken.
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

#define FAST (CGS_ROLLUP_TRACK_FORKS | CGS_ROLLUP_FAST_ATTRIBUTION)

static struct fakeproc F;

/* fp_setup(), the clock then moved on: room for fork times in the past */
static int setup(void **state)
{
	int rc = fp_setup(state);
	F.now_ms += 100000;
	return rc;
}

static const char *account(struct cgs_rollup *r, struct cgs_record *rec)
{
	const char *path = NULL;
	assert_int_equal(cgt_add(r, 0, rec, &path, NULL), 0);
	return path;
}

/* Exit of a single-threaded process that lived life_ms. */
static const char *exit_of(struct cgs_rollup *r, uint32_t pid, uint32_t ppid,
			   uint64_t life_ms)
{
	struct cgs_record rec = fp_record(CGS_KIND_PROCESS, pid, pid, ppid, 1);
	rec.etime_us = rec.tgetime_us = life_ms * 1000;
	return account(r, &rec);
}

/* A thread of live process tgid exits: resolves tgid through /proc. */
static const char *thread_of(struct cgs_rollup *r, uint32_t tid,
			     uint32_t tgid)
{
	struct cgs_record rec = fp_record(CGS_KIND_THREAD, tid, tgid, 1, 1);
	rec.etime_us = 1000;
	return account(r, &rec);
}

static struct cgs_rollup_totals totals(struct cgs_rollup *r)
{
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	return t;
}

/* Parent 100 in /svc, resolved once; its children in /proc say
 * /svc/moved (the documented trade-off: fast mode says /svc). */
static void parent_resolved(struct cgs_rollup *r)
{
	fp_set(&F, 100, "/svc");
	fp_mkdir(&F, "/svc/moved");
	fp_fork(r, 1, 100, 500); /* the parent's own fork, well before */
	assert_string_equal(thread_of(r, 101, 100), "/svc");
	F.now_ms += 50;
}

/* Children of a cached parent: zero /proc reads, the parent's cgroup. */
static void test_fast_children(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, FAST);
	parent_resolved(r);
	struct cgs_rollup_totals t0 = totals(r);
	assert_int_equal(t0.proc_reads, 1);
	for (uint32_t pid = 1000; pid < 2000; pid++) {
		fp_set(&F, pid, "/svc/moved");
		fp_fork(r, 100, pid, 2);
		assert_string_equal(exit_of(r, pid, 100, 1), "/svc");
		/* the TGID record that follows: the new entry, no read */
		struct cgs_record g = fp_record(CGS_KIND_TGID, 0, pid, 0, 1);
		assert_string_equal(account(r, &g), "/svc");
		if (pid % 100 == 0)
			F.now_ms++;
	}
	struct cgs_rollup_totals t = totals(r);
	assert_int_equal(t.proc_reads, t0.proc_reads);
	assert_int_equal(t.via_fork_parent, 1000);
	assert_int_equal(t.via_proc, t0.via_proc);
	assert_int_equal(t.unattributed, 0);
	/* a parent forked before tracking started (no event, none lost) */
	fp_set(&F, 300, "/svc2");
	assert_string_equal(thread_of(r, 301, 300), "/svc2");
	fp_fork(r, 300, 3000, 1);
	fp_set(&F, 3000, "/svc/moved");
	assert_string_equal(exit_of(r, 3000, 300, 1), "/svc2");
	assert_int_equal(totals(r).via_fork_parent, 1001);
	cgs_rollup_free(r);
}

/* Every untrustworthy case reads the child's /proc, as without the flag. */
static void test_fast_fallbacks(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, FAST);
	parent_resolved(r);
	uint64_t reads = totals(r).proc_reads;

	/* no fork event for the child */
	fp_set(&F, 2000, "/svc/moved");
	assert_string_equal(exit_of(r, 2000, 100, 1), "/svc/moved");
	/* a fork event newer than the exiting process's start: another
	 * process has the pid now */
	fp_fork(r, 100, 2001, 0);
	fp_set(&F, 2001, "/svc/moved");
	assert_string_equal(exit_of(r, 2001, 100, 500), "/svc/moved");
	/* a child that lived revalidate_ms or longer: its own /proc */
	fp_fork(r, 100, 2030, 1000);
	fp_set(&F, 2030, "/svc/moved");
	assert_string_equal(exit_of(r, 2030, 100, 1000), "/svc/moved");
	assert_int_equal(totals(r).proc_reads - reads, 3);
	assert_int_equal(totals(r).via_fork_parent, 0);
	reads = totals(r).proc_reads;
	/* the parent is not in this shard's cache: its /proc is read (not
	 * the child's) and cached for the siblings */
	fp_set(&F, 400, "/p");
	fp_fork(r, 400, 2002, 1);
	fp_set(&F, 2002, "/svc/moved");
	assert_string_equal(exit_of(r, 2002, 400, 1), "/p");
	fp_fork(r, 400, 2012, 1);
	fp_set(&F, 2012, "/svc/moved");
	assert_string_equal(exit_of(r, 2012, 400, 1), "/p");
	assert_int_equal(totals(r).proc_reads - reads, 1);
	assert_int_equal(totals(r).via_fork_parent, 2);
	/* ... unless it was reaped: the child's own /proc */
	fp_fork(r, 410, 2022, 1);
	fp_set(&F, 2022, "/svc/moved");
	assert_string_equal(exit_of(r, 2022, 410, 1), "/svc/moved");
	assert_int_equal(totals(r).proc_reads - reads, 3);
	reads = totals(r).proc_reads;

	/* stale (older than revalidate_ms, 1000): the parent's /proc is read
	 * again (not the child's; by the background revalidation, which
	 * also re-reads the other stale live parent, 400), then its
	 * children are fast */
	F.now_ms += 1000;
	fp_set(&F, 100, "/svc2");
	fp_fork(r, 100, 2003, 1);
	fp_set(&F, 2003, "/svc/moved");
	assert_string_equal(exit_of(r, 2003, 100, 1), "/svc2");
	assert_int_equal(totals(r).proc_reads - reads, 2);
	reads = totals(r).proc_reads;
	fp_fork(r, 100, 2004, 1);
	fp_set(&F, 2004, "/svc/moved");
	assert_string_equal(exit_of(r, 2004, 100, 1), "/svc2");
	assert_int_equal(totals(r).proc_reads - reads, 0);
	assert_int_equal(totals(r).via_fork_parent, 4);
	/* stale, and the parent was reaped meanwhile (no exit record seen):
	 * the child's /proc */
	F.now_ms += 1000;
	fp_reap(&F, 100);
	fp_fork(r, 100, 2010, 1);
	fp_set(&F, 2010, "/svc/moved");
	assert_string_equal(exit_of(r, 2010, 100, 1), "/svc/moved");
	/* the background revalidation found 100 reaped (one read) and
	 * re-read the other stale live parent, 400 (one: a step after a
	 * gap covers the whole gap), so the child's own /proc is read at
	 * once (one) */
	assert_int_equal(totals(r).proc_reads - reads, 3);
	assert_int_equal(totals(r).via_fork_parent, 4);
	/* pid 100 again, alive in /svc (fresh entry below; after the grace
	 * period of the entry that found the old one reaped) */
	F.now_ms += 2100;
	fp_set(&F, 100, "/svc");
	assert_string_equal(thread_of(r, 102, 100), "/svc");
	reads = totals(r).proc_reads;

	/* resolved before the parent's own fork: pid 100 forked again (a
	 * new process, in /q) after the entry was read: the entry is not
	 * used, the parent's /proc is read again (the new process) */
	fp_fork(r, 7, 100, 10);
	fp_set(&F, 100, "/q");
	fp_fork(r, 100, 2005, 1);
	fp_set(&F, 2005, "/q/x");
	fp_mkdir(&F, "/q/x");
	assert_string_equal(exit_of(r, 2005, 100, 1), "/q");
	/* resolved within the slack of the parent's fork: read again */
	fp_set(&F, 500, "/r");
	fp_fork(r, 1, 500, 5);
	assert_string_equal(thread_of(r, 501, 500), "/r");
	fp_fork(r, 500, 2006, 1);
	fp_set(&F, 2006, "/r/x");
	fp_mkdir(&F, "/r/x");
	assert_string_equal(exit_of(r, 2006, 500, 1), "/r");
	assert_int_equal(totals(r).proc_reads - reads, 3); /* 100, 500 x2 */
	assert_int_equal(totals(r).via_fork_parent, 6);
	/* ... and trusted once read more than the slack after it */
	F.now_ms += 30;
	fp_fork(r, 500, 2016, 1);
	fp_set(&F, 2016, "/r/x");
	assert_string_equal(exit_of(r, 2016, 500, 1), "/r");
	fp_fork(r, 500, 2026, 1);
	fp_set(&F, 2026, "/r/x");
	assert_string_equal(exit_of(r, 2026, 500, 1), "/r");
	assert_int_equal(totals(r).proc_reads - reads, 4); /* 500 */
	assert_int_equal(totals(r).via_fork_parent, 8);
	reads = totals(r).proc_reads;

	/* lost events: the child's fork entry is not trusted */
	fp_set(&F, 600, "/s");
	assert_string_equal(thread_of(r, 601, 600), "/s");
	F.now_ms += 30;
	fp_fork(r, 600, 2007, 1);
	fp_lost(r, 1);
	fp_set(&F, 2007, "/s/x");
	fp_mkdir(&F, "/s/x");
	assert_string_equal(exit_of(r, 2007, 600, 1), "/s/x");
	/* after the loss the parent's cached entry (forked before tracking)
	 * is no longer vouched for: a new child's event (trusted) makes the
	 * parent's /proc be read again, checked against forks after it */
	fp_fork(r, 600, 2008, 1);
	fp_set(&F, 2008, "/s/x");
	assert_string_equal(exit_of(r, 2008, 600, 1), "/s");
	assert_int_equal(totals(r).proc_reads - reads, 3); /* 600 x2, 2007 */
	assert_int_equal(totals(r).via_fork_parent, 9);

	/* dead parent: its exit was accounted */
	fp_set(&F, 700, "/t");
	fp_fork(r, 1, 700, 200);
	assert_string_equal(thread_of(r, 701, 700), "/t");
	F.now_ms += 30;
	fp_fork(r, 700, 2009, 1);
	fp_set(&F, 2009, "/t/x");
	fp_mkdir(&F, "/t/x");
	assert_string_equal(exit_of(r, 700, 1, 300), "/t");
	assert_string_equal(exit_of(r, 2009, 700, 1), "/t/x");
	assert_int_equal(totals(r).proc_reads - reads, 5); /* 700, 2009 */
	assert_int_equal(totals(r).via_fork_parent, 9);
	assert_int_equal(totals(r).unattributed, 0);
	cgs_rollup_free(r);
}

/* Thread records of an unknown process and a reaped child keep the usual
 * paths (/proc, then via the parent): no fast path. */
static void test_fast_scope(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_forks_rollup(&F, FAST);
	parent_resolved(r);
	uint64_t reads = totals(r).proc_reads;
	fp_fork(r, 100, 2000, 2);
	fp_set(&F, 2000, "/svc/moved");
	assert_string_equal(thread_of(r, 2001, 2000), "/svc/moved");
	assert_int_equal(totals(r).proc_reads - reads, 1);
	assert_int_equal(totals(r).via_fork_parent, 0);
	cgs_rollup_free(r);
}

/* Without the flag, or without fork tracking, the path is never taken. */
static void test_exact_mode(void **state)
{
	(void)state;
	unsigned modes[] = { CGS_ROLLUP_TRACK_FORKS,
			     CGS_ROLLUP_FAST_ATTRIBUTION, 0 };
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct cgs_rollup *r = fp_forks_rollup(&F, modes[m]);
		fp_set(&F, 100, "/svc");
		fp_mkdir(&F, "/svc/moved");
		assert_string_equal(thread_of(r, 101, 100), "/svc");
		F.now_ms += 50;
		uint64_t reads = totals(r).proc_reads;
		for (uint32_t pid = 1000; pid < 1100; pid++) {
			if (r->at.forks)
				fp_fork(r, 100, pid, 2);
			fp_set(&F, pid, "/svc/moved");
			assert_string_equal(exit_of(r, pid, 100, 1),
					    "/svc/moved");
		}
		struct cgs_rollup_totals t = totals(r);
		assert_int_equal(t.proc_reads - reads, 100);
		assert_int_equal(t.via_fork_parent, 0);
		assert_int_equal(t.via_proc, 101);
		cgs_rollup_free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate_setup_teardown(
			test_fast_children, setup, fp_teardown, &F),
		cmocka_unit_test_prestate_setup_teardown(
			test_fast_fallbacks, setup, fp_teardown, &F),
		cmocka_unit_test_prestate_setup_teardown(
			test_fast_scope, setup, fp_teardown, &F),
		cmocka_unit_test_prestate_setup_teardown(
			test_exact_mode, setup, fp_teardown, &F),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
