/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A snapshot's insides, shared by the files that make it (snapshot.c:
 * taking; snap_removed.c: removal checks), hold its extra sets
 * (snap_extra.c), pool its memory (snap_pool.c) and answer for it
 * (snap_access.c).
 */
#ifndef CGS_ROLLUP_SNAP_INT_H
#define CGS_ROLLUP_SNAP_INT_H

#include "rollup/rollup_int.h"

/* A cgroup's own counters (what cgs_cgroup_stats.self, self_delta point
 * to), one per copied node, in the shard's chunk; the delta apart, in the
 * snapshot's mem, only where it is not zero (most cgroups are idle
 * between two snapshots: 480 bytes a cgroup not kept). */
struct snap_self {
	struct cgs_counters self;
	struct cgs_counters *self_delta; /* NULL or stale where the entry's
					  * zd: zeros */
	bool merged; /* self is a sum of entries, not the node's cum */
};

/* Subtree counters, only for cgroups whose subtree differs from their
 * own counters: those with children or retired descendants. A leaf's
 * subtree pointers point at its self counters. */
struct snap_sub {
	struct cgs_counters subtree, subtree_delta;
};

/*
 * What a snapshot allocates per cgroup beyond its chunk (subtree
 * counters, histogram and signal sets, paths): carved from blocks it owns
 * and frees with it, 8-byte aligned, never freed one by one (a malloc and
 * a free per cgroup cost more than the copies).
 */
#define MEMBLK_BYTES (256u << 10)
struct memblk {
	struct memblk *next;
	size_t used, cap; /* bytes of v */
	uint64_t v[];
};

struct snap_mem {
	struct memblk *blocks; /* in use, the one being carved first */
	struct memblk *spare;  /* a pooled snapshot's blocks, to reuse */
};

/* snap_pool.c: a block of at least `bytes` for m (NULL on ENOMEM). */
struct memblk *cgsi_snap_mem_block(struct snap_mem *m, size_t bytes);

/* `bytes` of room (uninitialised), NULL on ENOMEM. */
static inline void *mem_alloc(struct snap_mem *m, size_t bytes)
{
	bytes = (bytes + 7) & ~(size_t)7;
	struct memblk *b = m->blocks;
	if ((!b || b->used + bytes > b->cap) &&
	    !(b = cgsi_snap_mem_block(m, bytes)))
		return NULL;
	void *p = (char *)b->v + b->used;
	b->used += bytes;
	return p;
}

/* snap_pool.c: the spare blocks a snapshot did not need freed; all of
 * m's blocks freed. */
void cgsi_snap_mem_trim(struct snap_mem *m);
void cgsi_snap_mem_free(struct snap_mem *m);

/*
 * A histogram and signal set (2.3 KB, or 1,248 bytes, the histograms only,
 * for a cgroup that never had an exit by signal: extra.h), in one of two
 * forms. Dense (p): every word. Packed (pk): a mask of the words that are
 * not zero, then those words in order. A set copied from a node is
 * packed: a cgroup's exits fall in a few buckets, so most words are zero,
 * and the packed copy is a few cache lines to write and, when subtrees
 * are summed, to read, instead of twenty (or 36). Sums (subtree sets,
 * merged entries) are dense. Both NULL: zeros. `full`: with its signal
 * counts, else only CGSI_XSET_HIST_WORDS words exist and the signal
 * counts are 0.
 */
struct xref {
	struct cgsi_xset *p;
	uint64_t *pk; /* xmasks(full) mask words, then the words set */
	bool full;
};

#define XMASKS_MAX CGSI_XMASKS
_Static_assert(CGSI_XW_SUM(CGS_HIST__COUNT - 1) ==
		       offsetof(struct cgsi_xset,
				hist_sum_ns[CGS_HIST__COUNT - 1]) /
			       sizeof(uint64_t),
	       "the words cgsi_x4_observe() marks");

static inline size_t xwords(bool full)
{
	return full ? CGSI_XSET_WORDS : CGSI_XSET_HIST_WORDS;
}

/* Mask words of a packed set. */
static inline size_t xmasks(bool full)
{
	return (xwords(full) + 63) / 64;
}

static inline bool xref_zero(struct xref r)
{
	return !r.p && !r.pk;
}

/* A NUL-terminated copy of p[0..len) owned by m (NULL on ENOMEM). */
static inline char *path_dup(struct snap_mem *m, const char *p, size_t len)
{
	char *d = mem_alloc(m, len + 1);
	if (d) {
		memcpy(d, p, len);
		d[len] = '\0';
	}
	return d;
}

