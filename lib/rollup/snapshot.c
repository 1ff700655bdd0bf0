/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Snapshots (slow path): copy each shard's nodes under its lock (taken
 * once per shard), then without any lock: fold deep cgroups, merge the
 * shards' copies by (path, incarnation), add missing ancestors, sort in
 * path order ('/' sorting before every other byte gives a pre-order walk
 * of the tree), mark removed directories (stat), and sum subtrees in one
 * pass with a stack of ancestors. Deltas are kept per node (a baseline
 * copied at each snapshot and the peaks since it), so they survive
 * folding and merging unchanged.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "rollup/counters.h"
#include "rollup/rollup_int.h"

struct sent {
	char *path;
	size_t len;
	unsigned depth;
	uint64_t ino;
	bool unknown, superseded, removed;
	struct cgs_counters self, self_d, carry, carry_d;
	uint64_t inferred, inferred_d;
	struct cgsi_x4 *x; /* self, self_d, carry, carry_d; NULL: zeros */
	struct cgsi_topk *comms; /* [2] self, cumulative; NULL: none */
};

/* A cgroup's rankings (by enum cgs_comm_rank). */
struct snap_comms {
	struct cgs_comm *v[2];
	size_t n[2];
};

/* The counters a cgs_cgroup_stats points to. */
struct snap_counters {
	struct cgs_counters self, subtree, self_delta, subtree_delta;
};

struct cgs_snapshot {
	size_t n;
	struct cgs_cgroup_stats *v;
	struct snap_counters *cv;
	char **paths;
	struct cgsi_x4 **xv; /* per cgroup, enum cgs_counter_set order;
			      * NULL: zeros */
	size_t xn;           /* entries of xv (owned as soon as set) */
	struct snap_comms *cm; /* [xn] with opts.comms, else NULL */
	bool hist;           /* CGS_ROLLUP_HISTOGRAMS */
	struct cgs_rollup_totals totals;
};

struct vec {
	struct sent *v;
	size_t n, cap;
};

static struct sent *vec_push(struct vec *a)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;
		struct sent *nv = realloc(a->v, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		a->v = nv;
		a->cap = nc;
	}
	struct sent *e = &a->v[a->n++];
	memset(e, 0, sizeof(*e));
	return e;
}

static void vec_free(struct vec *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].path);
		free(a->v[i].x);
		cgsi_comms_free(a->v[i].comms);
	}
	free(a->v);
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

