/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Snapshots (slow path). Under each shard's lock (taken once per shard):
 * keep the shard's node list in path order (nodes created since the last
 * snapshot are sorted and merged in), and copy each node's counters
 * straight into the snapshot's counter array. Then, holding only the
 * rollup's snap_lock: removal checks (removed.c: a bounded round-robin
 * slice of stat()s, the kernel source's rmdir events). Then without any
 * lock: fold deep cgroups, merge the shards' sorted runs by (path,
 * incarnation) ('/' sorting before every other byte gives a pre-order
 * walk of the tree), add missing ancestors in one pass, and sum subtrees
 * in one pass with a stack of ancestors. Entries being sorted are small
 * (the counters stay where they were copied), so a snapshot of 100,000
 * cgroups moves each counter once. Deltas are kept per node (a baseline
 * copied at each snapshot and the peaks since it), so they survive
 * folding and merging unchanged.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "attribute/ksrc.h"
#include "rollup/counters.h"
#include "rollup/rollup_int.h"

/* A cgroup's own counters (what cgs_cgroup_stats.self, self_delta point
 * to), one per copied node, in the shard's chunk. */
struct snap_self {
	struct cgs_counters self, self_delta;
	bool merged; /* self is a sum of entries, not the node's cum */
};

/* The delta of every cgroup idle since the last snapshot (most of them
 * on most hosts): not a copy of zeros each, nothing to add to the
 * parents' subtree deltas. */
static const struct cgs_counters zero_counters = {
	.sz = sizeof(struct cgs_counters),
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

/* A block of at least `bytes`: a spare one (the pool's, already faulted
 * in) when it fits, else a new one; NULL on ENOMEM. */
static struct memblk *mem_block(struct snap_mem *m, size_t bytes)
{
	struct memblk *b = m->spare;
	if (b && b->cap >= bytes) {
		m->spare = b->next;
	} else {
		size_t cap = CGS_MAX((size_t)MEMBLK_BYTES - sizeof(*b), bytes);
		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->cap = cap;
	}
	b->used = 0;
	b->next = m->blocks;
	m->blocks = b;
	return b;
}

/* `bytes` of room (uninitialised), NULL on ENOMEM. */
static void *mem_alloc(struct snap_mem *m, size_t bytes)
{
	bytes = (bytes + 7) & ~(size_t)7;
	struct memblk *b = m->blocks;
	if ((!b || b->used + bytes > b->cap) && !(b = mem_block(m, bytes)))
		return NULL;
	void *p = (char *)b->v + b->used;
	b->used += bytes;
	return p;
}

/* Everything carved so far becomes spare room (a pooled snapshot made
 * anew). */
static void mem_reset(struct snap_mem *m)
{
	while (m->blocks) {
		struct memblk *b = m->blocks;
		m->blocks = b->next;
		b->next = m->spare;
		m->spare = b;
	}
}

/* The spare blocks this snapshot did not need (the host has fewer
 * cgroups than before): the pool keeps no more than one snapshot used. */
static void mem_trim(struct snap_mem *m)
{
	for (struct memblk *b = m->spare, *nb; b; b = nb) {
		nb = b->next;
		free(b);
	}
	m->spare = NULL;
}

static void mem_free(struct snap_mem *m)
{
	mem_reset(m);
	mem_trim(m);
}

/*
 * A histogram and signal set (1.7 KB, or 672 bytes, the histograms only,
 * for a cgroup that never had an exit by signal: extra.h), in one of two
 * forms. Dense (p): every word. Packed (pk): a mask of the words that are
 * not zero, then those words in order. A set copied from a node is
 * packed: a cgroup's exits fall in a few buckets, so most words are zero,
 * and the packed copy is a few cache lines to write and, when subtrees
 * are summed, to read, instead of eleven (or 27). Sums (subtree sets,
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
static char *path_dup(struct snap_mem *m, const char *p, size_t len)
{
	char *d = mem_alloc(m, len + 1);
	if (d) {
		memcpy(d, p, len);
		d[len] = '\0';
	}
	return d;
}

/* A cgroup's extra sets by enum cgs_counter_set. */
struct snap_x {
	struct xref s[4];
};

struct sent {
	char *path;
	size_t len;
	unsigned depth;
	uint64_t ino;
	bool unknown, superseded, gone, folded;
	bool zd; /* k->self_delta is not written: zeros (zero_counters) */
	bool node_ino; /* ino is the node's (not found by a stat since) */
	struct snap_self *k; /* NULL: an added ancestor (zeros) */
	struct snap_sub *sub; /* NULL: the subtree sets equal k's */
	struct cgsi_cgnode *node; /* while snap_lock is held; else NULL */
	uint64_t inferred, inferred_d;
	/* extra sets by enum cgs_counter_set, NULL: zeros; the subtree ones
	 * only where sub is set (else they are the self ones) */
	struct xref xs[4];
	struct cgsi_topk *comms; /* [2] self, cumulative; NULL: none */
};

/* A cgroup's rankings (by enum cgs_comm_rank). */
struct snap_comms {
	struct cgs_comm *v[2];
	size_t n[2];
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

static void *big_alloc(size_t bytes, size_t *mapped)
{
	*mapped = 0;
	if (bytes < BIG_BYTES)
		return malloc(bytes ? bytes : 1);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	*mapped = bytes;
	return p;
}

static void big_free(void *p, size_t mapped)
{
	if (mapped)
		munmap(p, mapped);
	else
		free(p);
}

/* At least `bytes` of b (uninitialised), NULL on ENOMEM. A new buffer
 * gets an eighth more, so that a host that grows slowly does not map a
 * new one for every snapshot; one more than twice too big (beyond
 * BIG_BYTES of slack) is made anew, so that the pool does not keep the
 * size of a host's busiest moment. */
static void *sbuf_get(struct sbuf *b, size_t bytes)
{
	if (b->p && b->cap >= bytes && b->cap - bytes <= bytes + BIG_BYTES)
		return b->p;
	if (b->p)
		big_free(b->p, b->mapped);
	size_t cap = bytes + bytes / 8 + 64;
	b->p = big_alloc(cap, &b->mapped);
	b->cap = b->p ? cap : 0;
	return b->p;
}

/* sbuf_get() keeping the first `keep` bytes (realloc). */
static void *sbuf_grow(struct sbuf *b, size_t bytes, size_t keep)
{
	if (b->p && b->cap >= bytes)
		return b->p;
	struct sbuf nb = { 0 };
	if (!sbuf_get(&nb, bytes))
		return NULL;
	if (keep)
		memcpy(nb.p, b->p, keep);
	if (b->p)
		big_free(b->p, b->mapped);
	*b = nb;
	return b->p;
}

static void sbuf_free(struct sbuf *b)
{
	if (b->p)
		big_free(b->p, b->mapped);
	*b = (struct sbuf){ 0 };
}

/* The buffers of a scratch or of a snapshot. */
static void sbufs_free(struct sbuf *const *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbuf_free(b[i]);
}

static void scratch_free(struct snap_scratch *sc)
{
	if (!sc)
		return;
	struct sbuf *const b[] = { &sc->ents, &sc->runs,  &sc->tmp,
				   &sc->cnt,  &sc->stack, &sc->parent };
	sbufs_free(b, CGS_ARRAY_SIZE(b));
	free(sc);
}

/* The entries' command summaries (the storage is the scratch's, the
 * paths the snapshot's). */
static void vec_clear(struct vec *a)
{
	for (size_t i = 0; i < a->n; i++)
		cgsi_comms_free(a->v[i].comms);
	a->n = 0;
}

/* Ask for the cache lines of `bytes` at p ahead of use: the counters
 * are read once per snapshot, from memory, in an order the hardware does
 * not guess (a linked list; a pass from the last entry back). */
static inline void prefetch_range(const void *p, size_t bytes)
{
	for (size_t o = 0; o < bytes; o += 64)
		__builtin_prefetch((const char *)p + o);
}

/* Path order with '/' lowest: a parent, then its subtree, then siblings. */
static int path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned ca = (unsigned char)*a, cb = (unsigned char)*b;
		if (ca == cb) {
			if (!ca)
				return 0;
			continue;
		}
		if (!ca)
			return -1;
		if (!cb)
			return 1;
		if (ca == '/')
			return -1;
		if (cb == '/')
			return 1;
		return ca < cb ? -1 : 1;
	}
}

