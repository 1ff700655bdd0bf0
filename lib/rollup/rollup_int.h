/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rollup internals shared by accounting, interning and snapshots. */
#ifndef CGS_ROLLUP_INT_H
#define CGS_ROLLUP_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include "attribute/attr.h"
#include "attribute/exe.h"
#include "attribute/mounts.h"
#include "rollup/cgtable.h"
#include "util/common.h"
#include "util/futex_lock.h"

/* What the shard counted (attribution's own counters: attr.h). */
struct cgsi_rshard_stats {
	uint64_t records, inferred, comm_own, oom_unreadable;
	uint64_t exe_none; /* totals.exe_none */
};

struct cgsi_oomtab;

/* Largest cgs_rollup_opts.comms and .exes. */
#define CGSI_COMMS_MAX 4096u
/* Summaries per node: commands (enum cgs_comm_rank), executables (enum
 * cgs_exe_rank). */
#define CGSI_NCOMM 2u
#define CGSI_NEXE 3u

/* One writer's state. Only that writer and snapshots (under `lock`) touch
 * it; aligned so two shards never share a cache line. The lock is taken
 * for every record by its writer, by others now and then: a futex lock
 * (a compare and swap and a decrement inline, uncontended). */
struct cgsi_rshard {
	struct cgsi_flock lock;
	struct cgs_rollup *r;
	struct cgsi_cgtab cgs;
	struct cgsi_cgnode *unknown;
	struct cgsi_rshard_stats st;
	struct cgsi_cgnode *check_at; /* removal check: next node of the
				       * round-robin slice (NULL: first) */
	bool ids_new; /* a node made, or given its id, since the last
		       * snapshot: its removal not yet looked up among the
		       * kernel source's rmdir events */
	uint32_t comm_tgid;      /* the process whose command was last read */
	uint64_t comm_ms;        /* when */
	char comm[CGS_COMM_LEN + 1]; /* from /proc/<comm_tgid>/comm */
	char dir[PATH_MAX + 64]; /* a cgroup's directory under the mount */
} __attribute__((aligned(64)));

struct cgs_rollup {
	struct cgs_rollup_opts o;
	char *proc_root;
	char *mountinfo;
	struct cgsi_cg_mount mount;
	struct cgsi_attr at;      /* attribution: its kernel source
				   * (at.ksrc), fork tracker (at.forks) */
	struct cgsi_exe *exe;     /* opts.exe_paths: executables, else NULL */
	uint64_t t0;
	unsigned nshards;
	struct cgsi_rshard *shards;
	pthread_mutex_t snap_lock; /* serialises snapshots and retirement */
	enum cgs_oom_source oom_source;
	struct cgsi_oomtab *oom;   /* CGS_OOM_CGROUP: baselines per cgroup */
	struct cgsi_snap_pool *snap_pool; /* the last freed snapshot's memory
					   * (snapshot.c) */
	uint64_t snap_gen;         /* snapshots made (snap_lock) */
	/* removal checks with the kernel source (snap_removed.c, snap_lock):
	 * its rmdir events and missed events at the last snapshot, and how
	 * many snapshots more stat at the full rate */
	uint64_t rm_rmdirs, rm_missed;
	unsigned rm_full;
	const char **listener_cpus; /* opts.listener's shard cpulists (owned
				     * by it), during cgs_rollup_new() */
	uint64_t refused;          /* records refused (atomic; error path
				    * only: totals.refused) */
	bool tops;                 /* o.comms or o.exes: task records are
				    * ranked (rollup.c) */
};

/* Options of cgsi_rollup_new() that are not the API's. */
struct cgsi_rollup_iopts {
	bool forks_injected; /* fork tracking without the connector: the
			      * caller records the forks (tests on a fake
			      * /proc, whose pids are not the host's) */
};

/* cgs_rollup_new() with internal options (NULL: none). */
int cgsi_rollup_new(struct cgs_rollup **out,
		    const struct cgs_rollup_opts *opts,
		    const struct cgsi_rollup_iopts *io);

/* Rollup-relative milliseconds, >= 1 (0 means "never" in entries). */
static inline uint64_t cgsi_rollup_now(const struct cgs_rollup *r)
{
	uint64_t c = r->o.clock_ms ? r->o.clock_ms(r->o.clock_ctx)
				   : cgsi_now_mono_ms();
	return c >= r->t0 ? c - r->t0 + 1 : 1;
}

/* What attribution asks of the rollup (intern.c): a node is its key. */
extern const struct cgsi_attr_ops cgsi_rollup_attr_ops;

/* cgsi_intern flags: CGSI_INTERN_PROC, CGSI_INTERN_DELETED (attr.h) */
/*
 * Node for `path` in shard s (slow path): found or created. A cgroup
 * removed and created again under the same path gets a node of its own:
 * the directory inode is re-checked (stat) when a task is found in the
 * cgroup through /proc (CGSI_INTERN_PROC), at most once per millisecond
 * per node, otherwise at most every revalidate_ms. A task in a deleted
 * cgroup stays with the node it finds. NULL on ENOMEM.
 */
struct cgsi_cgnode *cgsi_intern(struct cgs_rollup *r, struct cgsi_rshard *s,
				const char *path, size_t len, uint64_t now,
				unsigned flags);