/* A cgroup's extra sets by enum cgs_counter_set. */
/* A cgroup's delay peaks by enum cgs_counter_set (peaks.h), in the
 * snapshot's mem; NULL: none. */
struct snap_pk {
	struct cgsi_pkset s[4];
};

struct snap_x {
	struct xref s[4];
	const struct snap_pk *pk;
};

struct sent {
	char *path;
	size_t len;
	unsigned depth;
	uint64_t ino;
	bool unknown, superseded, gone, folded;
	bool zd; /* k->self_delta is not this snapshot's: zeros
		  * (zero_counters) */
	bool node_ino; /* ino is the node's (not found by a stat since) */
	struct snap_self *k; /* NULL: an added ancestor (zeros) */
	struct snap_sub *sub; /* NULL: the subtree sets equal k's */
	struct cgsi_cgnode *node; /* while snap_lock is held; else NULL */
	uint64_t inferred, inferred_d;
	/* extra sets by enum cgs_counter_set, NULL: zeros; the subtree ones
	 * only where sub is set (else they are the self ones) */
	struct xref xs[4];
	struct cgsi_topk *comms; /* [2] self, cumulative; NULL: none */
	struct cgsi_topk *exes;  /* [3] the same */
	struct snap_pk *pk;      /* delay peaks; NULL: none */
};

/* A cgroup's rankings (by enum cgs_comm_rank). */
struct snap_comms {
	struct cgs_comm *v[2];
	size_t n[2];
};

/* A cgroup's executables' rankings (by enum cgs_exe_rank). */
struct snap_exes {
	struct cgs_exe *v[3];
	size_t n[3];
	/* [3] the summaries listed (the entry's, kept for the workload
	 * view to merge: lib/workloads); NULL: none */
	struct cgsi_topk *t;
};

/* Memory of at least this size is mapped directly, with transparent huge
 * pages where the host allows them on request (a fresh 200 MB array costs
 * 50,000 page faults in 4 KiB pages). */
#define BIG_BYTES (4u << 20)

/* A buffer of a snapshot, kept with it in the pool and used again while
 * big enough. Contents are not kept from one snapshot to the next. */
struct sbuf {
	void *p;
	size_t cap;    /* bytes */
	size_t mapped; /* big_alloc() */
};

struct cgs_snapshot {
	size_t n;
	struct cgs_cgroup_stats *v; /* in vb */
	struct sbuf vb;
	struct sbuf *cvs;     /* [ncvs] the shards' copied counters
			       * (struct snap_self) */
	unsigned ncvs;
	struct snap_self *av; /* in avb: added ancestors' own counters */
	struct sbuf avb;
	struct snap_mem mem; /* subtree counters, extra sets, paths */
	struct snap_x *xv;   /* in xvb: per cgroup (pointing into mem) */
	struct sbuf xvb;
	size_t xn;           /* entries of xv */
	struct snap_comms *cm; /* [xn] with opts.comms, else NULL */
	struct snap_exes *ex;  /* [xn] with opts.exes, else NULL */
	bool hist;           /* CGS_ROLLUP_HISTOGRAMS */
	struct cgs_rollup_totals totals;
	struct cgsi_snap_pool *pool; /* where it goes when freed */
	uint64_t gen; /* r->snap_gen that made it; 0: its chunks are not to
		       * be trusted (a failed snapshot) */
};

/* What only the making of a snapshot needs, kept in the pool between
 * snapshots. */
struct snap_scratch {
	struct sbuf ents;         /* struct sent[] */
	struct sbuf runs, tmp;    /* sort_runs() */
	struct sbuf cnt;          /* add_ancestors() */
	struct sbuf stack, parent; /* the subtree pass */
};

/*
 * The pool: the last snapshot freed, whole with its buffers, and the
 * scratch buffers, so that the next snapshot writes to memory already
 * faulted in instead of pages the kernel must zero first. It keeps at
 * most one snapshot's worth; snapshots may outlive the rollup and be
 * freed from any thread, hence the lock and the references (the rollup's
 * and one per snapshot alive).
 */
struct cgsi_snap_pool {
	pthread_mutex_t lock;
	unsigned refs;
	bool closed;                /* the rollup is gone: keep nothing */
	struct cgs_snapshot *spare;
	struct snap_scratch *scratch;
};

struct vec {
	struct sent *v;
	size_t n, cap;
};