static int sent_cmp(const void *pa, const void *pb)
{
	const struct sent *a = pa, *b = pb;
	if (a->unknown != b->unknown)
		return a->unknown ? 1 : -1;
	int c = path_cmp(a->path, b->path);
	if (c)
		return c;
	/* same path: older incarnations first, so that the current one is
	 * the ancestor its descendants attach to */
	if (a->superseded != b->superseded)
		return a->superseded ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

static bool same_cgroup(const struct sent *a, const struct sent *b)
{
	if (a->unknown || b->unknown)
		return a->unknown && b->unknown;
	return !strcmp(a->path, b->path) &&
	       (a->ino == b->ino || !a->ino || !b->ino);
}

/* Sort and merge duplicates in place. */
static void sort_merge(struct vec *a)
{
	qsort(a->v, a->n, sizeof(*a->v), sent_cmp);
	size_t w = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (w && same_cgroup(&a->v[w - 1], &a->v[i])) {
			struct sent *d = &a->v[w - 1], *s = &a->v[i];
			cgsi_counters_add(&d->self, &s->self);
			cgsi_counters_add(&d->self_d, &s->self_d);
			cgsi_counters_add(&d->carry, &s->carry);
			cgsi_counters_add(&d->carry_d, &s->carry_d);
			d->inferred += s->inferred;
			d->inferred_d += s->inferred_d;
			if (s->comms && !d->comms) {
				d->comms = s->comms;
			} else if (s->comms) {
				cgsi_topk_merge(&d->comms[0], &s->comms[0]);
				cgsi_topk_merge(&d->comms[1], &s->comms[1]);
				cgsi_comms_free(s->comms);
			}
			if (s->x && !d->x) {
				d->x = s->x;
			} else if (s->x) {
				for (int k = 0; k < 4; k++)
					cgsi_xset_add(&d->x->s[k], &s->x->s[k]);
				free(s->x);
			}
			if (!d->ino)
				d->ino = s->ino;
			d->superseded = d->superseded && s->superseded;
			free(s->path);
			continue;
		}
		a->v[w++] = a->v[i];
	}
	a->n = w;
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

/* Copies n's extra sets into e (allocated: false on ENOMEM). */
static bool copy_x(struct sent *e, struct cgsi_cgnode *n, bool advance)
{
	if (!n->x)
		return true;
	e->x = malloc(sizeof(*e->x));
	if (!e->x)
		return false;
	struct cgsi_xset *c = n->x->s, *o = e->x->s;
	o[0] = c[0];
	cgsi_xset_sub(&o[1], &c[0], &c[1]);
	o[2] = c[2];
	cgsi_xset_sub(&o[3], &c[2], &c[3]);
	if (advance) {
		c[1] = c[0];
		c[3] = c[2];
	}
	return true;
}

static void copy_node(struct sent *e, struct cgsi_cgnode *n, bool advance)
{
	e->len = n->len;
	e->depth = n->depth;
	e->ino = n->ino;
	e->unknown = n->unknown;
	e->superseded = !n->hashed;
	e->self = n->cum;
	cgsi_counters_sub(&e->self_d, &n->cum, &n->base);
	e->self_d.hiwater_rss_kb_max = n->ivl_rss;
	e->self_d.hiwater_vm_kb_max = n->ivl_vm;
	e->carry = n->carry;
	cgsi_counters_sub(&e->carry_d, &n->carry, &n->carry_base);
	e->carry_d.hiwater_rss_kb_max = n->carry_ivl_rss;
	e->carry_d.hiwater_vm_kb_max = n->carry_ivl_vm;
	e->inferred = n->inferred;
	e->inferred_d = n->inferred - n->inferred_base;
	n->reported = n->cum.tasks + n->cum.tgid_records;
	if (advance) {
		n->inferred_base = n->inferred;
		n->base = n->cum;
		n->carry_base = n->carry;
		n->ivl_rss = n->ivl_vm = 0;
		n->carry_ivl_rss = n->carry_ivl_vm = 0;
	}
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

static int fold(struct vec *a, unsigned depth)
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
	}
	return 0;
}

