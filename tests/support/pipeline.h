/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared support for real-kernel tests: a listener and a rollup wired the
 * way an agent wires them (one rollup writer per listener shard, each
 * CPU's kernel-side entries routed to the shard that receives its
 * records), with the skip decision made once: 77 and a SKIP line saying
 * why when the host cannot run the test.
 */
#ifndef CGS_TESTS_PIPELINE_H
#define CGS_TESTS_PIPELINE_H

#include <stddef.h>
#include <sys/types.h>

#include "cgstats.h"

struct cgt_pipeline {
	struct cgs_listener *l;
	struct cgs_rollup *r;
	/* if set, cgt_pipeline_pump() calls it after accounting each task
	 * record, with the path the rollup gave it */
	void (*on_task)(const struct cgs_record *rec, const char *path,
			void *ctx);
	void *on_task_ctx;
};

/* Open a listener (rcvbuf bytes per shard, 0: default): 0 and *l, 77
 * after "SKIP: reason" (no taskstats, no CAP_NET_ADMIN), 1 after the
 * error. */
int cgt_listener_open(struct cgs_listener **l, size_t rcvbuf);

/*
 * Open a listener (rcvbuf bytes per shard, 0: default) and a rollup with
 * attribution `a` (kernel_ringbuf: its ring space, 0: default; flags: rollup
 * flags). CGS_ATTRIBUTION_KERNEL that cannot load is a skip. Returns 0,
 * 77 after printing "SKIP: reason" (no taskstats, no CAP_NET_ADMIN, no
 * kernel source), or 1 after printing the error. p is filled on 0 only.
 */
int cgt_pipeline_open(struct cgt_pipeline *p, size_t rcvbuf,
		      enum cgs_attribution a, size_t kernel_ringbuf,
		      unsigned flags);
/*
 * As cgt_pipeline_open(), with the listener's options lo and the rollup's
 * ro (either NULL: the defaults) in full (e.g. ro->comms, lo->shards):
 * ro's shards, shard_cpus and errbuf are set here, from the listener and
 * for the skip decision. Not kept.
 */
int cgt_pipeline_open_opts(struct cgt_pipeline *p,
			   const struct cgs_listener_opts *lo,
			   const struct cgs_rollup_opts *ro);
/* Close the listener (stopping its threads, if running), then the rollup. */
void cgt_pipeline_close(struct cgt_pipeline *p);

/*
 * A rollup for l's shards with the /proc attribution and fork tracking
 * (CGS_ROLLUP_TRACK_FORKS | flags), for the tests of the fork paths,
 * which open it once their workers are forked. Fork tracking is expected
 * to work as root: without it, a FAIL line. Returns 0 with *r and the
 * first totals in *t0 (if not NULL), or 1 after printing the error.
 */
int cgt_forks_rollup_open(struct cgs_rollup **r, struct cgs_listener *l,
			  unsigned flags, struct cgs_rollup_totals *t0);

/*
 * The workload done: wait settle_ms for its last records to be read, stop
 * the listener and fill *loss (all shards). 0, or 1 after printing the
 * error.
 */
int cgt_listener_drain(struct cgs_listener *l, long settle_ms,
		       struct cgs_loss *loss);

/*
 * Without the runner, from the calling thread (which may then fork while
 * single-threaded): drain every shard, accounting each record into p->r,
 * for ms milliseconds (at least one pass). Returns the events read, or -1
 * after printing the error.
 */
long cgt_pipeline_pump(struct cgt_pipeline *p, long ms);
/* The listener's threads (cgs_listener_run) accounting every record
 * into p->r as cgt_pipeline_pump() does (p->on_task from those threads);
 * stopped by cgt_listener_drain() or cgt_pipeline_close(). 0, or 1
 * after printing the error. */
int cgt_pipeline_run(struct cgt_pipeline *p);
/* Pump until the cgroup `path`'s self counters hold at least `tasks`
 * task records: 0; 1 after printing how many after timeout_ms; -1 on a
 * drain error. */
int cgt_pump_until(struct cgt_pipeline *p, const char *path, uint64_t tasks,
		   long timeout_ms);
/* Index of the cgroup `path` in s, or -1. */
ssize_t cgt_snapshot_find(const struct cgs_snapshot *s, const char *path);

/*
 * clone3(CLONE_INTO_CGROUP): a child born in the cgroup open at cgfd, as
 * fork() returns. -1 with errno ENOSYS where clone3 is missing (Linux
 * < 5.7, valgrind).
 */
pid_t cgt_clone_into(int cgfd);

/*
 * Make cgroup directory dir (mkdir) and have one child born in it by
 * clone3, exit at once and be reaped (*pid: its pid, if not NULL).
 * Returns 0; 77 after "SKIP: no clone3() here" (dir removed again); 1
 * after printing what failed.
 */
int cgt_exit_in_new(const char *dir, pid_t *pid);

#endif