/* The unknown bucket last; same path: older incarnations first, so that
 * the current one is the ancestor its descendants attach to. */
static int order(bool ua, const char *pa, bool sa, uint64_t ia, bool ub,
		 const char *pb, bool sb, uint64_t ib)
{
	if (ua != ub)
		return ua ? 1 : -1;
	int c = path_cmp(pa, pb);
	if (c)
		return c;
	if (sa != sb)
		return sa ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

static int sent_cmp(const struct sent *a, const struct sent *b)
{
	return order(a->unknown, a->path, a->superseded, a->ino, b->unknown,
		     b->path, b->superseded, b->ino);
}

static int node_cmp(const struct cgsi_cgnode *a, const struct cgsi_cgnode *b)
{
	return order(a->unknown, a->path, !a->hashed, a->ino, b->unknown,
		     b->path, !b->hashed, b->ino);
}

static int node_pcmp(const void *pa, const void *pb)
{
	return node_cmp(*(struct cgsi_cgnode *const *)pa,
			*(struct cgsi_cgnode *const *)pb);
}

/*
 * Sort by merging the ascending runs already there (each shard's copy is
 * one, in the order its list keeps): n log(runs) comparisons. Returns
 * -ENOMEM (a leaves unsorted) or 0.
 */
static int sort_runs(struct vec *a, struct snap_scratch *sc)
{
	size_t n = a->n, nr = 0;
	if (n < 2)
		return 0;
	size_t i1 = 1; /* one run (a single shard, nothing new): sorted */
	while (i1 < n && sent_cmp(&a->v[i1 - 1], &a->v[i1]) <= 0)
		i1++;
	if (i1 == n)
		return 0;
	size_t *run = sbuf_get(&sc->runs, (n + 1) * sizeof(*run));
	struct sent *tmp = sbuf_get(&sc->tmp, n * sizeof(*tmp));
	if (!run || !tmp)
		return -ENOMEM;
	run[nr++] = 0;
	run[nr++] = i1;
	for (size_t i = i1 + 1; i < n; i++)
		if (sent_cmp(&a->v[i - 1], &a->v[i]) > 0)
			run[nr++] = i;
	run[nr] = n;
	struct sent *src = a->v, *dst = tmp;
	while (nr > 1) {
		size_t w = 0;
		for (size_t r = 0; r < nr; r += 2) {
			size_t lo = run[r], mid = run[r + 1];
			size_t hi = r + 2 <= nr ? run[r + 2] : mid;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = sent_cmp(&src[j], &src[i]) < 0
						   ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
			run[w++] = lo;
		}
		run[w] = n;
		nr = w;
		struct sent *t = src;
		src = dst;
		dst = t;
	}
	if (src != a->v)
		memcpy(a->v, src, n * sizeof(*src));
	return 0;
}

static bool same_cgroup(const struct sent *a, const struct sent *b)
{
	if (a->unknown || b->unknown)
		return a->unknown && b->unknown;
	return !strcmp(a->path, b->path) &&
	       (a->ino == b->ino || !a->ino || !b->ino);
}

/* A set's room (uninitialised): full, or the histograms only. */
static struct cgsi_xset *xset_new(struct snap_mem *m, bool full)
{
	return mem_alloc(m, xwords(full) * sizeof(uint64_t));
}

/* The packed set's words to d (dense, at least as wide): d += s. */
static void xpack_add(struct cgsi_xset *d, const uint64_t *s, bool full)
{
	uint64_t *o = (uint64_t *)d;
	const uint64_t *v = s + xmasks(full);
	for (size_t k = 0; k < xmasks(full); k++)
		for (uint64_t b = s[k]; b; b &= b - 1)
			o[k * 64 + (unsigned)__builtin_ctzll(b)] += *v++;
}

/* d (dense, w >= s's words) += s. */
static void xref_add(struct cgsi_xset *d, struct xref s)
{
	if (s.pk)
		xpack_add(d, s.pk, s.full);
	else if (s.p)
		cgsi_xset_add_n(d, s.p, xwords(s.full));
}

/* Word i of a set (0 past its words). */
static uint64_t xref_word(const struct xref *x, size_t i)
{
	if (i >= xwords(x->full))
		return 0;
	if (x->p)
		return ((const uint64_t *)x->p)[i];
	if (!x->pk)
		return 0;
	const uint64_t *mk = x->pk;
	uint64_t bit = 1ull << (i % 64);
	if (!(mk[i / 64] & bit))
		return 0;
	size_t at = xmasks(x->full) +
		    (size_t)__builtin_popcountll(mk[i / 64] & (bit - 1));
	for (size_t k = 0; k < i / 64; k++)
		at += (size_t)__builtin_popcountll(mk[k]);
	return mk[at];
}

/*
 * Which words of a node's pair x (cum | base) are not zero (*self) and
 * which differ from the baseline (*delta). Only the words in `cand` can
 * be either (the node's nz: both sets are zero elsewhere), and only those
 * are read, in one pass: a word and its baseline share a cache line.
 */
static void xpair_masks(const struct cgsi_xpair *x, const uint64_t *cand,
			bool full, uint64_t *self, uint64_t *delta)
{
	size_t w = xwords(full);
	for (size_t k = 0; k < xmasks(full); k++) {
		uint64_t c = cand[k], sm = 0, dm = 0;
		if (w < (k + 1) * 64) /* not past the set's words */
			c &= (1ull << (w - k * 64)) - 1;
		for (; c; c &= c - 1) {
			unsigned bit = (unsigned)__builtin_ctzll(c);
			const uint64_t *v = x->w[k * 64 + bit];
			sm |= (uint64_t)(v[0] != 0) << bit;
			dm |= (uint64_t)(v[0] != v[1]) << bit;
		}
		self[k] = sm;
		delta[k] = dm;
	}
}

/*
 * Pack the words in `mask` of x's set (with `delta`: minus the baseline)
 * into *d (NULL when mask is empty), taking exactly their room; with
 * `advance` the baseline moves on to the set where it was read (the words
 * that changed: the others are equal). false on ENOMEM.
 */
static bool xpair_pack(struct xref *d, struct cgsi_xpair *x,
		       const uint64_t *mask, bool full, bool delta,
		       bool advance, struct snap_mem *m)
{
	size_t nm = xmasks(full), cnt = 0;
	for (size_t k = 0; k < nm; k++)
		cnt += (size_t)__builtin_popcountll(mask[k]);
	d->p = NULL;
	d->pk = NULL;
	d->full = full;
	if (!cnt)
		return true;
	uint64_t *pk = mem_alloc(m, (nm + cnt) * sizeof(uint64_t));
	if (!pk)
		return false;
	uint64_t *o = pk + nm;
	for (size_t k = 0; k < nm; k++) {
		pk[k] = mask[k];
		for (uint64_t bm = mask[k]; bm; bm &= bm - 1) {
			uint64_t *v = x->w[k * 64 + (unsigned)__builtin_ctzll(bm)];
			*o++ = v[0] - (delta ? v[1] : 0);
			if (advance)
				v[1] = v[0];
		}
	}
	d->pk = pk;
	return true;
}

/* *d += s, *d made dense (a copy of s) if it was not yet, widened if s
 * has signal counts and *d had none. false on ENOMEM. */
static bool xset_addto(struct xref *d, struct xref s, struct snap_mem *m)
{
	if (xref_zero(s))
		return true;
	if (d->p && (d->full || !s.full)) {
		xref_add(d->p, s);
		return true;
	}
	bool full = d->full || s.full;
	if (xref_zero(*d))
		full = s.full;
	struct cgsi_xset *x = xset_new(m, full);
	if (!x)
		return false;
	memset(x, 0, xwords(full) * sizeof(uint64_t));
	xref_add(x, *d); /* d's words, widened or unpacked */
	xref_add(x, s);
	d->p = x;
	d->pk = NULL;
	d->full = full;
	return true;
}

/* A new dense set for *d: full, or the histograms only (false on
 * ENOMEM). */
static bool xset_make(struct xref *d, bool full, struct snap_mem *m)
{
	d->full = full;
	d->pk = NULL;
	return (d->p = xset_new(m, full)) != NULL;
}

/* e's extra sets `set` (enum cgs_counter_set), p NULL: zeros. */
static struct xref x_set(const struct sent *e, int set)
{
	if (!e->sub && set == CGS_SET_SUBTREE)
		set = CGS_SET_SELF;
	if (!e->sub && set == CGS_SET_SUBTREE_DELTA)
		set = CGS_SET_SELF_DELTA;
	return e->xs[set];
}

static const struct cgs_counters *self_delta_of(const struct sent *e)
{
	return e->zd ? &zero_counters : &e->k->self_delta;
}

/* e's self delta, written: to be added to. */
static struct cgs_counters *own_delta(struct sent *e)
{
	if (e->zd) {
		memset(&e->k->self_delta, 0, sizeof(e->k->self_delta));
		e->zd = false;
	}
	return &e->k->self_delta;
}

/* e's subtree sets: its own, or its self sets. */
static const struct cgs_counters *sub_of(const struct sent *e, bool delta)
{
	if (e->sub)
		return delta ? &e->sub->subtree_delta : &e->sub->subtree;
	return delta ? self_delta_of(e) : &e->k->self;
}

/* Give e subtree sets of its own (counters and extra sets), equal to its
 * self sets so far (false on ENOMEM). */
static bool own_subtree(struct sent *e, struct snap_mem *m)
{
	if (e->sub)
		return true;
	if (!(e->sub = mem_alloc(m, sizeof(*e->sub))))
		return false;
	e->sub->subtree = e->k->self;
	e->sub->subtree_delta = *self_delta_of(e);
	return xset_addto(&e->xs[CGS_SET_SUBTREE], e->xs[CGS_SET_SELF], m) &&
	       xset_addto(&e->xs[CGS_SET_SUBTREE_DELTA],
			  e->xs[CGS_SET_SELF_DELTA], m);
}

/* d += s (two entries of one cgroup): while neither has subtree sets of
 * its own, the sum has none either. */
static int add_k(struct sent *d, const struct sent *s, struct snap_mem *m)
{
	if (d->sub || s->sub) {
		if (!own_subtree(d, m))
			return -ENOMEM;
		cgsi_counters_add(&d->sub->subtree, sub_of(s, false));
		cgsi_counters_add(&d->sub->subtree_delta, sub_of(s, true));
		if (!xset_addto(&d->xs[CGS_SET_SUBTREE],
				x_set(s, CGS_SET_SUBTREE), m) ||
		    !xset_addto(&d->xs[CGS_SET_SUBTREE_DELTA],
				x_set(s, CGS_SET_SUBTREE_DELTA), m))
			return -ENOMEM;
	}
	cgsi_counters_add(&d->k->self, &s->k->self);
	d->k->merged = true;
	if (!s->zd)
		cgsi_counters_add(own_delta(d), &s->k->self_delta);
	if (!xset_addto(&d->xs[CGS_SET_SELF], s->xs[CGS_SET_SELF], m) ||
	    !xset_addto(&d->xs[CGS_SET_SELF_DELTA], s->xs[CGS_SET_SELF_DELTA],
			m))
		return -ENOMEM;
	return 0;
}

/* Sort and merge duplicates in place (a cgroup seen by several shards,
 * cgroups folded into one). */
static int sort_merge(struct vec *a, struct snap_mem *m,
		      struct snap_scratch *sc)
{
	if (sort_runs(a, sc) < 0)
		return -ENOMEM;
	size_t w = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (w && same_cgroup(&a->v[w - 1], &a->v[i])) {
			struct sent *d = &a->v[w - 1], *s = &a->v[i];
			if (add_k(d, s, m) < 0)
				return -ENOMEM; /* vec_clear() frees all */
			d->inferred += s->inferred;
			d->inferred_d += s->inferred_d;
			if (s->comms && !d->comms) {
				d->comms = s->comms;
			} else if (s->comms) {
				cgsi_topk_merge(&d->comms[0], &s->comms[0]);
				cgsi_topk_merge(&d->comms[1], &s->comms[1]);
				cgsi_comms_free(s->comms);
			}
			if (!d->ino)
				d->ino = s->ino;
			d->superseded = d->superseded && s->superseded;
			d->gone = d->gone || s->gone;
			d->folded = d->folded || s->folded;
			continue;
		}
		a->v[w++] = a->v[i];
	}
	a->n = w;
	return 0;
}