/* Node of cgroup `path` known to have id `id` (the kernel source): the
 * incarnation with that inode, or a new one. NULL on ENOMEM. */
struct cgsi_cgnode *cgsi_intern_id(struct cgs_rollup *r, struct cgsi_rshard *s,
				   const char *path, size_t len, uint64_t id,
				   uint64_t now);

/* node.c: a node was created (slow path, s->lock held): its histograms,
 * command summaries and OOM baseline. Failing to allocate leaves it
 * without them (histograms then start with its first record: see
 * cgsi_node_x()). */
void cgsi_node_created(struct cgs_rollup *r, struct cgsi_rshard *s,
		       struct cgsi_cgnode *n);

/* node.c: k summaries (commands: by CPU, by exits; executables: also by
 * crashes), zeroed: each is made (cgsi_topk_init()) with its first key,
 * so a ranking nothing was counted by (most cgroups never crash) costs
 * its struct only; NULL on ENOMEM. */
struct cgsi_topk *cgsi_tops_new(unsigned k);
void cgsi_tops_free(struct cgsi_topk *c, unsigned k);

/* The node's extra sets, allocated on first need (NULL on ENOMEM), the
 * histogram words only; inline: the accounting path asks for them. */
struct cgsi_xnode *cgsi_xnode_new(uint64_t *nz);
static inline struct cgsi_xnode *cgsi_node_x(struct cgsi_cgnode *n)
{
	if (!n->x)
		n->x = cgsi_xnode_new(n->xnz);
	return n->x;
}

/* node.c: n's extra sets with every word (the signal counts too): made or
 * widened, n->sigs set. NULL on ENOMEM (n unchanged). */
struct cgsi_xnode *cgsi_node_widen(struct cgsi_cgnode *n);

/* The same, for a signal count (the cheap test inline). */
static inline struct cgsi_xnode *cgsi_node_xs(struct cgsi_cgnode *n)
{
	return n->sigs ? n->x : cgsi_node_widen(n);
}

/* OOM counting from the cgroups' own counters (oom.c). */
int cgsi_oom_open(struct cgs_rollup *r);
void cgsi_oom_close(struct cgs_rollup *r);
/* Read the baseline of a new node's cgroup, if not known yet. */
void cgsi_oom_baseline(struct cgs_rollup *r, struct cgsi_rshard *s,
		       struct cgsi_cgnode *n);
/* Snapshot time, s->lock held: nodes with SIGKILL exits since their last
 * check take the kills no node was given yet. */
void cgsi_oom_update(struct cgs_rollup *r, struct cgsi_rshard *s,
		     struct cgsi_cgnode *n);
/* A node is retired (its directory is gone): its incarnation's baseline
 * is of no more use. */
void cgsi_oom_forget(struct cgs_rollup *r, const struct cgsi_cgnode *n);
/* Baselines held (tests). */
size_t cgsi_oom_entries(struct cgs_rollup *r);

/*
 * Removal checks (snapshot time): a shard of n nodes has its directories
 * stat()ed CGSI_CHECK_SLICE(n) at a time, round robin, so every removal
 * is seen within CGSI_CHECK_ROUNDS snapshots (all of them, every snapshot,
 * up to CGSI_CHECK_ALL nodes). With the kernel source an rmdir event
 * marks its cgroup at the next snapshot without a syscall, and while no
 * cgroup event was missed (struct cgsi_ksrc_rmstate) the round robin
 * slows to CGSI_CHECK_SLOW(n) a snapshot: a safety net, every node within
 * CGSI_CHECK_ROUNDS * CGSI_CHECK_SLOWER snapshots; nodes without an id
 * are stat()ed every snapshot. A missed event puts it back to the full
 * rate for CGSI_CHECK_ROUNDS snapshots.
 */
#define CGSI_CHECK_ALL 1024u
#define CGSI_CHECK_ROUNDS 32u
#define CGSI_CHECK_SLICE(n) \
	((n) <= CGSI_CHECK_ALL ? (n) \
			       : CGS_MAX((size_t)CGSI_CHECK_ALL, \
					 ((n) + CGSI_CHECK_ROUNDS - 1) / \
						 CGSI_CHECK_ROUNDS))
#define CGSI_CHECK_SLOWER 16u
#define CGSI_CHECK_SLOW(n) \
	(((n) + CGSI_CHECK_ROUNDS * CGSI_CHECK_SLOWER - 1) / \
	 (CGSI_CHECK_ROUNDS * CGSI_CHECK_SLOWER))

/* The node was seen removed (snap_lock held): retirement's grace
 * counts from the first time (retire.c). */
static inline void cgsi_node_seen_removed(struct cgsi_cgnode *n,
					  uint64_t now)
{
	if (!n->removed_ms)
		n->removed_ms = now;
}

/* The snapshots' pool of memory (snapshot.c): made with the rollup
 * (NULL on ENOMEM); closed when it is freed, and gone once the last
 * snapshot is freed (snapshots may outlive the rollup). */
struct cgsi_snap_pool;
struct cgsi_snap_pool *cgsi_snap_pool_new(void);
void cgsi_snap_pool_close(struct cgsi_snap_pool *p);

/* totals.c: add a shard's attribution counters and cache size (lock
 * held). */
void cgsi_rollup_shard_totals(struct cgs_rollup_totals *t,
			      const struct cgsi_rshard *s);

#endif
