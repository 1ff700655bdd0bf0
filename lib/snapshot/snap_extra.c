/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A snapshot's extra sets (histograms and signal counts, packed or
 * dense: see struct xref) and command summaries: copied from a node,
 * added up, listed.
 */
#include <stdlib.h>

#include "snapshot/snap_int.h"

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
uint64_t cgsi_xref_word(const struct xref *x, size_t i)
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
static void xpair_masks(const struct cgsi_xnode *x, const uint64_t *cand,
			bool full, uint64_t *self, uint64_t *delta)
{
	size_t w = xwords(full);
	for (size_t k = 0; k < xmasks(full); k++) {
		uint64_t c = cand[k], sm = 0, dm = 0;
		if (w < (k + 1) * 64) /* not past the set's words */
			c &= (1ull << (w - k * 64)) - 1;
		for (; c; c &= c - 1) {
			unsigned bit = (unsigned)__builtin_ctzll(c);
			const uint64_t *v = cgsi_xw(x, k * 64 + bit);
			if (!v)
				continue;
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
static bool xpair_pack(struct xref *d, struct cgsi_xnode *x,
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
			uint64_t *v = cgsi_xw(x, k * 64 +
					      (unsigned)__builtin_ctzll(bm));
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
bool cgsi_xset_addto(struct xref *d, struct xref s, struct snap_mem *m)
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

/* Dense subtree sets, the first w words, of a node with retired
 * descendants: sub = carry + cum, subd = carry - carry_base (the self
 * delta is added after); with `advance` carry_base = carry. cp: the
 * carry pair (NULL: zeros). */
static void xpair_subtree(struct cgsi_xset *sub, struct cgsi_xset *subd,
			  const struct cgsi_xnode *x, struct cgsi_xpair *cp,
			  size_t w, bool advance)
{
	uint64_t *s = (uint64_t *)sub, *d = (uint64_t *)subd;
	for (size_t i = 0; i < w; i++) {
		const uint64_t *v = cgsi_xw(x, i);
		s[i] = v ? v[0] : 0;
	}
	if (!cp) {
		memset(d, 0, w * sizeof(*d));
		return;
	}
	uint64_t(*c)[2] = cp->w;
	for (size_t i = 0; i < w; i++) {
		s[i] += c[i][0];
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
bool cgsi_snap_copy_x(struct sent *e, struct cgsi_cgnode *n, bool idle,
		      bool advance, struct snap_mem *m)
{
	if (!n->x)
		return true;
	bool full = n->sigs;
	struct xref *o = e->xs;
	uint64_t self[XMASKS_MAX], delta[XMASKS_MAX];
	xpair_masks(n->x, n->xnz, full, self, delta);
	if (!xpair_pack(&o[CGS_SET_SELF], n->x, self, full, false,
			false, m) ||
	    (!idle && !xpair_pack(&o[CGS_SET_SELF_DELTA], n->x, delta,
				  full, true, advance, m)))
		return false;
	if (!e->sub)
		return true;
	if (!xset_make(&o[CGS_SET_SUBTREE], full, m) ||
	    !xset_make(&o[CGS_SET_SUBTREE_DELTA], full, m))
		return false;
	xpair_subtree(o[CGS_SET_SUBTREE].p, o[CGS_SET_SUBTREE_DELTA].p, n->x,
		      n->carry ? n->carry->x : NULL, xwords(full), advance);
	xref_add(o[CGS_SET_SUBTREE_DELTA].p, o[CGS_SET_SELF_DELTA]);
	return true;
}

/* Copies a node's k summaries into *dst (false on ENOMEM). */
bool cgsi_snap_copy_tops(struct cgsi_topk **dst, const struct cgsi_topk *src,
			 unsigned k)
{
	*dst = calloc(k, sizeof(**dst));
	if (!*dst)
		return false;
	for (unsigned i = 0; i < k; i++)
		if (src[i].slots && cgsi_topk_dup(&(*dst)[i], &src[i]) < 0) {
			cgsi_tops_free(*dst, k);
			*dst = NULL;
			return false;
		}
	return true;
}

/* An entry of a ranking as the API shows it: e the summary's (NULL: the
 * (other) entry) into the struct at v. */
typedef void rank_put_fn(void *v, const struct cgsi_topk_entry *e,
			 uint64_t value, uint64_t error, uint64_t max_each);

static void put_comm(void *v, const struct cgsi_topk_entry *e,
		     uint64_t value, uint64_t error, uint64_t max_each)
{
	struct cgs_comm *c = v;
	c->sz = sizeof(*c);
	if (e)
		memcpy(c->comm, e->key, sizeof(c->comm) - 1);
	c->other = !e;
	c->value = value;
	c->error = error;
	c->max_each = max_each;
}

static void put_exe(void *v, const struct cgsi_topk_entry *e,
		    uint64_t value, uint64_t error, uint64_t max_each)
{
	struct cgs_exe *x = v;
	x->sz = sizeof(*x);
	if (e) { /* the key: (dev, inode), as rollup.c adds it */
		memcpy(&x->dev, e->key, sizeof(x->dev));
		memcpy(&x->inode, e->key + sizeof(x->dev), sizeof(x->inode));
	}
	x->other = !e;
	x->value = value;
	x->error = error;
	x->max_each = max_each;
}

/*
 * A ranking as the API shows it: the `show` (0: all held) largest lower
 * bounds, then (other) for the rest: its value a lower bound (the total
 * minus the listed counts), its error the listed errors, max_each what no
 * folded command can exceed (the summary's floor, or a held command not
 * shown).
 */
static int list_one(void **vp, size_t *np, const struct cgsi_topk *t,
		    unsigned show, size_t size, rank_put_fn *put)
{
	size_t held = t->size;
	struct cgsi_topk_entry *all = calloc(held ? held : 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	uint64_t total = 0, bound = 0;
	held = cgsi_topk_list(t, all, held, &total, &bound);
	size_t k = show && show < held ? show : held;
	char *v = calloc(k + 1, size);
	if (!v) {
		free(all);
		return -ENOMEM;
	}
	uint64_t listed = 0, errs = 0, max_each = bound;
	for (size_t j = 0; j < k; j++) {
		put(v + j * size, &all[j], all[j].count - all[j].err,
		    all[j].err, 0);
		listed += all[j].count;
		errs += all[j].err;
	}
	for (size_t j = k; j < held; j++)
		max_each = CGS_MAX(max_each, all[j].count);
	size_t n = k;
	if (k < held || total > listed || bound)
		put(v + n++ * size, NULL, total > listed ? total - listed : 0,
		    errs, max_each);
	free(all);
	*vp = v;
	*np = n;
	return 0;
}

/* k rankings t into v[0..k) (n entries each; what was made is in v
 * whatever the outcome, for the snapshot to free). */
static int list_k(void **v, size_t *n, const struct cgsi_topk *t, unsigned k,
		  unsigned show, size_t size, rank_put_fn *put)
{
	for (unsigned r = 0; r < k; r++)
		if (t[r].slots && /* else never made: nothing counted by it */
		    list_one(&v[r], &n[r], &t[r], show, size, put) < 0)
			return -ENOMEM;
	return 0;
}

int cgsi_snap_list_comms(struct snap_comms *c, const struct cgsi_topk *t,
			 unsigned show)
{
	void *v[CGSI_NCOMM] = { 0 };
	int rc = list_k(v, c->n, t, CGSI_NCOMM, show, sizeof(*c->v[0]),
			put_comm);
	for (unsigned r = 0; r < CGSI_NCOMM; r++)
		c->v[r] = v[r];
	return rc;
}

int cgsi_snap_list_exes(struct snap_exes *c, const struct cgsi_topk *t,
			unsigned show)
{
	void *v[CGSI_NEXE] = { 0 };
	int rc = list_k(v, c->n, t, CGSI_NEXE, show, sizeof(*c->v[0]),
			put_exe);
	for (unsigned r = 0; r < CGSI_NEXE; r++)
		c->v[r] = v[r];
	return rc;
}