/* Copies n's command summaries into e (false on ENOMEM). */
static bool copy_comms(struct sent *e, const struct cgsi_cgnode *n)
{
	if (!n->comms || (!n->comms[0].size && !n->comms[1].size))
		return true;
	e->comms = cgsi_comms_new(n->comms[0].cap);
	if (!e->comms)
		return false;
	cgsi_topk_copy(&e->comms[0], &n->comms[0]);
	cgsi_topk_copy(&e->comms[1], &n->comms[1]);
	return true;
}

/* No record since the baseline: every record counts in tasks or
 * tgid_records, OOM kills read at snapshot time in oom_kills. */
static bool node_idle(const struct cgsi_cgnode *n)
{
	return n->cum.tasks == n->base.tasks &&
	       n->cum.tgid_records == n->base.tgid_records &&
	       n->cum.oom_kills == n->base.oom_kills;
}

/* What changes when cum does (copy_node()). */
static uint64_t node_key(const struct cgsi_cgnode *n)
{
	return n->cum.tasks + n->cum.tgid_records + n->cum.oom_kills;
}

/* Generations: of the snapshot whose chunk is being reused (0: none,
 * the chunk is new), and of this one. */
struct gens {
	uint64_t prev, cur;
};

/* Is the chunk entry idx of the previous snapshot (generation prev, 0:
 * none) still n's cum? Then copy_node() does not copy it again. */
