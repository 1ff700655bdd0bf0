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
/* /proc/<pid>/cgroup saying the task is in cgroup `path` (v2 and v1
 * "memory" lines); also mkdir -p the cgroup directory. */
void fp_set(struct fakeproc *f, uint32_t pid, const char *path);
void fp_set_text(struct fakeproc *f, uint32_t pid, const char *text);
/* The process is reaped: its /proc/<pid> disappears. */
void fp_reap(struct fakeproc *f, uint32_t pid);
void fp_mkdir(struct fakeproc *f, const char *cgpath);
void fp_rmdir(struct fakeproc *f, const char *cgpath);
uint64_t fp_clock(void *ctx);
/* Options for a rollup on this fake tree. */
struct cgs_rollup_opts fp_opts(struct fakeproc *f);

/* A record with distinct, checkable values derived from `seed`. */
struct cgs_record fp_record(enum cgs_kind kind, uint32_t pid, uint32_t tgid,
			    uint32_t ppid, uint64_t seed);

#endif
