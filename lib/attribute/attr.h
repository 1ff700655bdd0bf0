/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Attribution: which cgroup did the task of an exit record belong to,
 * decided by cgsi_attr_prepare() and cgsi_attr_resolve_locked(), that answer (node key, how):
 * the kernel source where it is loaded (ksrc.h: the record's verified
 * entry, its cgroup id, then the id's path), else, or when it has no
 * entry, the /proc fallback (fallback.c: the per-process cache of
 * pcache.h, /proc/PID/cgroup, the parent, the fork ancestry of forks.h).
 *
 * The node key is the owner's (the rollup's): an opaque reference that
 * the owner makes from a cgroup path (its ops, asked on the slow path
 * only: a miss of the caches) and that the caches keep, counted through
 * ops->ref so that the owner never frees a node a cache still names.
 * lib/attribute includes no header of its owner.
 *
 * Locking: each shard's state is guarded by the owner's lock of that
 * shard (cgsi_attr_bind()); the owner takes it between
 * cgsi_attr_prepare() and cgsi_attr_resolve_locked() and counts the
 * record under it before releasing it.
 */
#ifndef CGS_ATTRIBUTE_ATTR_H
#define CGS_ATTRIBUTE_ATTR_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "attribute/bpf/exitcg_abi.h"
#include "attribute/deaths.h"
#include "attribute/forks.h"
#include "attribute/kjoin.h"
#include "attribute/ksrc.h"
#include "attribute/mounts.h"
#include "attribute/pcache.h"
#include "util/futex_lock.h"
#include "cgstats.h"

/* ops->intern flags */
#define CGSI_INTERN_PROC (1u << 0)    /* a live task is in this cgroup now */
#define CGSI_INTERN_DELETED (1u << 1) /* /proc said " (deleted)" */

/* What the owner does for attribution (called with the shard's lock
 * held, slow path only). */
struct cgsi_attr_ops {
	/* Node key of cgroup `path` (len bytes, NUL-terminated) in shard
	 * `shard`: found or made (CGSI_INTERN_* flags). NULL on ENOMEM. */
	void *(*intern)(void *ctx, unsigned shard, const char *path,
			size_t len, unsigned flags, uint64_t now);
	/* The same for a cgroup the kernel names by its id (its inode):
	 * the incarnation with that inode, or a new one. */
	void *(*intern_id)(void *ctx, unsigned shard, const char *path,
			   size_t len, uint64_t id, uint64_t now);
	/* A node's path (its length in *len) and inode (0: unknown). */
	const char *(*path)(const void *node, size_t *len, uint64_t *ino);
	/* Take (+1) or drop (-1) a reference on a node. */
	void (*ref)(void *node, int delta);
	/* The owner's clock (ms, >= 1): read only where an answer needs it
	 * (a miss, the fallback), not per record (cgsi_attr_now()). */
	uint64_t (*now)(void *ctx);
};

/* How records were attributed, per shard (the owner's totals). */
struct cgsi_attr_stats {
	uint64_t via_cache, via_proc, via_parent, proc_reads, via_ancestor,
		via_fork_parent, via_kernel, kernel_fallback;
	uint64_t peer_waits; /* fallback.c seen_elsewhere(): waited for a
			     * busy shard's lock (not exported) */
	uint64_t kmiss[CGSI_KMISS_N]; /* kernel_fallback by reason; they
				       * add up to it */
};

/* Kernel source: cgroup id -> node, direct-mapped per shard; `gen` is the
 * shard's kgen when filled (retiring a node bumps kgen). */
#define CGSI_KCACHE_SIZE 512
struct cgsi_kcache_ent {
	uint64_t id;
	void *n;
	uint64_t gen;
};

/* One shard's attribution state; only its writer and, under its lock,
 * snapshots touch it. Aligned so two shards never share a cache line. */
struct cgsi_ashard {
	struct cgsi_flock *lock; /* the owner's lock of this shard */
	void *unknown;           /* the owner's unknown bucket (never cached
				  * as a cgroup's node) */
	unsigned idx;
	struct cgsi_pcache cache;
	struct cgsi_attr_stats st;
	bool deleted;            /* the last /proc read said " (deleted)" */
	bool exited;             /* ... and its process had exited (zombie) */
	bool last_inferred;      /* fallback.c: its answer was inferred */
	uint64_t reval_next;     /* next background revalidation step */
	uint64_t reval_last;     /* when the last step ran (0: none yet) */
	uint64_t reval_rem;      /* slots owed to the cursor, x revalidate_ms */
	uint32_t reval_cursor;
	uint64_t kgen;           /* bumped when a node is retired */
	uint32_t k_last_tgid;    /* process exit last attributed by the kernel
				  * source: its TGID record follows */
	void *k_last_node;
	uint64_t k_last_gen;
	struct cgsi_kcache_ent kcache[CGSI_KCACHE_SIZE];
	char text[16384];        /* /proc/<pid>/cgroup contents */
	char path[PATH_MAX];     /* a parsed cgroup path */
} __attribute__((aligned(64)));