static bool entry_current(const struct cgsi_cgnode *n, const struct gens *g,
			  uint32_t idx, const struct snap_self *k)
{
	return g->prev && n->snap_gen == g->prev && n->snap_idx == idx &&
	       n->snap_key == node_key(n) && !k->merged;
}

/* Ask for the lines of the words of n's cum | base pair that copy_x()
 * will read, known from n's nz (asked for a node ahead), a node ahead of
 * their use. The empty asm takes each address: without it GCC 12 drops
 * a loop that only prefetches, as if it did nothing. */
static inline void prefetch_x(const struct cgsi_cgnode *n)
{
	if (!n->x)
		return;
	for (size_t k = 0; k < xmasks(n->sigs); k++)
		for (uint64_t c = n->xnz[k]; c; c &= c - 1) {
			const void *w = n->x->cum.w[k * 64 +
						   (unsigned)__builtin_ctzll(c)];
			__builtin_prefetch(w);
			__asm__ volatile("" : : "r"(w));
		}
}

/* Dense subtree sets, the first w words, of a node with retired
 * descendants: sub = carry + cum, subd = carry - carry_base (the self
 * delta is added after); with `advance` carry_base = carry. */
static void xpair_subtree(struct cgsi_xset *sub, struct cgsi_xset *subd,
			  struct cgsi_x4 *x, size_t w, bool advance)
{
	uint64_t *s = (uint64_t *)sub, *d = (uint64_t *)subd;
	uint64_t(*c)[2] = x->carry.w;
	for (size_t i = 0; i < w; i++) {
		s[i] = c[i][0] + x->cum.w[i][0];
		d[i] = c[i][0] - c[i][1];
		if (advance)
			c[i][1] = c[i][0];
	}
}

/* Copies n's extra sets (extra.h) into e's (set order) after
 * copy_node(): self and self delta packed, zeros NULL (an idle cgroup's
 * delta); subtree sets (dense) only where e has subtree counters
 * (retired descendants); the histograms only while n never had signal
 * counts (all four node sets are zero from `sig` on then). false on
 * ENOMEM. */
static bool copy_x(struct sent *e, struct cgsi_cgnode *n, bool idle,
		   bool advance, struct snap_mem *m)
{
	if (!n->x)
		return true;
	bool full = n->sigs;
	struct xref *o = e->xs;
	uint64_t self[XMASKS_MAX], delta[XMASKS_MAX];
	xpair_masks(&n->x->cum, n->xnz, full, self, delta);
	if (!xpair_pack(&o[CGS_SET_SELF], &n->x->cum, self, full, false,
			false, m) ||
	    (!idle && !xpair_pack(&o[CGS_SET_SELF_DELTA], &n->x->cum, delta,
				  full, true, advance, m)))
		return false;
	if (!e->sub)
		return true;
	if (!xset_make(&o[CGS_SET_SUBTREE], full, m) ||
	    !xset_make(&o[CGS_SET_SUBTREE_DELTA], full, m))
		return false;
	xpair_subtree(o[CGS_SET_SUBTREE].p, o[CGS_SET_SUBTREE_DELTA].p, n->x,
		      xwords(full), advance);
	xref_add(o[CGS_SET_SUBTREE_DELTA].p, o[CGS_SET_SELF_DELTA]);
	return true;
}

/*
 * Counters go to e->k: self, self_delta; subtree and subtree_delta for
 * now self plus the retired descendants' carry (the live ones are added
 * last). Most cgroups never had a descendant retired: their subtree sets
 * are not copied until known to differ from self (e->sub), and a leaf's
 * are never written. A node with no record since its baseline
 * (every record counts in tasks or tgid_records; OOM kills read at
 * snapshot time in oom_kills) has a zero delta without reading its
 * baseline, nor writing it (e->zd).
 */
static bool copy_node(struct sent *e, struct cgsi_cgnode *n, bool idle,
		      bool advance, bool current, const struct gens *g,
		      uint32_t idx, struct snap_mem *m)
{
	struct snap_self *k = e->k;
	e->len = n->len;
	e->depth = n->depth;
	e->ino = n->ino;
	e->node_ino = n->ino != 0;
	e->unknown = n->unknown;
	e->superseded = !n->hashed;
	e->gone = n->gone;
	e->node = n;
	/* current: the chunk was the previous snapshot's, and this node's
	 * cum has not changed since that one copied it here */
	if (!current) {
		k->self = n->cum;
		k->merged = false;
	}
	n->snap_gen = g->cur;
	n->snap_idx = idx;
	n->snap_key = node_key(n);
	e->zd = idle; /* and ivl_rss, ivl_vm are 0: set by records only */
	if (!idle) {
		cgsi_counters_sub(&k->self_delta, &n->cum, &n->base);
		k->self_delta.hiwater_rss_kb_max = n->ivl_rss;
		k->self_delta.hiwater_vm_kb_max = n->ivl_vm;
	}
	if (n->has_carry) {
		struct snap_sub *u = e->sub = mem_alloc(m, sizeof(*u));
		if (!u)
			return false;
		u->subtree = n->carry;
		cgsi_counters_add(&u->subtree, &n->cum);
		cgsi_counters_sub(&u->subtree_delta, &n->carry,
				  &n->carry_base);
		u->subtree_delta.hiwater_rss_kb_max = n->carry_ivl_rss;
		u->subtree_delta.hiwater_vm_kb_max = n->carry_ivl_vm;
		if (!idle)
			cgsi_counters_add(&u->subtree_delta, &k->self_delta);
	}
	e->inferred = n->inferred;
	e->inferred_d = n->inferred - n->inferred_base;
	n->reported = n->cum.tasks + n->cum.tgid_records;
	if (advance && !idle) {
		n->inferred_base = n->inferred;
		n->base = n->cum;
		n->ivl_rss = n->ivl_vm = 0;
	}
	if (advance && n->has_carry) {
		n->carry_base = n->carry;
		n->carry_ivl_rss = n->carry_ivl_vm = 0;
	}
	return true;
}

/* Path of the ancestor at `depth` (depth < e's depth). */
static size_t prefix_len(const char *p, unsigned depth)
{
	if (depth == 0)
		return 1; /* "/" */
	size_t i = 0;
	unsigned d = 0;
	for (; p[i]; i++)
		if (p[i] == '/' && p[i + 1] && p[i + 1] != '/' && d++ == depth)
			return i;
	return i;
}

static void fold(struct vec *a, unsigned depth)
{
	for (size_t i = 0; i < a->n; i++) {
		struct sent *e = &a->v[i];
		if (e->unknown || e->depth <= depth)
			continue;
		e->len = prefix_len(e->path, depth);
		e->path[e->len] = '\0';
		e->depth = depth;
		e->ino = 0; /* the ancestor's, found by stat later */
		e->superseded = false;
		e->gone = false;
		e->folded = true;
	}
}

