/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pid reuse through the rollup's attribution paths, on the fake /proc of
 * tests/rollup (fakeproc.c) with a fake clock. Found by the soak test: on
 * a host where other workloads churn too, records of foreign processes
 * were counted in the soak's cgroup (about 5% extra: foreign comms
 * "cgs-churn", "bash", "readlink" in the soak cgroup's exit events).
 *
 * parent  a reaped process is attributed through its parent (ac_ppid);
 *         the parent's pid was recently used by a process that died in
 *         another cgroup: the dead entry must not answer for the new
 *         parent (it is alive, in /proc, in its own cgroup);
 * thread  a thread record of a new process that reused a pid within the
 *         grace period of the old one's death must not inherit it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/fakeproc.h"

static struct fakeproc F;

static const char *acct(struct cgs_rollup *r, const struct cgs_record *rec)
{
	const char *p = NULL;

	assert_int_equal(cgt_add(r, 0, rec, &p, NULL), 0);
	return p;
}

static void test_parent_reused(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);

	/* 500 lives and dies in /mine (a short-lived child of 400) */
	fp_set(&F, 400, "/mine");
	fp_set(&F, 500, "/mine");
	struct cgs_record old = fp_record(CGS_KIND_PROCESS, 500, 500, 400, 1);
	assert_string_equal(acct(r, &old), "/mine");
	fp_reap(&F, 500);
	F.now_ms += 20;
	/* pid 500 reused by a process in /other, which forks 600; 600 exits
	 * and is reaped before its record is accounted */
	fp_set(&F, 500, "/other");
	struct cgs_record kid = fp_record(CGS_KIND_PROCESS, 600, 600, 500, 2);
	const char *p = acct(r, &kid);
	assert_true(strcmp(p, "/mine") != 0);
	assert_string_equal(p, "/other");
	cgs_rollup_free(r);
}

static void test_thread_of_reused(void **state)
{
	(void)state;
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);

	fp_set(&F, 700, "/mine");
	struct cgs_record old = fp_record(CGS_KIND_PROCESS, 700, 700, 1, 1);
	assert_string_equal(acct(r, &old), "/mine");
	fp_reap(&F, 700);
	F.now_ms += 20;
	/* pid 700 reused by a multi-threaded process in /other: its first
	 * thread exits 20 ms after the old 700 died */
	fp_set(&F, 700, "/other");
	struct cgs_record th = fp_record(CGS_KIND_THREAD, 701, 700, 1, 2);
	th.etime_us = 5000; /* started 5 ms ago: after the old 700 died */
	assert_string_equal(acct(r, &th), "/other");
	cgs_rollup_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		fp_unit_test(test_parent_reused, &F),
		fp_unit_test(test_thread_of_reused, &F),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
