/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Snapshots (slow path). Under each shard's lock (taken once per shard):
 * keep the shard's node list in path order (nodes created since the last
 * snapshot are sorted and merged in), and copy each node's counters
 * straight into the snapshot's counter array. Then, holding only the
 * rollup's snap_lock: removal checks (snap_removed.c: a bounded round-robin
 * slice of stat()s, the kernel source's rmdir events). Then without any
 * lock: fold deep cgroups, merge the shards' sorted runs by (path,
 * incarnation) ('/' sorting before every other byte gives a pre-order
 * walk of the tree), add missing ancestors in one pass, and sum subtrees
 * in one pass with a stack of ancestors. Entries being sorted are small
 * (the counters stay where they were copied), so a snapshot of 100,000
 * cgroups moves each counter once. Deltas are kept per node (a baseline
 * copied at each snapshot and the peaks since it), so they survive
 * folding and merging unchanged. The memory it takes, its extra sets and
 * what it answers: snap_pool.c, snap_extra.c, snap_access.c.
 */
#include <stdlib.h>

#include "attribute/ksrc.h"
#include "rollup/counters.h"
#include "snapshot/snap_int.h"

/* The delta of every cgroup idle since the last snapshot (most of them
 * on most hosts): not a copy of zeros each, nothing to add to the
 * parents' subtree deltas. */
static const struct cgs_counters zero_counters = {
	.sz = sizeof(struct cgs_counters),
};

/* The entries' command and executable summaries (the storage is the
 * scratch's, the paths the snapshot's). */
static void vec_clear(struct vec *a)
{
	for (size_t i = 0; i < a->n; i++) {
		cgsi_tops_free(a->v[i].comms, CGSI_NCOMM);
		cgsi_tops_free(a->v[i].exes, CGSI_NEXE);
	}
	a->n = 0;
}

/* A cgroup's k summaries seen by two shards: *s folded into *d (a
 * summary never made, zeroed, is empty: nothing to fold, or taken). */
static void merge_tops(struct cgsi_topk **d, struct cgsi_topk **s,
		       unsigned k)
{
	if (!*s)
		return;
	if (!*d) {
		*d = *s;
	} else {
		for (unsigned i = 0; i < k; i++) {
			struct cgsi_topk *dt = &(*d)[i], *st = &(*s)[i];
			if (!st->slots)
				continue;
			if (!dt->slots) {
				*dt = *st;
				memset(st, 0, sizeof(*st));
			} else {
				cgsi_topk_merge(dt, st);
			}
		}
		cgsi_tops_free(*s, k);
	}
	*s = NULL;
}

static const struct cgs_counters *self_delta_of(const struct sent *e)
{
	return e->zd || !e->k->self_delta ? &zero_counters : e->k->self_delta;
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
	if (!s->zd && s->k->self_delta) {
		struct cgs_counters *dd = own_delta(d, m);
		if (!dd)
			return -ENOMEM;
		cgsi_counters_add(dd, s->k->self_delta);
	}
	if (!xset_addto(&d->xs[CGS_SET_SELF], s->xs[CGS_SET_SELF], m) ||
	    !xset_addto(&d->xs[CGS_SET_SELF_DELTA], s->xs[CGS_SET_SELF_DELTA],
			m) ||
	    (s->pk && !cgsi_snap_pk_add(d, s, m)))
		return -ENOMEM;
	return 0;
}

/* Sort and merge duplicates in place (a cgroup seen by several shards,
 * cgroups folded into one). */