static bool is_ancestor(const struct sent *a, const struct sent *b);

/* The chain of ancestors in a pass over the sorted entries: a path (an
 * entry's, or a prefix of it for an ancestor to add) and its depth. */
struct chain {
	const char *path;
	size_t len;
	unsigned depth;
};

/* Is the cgroup path p[0..len) an ancestor of entry b? */
static bool path_under(const char *p, size_t len, const struct sent *b)
{
	if (b->unknown)
		return false;
	if (len == 1 && p[0] == '/')
		return b->len > 1 && b->path[0] == '/';
	return b->len > len && !memcmp(p, b->path, len) && b->path[len] == '/';
}

static bool chain_push(struct chain **st, size_t *top, size_t *cap,
		       struct chain c)
{
	if (*top == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct chain *ns = realloc(*st, nc * sizeof(*ns));
		if (!ns)
			return false;
		*st = ns;
		*cap = nc;
	}
	(*st)[(*top)++] = c;
	return true;
}

/*
 * Every cgroup's ancestors appear, so subtree sums have a home, each just
 * before the first of its descendants (where the order puts it). In
 * place: a first pass over the sorted entries, with the chain of
 * ancestors seen, makes the missing ancestors' paths and counts them per
 * entry; then the entries move back from the end to make room. -ENOMEM
 * leaves a as it was.
 */
static int add_ancestors(struct vec *a, struct snap_mem *m,
			 struct snap_scratch *sc)
{
	size_t n = a->n, top = 0, cap = 0, add = 0, nanc = 0;
	struct chain *st = NULL;
	uint32_t *cnt = sbuf_get(&sc->cnt, (n ? n : 1) * sizeof(*cnt));
	char **anc = NULL;
	size_t anccap = 0;
	int rc = -ENOMEM;
	if (!cnt)
		return -ENOMEM;
	memset(cnt, 0, n * sizeof(*cnt));
	for (size_t i = 0; i < n; i++) {
		const struct sent *e = &a->v[i];
		if (e->unknown || e->path[0] != '/')
			continue;
		while (top && !path_under(st[top - 1].path, st[top - 1].len, e))
			top--;
		unsigned d = top ? st[top - 1].depth + 1 : 0;
		for (; d < e->depth; d++) {
			size_t pl = prefix_len(e->path, d);
			if (nanc == anccap) {
				size_t nc = anccap ? anccap * 2 : 64;
				char **na = realloc(anc, nc * sizeof(*na));
				if (!na)
					goto out;
				anc = na;
				anccap = nc;
			}
			if (!(anc[nanc] = path_dup(m, e->path, pl)) ||
			    !chain_push(&st, &top, &cap,
					(struct chain){ anc[nanc++], pl, d }))
				goto out;
			cnt[i]++;
			add++;
		}
		if (!chain_push(&st, &top, &cap,
				(struct chain){ e->path, e->len, e->depth }))
			goto out;
	}
	if (add && n + add > a->cap) {
		struct sent *nv = sbuf_grow(&sc->ents, (n + add) * sizeof(*nv),
					    n * sizeof(*nv));
		if (!nv)
			goto out;
		a->v = nv;
		a->cap = sc->ents.cap / sizeof(*nv);
	}
	/* from the end: slot w - 1 >= i, so nothing unread is overwritten */
	size_t w = n + add;
	for (size_t i = n; i-- > 0;) {
		struct sent e = a->v[i];
		a->v[--w] = e;
		for (uint32_t k = 1; k <= cnt[i]; k++) {
			struct sent *x = &a->v[--w];
			memset(x, 0, sizeof(*x));
			x->path = anc[--nanc];
			x->len = strlen(x->path);
			x->depth = e.depth - k;
		}
	}
	a->n = n + add;
	rc = 0;
out:
	free(anc); /* its paths: the snapshot's */
	free(st);
	return rc;
}

/* Directory checks of entries no node vouches for: added ancestors and
 * folded ones (bounded by the number of distinct parent directories). */
static void stat_unvouched(const struct cgs_rollup *r, struct vec *a)
{
	char dir[PATH_MAX + 64];
	for (size_t i = 0; i < a->n; i++) {
		struct sent *e = &a->v[i];
		if (e->unknown || (e->k && !e->folded))
			continue;
		bool gone;
		uint64_t ino = cgsi_cg_ino(&r->mount, e->path, dir, sizeof(dir),
					   &gone);
		e->gone = e->gone || gone || (ino && e->ino && ino != e->ino);
		if (!e->ino && !e->gone)
			e->ino = ino;
	}
}

/*
 * The removal checks of one shard's copy a->v[base .. base+cnt) (its list
 * order), snap_lock held, no shard lock: the next CGSI_CHECK_SLICE(cnt)
 * directories from the shard's cursor are stat()ed; with the kernel
 * source, every node whose id had an rmdir event is marked too.
 */
static void check_removed(struct cgs_rollup *r, struct cgsi_rshard *s,
			  struct vec *a, size_t base, size_t cnt, size_t start)
{
	size_t want = CGSI_CHECK_SLICE(cnt);
	uint64_t now = cgsi_rollup_now(r); /* removed_ms: retire.c */
	for (size_t j = 0; j < want && j < cnt; j++) {
		struct sent *e = &a->v[base + (start + j) % cnt];
		struct cgsi_cgnode *n = e->node;
		if (n->unknown || n->gone || n->path[0] != '/')
			continue;
		bool gone;
		uint64_t ino = cgsi_cg_ino(&r->mount, n->path, s->dir,
					   sizeof(s->dir), &gone);
		if (gone || (ino && n->ino && ino != n->ino)) {
			n->gone = true;
			cgsi_node_seen_removed(n, now);
		}
		if (!e->ino && !n->gone)
			e->ino = ino;
		e->gone = n->gone;
	}
	s->check_at = want < cnt ? a->v[base + (start + want) % cnt].node
				 : NULL;
	if (!r->ksrc)
		return;
	/* from the copies (e->gone is n->gone now): the nodes are cold in
	 * the cache by now, the entries not */
	for (size_t j = 0; j < cnt; j++) {
		struct sent *e = &a->v[base + j];
		if (!e->gone && e->node_ino && !e->unknown &&
		    cgsi_ksrc_removed(r->ksrc, e->ino)) {
			e->gone = e->node->gone = true;
			cgsi_node_seen_removed(e->node, now);
		}
	}
}

/* What copy_shard() reads of node n, two nodes ahead, to ask for the
 * lines of n's extra sets one node ahead (prefetch_x()): its pointer to
 * them and their nz, and its link to the next node. */
static inline void prefetch_ahead(const struct cgsi_cgnode *n)
{
	if (!n)
		return;
	__builtin_prefetch(&n->next);
	__builtin_prefetch(&n->x);
	__builtin_prefetch(&n->xnz[CGSI_XMASKS - 1]);
}

/*
 * Copy shard s (its lock held) into a (room reserved) and cv from index
 * a->n on; nodes created since the last snapshot are merged into the
 * list's path order on the way. *start: the index (from a->n) of the
 * removal check cursor. false on ENOMEM (what was copied stays).
 */