/* Ask for the cache lines of `bytes` at p ahead of use: the counters
 * are read once per snapshot, from memory, in an order the hardware does
 * not guess (a linked list; a pass from the last entry back). */
static inline void prefetch_range(const void *p, size_t bytes)
{
	for (size_t o = 0; o < bytes; o += 64)
		__builtin_prefetch((const char *)p + o);
}

/* e's self delta, written: to be added to (NULL on ENOMEM). */
static inline struct cgs_counters *own_delta(struct sent *e,
					     struct snap_mem *m)
{
	if (e->zd || !e->k->self_delta) {
		struct cgs_counters *d = mem_alloc(m, sizeof(*d));
		if (!d)
			return NULL;
		memset(d, 0, sizeof(*d));
		e->k->self_delta = d;
		e->zd = false;
	}
	return e->k->self_delta;
}

/* e's extra sets `set` (enum cgs_counter_set), p NULL: zeros. */
static inline struct xref x_set(const struct sent *e, int set)
{
	if (!e->sub && set == CGS_SET_SUBTREE)
		set = CGS_SET_SELF;
	if (!e->sub && set == CGS_SET_SUBTREE_DELTA)
		set = CGS_SET_SELF_DELTA;
	return e->xs[set];
}

/* Ask for the lines of n's cum | base pair that cgsi_snap_copy_x() will
 * read, a node ahead of their use, known from n's nz without reading the
 * pair: its slots and the pairs of the histogram words in nz (slots are
 * given in order: one per such word, the first ones), the signal counts'
 * pairs at their word. The empty asm takes each address: without it
 * GCC 12 drops a loop that only prefetches, as if it did nothing. */
static inline void prefetch_x(const struct cgsi_cgnode *n)
{
	if (!n->x)
		return;
	const char *b = (const char *)n->x;
	size_t cnt = 0;
	for (size_t k = 0; k < xmasks(n->sigs); k++)
		for (uint64_t c = n->xnz[k]; c; c &= c - 1) {
			size_t i = k * 64 + (unsigned)__builtin_ctzll(c);
			if (i < CGSI_XSET_HIST_WORDS) {
				cnt++;
				continue;
			}
			const void *w = n->x->w[i];
			__builtin_prefetch(w);
			__asm__ volatile("" : : "r"(w));
		}
	for (size_t o = 0; o < CGSI_XNODE_BYTES(cnt); o += 64) {
		__builtin_prefetch(b + o);
		__asm__ volatile("" : : "r"(b + o));
	}
}

/* snap_pool.c: a snapshot's buffers (see there). */
void *cgsi_sbuf_get(struct sbuf *b, size_t bytes);
void *cgsi_sbuf_grow(struct sbuf *b, size_t bytes, size_t keep);
void cgsi_sbuf_free(struct sbuf *b);
/* snap_pool.c: a snapshot to fill and scratch buffers (NULL on ENOMEM);
 * the scratch buffers back to the pool. */
struct cgs_snapshot *cgsi_snap_take(struct cgs_rollup *r,
				    struct snap_scratch **scp);
void cgsi_snap_scratch_put(struct cgsi_snap_pool *p, struct snap_scratch *sc);

/* snap_extra.c: *d += s (false on ENOMEM); n's extra sets and command
 * summaries into e; e's rankings as the API lists them; word i of a set. */
bool cgsi_xset_addto(struct xref *d, struct xref s, struct snap_mem *m);
bool cgsi_snap_copy_x(struct sent *e, struct cgsi_cgnode *n, bool idle,
		      bool advance, struct snap_mem *m);
bool cgsi_snap_copy_tops(struct cgsi_topk **dst, const struct cgsi_topk *src,
			 unsigned k);
int cgsi_snap_list_comms(struct snap_comms *c, const struct cgsi_topk *t,
			 unsigned show);
int cgsi_snap_list_exes(struct snap_exes *c, const struct cgsi_topk *t,
			unsigned show);
uint64_t cgsi_xref_word(const struct xref *x, size_t i);

/* The same with their cheap tests inline: most cgroups have no extra set
 * to add (no histograms, no signal) and no command summary to copy. */
static inline bool xset_addto(struct xref *d, struct xref s,
			      struct snap_mem *m)
{
	return xref_zero(s) || cgsi_xset_addto(d, s, m);
}

static inline bool copy_x(struct sent *e, struct cgsi_cgnode *n, bool idle,
			  bool advance, struct snap_mem *m)
{
	return !n->x || cgsi_snap_copy_x(e, n, idle, advance, m);
}