static bool path_present(const struct vec *a, const char *p)
{
	struct sent key = { .path = (char *)p };
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct sent *m = &a->v[mid];
		int c = m->unknown ? 1 : path_cmp(m->path, key.path);
		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Every cgroup's ancestors appear, so subtree sums have a home. */
static int add_ancestors(struct vec *a)
{
	size_t n0 = a->n;
	for (size_t i = 0; i < n0; i++) {
		if (a->v[i].unknown || a->v[i].path[0] != '/')
			continue;
		for (unsigned d = 0; d < a->v[i].depth; d++) {
			size_t pl = prefix_len(a->v[i].path, d);
			char *p = strndup(a->v[i].path, pl);
			if (!p)
				return -ENOMEM;
			struct vec head = { a->v, n0, n0 };
			if (path_present(&head, p)) {
				free(p);
				continue;
			}
			struct sent *e = vec_push(a);
			if (!e) {
				free(p);
				return -ENOMEM;
			}
			e->path = p;
			e->len = pl;
			e->depth = d;
		}
	}
	if (a->n != n0)
		sort_merge(a);
	return 0;
}

static void mark_removed(const struct cgs_rollup *r, struct vec *a)
{
	char dir[PATH_MAX + 64];
	for (size_t i = 0; i < a->n; i++) {
		struct sent *e = &a->v[i];
		if (e->unknown)
			continue;
		bool gone;
		uint64_t ino = cgsi_cg_ino(r, e->path, dir, sizeof(dir), &gone);
		e->removed = e->superseded || gone || (ino && e->ino &&
						       ino != e->ino);
		if (!e->ino && !e->removed)
			e->ino = ino;
	}
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
	if (a->unknown || b->unknown)
		return false;
	if (a->len == 1 && a->path[0] == '/')
		return b->len > 1 && b->path[0] == '/';
	return b->len > a->len && !memcmp(a->path, b->path, a->len) &&
	       b->path[a->len] == '/';
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
	struct cgs_snapshot *snap = calloc(1, sizeof(*snap));
	if (!snap)
		return -ENOMEM;
	struct vec a = { 0 };
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	rc = -ENOMEM;

	pthread_mutex_lock(&r->snap_lock);
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *s = &r->shards[i];
		bool ok = true;
		pthread_mutex_lock(&s->lock);
		/* allocate first, then copy: a failure leaves the baseline of
		 * this shard untouched */
		size_t need = a.n + s->cgs.count;
		if (need > a.cap) {
			struct sent *nv = realloc(a.v, need * sizeof(*nv));
			if (nv) {
				a.v = nv;
				a.cap = need;
			} else {
				ok = false;
			}
		}
		for (struct cgsi_cgnode *n = s->cgs.first; ok && n;
		     n = n->next) {
			char *p = strndup(n->path, n->len);
			if (!p) {
				ok = false;
				break;
			}
			struct sent *e = vec_push(&a);
			e->path = p;
			cgsi_oom_update(r, s, n);
			if (!copy_x(e, n, !o.no_delta) || !copy_comms(e, n)) {
				ok = false;
				break;
			}
			copy_node(e, n, !o.no_delta);
		}
		cgsi_rollup_shard_totals(&t, s);
		pthread_mutex_unlock(&s->lock);
		if (!ok) {
			pthread_mutex_unlock(&r->snap_lock);
			goto fail;
		}
	}
	pthread_mutex_unlock(&r->snap_lock);

	if (o.fold_depth)
		fold(&a, o.fold_depth);
	sort_merge(&a);
	if (add_ancestors(&a) < 0)
		goto fail;
	mark_removed(r, &a);

	snap->v = calloc(a.n ? a.n : 1, sizeof(*snap->v));
	snap->cv = calloc(a.n ? a.n : 1, sizeof(*snap->cv));
	snap->paths = calloc(a.n ? a.n : 1, sizeof(*snap->paths));
	snap->xv = calloc(a.n ? a.n : 1, sizeof(*snap->xv));
	snap->xn = snap->xv ? a.n : 0;
	if (r->o.comms)
		snap->cm = calloc(a.n ? a.n : 1, sizeof(*snap->cm));
	snap->hist = !!(r->o.flags & CGS_ROLLUP_HISTOGRAMS);
	size_t *stack = calloc(a.n ? a.n : 1, sizeof(*stack));
	ssize_t *parent = calloc(a.n ? a.n : 1, sizeof(*parent));
	if (!snap->v || !snap->cv || !snap->paths || !snap->xv || !stack ||
	    !parent || (r->o.comms && !snap->cm)) {
		free(stack);
		free(parent);
		goto fail;
	}
	size_t top = 0;
	for (size_t i = 0; i < a.n; i++) {
		struct sent *e = &a.v[i];
		struct cgs_cgroup_stats *c = &snap->v[i];
		struct snap_counters *k = &snap->cv[i];
		while (top && !is_ancestor(&a.v[stack[top - 1]], e))
			top--;
		parent[i] = top ? (ssize_t)stack[top - 1] : -1;
		stack[top++] = i;
		c->path = e->path;
		snap->paths[i] = e->path;
		c->depth = e->unknown ? 0 : e->depth;
		c->ino = e->ino;
		c->removed = e->removed;
		c->sz = sizeof(*c);
		k->self = e->self;
		k->self_delta = e->self_d;
		c->inferred = e->inferred;
		c->inferred_delta = e->inferred_d;
		k->subtree = e->self;
		cgsi_counters_add(&k->subtree, &e->carry);
		k->subtree_delta = e->self_d;
		cgsi_counters_add(&k->subtree_delta, &e->carry_d);
		k->self.sz = k->subtree.sz = sizeof(struct cgs_counters);
		k->self_delta.sz = k->subtree_delta.sz = k->self.sz;
		c->self = &k->self;
		c->subtree = &k->subtree;
		c->self_delta = &k->self_delta;
		c->subtree_delta = &k->subtree_delta;
		if (!e->unknown)
			t.cgroups++;
		if (e->x) { /* node order (self, self_d, carry, carry_d) to
			     * set order (self, subtree, self_d, subtree_d) */
			struct cgsi_xset *x = e->x->s, sd = x[1];
			x[1] = x[0];
			cgsi_xset_add(&x[1], &x[2]);
			x[2] = sd;
			cgsi_xset_add(&x[3], &sd);
			snap->xv[i] = e->x;
			e->x = NULL;
		}
		if (e->comms && list_comms(&snap->cm[i], e->comms, o.comms) < 0) {
			free(stack);
			free(parent);
			goto fail;
		}
	}
	for (size_t i = a.n; i-- > 0;)
		if (parent[i] >= 0) {
			cgsi_counters_add(&snap->cv[parent[i]].subtree,
					  &snap->cv[i].subtree);
			cgsi_counters_add(&snap->cv[parent[i]].subtree_delta,
					  &snap->cv[i].subtree_delta);
			struct cgsi_x4 *cx = snap->xv[i], **px;
			px = &snap->xv[parent[i]];
			if (cx && !*px && !(*px = calloc(1, sizeof(**px)))) {
				free(stack);
				free(parent);
				goto fail;
			}
			if (cx) {
				cgsi_xset_add(&(*px)->s[CGS_SET_SUBTREE],
					      &cx->s[CGS_SET_SUBTREE]);
				cgsi_xset_add(&(*px)->s[CGS_SET_SUBTREE_DELTA],
					      &cx->s[CGS_SET_SUBTREE_DELTA]);
			}
		}
	free(stack);
	free(parent);
	for (size_t i = 0; i < a.n; i++)
		a.v[i].path = NULL; /* owned by snap now */
	snap->n = a.n;
	snap->totals = t;
	vec_free(&a);
	*out = snap;
	return 0;
fail:
	vec_free(&a);
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

CGS_EXPORT void cgs_snapshot_free(struct cgs_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->paths && i < s->n; i++)
		free(s->paths[i]);
	for (size_t i = 0; s->xv && i < s->xn; i++)
		free(s->xv[i]);
	for (size_t i = 0; s->cm && i < s->xn; i++) {
		free(s->cm[i].v[0]);
		free(s->cm[i].v[1]);
	}
	free(s->cm);
	free(s->xv);
	free(s->paths);
	free(s->v);
	free(s->cv);
	free(s);
}