static bool copy_shard(struct cgs_rollup *r, struct cgsi_rshard *s,
		       struct vec *a, struct snap_self *cv, bool advance,
		       const struct gens *g, size_t *start,
		       struct snap_mem *mem)
{
	struct cgsi_cgtab *t = &s->cgs;
	size_t nt = 0, base = a->n;
	for (struct cgsi_cgnode *n = t->last; n && !n->in_order; n = n->prev)
		nt++;
	struct cgsi_cgnode **tail = nt ? malloc(nt * sizeof(*tail)) : NULL;
	struct cgsi_cgnode *p = t->first, *prev = NULL;
	size_t j = 0, np = t->count - nt; /* prefix nodes still to merge */
	if (tail) {
		struct cgsi_cgnode *n = t->last;
		for (size_t i = nt; i-- > 0; n = n->prev)
			tail[i] = n;
		qsort(tail, nt, sizeof(*tail), node_pcmp);
		t->first = NULL;
	} else {
		nt = 0; /* ENOMEM: keep the list as it is */
	}
	*start = 0;
	bool light = false; /* the last node: idle, its entry current */
	for (;;) {
		struct cgsi_cgnode *m;
		if (tail) { /* merge the sorted prefix and the new nodes */
			if (!np)
				p = NULL; /* the prefix ends at the new ones */
			if (!p && j == nt)
				break;
			if (j < nt && (!p || node_cmp(tail[j], p) < 0)) {
				m = tail[j++];
			} else {
				m = p;
				p = p->next;
				np--;
			}
			m->prev = prev;
			m->next = NULL;
			if (prev)
				prev->next = m;
			else
				t->first = m;
			prev = m;
			m->in_order = true;
		} else {
			if (!p)
				break;
			m = p;
			p = p->next;
			m->in_order = true;
		}
		/* the next node's counters, unless the last one needed
		 * none read (an idle cgroup still in the chunk: its
		 * neighbours most likely too), then only the lines that
		 * tell; its end (flags, path) in any case */
		if (p && !light) {
			prefetch_range(&p->cum, sizeof(p->cum));
			prefetch_range(&p->base, sizeof(p->base));
		} else if (p) {
			__builtin_prefetch(&p->cum.tasks);
			__builtin_prefetch(&p->cum.oom_kills);
			__builtin_prefetch(&p->base.tasks);
			__builtin_prefetch(&p->base.oom_kills);
			__builtin_prefetch(&p->snap_gen);
		}
		if (p) {
			prefetch_range(&p->gone, 64);
			prefetch_x(p);
			prefetch_ahead(p->next);
		}
		if (m == s->check_at)
			*start = a->n - base;
		char *path = path_dup(mem, m->path, m->len);
		if (!path)
			goto enomem;
		struct sent *e = &a->v[a->n];
		memset(e, 0, sizeof(*e));
		e->path = path;
		e->k = &cv[a->n - base];
		a->n++;
		cgsi_oom_update(r, s, m);
		bool idle = node_idle(m);
		uint32_t idx = (uint32_t)(a->n - 1 - base);
		bool current = entry_current(m, g, idx, e->k);
		light = idle && current;
		if (!copy_node(e, m, idle, advance, current, g, idx, mem) ||
		    !copy_x(e, m, idle, advance, mem) || !copy_comms(e, m))
			goto enomem;
	}
	if (tail)
		t->last = prev;
	free(tail);
	return true;
enomem:
	if (tail) { /* relink what the merge has not reached */
		for (;;) {
			struct cgsi_cgnode *m;
			if (!np)
				p = NULL;
			if (j < nt && (!p || node_cmp(tail[j], p) < 0)) {
				m = tail[j++];
			} else if (p) {
				m = p;
				p = p->next;
				np--;
			} else {
				break;
			}
			m->prev = prev;
			m->next = NULL;
			if (prev)
				prev->next = m;
			else
				t->first = m;
			prev = m;
			m->in_order = true; /* nearly: sort_runs() copes */
		}
		t->last = prev;
	}
	free(tail);
	return false;
}

/*
 * A ranking as the API shows it: the `show` (0: all held) largest lower
 * bounds, then (other) for the rest: its value a lower bound (the total
 * minus the listed counts), its error the listed errors, max_each what no
 * folded command can exceed (the summary's floor, or a held command not
 * shown).
 */