static int sort_merge(struct vec *a, struct snap_mem *m,
		      struct snap_scratch *sc)
{
	if (cgsi_snap_sort_runs(a, sc) < 0)
		return -ENOMEM;
	size_t w = 0;
	bool again = false; /* a path with several incarnations */
	for (size_t i = 0; i < a->n; i++) {
		enum kin k = w ? kin(&a->v[w - 1], &a->v[i]) : KIN_OTHER;
		again = again || k == KIN_INCARNATION;
		if (k == KIN_SAME) {
			struct sent *d = &a->v[w - 1], *s = &a->v[i];
			if (add_k(d, s, m) < 0)
				return -ENOMEM; /* vec_clear() frees all */
			d->inferred += s->inferred;
			d->inferred_d += s->inferred_d;
			merge_tops(&d->comms, &s->comms, CGSI_NCOMM);
			merge_tops(&d->exes, &s->exes, CGSI_NEXE);
			/* one incarnation (both inodes known): superseded if
			 * any shard saw a newer one; an inode not known may
			 * be a different incarnation's, as before */
			if (d->ino && s->ino)
				d->superseded = d->superseded || s->superseded;
			else
				d->superseded = d->superseded && s->superseded;
			if (!d->ino)
				d->ino = s->ino;
			d->gone = d->gone || s->gone;
			d->folded = d->folded || s->folded;
			continue;
		}
		a->v[w++] = a->v[i];
	}
	a->n = w;
	if (again)
		cgsi_snap_order_incarnations(a);
	return 0;
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
		struct cgs_counters *d = k->self_delta = mem_alloc(m, sizeof(*d));
		if (!d)
			return false;
		cgsi_counters_sub(d, &n->cum, &n->base);
		d->hiwater_rss_kb_max = n->ivl_rss;
		d->hiwater_vm_kb_max = n->ivl_vm;
	}
	struct cgsi_carry *c = n->carry;
	if (c) {
		struct snap_sub *u = e->sub = mem_alloc(m, sizeof(*u));
		if (!u)
			return false;
		u->subtree = c->carry;
		cgsi_counters_add(&u->subtree, &n->cum);
		cgsi_counters_sub(&u->subtree_delta, &c->carry, &c->carry_base);
		u->subtree_delta.hiwater_rss_kb_max = c->ivl_rss;
		u->subtree_delta.hiwater_vm_kb_max = c->ivl_vm;
		if (!idle)
			cgsi_counters_add(&u->subtree_delta, k->self_delta);
	}
	e->inferred = n->inferred;
	e->inferred_d = n->inferred - n->inferred_base;
	uint64_t reported = n->cum.tasks + n->cum.tgid_records;
	if (reported != n->reported) {
		n->reported = reported;
		n->final_gen = g->cur;
	}
	if (advance && !idle) {
		n->inferred_base = n->inferred;
		n->base = n->cum;
		n->ivl_rss = n->ivl_vm = 0;
	}
	if (advance && c) {
		c->carry_base = c->carry;
		c->ivl_rss = c->ivl_vm = 0;
	}
	return true;
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

/* The nodes created since the last snapshot (the end of t's list not
 * in order), sorted; *nt of them. NULL (and *nt the count) when there are
 * none or on ENOMEM. */
static struct cgsi_cgnode **new_nodes(struct cgsi_cgtab *t, size_t *nt)
{
	size_t n_new = 0;
	for (struct cgsi_cgnode *n = t->last; n && !n->in_order; n = n->prev)
		n_new++;
	*nt = n_new;
	struct cgsi_cgnode **tail = n_new ? malloc(n_new * sizeof(*tail))
					  : NULL;
	if (!tail)
		return NULL;
	struct cgsi_cgnode *n = t->last;
	for (size_t i = n_new; i-- > 0; n = n->prev)
		tail[i] = n;
	qsort(tail, n_new, sizeof(*tail), cgsi_snap_node_pcmp);
	return tail;
}

/* m next in t's list, after *prev. */
static inline void link_after(struct cgsi_cgtab *t, struct cgsi_cgnode **prev,
			      struct cgsi_cgnode *m)
{
	m->prev = *prev;
	m->next = NULL;
	if (*prev)
		(*prev)->next = m;
	else
		t->first = m;
	*prev = m;
	m->in_order = true;
}

/* On ENOMEM in copy_shard(): link what the merge has not reached (the
 * new nodes tail[j..nt), the prefix from p, np of it) after prev. */