/* snap_peaks.c: e's delay peaks from node n (and its carry), the node's
 * interval peaks restarted with advance; d's += s's (two entries of one
 * cgroup); a parent's subtree sets += a child's. false on ENOMEM. */
bool cgsi_snap_copy_pk(struct sent *e, struct cgsi_cgnode *n, bool advance,
		       struct snap_mem *m);
bool cgsi_snap_pk_add(struct sent *d, const struct sent *s,
		      struct snap_mem *m);
bool cgsi_snap_pk_up(struct sent *p, const struct sent *c,
		     struct snap_mem *m);

static inline bool copy_pk(struct sent *e, struct cgsi_cgnode *n, bool advance,
			   struct snap_mem *m)
{
	return (!n->dpk && !(n->carry && n->carry->dpk)) ||
	       cgsi_snap_copy_pk(e, n, advance, m);
}

/* A node's k summaries src (NULL: off) into *dst, unless all empty. */
static inline bool copy_tops(struct cgsi_topk **dst,
			     const struct cgsi_topk *src, unsigned k)
{
	if (!src)
		return true;
	for (unsigned i = 0; i < k; i++)
		if (src[i].size)
			return cgsi_snap_copy_tops(dst, src, k);
	return true;
}

/* How a snapshot checks removals (cgsi_snap_rmplan(), snap_lock held). */
struct snap_rmplan {
	bool events;     /* the kernel source's rmdir events mark cgroups */
	bool new_rmdirs; /* ... and some came since the last snapshot */
	bool slow;       /* the stat() round robin at CGSI_CHECK_SLOW */
};

/* snap_removed.c: the plan of this snapshot's removal checks (reads the
 * kernel source's cgroup events); the removal checks of one shard's copy
 * a->v[base .. base+cnt) (snap_lock held, no shard lock), from the entry
 * at `start`, ids_new: the shard's s->ids_new as it was copied; the
 * directory checks of entries no node vouches for. */
struct snap_rmplan cgsi_snap_rmplan(struct cgs_rollup *r);
void cgsi_snap_check_removed(struct cgs_rollup *r, struct cgsi_rshard *s,
			     struct vec *a, size_t base, size_t cnt,
			     size_t start, const struct snap_rmplan *p,
			     bool ids_new);
void cgsi_snap_stat_unvouched(const struct cgs_rollup *r, struct vec *a);

/* snap_sort.c: the entries' order (by path, then incarnation), the node
 * lists' (the same), the sort of a vector made of sorted runs (the
 * shards' copies: -ENOMEM leaves it unsorted), and, after the merge,
 * each path's incarnations with the superseded ones first. */
int cgsi_snap_node_cmp(const struct cgsi_cgnode *a,
		       const struct cgsi_cgnode *b);
int cgsi_snap_node_pcmp(const void *pa, const void *pb);
int cgsi_snap_sort_runs(struct vec *a, struct snap_scratch *sc);
void cgsi_snap_order_incarnations(struct vec *a);

/* How two entries sorted next to each other relate. */
enum kin { KIN_OTHER, KIN_INCARNATION, KIN_SAME };

static inline enum kin kin(const struct sent *a, const struct sent *b)
{
	if (a->unknown || b->unknown)
		return a->unknown && b->unknown ? KIN_SAME : KIN_OTHER;
	if (strcmp(a->path, b->path))
		return KIN_OTHER;
	return a->ino == b->ino || !a->ino || !b->ino ? KIN_SAME
						       : KIN_INCARNATION;
}

/* snap_tree.c and the passes over sorted entries. Is the cgroup path p[0..len) an ancestor of entry b? */
static inline bool cgsi_snap_path_under(const char *p, size_t len,
					const struct sent *b)
{
	if (b->unknown)
		return false;
	if (len == 1 && p[0] == '/')
		return b->len > 1 && b->path[0] == '/';
	return b->len > len && !memcmp(p, b->path, len) && b->path[len] == '/';
}

/* Is entry a an ancestor of entry b? */
static inline bool cgsi_snap_is_ancestor(const struct sent *a,
					 const struct sent *b)
{
	return !a->unknown && cgsi_snap_path_under(a->path, a->len, b);
}

/* Entries deeper than depth become their ancestor at depth (folded). */
void cgsi_snap_fold(struct vec *a, unsigned depth);
/* Every cgroup's missing ancestors, each just before its first
 * descendant; -ENOMEM leaves a as it was. */
int cgsi_snap_add_ancestors(struct vec *a, struct snap_mem *m,
			    struct snap_scratch *sc);

#endif