static int list_one(struct cgs_comm **vp, size_t *np, const struct cgsi_topk *t,
		    unsigned show)
{
	size_t held = t->size;
	struct cgsi_topk_entry *all = calloc(held ? held : 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	uint64_t total = 0, bound = 0;
	held = cgsi_topk_list(t, all, held, &total, &bound);
	size_t k = show && show < held ? show : held;
	struct cgs_comm *v = calloc(k + 1, sizeof(*v));
	if (!v) {
		free(all);
		return -ENOMEM;
	}
	uint64_t listed = 0, errs = 0, max_each = bound;
	for (size_t j = 0; j < k; j++) {
		v[j].sz = sizeof(v[j]);
		memcpy(v[j].comm, all[j].key, sizeof(v[j].comm) - 1);
		v[j].value = all[j].count - all[j].err;
		v[j].error = all[j].err;
		listed += all[j].count;
		errs += all[j].err;
	}
	for (size_t j = k; j < held; j++)
		max_each = CGS_MAX(max_each, all[j].count);
	size_t n = k;
	if (k < held || total > listed || bound) {
		struct cgs_comm *o = &v[n++];
		o->sz = sizeof(*o);
		o->other = true;
		o->value = total > listed ? total - listed : 0;
		o->error = errs;
		o->max_each = max_each;
	}
	free(all);
	*vp = v;
	*np = n;
	return 0;
}

static int list_comms(struct snap_comms *c, const struct cgsi_topk *t,
		      unsigned show)
{
	for (int r = 0; r < 2; r++)
		if (list_one(&c->v[r], &c->n[r], &t[r], show) < 0)
			return -ENOMEM;
	return 0;
}

static bool is_ancestor(const struct sent *a, const struct sent *b)
{
	return !a->unknown && path_under(a->path, a->len, b);
}


struct cgsi_snap_pool *cgsi_snap_pool_new(void)
{
	struct cgsi_snap_pool *p = calloc(1, sizeof(*p));
	if (p) {
		pthread_mutex_init(&p->lock, NULL);
		p->refs = 1; /* the rollup's */
	}
	return p;
}

static void snap_destroy(struct cgs_snapshot *s)
{
	if (!s)
		return;
	struct sbuf *const b[] = { &s->vb, &s->xvb, &s->avb };
	sbufs_free(b, CGS_ARRAY_SIZE(b));
	for (unsigned i = 0; s->cvs && i < s->ncvs; i++)
		sbuf_free(&s->cvs[i]);
	free(s->cvs);
	mem_free(&s->mem);
	free(s);
}

/* Drop a reference (lock held by none): the last one frees the pool. */
static void pool_unref(struct cgsi_snap_pool *p, bool closing)
{
	pthread_mutex_lock(&p->lock);
	struct cgs_snapshot *spare = NULL;
	struct snap_scratch *sc = NULL;
	if (closing) {
		p->closed = true;
		spare = p->spare;
		sc = p->scratch;
		p->spare = NULL;
		p->scratch = NULL;
	}
	bool last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	snap_destroy(spare);
	scratch_free(sc);
	if (last) {
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
}

void cgsi_snap_pool_close(struct cgsi_snap_pool *p)
{
	if (p)
		pool_unref(p, true);
}

/*
 * A snapshot to fill, and scratch buffers: the pool's (its buffers
 * reused, their contents stale) or new ones. The snapshot holds a
 * reference to the pool until freed. NULL on ENOMEM.
 */
static struct cgs_snapshot *snap_take(struct cgs_rollup *r,
				      struct snap_scratch **scp)
{
	struct cgsi_snap_pool *p = r->snap_pool;
	struct cgs_snapshot *s = NULL;
	struct snap_scratch *sc = NULL;
	if (p) {
		pthread_mutex_lock(&p->lock);
		s = p->spare;
		sc = p->scratch;
		p->spare = NULL;
		p->scratch = NULL;
		pthread_mutex_unlock(&p->lock);
	}
	if (s && s->ncvs != r->nshards) { /* not expected: one rollup */
		snap_destroy(s);
		s = NULL;
	}
	if (s) {
		mem_reset(&s->mem);
		s->n = s->xn = 0;
		s->v = NULL;
		s->xv = NULL;
		s->av = NULL;
		s->cm = NULL;
		s->totals = (struct cgs_rollup_totals){ 0 };
	} else if ((s = calloc(1, sizeof(*s)))) {
		s->cvs = calloc(r->nshards, sizeof(*s->cvs));
		s->ncvs = s->cvs ? r->nshards : 0;
	}
	if (!sc)
		sc = calloc(1, sizeof(*sc));
	if (!s || !s->cvs || !sc) {
		snap_destroy(s);
		scratch_free(sc);
		return NULL;
	}
	if (p) {
		pthread_mutex_lock(&p->lock);
		p->refs++;
		pthread_mutex_unlock(&p->lock);
	}
	s->pool = p;
	*scp = sc;
	return s;
}

/* The scratch buffers back to the pool, unless it holds some already. */
static void scratch_put(struct cgsi_snap_pool *p, struct snap_scratch *sc)
{
	if (p) {
		pthread_mutex_lock(&p->lock);
		if (!p->closed && !p->scratch) {
			p->scratch = sc;
			sc = NULL;
		}
		pthread_mutex_unlock(&p->lock);
	}
	scratch_free(sc);
}

CGS_EXPORT int cgs_rollup_snapshot(struct cgs_rollup *r,
				   const struct cgs_snapshot_opts *opts,
				   struct cgs_snapshot **out)
{
	if (!r || !out)
		return -EINVAL;
	*out = NULL;
	struct cgs_snapshot_opts o;
	int rc = cgsi_opts_copy(&o, sizeof(o), opts, opts ? opts->sz : 0);
	if (rc < 0)
		return rc;
	struct snap_scratch *sc = NULL;
	struct cgs_snapshot *snap = snap_take(r, &sc);
	if (!snap)
		return -ENOMEM;
	struct vec a = { .v = sc->ents.p,
			 .cap = sc->ents.cap / sizeof(struct sent) };
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	rc = -ENOMEM;

	pthread_mutex_lock(&r->snap_lock);
	/* a pooled snapshot's chunks still hold what it copied */
	uint64_t prev_gen = snap->gen;
	snap->gen = ++r->snap_gen;
	if (r->ksrc)
		cgsi_ksrc_sync_ids(r->ksrc);
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *s = &r->shards[i];
		struct snap_self *cv = NULL;
		size_t base = a.n, start = 0;
		bool ok = true;
		pthread_mutex_lock(&s->lock);
		/* allocate first, then copy: a failure leaves the baseline of
		 * this shard untouched */
		size_t need = a.n + s->cgs.count;
		if (need > a.cap) {
			struct sent *nv = sbuf_grow(&sc->ents,
						    need * sizeof(*nv),
						    a.n * sizeof(*nv));
			if (nv) {
				a.v = nv;
				a.cap = sc->ents.cap / sizeof(*nv);
			} else {
				ok = false;
			}
		}
		struct sbuf *cb = &snap->cvs[i];
		struct gens g = { .prev = prev_gen, .cur = snap->gen };
		if (ok) {
			void *was = cb->p;
			size_t cap = cb->cap;
			cv = sbuf_get(cb, (s->cgs.count ? s->cgs.count : 1) *
						  sizeof(*cv));
			ok = cv != NULL;
			if (cv != was || cb->cap != cap)
				g.prev = 0; /* a new chunk */
		}
		if (ok)
			ok = copy_shard(r, s, &a, cv, !o.no_delta, &g, &start,
					&snap->mem);
		cgsi_rollup_shard_totals(&t, s);
		pthread_mutex_unlock(&s->lock);
		if (ok)
			check_removed(r, s, &a, base, a.n - base, start);
		if (!ok) {
			pthread_mutex_unlock(&r->snap_lock);
			goto fail;
		}
	}
	for (size_t i = 0; i < a.n; i++)
		a.v[i].node = NULL; /* may be retired from now on */
	pthread_mutex_unlock(&r->snap_lock);

	if (o.fold_depth)
		fold(&a, o.fold_depth);
	if (sort_merge(&a, &snap->mem, sc) < 0 ||
	    add_ancestors(&a, &snap->mem, sc) < 0)
		goto fail;
	stat_unvouched(r, &a);

	size_t nadd = 0;
	for (size_t i = 0; i < a.n; i++)
		nadd += !a.v[i].k;
	/* the pool's buffers hold the last snapshot's data: every entry of
	 * v and xv is written below, the added ancestors' counters zeroed */
	size_t nv = a.n ? a.n : 1;
	snap->av = sbuf_get(&snap->avb, (nadd ? nadd : 1) * sizeof(*snap->av));
	snap->v = sbuf_get(&snap->vb, nv * sizeof(*snap->v));
	snap->xv = sbuf_get(&snap->xvb, nv * sizeof(*snap->xv));
	snap->xn = snap->xv ? a.n : 0;
	if (r->o.comms)
		snap->cm = calloc(nv, sizeof(*snap->cm));
	snap->hist = !!(r->o.flags & CGS_ROLLUP_HISTOGRAMS);
	size_t *stack = sbuf_get(&sc->stack, nv * sizeof(*stack));
	ssize_t *parent = sbuf_get(&sc->parent, nv * sizeof(*parent));
	if (!snap->av || !snap->v || !snap->xv || !stack ||
	    !parent || (r->o.comms && !snap->cm))
		goto fail;
	memset(snap->av, 0, nadd * sizeof(*snap->av));
	size_t top = 0, ai = 0;
	for (size_t i = 0; i < a.n; i++) {
		struct sent *e = &a.v[i];
		struct cgs_cgroup_stats *c = &snap->v[i];
		struct snap_self *k = e->k ? e->k : &snap->av[ai++];
		*c = (struct cgs_cgroup_stats){ 0 };
		while (top && !is_ancestor(&a.v[stack[top - 1]], e))
			top--;
		parent[i] = top ? (ssize_t)stack[top - 1] : -1;
		if (parent[i] >= 0 && !a.v[parent[i]].sub) {
			/* a parent's subtree sets are sums of their own */
			struct sent *pe = &a.v[parent[i]];
			if (!own_subtree(pe, &snap->mem))
				goto fail;
			snap->v[parent[i]].subtree = &pe->sub->subtree;
			snap->v[parent[i]].subtree_delta =
				&pe->sub->subtree_delta;
		}
		stack[top++] = i;
		c->path = e->path;
		c->depth = e->unknown ? 0 : e->depth;
		c->ino = e->ino;
		c->removed = !e->unknown && (e->superseded || e->gone);
		c->sz = sizeof(*c);
		c->inferred = e->inferred;
		c->inferred_delta = e->inferred_d;
		k->self.sz = sizeof(struct cgs_counters);
		if (!e->zd)
			k->self_delta.sz = k->self.sz;
		if (e->sub)
			e->sub->subtree.sz = e->sub->subtree_delta.sz =
				k->self.sz;
		e->k = k;
		c->self = &k->self;
		c->self_delta = self_delta_of(e);
		c->subtree = sub_of(e, false);
		c->subtree_delta = sub_of(e, true);
		if (!e->unknown)
			t.cgroups++;
		for (int j = 0; j < 4; j++)
			snap->xv[i].s[j] = x_set(e, j);
		if (e->comms && list_comms(&snap->cm[i], e->comms, o.comms) < 0)
			goto fail;
	}
	for (size_t i = a.n; i-- > 0;) {
		if (i >= 2) {
			prefetch_range(snap->v[i - 2].subtree,
				       sizeof(struct cgs_counters));
			if (snap->v[i - 2].subtree_delta != &zero_counters)
				prefetch_range(snap->v[i - 2].subtree_delta,
					       sizeof(struct cgs_counters));
		}
		if (parent[i] >= 0) {
			struct snap_sub *pk = a.v[parent[i]].sub;
			cgsi_counters_add(&pk->subtree, snap->v[i].subtree);
			if (snap->v[i].subtree_delta != &zero_counters)
				cgsi_counters_add(&pk->subtree_delta,
						  snap->v[i].subtree_delta);
			struct sent *pe = &a.v[parent[i]];
			const struct snap_x *cx = &snap->xv[i];
			if (!xset_addto(&pe->xs[CGS_SET_SUBTREE],
					cx->s[CGS_SET_SUBTREE], &snap->mem) ||
			    !xset_addto(&pe->xs[CGS_SET_SUBTREE_DELTA],
					cx->s[CGS_SET_SUBTREE_DELTA],
					&snap->mem))
				goto fail;
			for (int k = 0; k < 4; k++)
				snap->xv[parent[i]].s[k] = x_set(pe, k);
		}
	}
	snap->n = a.n;
	snap->totals = t;
	mem_trim(&snap->mem);
	size_t used = a.n * sizeof(struct sent);
	vec_clear(&a);
	if (sc->ents.cap - used > used + BIG_BYTES) /* see sbuf_get() */
		sbuf_free(&sc->ents);
	scratch_put(snap->pool, sc);
	*out = snap;
	return 0;
fail:
	vec_clear(&a);
	scratch_put(snap->pool, sc);
	snap->gen = 0; /* what its chunks hold is not known */
	cgs_snapshot_free(snap);
	return rc;
}

CGS_EXPORT size_t cgs_snapshot_count(const struct cgs_snapshot *s)
{
	return s ? s->n : 0;
}

CGS_EXPORT const struct cgs_cgroup_stats *
cgs_snapshot_get(const struct cgs_snapshot *s, size_t i)
{
	return s && i < s->n ? &s->v[i] : NULL;
}

CGS_EXPORT const struct cgs_rollup_totals *
cgs_snapshot_totals(const struct cgs_snapshot *s)
{
	return s ? &s->totals : NULL;
}

/* Its buffers go to the pool when that is open and empty (the first
 * of two snapshots alive freed is kept, the other one freed). */
CGS_EXPORT void cgs_snapshot_free(struct cgs_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->cm && i < s->xn; i++) {
		free(s->cm[i].v[0]);
		free(s->cm[i].v[1]);
	}
	free(s->cm);
	s->cm = NULL;
	struct cgsi_snap_pool *p = s->pool;
	if (p) {
		pthread_mutex_lock(&p->lock);
		bool keep = !p->closed && !p->spare;
		if (keep)
			p->spare = s;
		pthread_mutex_unlock(&p->lock);
		pool_unref(p, false);
		if (keep)
			return;
	}
	snap_destroy(s);
}