static void relink_rest(struct cgsi_cgtab *t, struct cgsi_cgnode **tail,
			size_t nt, size_t j, struct cgsi_cgnode *p, size_t np,
			struct cgsi_cgnode *prev)
{
	for (;;) {
		struct cgsi_cgnode *m;
		if (!np)
			p = NULL;
		if (j < nt && (!p || cgsi_snap_node_cmp(tail[j], p) < 0)) {
			m = tail[j++];
		} else if (p) {
			m = p;
			p = p->next;
			np--;
		} else {
			break;
		}
		link_after(t, &prev, m); /* in order, nearly: sort_runs()
					  * copes */
	}
	t->last = prev;
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
	size_t nt, base = a->n;
	struct cgsi_cgnode **tail = new_nodes(t, &nt);
	struct cgsi_cgnode *p = t->first, *prev = NULL;
	size_t j = 0, np = t->count - nt; /* prefix nodes still to merge */
	if (tail)
		t->first = NULL;
	else
		nt = 0; /* ENOMEM: keep the list as it is */
	*start = 0;
	bool light = false; /* the last node: idle, its entry current */
	for (;;) {
		struct cgsi_cgnode *m;
		if (tail) { /* merge the sorted prefix and the new nodes */
			if (!np)
				p = NULL; /* the prefix ends at the new ones */
			if (!p && j == nt)
				break;
			if (j < nt && (!p || cgsi_snap_node_cmp(tail[j], p) < 0)) {
				m = tail[j++];
			} else {
				m = p;
				p = p->next;
				np--;
			}
			link_after(t, &prev, m);
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
		    !copy_x(e, m, idle, advance, mem) || !copy_tops(&e->comms, m->comms, CGSI_NCOMM) ||
		    !copy_tops(&e->exes, m->exes, CGSI_NEXE) ||
		    !copy_pk(e, m, advance, mem))
			goto enomem;
	}
	if (tail)
		t->last = prev;
	free(tail);
	return true;
enomem:
	if (tail)
		relink_rest(t, tail, nt, j, p, np, prev);
	free(tail);
	return false;
}

/* Room for shard s's nodes in a and in its chunk cb (s->lock held);
 * g->prev is cleared when the chunk is new. NULL on ENOMEM. */
static struct snap_self *shard_room(struct cgsi_rshard *s, struct vec *a,
				    struct snap_scratch *sc, struct sbuf *cb,
				    struct gens *g)
{
	/* allocate first, then copy: a failure leaves the baseline of
	 * this shard untouched */
	size_t need = a->n + s->cgs.count;
	if (need > a->cap) {
		struct sent *nv = cgsi_sbuf_grow(&sc->ents, need * sizeof(*nv),
						 a->n * sizeof(*nv));
		if (!nv)
			return NULL;
		a->v = nv;
		a->cap = sc->ents.cap / sizeof(*nv);
	}
	struct snap_self *cv;
	void *was = cb->p;
	size_t cap = cb->cap;
	cv = cgsi_sbuf_get(cb, (s->cgs.count ? s->cgs.count : 1) * sizeof(*cv));
	if (cv != was || cb->cap != cap)
		g->prev = 0; /* a new chunk */
	return cv;
}

/* Under snap_lock: every shard copied into a (each under its lock), its
 * totals added to t, its removal checks made. -ENOMEM on failure. */
static int copy_shards(struct cgs_rollup *r, struct cgs_snapshot *snap,
		       struct snap_scratch *sc, struct vec *a, bool advance,
		       struct cgs_rollup_totals *t)
{
	pthread_mutex_lock(&r->snap_lock);
	/* a pooled snapshot's chunks still hold what it copied */
	uint64_t prev_gen = snap->gen;
	snap->gen = ++r->snap_gen;
	struct snap_rmplan rp = cgsi_snap_rmplan(r);
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *s = &r->shards[i];
		size_t base = a->n, start = 0;
		struct gens g = { .prev = prev_gen, .cur = snap->gen };
		cgsi_flock_lock(&s->lock);
		struct snap_self *cv = shard_room(s, a, sc, &snap->cvs[i], &g);
		bool ok = cv && copy_shard(r, s, a, cv, advance, &g, &start,
					   &snap->mem);
		bool ids_new = s->ids_new;
		if (ok)
			s->ids_new = false;
		cgsi_rollup_shard_totals(t, s);
		cgsi_flock_unlock(&s->lock);
		if (!ok) {
			pthread_mutex_unlock(&r->snap_lock);
			return -ENOMEM;
		}
		cgsi_snap_check_removed(r, s, a, base, a->n - base, start, &rp,
					ids_new);
	}
	for (size_t i = 0; i < a->n; i++)
		a->v[i].node = NULL; /* may be retired from now on */
	pthread_mutex_unlock(&r->snap_lock);
	return 0;
}

