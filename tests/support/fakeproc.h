/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A fake /proc and cgroup2 mount in a temp dir, and a fake clock, for the
 * rollup unit tests. */
#ifndef CGS_TESTS_ROLLUP_FAKEPROC_H
#define CGS_TESTS_ROLLUP_FAKEPROC_H

#include <stdint.h>

#include "cgstats.h"

struct fakeproc {
	char root[256];   /* temp dir */
	char proc[320];   /* <root>/proc */
	char mnt[320];    /* <root>/cg: the "cgroup2 mount" */
	char mountinfo[384];
	uint64_t now_ms;  /* the clock */
};

int fp_init(struct fakeproc *f);
void fp_fini(struct fakeproc *f);
/*
 * cmocka setup and teardown giving each case a fresh tree (clock reset,
 * no pid, no cgroup): *state is the case's struct fakeproc, the initial
 * state of fp_unit_test().
 */
int fp_setup(void **state);
int fp_teardown(void **state);
/* A case run on the fresh tree f (a struct fakeproc *). cgs_test()'s
 * CASES finds these lines as it finds cmocka_unit_test*() ones. */
#define fp_unit_test(test, f)                                                 \
	cmocka_unit_test_prestate_setup_teardown(test, fp_setup, fp_teardown, \
						 f)
/* /proc/<pid>/cgroup saying the task is in cgroup `path` (v2 and v1
 * "memory" lines); also mkdir -p the cgroup directory. */
void fp_set(struct fakeproc *f, uint32_t pid, const char *path);
void fp_set_text(struct fakeproc *f, uint32_t pid, const char *text);
/* /proc/<pid>/stat: state, PF_* flags, start in ticks after boot (0: not
 * checked). fp_set() and fp_set_text() write 'Z', PF_EXITING, 0: a
 * process whose exit the fallback may read. */
void fp_set_stat(struct fakeproc *f, uint32_t pid, char state,
		 uint32_t flags, uint64_t start_ticks);
/* The process is reaped: its /proc/<pid> disappears. */
void fp_reap(struct fakeproc *f, uint32_t pid);
void fp_mkdir(struct fakeproc *f, const char *cgpath);
void fp_rmdir(struct fakeproc *f, const char *cgpath);
uint64_t fp_clock(void *ctx);
/* Options for a rollup on this fake tree. */
struct cgs_rollup_opts fp_opts(struct fakeproc *f);
/* cgs_rollup_new() with fp_opts(f), these shards and flags; a failure
 * fails the case. */
struct cgs_rollup *fp_rollup(struct fakeproc *f, unsigned shards,
			     unsigned flags);

/* A record with distinct, checkable values derived from `seed`. */
struct cgs_record fp_record(enum cgs_kind kind, uint32_t pid, uint32_t tgid,
			    uint32_t ppid, uint64_t seed);

#endif
