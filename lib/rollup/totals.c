/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the rollup says of itself: its hierarchy and attribution source,
 * and its totals (records, attribution counters, fork tracker and kernel
 * source counters, summed over the shards). */
#include "attribute/ksrc.h"
#include "rollup/rollup_int.h"

CGS_EXPORT const char *cgs_rollup_hierarchy(const struct cgs_rollup *r)
{
	return r ? r->mount.hier : NULL;
}

CGS_EXPORT enum cgs_attribution cgs_rollup_attribution(
	const struct cgs_rollup *r)
{
	return r && r->ksrc ? CGS_ATTRIBUTION_KERNEL : CGS_ATTRIBUTION_PROC;
}

CGS_EXPORT const char *cgs_rollup_kernel_error(const struct cgs_rollup *r)
{
	return r && !r->ksrc && r->kerr[0] ? r->kerr : NULL;
}

/* `unattributed` is what the unknown bucket holds, whichever way records
 * got there (a lookup, a cache entry pointing at it, a replayed path):
 * read from its counters, so the hot path counts nothing extra. */
static void add_stats(struct cgs_rollup_totals *t, const struct cgsi_rshard *s)
{
	t->records += s->st.records;
	t->unattributed += s->unknown->cum.tasks + s->unknown->cum.tgid_records;
	t->via_ancestor += s->st.via_ancestor;
	t->via_fork_parent += s->st.via_fork_parent;
	t->via_cache += s->st.via_cache;
	t->via_proc += s->st.via_proc;
	t->via_parent += s->st.via_parent;
	t->inferred += s->st.inferred;
	t->via_kernel += s->st.via_kernel;
	t->kernel_unmatched += s->st.kernel_fallback;
	t->proc_reads += s->st.proc_reads;
	t->cache_entries += s->cache.count;
	t->comm_own += s->st.comm_own;
	t->oom_unreadable += s->st.oom_unreadable;
}

/* Fork tracker totals; a snapshot also drains the connector (lock order:
 * shard, then tracker, as on the slow path). */
static void add_fork_stats(struct cgs_rollup_totals *t, struct cgs_rollup *r)
{
	struct cgsi_forks *f = r->forks;
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	cgsi_forks_drain_locked(f, cgsi_rollup_now(r));
	t->fork_tracking = 1;
	t->fork_events = f->events;
	t->fork_drops = f->drops;
	pthread_mutex_unlock(&f->lock);
}

/* Kernel source counters (its own locks; taken after a shard's). */
static void add_kernel_stats(struct cgs_rollup_totals *t, struct cgs_rollup *r)
{
	t->attribution = cgs_rollup_attribution(r);
	t->oom_source = r->oom_source;
	t->histograms = !!(r->o.flags & CGS_ROLLUP_HISTOGRAMS);
	t->comms = r->o.comms;
	t->refused = __atomic_load_n(&r->refused, __ATOMIC_RELAXED);
	if (!r->ksrc)
		return;
	struct cgsi_ksrc_stats k;
	cgsi_ksrc_stats(r->ksrc, &k);
	t->kernel_lost = k.lost;
	t->kernel_expired = k.expired + k.evicted;
	t->kernel_waits = k.waits;
	t->kernel_unresolved = k.unresolved;
	t->kernel_ringbuf = k.ring_bytes;
	t->kernel_cgroup_ids = cgsi_ksrc_ids(r->ksrc);
}

void cgsi_rollup_shard_totals(struct cgs_rollup_totals *t,
			      const struct cgsi_rshard *s)
{
	add_stats(t, s);
	if (s == &s->r->shards[0]) {
		add_fork_stats(t, s->r);
		add_kernel_stats(t, s->r);
	}
}

/* `cgroups` here counts cgroup nodes per shard (a cgroup seen by k shards
 * counts k times, removed incarnations count until retired); a snapshot's
 * totals count distinct cgroups. */
CGS_EXPORT int cgs_rollup_get_totals(struct cgs_rollup *r,
				     struct cgs_rollup_totals *out)
{
	if (!r || !out || !CGSI_OUT_OK(out))
		return -EINVAL;
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *s = &r->shards[i];
		pthread_mutex_lock(&s->lock);
		add_stats(&t, s);
		t.cgroups += s->cgs.count - 1; /* minus the unknown bucket */
		pthread_mutex_unlock(&s->lock);
	}
	add_fork_stats(&t, r);
	add_kernel_stats(&t, r);
	return cgsi_out_copy(out, &t, sizeof(t));
}

/* 1.0's name (CGSTATS_1.0), the same function: <cgstats/deprecated.h> */
CGS_EXPORT int cgs_rollup_totals(struct cgs_rollup *r,
				 struct cgs_rollup_totals *out)
	__attribute__((alias("cgs_rollup_get_totals")));