/* The snapshot's arrays for a's entries, and the subtree pass's stack
 * and parents (the pool's buffers hold the last snapshot's data: every
 * entry of v and xv is written by fill(), the added ancestors' counters
 * zeroed here). -ENOMEM on failure. */
static int snap_arrays(struct cgs_rollup *r, struct cgs_snapshot *snap,
		       struct snap_scratch *sc, const struct vec *a,
		       size_t **stack, ssize_t **parent)
{
	size_t nadd = 0;
	for (size_t i = 0; i < a->n; i++)
		nadd += !a->v[i].k;
	size_t nv = a->n ? a->n : 1;
	snap->av = cgsi_sbuf_get(&snap->avb,
				 (nadd ? nadd : 1) * sizeof(*snap->av));
	snap->v = cgsi_sbuf_get(&snap->vb, nv * sizeof(*snap->v));
	snap->xv = cgsi_sbuf_get(&snap->xvb, nv * sizeof(*snap->xv));
	snap->xn = snap->xv ? a->n : 0;
	if (r->o.comms)
		snap->cm = calloc(nv, sizeof(*snap->cm));
	if (r->o.exes)
		snap->ex = calloc(nv, sizeof(*snap->ex));
	snap->hist = !!(r->o.flags & CGS_ROLLUP_HISTOGRAMS);
	*stack = cgsi_sbuf_get(&sc->stack, nv * sizeof(**stack));
	*parent = cgsi_sbuf_get(&sc->parent, nv * sizeof(**parent));
	if (!snap->av || !snap->v || !snap->xv || !*stack || !*parent ||
	    (r->o.comms && !snap->cm) || (r->o.exes && !snap->ex))
		return -ENOMEM;
	memset(snap->av, 0, nadd * sizeof(*snap->av));
	return 0;
}

/* Entry i of the snapshot from e (its own counters k), the subtree sets
 * still its own. */
static void fill_entry(struct cgs_snapshot *snap, size_t i, struct sent *e,
		       struct snap_self *k)
{
	struct cgs_cgroup_stats *c = &snap->v[i];
	*c = (struct cgs_cgroup_stats){ 0 };
	c->path = e->path;
	c->depth = e->unknown ? 0 : e->depth;
	c->ino = e->ino;
	c->removed = !e->unknown && (e->superseded || e->gone);
	c->sz = sizeof(*c);
	c->inferred = e->inferred;
	c->inferred_delta = e->inferred_d;
	k->self.sz = sizeof(struct cgs_counters);
	if (!e->zd && k->self_delta)
		k->self_delta->sz = k->self.sz;
	if (e->sub)
		e->sub->subtree.sz = e->sub->subtree_delta.sz = k->self.sz;
	e->k = k;
	c->self = &k->self;
	c->self_delta = self_delta_of(e);
	c->subtree = sub_of(e, false);
	c->subtree_delta = sub_of(e, true);
	for (int j = 0; j < 4; j++)
		snap->xv[i].s[j] = x_set(e, j);
	snap->xv[i].pk = e->pk;
}

/* Every entry in order, each linked to its parent (parent[i], -1: none;
 * a parent gets subtree sets of its own), counted in t. -ENOMEM on
 * failure. */
static int fill(struct cgs_snapshot *snap, struct vec *a, size_t *stack,
		ssize_t *parent, const struct cgs_snapshot_opts *o,
		struct cgs_rollup_totals *t)
{
	size_t top = 0, ai = 0;
	for (size_t i = 0; i < a->n; i++) {
		struct sent *e = &a->v[i];
		struct snap_self *k = e->k ? e->k : &snap->av[ai++];
		while (top && !cgsi_snap_is_ancestor(&a->v[stack[top - 1]], e))
			top--;
		parent[i] = top ? (ssize_t)stack[top - 1] : -1;
		if (parent[i] >= 0 && !a->v[parent[i]].sub) {
			/* a parent's subtree sets are sums of their own */
			struct sent *pe = &a->v[parent[i]];
			if (!own_subtree(pe, &snap->mem))
				return -ENOMEM;
			snap->v[parent[i]].subtree = &pe->sub->subtree;
			snap->v[parent[i]].subtree_delta =
				&pe->sub->subtree_delta;
		}
		stack[top++] = i;
		fill_entry(snap, i, e, k);
		if (!e->unknown)
			t->cgroups++;
		if (e->comms &&
		    cgsi_snap_list_comms(&snap->cm[i], e->comms, o->comms) < 0)
			return -ENOMEM;
		if (e->exes &&
		    cgsi_snap_list_exes(&snap->ex[i], e->exes,
					(unsigned)CGS_MIN(o->exes, UINT_MAX)) < 0)
			return -ENOMEM;
		if (e->exes) { /* kept with the listing (snap_int.h) */
			snap->ex[i].t = e->exes;
			e->exes = NULL;
		}
	}
	return 0;
}

