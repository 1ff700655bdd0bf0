/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the rollup says of itself: its hierarchy and attribution source,
 * and its totals (records, attribution counters, fork tracker and kernel
 * source counters, summed over the shards). */
#include "rollup/rollup_int.h"

const char *cgs_rollup_hierarchy(const struct cgs_rollup *r)
{
	return r ? r->mount.hier : NULL;
}

enum cgs_attribution cgs_rollup_attribution(
const struct cgs_rollup *r)
{
	return r && r->at.ksrc ? CGS_ATTRIBUTION_KERNEL : CGS_ATTRIBUTION_PROC;
}

const char *cgs_rollup_kernel_error(const struct cgs_rollup *r)
{
	return r && !r->at.ksrc && r->at.kerr[0] ? r->at.kerr : NULL;
}

/* `unattributed` is what the unknown bucket holds, whichever way records
 * got there (a lookup, a cache entry pointing at it, a replayed path):
 * read from its counters, so the hot path counts nothing extra. */
static void add_stats(struct cgs_rollup_totals *t, const struct cgsi_rshard *s)
{
	t->records += s->st.records;
	t->unattributed += s->unknown->cum.tasks + s->unknown->cum.tgid_records;
	t->inferred += s->st.inferred;
	cgsi_attr_shard_totals(&s->r->at, (unsigned)(s - s->r->shards), t);
	t->comm_own += s->st.comm_own;
	t->exe_none += s->st.exe_none;
	t->oom_unreadable += s->st.oom_unreadable;
}

/* What the rollup is, then the fork tracker's totals (a snapshot also
 * drains the connector) and the kernel source's counters (their own
 * locks; taken after a shard's). */
static void add_kernel_stats(struct cgs_rollup_totals *t, struct cgs_rollup *r)
{
	t->attribution = cgs_rollup_attribution(r);
	t->oom_source = r->oom_source;
	t->histograms = !!(r->o.flags & CGS_ROLLUP_HISTOGRAMS);
	t->comms = r->o.comms;
	t->exes = r->o.exes;
	t->refused = __atomic_load_n(&r->refused, __ATOMIC_RELAXED);
	cgsi_attr_totals(&r->at, t, cgsi_rollup_now(r));
}

void cgsi_rollup_shard_totals(struct cgs_rollup_totals *t,
			      const struct cgsi_rshard *s)
{
	add_stats(t, s);
	if (s == &s->r->shards[0])
		add_kernel_stats(t, s->r);
}

/* `cgroups` here counts cgroup nodes per shard (a cgroup seen by k shards
 * counts k times, removed incarnations count until retired); a snapshot's
 * totals count distinct cgroups. */
int cgs_rollup_get_totals(struct cgs_rollup *r,
			  struct cgs_rollup_totals *out)
{
	if (!r || !out || !CGSI_OUT_OK(out))
		return -EINVAL;
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *s = &r->shards[i];
		cgsi_flock_lock(&s->lock);
		add_stats(&t, s);
		t.cgroups += s->cgs.count - 1; /* minus the unknown bucket */
		cgsi_flock_unlock(&s->lock);
	}
	add_kernel_stats(&t, r);
	return cgsi_out_copy(out, &t, sizeof(t));
}

/* 1.0's name (CGSTATS_1.0), the same function: <cgstats/deprecated.h> */
int cgs_rollup_totals(struct cgs_rollup *r,
		      struct cgs_rollup_totals *out)
	__attribute__((alias("cgs_rollup_get_totals")));