/* The extra sets of cgroup i, set `set`: NULL when all zero. */
static int x_of(const struct cgs_snapshot *s, size_t i,
		enum cgs_counter_set set, const struct cgsi_xset **out)
{
	if (!s || i >= s->n || (unsigned)set > CGS_SET_SUBTREE_DELTA)
		return -EINVAL;
	*out = s->xv[i] ? &s->xv[i]->s[set] : NULL;
	return 0;
}

CGS_EXPORT int cgs_snapshot_signals(const struct cgs_snapshot *s, size_t i,
				    enum cgs_counter_set set,
				    struct cgs_signal_counts *out)
{
	const struct cgsi_xset *x;
	if (!out || !CGSI_OUT_OK(out) || x_of(s, i, set, &x) < 0)
		return -EINVAL;
	struct cgs_signal_counts c = { .sz = sizeof(c) };
	if (x)
		memcpy(c.n, x->sig, sizeof(c.n));
	return cgsi_out_copy(out, &c, sizeof(c));
}

CGS_EXPORT int cgs_snapshot_hist(const struct cgs_snapshot *s, size_t i,
				 enum cgs_counter_set set,
				 enum cgs_hist_kind k, struct cgs_hist *out)
{
	const struct cgsi_xset *x;
	if (!out || !CGSI_OUT_OK(out) || (unsigned)k >= CGS_HIST__COUNT ||
	    x_of(s, i, set, &x) < 0)
		return -EINVAL;
	if (!s->hist)
		return -ENODATA;
	struct cgs_hist h;
	cgsi_hist_fill(&h, x, k);
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