/* Subtree sums: each entry, from the last, added to its parent's.
 * -ENOMEM on failure. */
static int sum_subtrees(struct cgs_snapshot *snap, struct vec *a,
			const ssize_t *parent)
{
	for (size_t i = a->n; i-- > 0;) {
		if (i >= 2) {
			prefetch_range(snap->v[i - 2].subtree,
				       sizeof(struct cgs_counters));
			if (snap->v[i - 2].subtree_delta != &zero_counters)
				prefetch_range(snap->v[i - 2].subtree_delta,
					       sizeof(struct cgs_counters));
		}
		if (parent[i] < 0)
			continue;
		struct snap_sub *pk = a->v[parent[i]].sub;
		cgsi_counters_add(&pk->subtree, snap->v[i].subtree);
		if (snap->v[i].subtree_delta != &zero_counters)
			cgsi_counters_add(&pk->subtree_delta,
					  snap->v[i].subtree_delta);
		struct sent *pe = &a->v[parent[i]];
		const struct snap_x *cx = &snap->xv[i];
		if (!xset_addto(&pe->xs[CGS_SET_SUBTREE],
				cx->s[CGS_SET_SUBTREE], &snap->mem) ||
		    !xset_addto(&pe->xs[CGS_SET_SUBTREE_DELTA],
				cx->s[CGS_SET_SUBTREE_DELTA], &snap->mem))
			return -ENOMEM;
		for (int k = 0; k < 4; k++)
			snap->xv[parent[i]].s[k] = x_set(pe, k);
		if (a->v[i].pk) {
			if (!cgsi_snap_pk_up(pe, &a->v[i], &snap->mem))
				return -ENOMEM;
			snap->xv[parent[i]].pk = pe->pk;
		}
	}
	return 0;
}

int cgs_rollup_snapshot(struct cgs_rollup *r,
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
	struct cgs_snapshot *snap = cgsi_snap_take(r, &sc);
	if (!snap)
		return -ENOMEM;
	struct vec a = { .v = sc->ents.p,
			 .cap = sc->ents.cap / sizeof(struct sent) };
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	size_t *stack = NULL;
	ssize_t *parent = NULL;
	rc = -ENOMEM;

	if (copy_shards(r, snap, sc, &a, !o.no_delta, &t) < 0)
		goto fail;
	if (o.fold_depth)
		cgsi_snap_fold(&a, o.fold_depth);
	if (sort_merge(&a, &snap->mem, sc) < 0 ||
	    cgsi_snap_add_ancestors(&a, &snap->mem, sc) < 0)
		goto fail;
	cgsi_snap_stat_unvouched(r, &a);
	if (snap_arrays(r, snap, sc, &a, &stack, &parent) < 0 ||
	    fill(snap, &a, stack, parent, &o, &t) < 0 ||
	    sum_subtrees(snap, &a, parent) < 0)
		goto fail;
	snap->n = a.n;
	t.snapshot_gen = snap->gen;
	t.no_delta = o.no_delta;
	snap->totals = t;
	cgsi_snap_mem_trim(&snap->mem);
	size_t used = a.n * sizeof(struct sent);
	vec_clear(&a);
	if (sc->ents.cap - used > used + BIG_BYTES) /* see cgsi_sbuf_get() */
		cgsi_sbuf_free(&sc->ents);
	cgsi_snap_scratch_put(snap->pool, sc);
	*out = snap;
	return 0;
fail:
	vec_clear(&a);
	cgsi_snap_scratch_put(snap->pool, sc);
	snap->gen = 0; /* what its chunks hold is not known */
	cgs_snapshot_free(snap);
	return rc;
}
