/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Delay peaks: per cgroup node, for each delay class, the longest single
 * delay of any of its task records (struct cgs_record's delay[c].max_ns,
 * v15+) and when it happened (delay_max_at_ns, v17). TGID aggregates never
 * count: their max/min are the last thread's, assigned, not compared
 * (kernel/delayacct.c). Made with a node's first record that carries
 * peaks; maxima, not sums, so they stay out of struct cgs_counters' word
 * arithmetic.
 */
#ifndef CGS_ROLLUP_PEAKS_H
#define CGS_ROLLUP_PEAKS_H

#include <stdint.h>
#include <stdlib.h>

#include "cgstats.h"

struct cgsi_pkset {
	uint64_t max[CGS_DELAY__COUNT]; /* ns; 0: none */
	uint64_t at[CGS_DELAY__COUNT];  /* CLOCK_REALTIME ns; 0: unknown */
};

/* A node's (or a carry's) peaks: cum since it was made (up to the last
 * snapshot: the hot path writes ivl only, a snapshot folds ivl in), ivl
 * since the last snapshot that advanced the baseline. */
struct cgsi_dpk {
	struct cgsi_pkset cum, ivl;
};

/* d = the larger of d and s, class by class (a tie keeps a known time). */
static inline void cgsi_pkset_merge(struct cgsi_pkset *d,
				    const struct cgsi_pkset *s)
{
	for (unsigned c = 0; c < CGS_DELAY__COUNT; c++)
		if (s->max[c] > d->max[c] ||
		    (s->max[c] == d->max[c] && !d->at[c])) {
			d->max[c] = s->max[c];
			d->at[c] = s->at[c];
		}
}

/* One task record (hot path): a compare and, rarely, a store per class;
 * unrolled: no loop counter to pay for 8 compares. */
static inline void cgsi_pkset_observe(struct cgsi_pkset *p,
				      const struct cgs_record *r)
{
#pragma GCC unroll 16
	for (unsigned c = 0; c < CGS_DELAY__COUNT; c++)
		if (r->delay[c].max_ns > p->max[c]) {
			p->max[c] = r->delay[c].max_ns;
			p->at[c] = r->delay_max_at_ns[c];
		}
}

/* *pp, made (zeroed) on first need; NULL on ENOMEM. */
static inline struct cgsi_dpk *cgsi_dpk_get(struct cgsi_dpk **pp)
{
	if (!*pp)
		*pp = calloc(1, sizeof(**pp));
	return *pp;
}

/* What a retired node (its peaks n, its carry's nc, either NULL) leaves
 * in its parent's carry d. */
static inline void cgsi_dpk_carry(struct cgsi_dpk *d, const struct cgsi_dpk *n,
				  const struct cgsi_dpk *nc)
{
	const struct cgsi_dpk *v[2] = { n, nc };
	for (int i = 0; i < 2; i++) {
		if (!v[i])
			continue;
		cgsi_pkset_merge(&d->cum, &v[i]->cum);
		cgsi_pkset_merge(&d->cum, &v[i]->ivl);
		cgsi_pkset_merge(&d->ivl, &v[i]->ivl);
	}
}

#endif
