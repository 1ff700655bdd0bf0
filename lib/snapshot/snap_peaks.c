/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A snapshot's delay peaks (peaks.h): per cgroup, for each set of
 * enum cgs_counter_set, the longest delay of each class and when it
 * happened. Copied from the nodes with their counters, merged like them
 * (shards, folding), the subtree sets from the children up; the maximum
 * takes the place of the sum.
 */
#include "snapshot/snap_int.h"

static struct snap_pk *pk_new(struct snap_mem *m)
{
	struct snap_pk *p = mem_alloc(m, sizeof(*p));
	if (p)
		memset(p, 0, sizeof(*p));
	return p;
}

bool cgsi_snap_copy_pk(struct sent *e, struct cgsi_cgnode *n, bool advance,
		       struct snap_mem *m)
{
	struct snap_pk *p = e->pk = pk_new(m);
	if (!p)
		return false;
	struct cgsi_dpk *d = n->dpk, *c = n->carry ? n->carry->dpk : NULL;
	if (d) {
		cgsi_pkset_merge(&d->cum, &d->ivl);
		p->s[CGS_SET_SELF] = d->cum;
		p->s[CGS_SET_SELF_DELTA] = d->ivl;
	}
	p->s[CGS_SET_SUBTREE] = p->s[CGS_SET_SELF];
	p->s[CGS_SET_SUBTREE_DELTA] = p->s[CGS_SET_SELF_DELTA];
	if (c) {
		cgsi_pkset_merge(&c->cum, &c->ivl);
		cgsi_pkset_merge(&p->s[CGS_SET_SUBTREE], &c->cum);
		cgsi_pkset_merge(&p->s[CGS_SET_SUBTREE_DELTA], &c->ivl);
	}
	if (advance) {
		if (d)
			memset(&d->ivl, 0, sizeof(d->ivl));
		if (c)
			memset(&c->ivl, 0, sizeof(c->ivl));
	}
	return true;
}

bool cgsi_snap_pk_add(struct sent *d, const struct sent *s,
		      struct snap_mem *m)
{
	if (!s->pk)
		return true;
	if (!d->pk && !(d->pk = pk_new(m)))
		return false;
	for (int k = 0; k < 4; k++)
		cgsi_pkset_merge(&d->pk->s[k], &s->pk->s[k]);
	return true;
}

bool cgsi_snap_pk_up(struct sent *p, const struct sent *c,
		     struct snap_mem *m)
{
	if (!c->pk)
		return true;
	if (!p->pk && !(p->pk = pk_new(m)))
		return false;
	cgsi_pkset_merge(&p->pk->s[CGS_SET_SUBTREE], &c->pk->s[CGS_SET_SUBTREE]);
	cgsi_pkset_merge(&p->pk->s[CGS_SET_SUBTREE_DELTA],
			 &c->pk->s[CGS_SET_SUBTREE_DELTA]);
	return true;
}

int cgs_snapshot_get_delay_peaks(const struct cgs_snapshot *s, size_t i,
				 enum cgs_counter_set set,
				 struct cgs_delay_peaks *out)
{
	if (!s || !out || !CGSI_OUT_OK(out) || i >= s->n ||
	    (unsigned)set > CGS_SET_SUBTREE_DELTA)
		return -EINVAL;
	struct cgs_delay_peaks v;
	memset(&v, 0, sizeof(v));
	v.sz = sizeof(v);
	v.nclasses = CGS_DELAY__COUNT;
	const struct snap_pk *p = s->xv[i].pk;
	for (unsigned c = 0; p && c < CGS_DELAY__COUNT; c++) {
		v.c[c].max_ns = p->s[set].max[c];
		v.c[c].at_ns = p->s[set].at[c];
	}
	return cgsi_out_copy(out, &v, sizeof(v));
}
