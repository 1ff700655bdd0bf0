/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a snapshot answers: its cgroups, totals, extra sets, rankings. */
#include "snapshot/snap_int.h"

size_t cgs_snapshot_count(const struct cgs_snapshot *s)
{
	return s ? s->n : 0;
}

const struct cgs_cgroup_stats *
cgs_snapshot_get_cgroup(const struct cgs_snapshot *s, size_t i)
{
	return s && i < s->n ? &s->v[i] : NULL;
}

const struct cgs_rollup_totals *
cgs_snapshot_get_totals(const struct cgs_snapshot *s)
{
	return s ? &s->totals : NULL;
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

int cgs_snapshot_get_signals(const struct cgs_snapshot *s, size_t i,
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
			c.n[j] = cgsi_xref_word(x, CGSI_XSET_HIST_WORDS + j);
	return cgsi_out_copy(out, &c, sizeof(c));
}

int cgs_snapshot_get_hist(const struct cgs_snapshot *s, size_t i,
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
			one.hist[k][b] = cgsi_xref_word(x, b0 + b);
		one.hist_sum_ns[k] = cgsi_xref_word(x, sum);
		cgsi_hist_fill(&h, &one, k);
	} else {
		cgsi_hist_fill(&h, x->p, k);
	}
	return cgsi_out_copy(out, &h, sizeof(h));
}

size_t cgs_snapshot_comm_count(const struct cgs_snapshot *s,
			       size_t i, enum cgs_comm_rank by)
{
	if (!s || !s->cm || i >= s->xn || (unsigned)by > CGS_COMMS_BY_EXITS)
		return 0;
	return s->cm[i].n[by];
}

const struct cgs_comm *cgs_snapshot_get_comm(const struct cgs_snapshot *s,
					 size_t i,
					 enum cgs_comm_rank by,
					 size_t j)
{
	if (j >= cgs_snapshot_comm_count(s, i, by))
		return NULL;
	return &s->cm[i].v[by][j];
}

size_t cgs_snapshot_exe_count(const struct cgs_snapshot *s, size_t i,
			      enum cgs_exe_rank by)
{
	if (!s || !s->ex || i >= s->xn || (unsigned)by >= CGSI_NEXE)
		return 0;
	return s->ex[i].n[by];
}

const struct cgs_exe *cgs_snapshot_get_exe(const struct cgs_snapshot *s,
					   size_t i, enum cgs_exe_rank by,
					   size_t j)
{
	if (j >= cgs_snapshot_exe_count(s, i, by))
		return NULL;
	return &s->ex[i].v[by][j];
}

/* the names before 1.3 (CGSTATS_1.0, 1.1): <cgstats/deprecated.h> */
CGSI_ALIAS(cgs_snapshot_get, cgs_snapshot_get_cgroup);
CGSI_ALIAS(cgs_snapshot_totals, cgs_snapshot_get_totals);
CGSI_ALIAS(cgs_snapshot_signals, cgs_snapshot_get_signals);
CGSI_ALIAS(cgs_snapshot_hist, cgs_snapshot_get_hist);
CGSI_ALIAS(cgs_snapshot_comm, cgs_snapshot_get_comm);