/* What cgsi_attr_open() is given (strings and mount: the caller's, kept
 * until cgsi_attr_close()). */
struct cgsi_attr_cfg {
	const struct cgsi_attr_ops *ops;
	void *ctx;                      /* ops' first argument */
	const char *proc_root;
	const struct cgsi_cg_mount *mount;
	unsigned nshards;
	enum cgs_attribution want;      /* kernel source: auto, kernel, proc */
	const char *const *shard_cpus;  /* not kept (kernel source) */
	size_t kernel_ringbuf;
	unsigned kernel_wait_ms;
	bool want_comm;                 /* kernel entries carry commands */
	unsigned exe_max;               /* kernel source: the exec program's
					 * executables (0: not loaded) */
	bool track_forks;               /* CGS_ROLLUP_TRACK_FORKS */
	bool forks_injected;            /* ... without the connector (tests) */
	bool fast;                      /* CGS_ROLLUP_FAST_ATTRIBUTION */
	uint64_t grace_ms, revalidate_ms;
	uint64_t now;
};

struct cgsi_attr {
	const struct cgsi_attr_ops *ops;
	void *ctx;
	const char *proc_root;
	const struct cgsi_cg_mount *mount;
	long clk_tck;             /* /proc/<pid>/stat ticks per second */
	bool fast;
	uint64_t grace_ms, revalidate_ms;
	unsigned nshards;
	struct cgsi_ashard *sh;
	struct cgsi_deaths deaths;
	struct cgsi_forks *forks; /* fork tracking, else NULL */
	struct cgsi_ksrc *ksrc;   /* the kernel source, else NULL */
	char kerr[320];           /* why the kernel source is not in use */
	uint64_t sweep_next;      /* fallback: when a shard next steps the
				   * others' background revalidation */
};

/*
 * Open attribution per cfg: the shards' caches, the kernel source if
 * asked for (CGS_ATTRIBUTION_AUTO: if it loads; a->kerr says why not),
 * the death slots, fork tracking (best effort, without the kernel
 * source). 0, or -errno (-EINVAL and a->kerr for a kernel source asked
 * for and not had). The caller then binds every shard.
 */
int cgsi_attr_open(struct cgsi_attr *a, const struct cgsi_attr_cfg *cfg);
/* Free what open made (a zeroed struct too). */
void cgsi_attr_close(struct cgsi_attr *a);
/* Shard i's lock and unknown bucket (the owner's). */
void cgsi_attr_bind(struct cgsi_attr *a, unsigned i, struct cgsi_flock *lock,
		    void *unknown);

/* `now` as given to cgsi_attr_prepare(), read from the owner's clock if
 * the caller left it 0 (not read yet): the kernel source's common path
 * (an entry at its ring's head, a known cgroup id) needs no clock. */
static inline uint64_t cgsi_attr_now(const struct cgsi_attr *a, uint64_t now)
{
	return now ? now : a->ops->now(a->ctx);
}

/* The answer for one record. */
struct cgsi_attr_ans {
	void *node;           /* node key: never NULL (the unknown bucket) */
	enum cgs_source how;  /* CGS_SOURCE_NONE: the unknown bucket */
	bool oom;             /* the kernel saw its process OOM-killed */
	const char *comm;     /* the kernel's command of its process (with
			       * want_comm), else NULL */
	struct cgsi_kinfo ki; /* (the kernel's entry) */
};

/* The sources cgsi_attr_resolve_locked() asks, s->lock held: the kernel source
 * (attr.c), given what its lookup found (ans->ki) for a thread or process
 * record: a node and ans filled, or NULL; the /proc fallback
 * (fallback.c): never NULL (the unknown bucket at worst, *how
 * CGS_SOURCE_NONE), may drop and retake s->lock (waiting for another
 * shard's). */
void *cgsi_attr_kernel_node(struct cgsi_attr *a, struct cgsi_ashard *s,
			    const struct cgs_record *rec, bool found,
			    uint64_t now, struct cgsi_attr_ans *ans);
void *cgsi_fallback_node(struct cgsi_attr *a, struct cgsi_ashard *s,
			 const struct cgs_record *rec, uint64_t now,
			 enum cgs_source *how);
/* Step the background revalidation of the shards other than `self`
 * (those that get no records); called without any shard lock. */
void cgsi_fallback_sweep_others(struct cgsi_attr *a, unsigned self,
				uint64_t now);