/* The extra sets of cgroup i, set `set`: NULL when all zero. */
static int x_of(const struct cgs_snapshot *s, size_t i,
		enum cgs_counter_set set, const struct xref **out)
{
	if (!s || i >= s->n || (unsigned)set > CGS_SET_SUBTREE_DELTA)
		return -EINVAL;
	*out = &s->xv[i].s[set];
	return 0;
}

CGS_EXPORT int cgs_snapshot_signals(const struct cgs_snapshot *s, size_t i,
				    enum cgs_counter_set set,
				    struct cgs_signal_counts *out)
{
	const struct xref *x;
	if (!out || !CGSI_OUT_OK(out) || x_of(s, i, set, &x) < 0)
		return -EINVAL;
	struct cgs_signal_counts c = { .sz = sizeof(c) };
	if (x->p && x->full)
		memcpy(c.n, x->p->sig, sizeof(c.n));
	else if (x->pk && x->full)
		for (size_t j = 0; j < CGS_SIGNAL_SLOTS; j++)
			c.n[j] = xref_word(x, CGSI_XSET_HIST_WORDS + j);
	return cgsi_out_copy(out, &c, sizeof(c));
}

CGS_EXPORT int cgs_snapshot_hist(const struct cgs_snapshot *s, size_t i,
				 enum cgs_counter_set set,
				 enum cgs_hist_kind k, struct cgs_hist *out)
{
	const struct xref *x;
	if (!out || !CGSI_OUT_OK(out) || (unsigned)k >= CGS_HIST__COUNT ||
	    x_of(s, i, set, &x) < 0)
		return -EINVAL;
	if (!s->hist)
		return -ENODATA;
	struct cgs_hist h;
	if (x->pk) { /* hist k's words only */
		struct cgsi_xset one;
		size_t b0 = offsetof(struct cgsi_xset, hist[k]) / 8,
		       sum = offsetof(struct cgsi_xset, hist_sum_ns[k]) / 8;
		for (unsigned b = 0; b < CGSI_HIST_BUCKETS; b++)
			one.hist[k][b] = xref_word(x, b0 + b);
		one.hist_sum_ns[k] = xref_word(x, sum);
		cgsi_hist_fill(&h, &one, k);
	} else {
		cgsi_hist_fill(&h, x->p, k);
	}
	return cgsi_out_copy(out, &h, sizeof(h));
}

CGS_EXPORT size_t cgs_snapshot_comm_count(const struct cgs_snapshot *s,
					  size_t i, enum cgs_comm_rank by)
{
	if (!s || !s->cm || i >= s->xn || (unsigned)by > CGS_COMMS_BY_EXITS)
		return 0;
	return s->cm[i].n[by];
}

CGS_EXPORT const struct cgs_comm *cgs_snapshot_comm(const struct cgs_snapshot *s,
						    size_t i,
						    enum cgs_comm_rank by,
						    size_t j)
{
	if (j >= cgs_snapshot_comm_count(s, i, by))
		return NULL;
	return &s->cm[i].v[by][j];
}
