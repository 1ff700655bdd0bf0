/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-shard cgroup intern table: path -> node holding that cgroup's
 * counters. One node per cgroup incarnation; only the current incarnation
 * of a path is in the hash, older ones stay listed until retired. */
#ifndef CGS_ROLLUP_CGTABLE_H
#define CGS_ROLLUP_CGTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgstats.h"
#include "rollup/counters.h"
#include "rollup/extra.h"
#include "rollup/peaks.h"
#include "rollup/topk.h"

/* What a node holds of its retired descendants, made with the first one
 * retired into it (retire.c): most nodes never have one. */
struct cgsi_carry {
	struct cgs_counters carry;      /* retired descendants, cumulative */
	struct cgs_counters carry_base; /* carry at the last baseline */
	uint64_t ivl_rss, ivl_vm;       /* their peaks since the baseline */
	struct cgsi_xpair *x; /* carry | carry_base, every word (extra.h);
			       * NULL while no descendant retired into it had
			       * extra sets; owned */
	struct cgsi_dpk *dpk; /* their delay peaks (peaks.h); NULL: none;
			       * owned */
};

struct cgsi_cgnode {
	struct cgsi_cgnode *hnext;      /* hash chain */
	struct cgsi_cgnode *prev, *next; /* every node of the shard */
	struct cgsi_cgnode *older;      /* previous incarnation of the path */
	/* self, cumulative: aligned for the hot path's pair adds
	 * (counters.h; nodes are calloc'd, which aligns to CGSI_CUM_ALIGN) */
	_Alignas(CGSI_CUM_ALIGN) struct cgs_counters cum;
	struct cgs_counters base;       /* cum at the last delta baseline */
	uint64_t ivl_rss, ivl_vm;       /* self peaks since the baseline */
	struct cgsi_carry *carry; /* retired descendants; NULL: none; owned */
	uint64_t inferred, inferred_base; /* records attributed by inference */
	struct cgsi_xnode *x; /* histograms and signal counts, cum | base
			       * (extra.h): NULL until needed, sparse
			       * histogram words until `sigs`; owned */
	uint64_t xnz[CGSI_XMASKS]; /* which words of x's cum may not be 0
				    * (cgsi_nz_mark()): here, not in x, for
				    * a snapshot to know which lines of x to
				    * ask for with the node's counters */
	struct cgsi_dpk *dpk;    /* delay peaks (peaks.h), made with the
				  * first record carrying them; owned */
	struct cgsi_topk *comms; /* [2] by enum cgs_comm_rank, with
				  * cgs_rollup_opts.comms; NULL: off; owned */
	struct cgsi_topk *exes;  /* [3] by enum cgs_exe_rank, with
				  * cgs_rollup_opts.exes; NULL: off; owned */
	uint64_t oom_sigkills; /* CGS_OOM_CGROUP: SIGKILL exits when the
				* cgroup's OOM counter was last read */
	uint64_t reported;   /* cum.tasks + cum.tgid_records when last
			      * snapshotted */
	uint64_t final_gen;  /* the snapshot that first showed `reported`
			      * (its generation; 0: none): a consumer that
			      * got that one or a later one has the final
			      * counts of a removed cgroup (retire.c) */
	uint64_t snap_gen;   /* the snapshot that last copied cum (its
			      * generation), */
	uint64_t snap_key;   /* cum.tasks + tgid_records + oom_kills then */
	uint32_t snap_idx;   /* and where in its shard's chunk */
	uint64_t ino;        /* directory inode, 0 if unknown */
	uint64_t checked_ms; /* when ino was last verified (stat) */
	uint64_t removed_ms; /* when a snapshot or retirement first saw it
			      * removed (0: not yet); under snap_lock */
	uint64_t hash;
	uint32_t refs;       /* process cache entries pointing here */
	uint16_t depth;
	bool hashed;         /* current incarnation of its path */
	bool unknown;        /* the CGS_UNKNOWN_CGROUP bucket */
	bool gone;           /* its directory was seen removed (snapshots:
			      * removed.c); written under the rollup's
			      * snap_lock only */
	bool in_order;       /* placed in the shard's path-ordered list by a
			      * snapshot (new nodes are appended) */
	bool sigs;           /* its extra sets may hold signal counts (an
			      * exit by signal, or a retired child's), and
			      * x has every word; until then they are zero
			      * from `sig` on and x stops there */
	bool attributed;     /* got a record by attribution, not only by
			      * cgs_rollup_account_path() (a replay's
			      * paths are not this host's cgroups) */
	size_t len;
	char path[];
};

struct cgsi_cgtab {
	struct cgsi_cgnode **buckets;
	size_t nbuckets; /* power of two */
	size_t hashed;   /* nodes in the hash */
	size_t count;    /* nodes listed */
	struct cgsi_cgnode *first, *last;
};

/* The per-process hash seeds (cgtable.c): path for cgsi_path_hash() (the
 * FNV offset basis XOR its seed), key for the topk index. cgsi_hash_seed_init() sets them once (also done at
 * load and by cgsi_cgtab_init()). */
struct cgsi_hash_seed {
	uint64_t path;
	uint64_t key[4];
	uint64_t key1_c1; /* key[1] times topk.c's KEY_C1 */
};
extern struct cgsi_hash_seed cgsi_hash_seed;
void cgsi_hash_seed_init(void);

/* FNV-1a of p[0..len) from a seeded basis: differs from run to run. */
uint64_t cgsi_path_hash(const char *p, size_t len);
/* "/" and anything not starting with '/' -> 0, "/a" -> 1, "/a/b" -> 2. */
unsigned cgsi_path_depth(const char *p, size_t len);

int cgsi_cgtab_init(struct cgsi_cgtab *t);
void cgsi_cgtab_fini(struct cgsi_cgtab *t);
struct cgsi_cgnode *cgsi_cgtab_find(const struct cgsi_cgtab *t,
				    const char *path, size_t len,
				    uint64_t hash);
/* New node, hashed as the current incarnation of its path (the caller
 * unhashes the previous one first). NULL on ENOMEM. */
struct cgsi_cgnode *cgsi_cgtab_add(struct cgsi_cgtab *t, const char *path,
				   size_t len, uint64_t hash);
void cgsi_cgtab_unhash(struct cgsi_cgtab *t, struct cgsi_cgnode *n);
/* Unlink and free. */
void cgsi_cgtab_del(struct cgsi_cgtab *t, struct cgsi_cgnode *n);

#endif