/*
 * Attribute rec (thread, process or TGID kind) on shard `shard`, in two
 * steps so that the owner takes and releases the shard's lock itself:
 * cgsi_attr_prepare() without the lock (it may wait, bounded, for the
 * record's kernel entry), then, with the lock held,
 * cgsi_attr_resolve_locked(). The fallback may drop and retake the lock
 * (waiting for another shard's): the caller keeps no pointer into the
 * shard's nodes across the call. Inline: the hot path pays no call of
 * its own. `now`: the owner's clock, or 0 to have it read only if needed.
 */
static inline bool cgsi_attr_prepare(struct cgsi_attr *a, unsigned shard,
				     const struct cgs_record *rec,
				     uint64_t now, struct cgsi_attr_ans *ans)
{
	ans->ki.cgid = 0;
	ans->ki.flags = 0;
	ans->ki.comm[0] = '\0';
	if (a->ksrc && rec->kind != CGS_KIND_TGID)
		return cgsi_ksrc_lookup(a->ksrc, shard, rec, &ans->ki);
	if (!a->ksrc && a->nshards > 1 &&
	    __builtin_expect((now = cgsi_attr_now(a, now)) >=
				     __atomic_load_n(&a->sweep_next,
						     __ATOMIC_RELAXED),
			     0))
		cgsi_fallback_sweep_others(a, shard, now);
	return false;
}

/* Shard s's cache slot of cgroup id `id`. */
static inline struct cgsi_kcache_ent *cgsi_attr_kslot(struct cgsi_ashard *s,
						      uint64_t id)
{
	return &s->kcache[(id * 0x9E3779B97F4A7C15ull >> 40) %
			  CGSI_KCACHE_SIZE];
}

/* The node cached for cgroup id `id` on shard s, or NULL. */
static inline void *cgsi_attr_kcached(struct cgsi_ashard *s, uint64_t id)
{
	const struct cgsi_kcache_ent *c = cgsi_attr_kslot(s, id);
	return c->id == id && c->gen == s->kgen ? c->n : NULL;
}

/* The kernel source found node n for rec: remember a process's for its
 * TGID record, count it, fill ans. */
static inline void *cgsi_attr_kernel_found(struct cgsi_ashard *s,
					   const struct cgs_record *rec,
					   void *n, struct cgsi_attr_ans *ans)
{
	if (rec->kind == CGS_KIND_PROCESS) {
		s->k_last_tgid = rec->tgid ? rec->tgid : rec->pid;
		s->k_last_node = n;
		s->k_last_gen = s->kgen;
	}
	s->st.via_kernel++;
	ans->how = CGS_SOURCE_KERNEL;
	ans->oom = (ans->ki.flags & CGSK_F_OOM) != 0;
	ans->comm = ans->ki.comm[0] ? ans->ki.comm : NULL;
	return n;
}

/* The second step, shard `shard`'s lock held; `found`: what
 * cgsi_attr_prepare() returned. The kernel source's common case (a task
 * record's entry found, its cgroup id cached) is inline; the rest is
 * cgsi_attr_kernel_node()'s. */
static inline void cgsi_attr_resolve_locked(struct cgsi_attr *a,
					    unsigned shard,
					    const struct cgs_record *rec,
					    bool found, uint64_t now,
					    struct cgsi_attr_ans *ans)
{
	struct cgsi_ashard *s = &a->sh[shard];
	void *n;
	if (a->ksrc && found && rec->kind != CGS_KIND_TGID &&
	    __builtin_expect((n = cgsi_attr_kcached(s, ans->ki.cgid)) != NULL,
			     1)) {
		ans->node = cgsi_attr_kernel_found(s, rec, n, ans);
		return;
	}
	if (a->ksrc &&
	    (ans->node = cgsi_attr_kernel_node(a, s, rec, found, now, ans)))
		return;
	ans->node = cgsi_fallback_node(a, s, rec, cgsi_attr_now(a, now),
				       &ans->how);
	ans->oom = false;
	ans->comm = NULL;
}

/* Shard i is about to free a node (its lock held): the kernel source's
 * id cache and last exit forget every node. */
static inline void cgsi_attr_node_retired(struct cgsi_attr *a, unsigned i)
{
	a->sh[i].kgen++;
}

/* Drop shard i's expired cache entries (its lock held): they hold
 * references. */
void cgsi_attr_sweep(struct cgsi_attr *a, unsigned i, uint64_t now);

/* Add shard i's attribution counters and cache size (its lock held). */
void cgsi_attr_shard_totals(const struct cgsi_attr *a, unsigned i,
			    struct cgs_rollup_totals *t);
/* Add the fork tracker's and the kernel source's totals (their own
 * locks; a fork tracker is drained first). */
void cgsi_attr_totals(struct cgsi_attr *a, struct cgs_rollup_totals *t,
		      uint64_t now);

#endif
