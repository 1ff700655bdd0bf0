/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Attribution's one call (attr.h) and the kernel source's side of it:
 * loading the source per the options, and turning a verified cgroup id
 * into the shard's node key (a direct-mapped id cache, then the id's
 * path, interned by id so that incarnations of one path stay apart).
 * Records the kernel source cannot answer go to the /proc fallback
 * (fallback.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/types.h>

#include "attribute/attr.h"
#include "attribute/bpf/exitcg_abi.h"
#include "util/common.h"

static int kernel_open(struct cgsi_attr *a, const struct cgsi_attr_cfg *c)
{
	enum cgs_attribution want = c->want;
	if (want == CGS_ATTRIBUTION_PROC)
		return 0;
	if (want != CGS_ATTRIBUTION_AUTO && want != CGS_ATTRIBUTION_KERNEL) {
		snprintf(a->kerr, sizeof(a->kerr), "unknown attribution %d",
			 (int)want);
		return -EINVAL;
	}
	if (strcmp(a->proc_root, "/proc")) {
		/* a fake proc tree (tests): the kernel's answers are about
		 * the host, not about it */
		snprintf(a->kerr, sizeof(a->kerr), "proc_root is not /proc");
		return want == CGS_ATTRIBUTION_KERNEL ? -EINVAL : 0;
	}
	int rc = cgsi_ksrc_open(&a->ksrc, a->mount, a->nshards, c->shard_cpus,
				c->kernel_ringbuf, c->kernel_wait_ms,
				c->want_comm, c->exe_max, a->kerr,
				sizeof(a->kerr));
	if (rc < 0)
		return want == CGS_ATTRIBUTION_KERNEL ? rc : 0;
	a->kerr[0] = '\0';
	return 0;
}

/* Fork tracking is best effort: without the connector (no privilege, old
 * kernel) attribution works as without the flag; totals say which. */
static void track_forks(struct cgsi_attr *a, bool connect, uint64_t now)
{
	struct cgsi_forks *f = calloc(1, sizeof(*f));
	if (!f)
		return;
	if (cgsi_forks_open(f, a->proc_root, connect, now) < 0) {
		free(f);
		return;
	}
	a->forks = f;
}

int cgsi_attr_open(struct cgsi_attr *a, const struct cgsi_attr_cfg *c)
{
	memset(a, 0, sizeof(*a));
	a->ops = c->ops;
	a->ctx = c->ctx;
	a->proc_root = c->proc_root;
	a->mount = c->mount;
	a->clk_tck = sysconf(_SC_CLK_TCK);
	a->fast = c->fast;
	a->grace_ms = c->grace_ms;
	a->revalidate_ms = c->revalidate_ms;
	a->sh = aligned_alloc(64, sizeof(*a->sh) * c->nshards);
	if (!a->sh)
		return -ENOMEM;
	int rc;
	for (unsigned i = 0; i < c->nshards; i++) {
		struct cgsi_ashard *s = &a->sh[i];
		memset(s, 0, sizeof(*s));
		s->idx = i;
		if ((rc = cgsi_pcache_init(&s->cache, 1024)) < 0)
			return rc;
		s->cache.ref = c->ops->ref;
		a->nshards = i + 1;
	}
	/* the kernel source first: with it, fork tracking would only serve
	 * the rare record whose entry was lost */
	if ((rc = kernel_open(a, c)) < 0)
		return rc;
	/* bounded whatever pid_max (deaths.h); small with the kernel source */
	if ((rc = cgsi_deaths_init(&a->deaths, a->proc_root,
				   a->ksrc ? CGSI_DEATHS_SLOTS_KERNEL
					   : CGSI_DEATHS_SLOTS)) < 0)
		return rc;
	if (c->track_forks && !a->ksrc)
		track_forks(a, !c->forks_injected, c->now);
	return 0;
}

void cgsi_attr_close(struct cgsi_attr *a)
{
	for (unsigned i = 0; a->sh && i < a->nshards; i++)
		cgsi_pcache_fini(&a->sh[i].cache);
	free(a->sh);
	a->sh = NULL;
	a->nshards = 0;
	cgsi_ksrc_close(a->ksrc);
	a->ksrc = NULL;
	if (a->forks) {
		cgsi_forks_close(a->forks);
		free(a->forks);
		a->forks = NULL;
	}
	cgsi_deaths_fini(&a->deaths);
}

void cgsi_attr_bind(struct cgsi_attr *a, unsigned i, struct cgsi_flock *lock,
		    void *unknown)
{
	a->sh[i].lock = lock;
	a->sh[i].unknown = unknown;
}

/* The node of a verified entry's cgroup id, or NULL and *miss why: the
 * shard's cache, else the id's path and its node, cached. */
static void *id_node(struct cgsi_attr *a, struct cgsi_ashard *s,
		     const struct cgsi_kinfo *ki, uint64_t now,
		     enum cgsi_kmiss *miss)
{
	uint64_t id = ki->cgid;
	void *n = cgsi_attr_kcached(s, id);
	if (n)
		return n;
	int len = cgsi_ksrc_path(a->ksrc, id, ki->exit_ns, s->path,
				 sizeof(s->path));
	if (len < 0) {
		*miss = len == -ENOENT	 ? CGSI_KMISS_CG_GONE
			: len == -EAGAIN ? CGSI_KMISS_CG_UNWALKED
			: len == -ESTALE ? CGSI_KMISS_CG_PURGED
					 : CGSI_KMISS_OTHER;
		return NULL;
	}
	n = a->ops->intern_id(a->ctx, s->idx, s->path, (size_t)len, id,
			      cgsi_attr_now(a, now));
	if (n) {
		struct cgsi_kcache_ent *c = cgsi_attr_kslot(s, id);
		c->id = id;
		c->n = n;
		c->gen = s->kgen;
	}
	*miss = CGSI_KMISS_OTHER;
	return n;
}

/* What cgsi_attr_resolve_locked() does not do inline: a TGID record, a
 * record without its entry, an id not cached. A TGID record rides in
 * the message of its group's last exit, accounted just before on this
 * shard. Each record without a node is counted under one reason
 * (kmiss). */
void *cgsi_attr_kernel_node(struct cgsi_attr *a, struct cgsi_ashard *s,
			    const struct cgs_record *rec, bool found,
			    uint64_t now, struct cgsi_attr_ans *ans)
{
	void *n = NULL;
	enum cgsi_kmiss miss = CGSI_KMISS_GROUP;
	if (rec->kind == CGS_KIND_TGID) {
		if (s->k_last_tgid == rec->tgid && s->k_last_gen == s->kgen)
			n = s->k_last_node;
	} else if (found) {
		n = id_node(a, s, &ans->ki, now, &miss);
	} else {
		miss = ans->ki.miss < CGSI_KMISS_N && ans->ki.miss
			       ? (enum cgsi_kmiss)ans->ki.miss
			       : CGSI_KMISS_OTHER;
	}
	if (!n) {
		s->st.kernel_fallback++;
		s->st.kmiss[miss]++;
		return NULL;
	}
	return cgsi_attr_kernel_found(s, rec, n, ans);
}

void cgsi_attr_sweep(struct cgsi_attr *a, unsigned i, uint64_t now)
{
	struct cgsi_pcache *c = &a->sh[i].cache;
	struct cgsi_pcache_policy pol = { &a->deaths, now, a->grace_ms };
	cgsi_pcache_sweep(c, c->mask + 1, &pol);
}

void cgsi_attr_shard_totals(const struct cgsi_attr *a, unsigned i,
			    struct cgs_rollup_totals *t)
{
	const struct cgsi_ashard *s = &a->sh[i];
	t->via_ancestor += s->st.via_ancestor;
	t->via_fork_parent += s->st.via_fork_parent;
	t->via_cache += s->st.via_cache;
	t->via_proc += s->st.via_proc;
	t->via_parent += s->st.via_parent;
	t->via_kernel += s->st.via_kernel;
	t->kernel_unmatched += s->st.kernel_fallback;
	t->kmiss_lost += s->st.kmiss[CGSI_KMISS_LOST];
	t->kmiss_expired += s->st.kmiss[CGSI_KMISS_EXPIRED];
	t->kmiss_mismatch += s->st.kmiss[CGSI_KMISS_MISMATCH];
	t->kmiss_timeout += s->st.kmiss[CGSI_KMISS_TIMEOUT];
	t->kmiss_no_entry += s->st.kmiss[CGSI_KMISS_NO_ENTRY];
	t->kmiss_before_attach += s->st.kmiss[CGSI_KMISS_BEFORE_ATTACH];
	t->kmiss_cgroup_gone += s->st.kmiss[CGSI_KMISS_CG_GONE];
	t->kmiss_cgroup_unwalked += s->st.kmiss[CGSI_KMISS_CG_UNWALKED];
	t->kmiss_cgroup_purged += s->st.kmiss[CGSI_KMISS_CG_PURGED];
	t->kmiss_group += s->st.kmiss[CGSI_KMISS_GROUP];
	t->kmiss_other += s->st.kmiss[CGSI_KMISS_OTHER];
	t->proc_reads += s->st.proc_reads;
	t->cache_entries += s->cache.count;
}

void cgsi_attr_totals(struct cgsi_attr *a, struct cgs_rollup_totals *t,
		      uint64_t now)
{
	struct cgsi_forks *f = a->forks;
	if (f) {
		/* lock order: shard, then tracker, as on the slow path */
		pthread_mutex_lock(&f->lock);
		cgsi_forks_drain_locked(f, now);
		t->fork_tracking = 1;
		t->fork_events = f->events;
		t->fork_drops = f->drops;
		pthread_mutex_unlock(&f->lock);
	}
	if (!a->ksrc)
		return;
	struct cgsi_ksrc_stats k;
	cgsi_ksrc_stats(a->ksrc, &k);
	t->kernel_lost = k.lost;
	t->kernel_expired = k.expired + k.evicted;
	t->kernel_waits = k.waits;
	t->kernel_unresolved = k.unresolved;
	t->kernel_ringbuf = k.ring_bytes;
	t->kernel_cgroup_ids = cgsi_ksrc_ids(a->ksrc);
	t->kernel_cg_lost = k.cg_lost;
	t->kernel_ring_queued = k.ring_queued;
	t->kernel_ring_peak = k.ring_peak;
	t->kernel_ring_slots = k.ring_slots;
	t->kernel_walks = k.walks;
	t->kernel_walk_ms = k.walk_ms_last;
	t->kernel_bpf_stats = k.bpf_stats;
	t->kernel_bpf_exit_ns = k.bpf_exit_ns;
	t->kernel_bpf_exit_runs = k.bpf_exit_cnt;
	t->kernel_bpf_cgroup_ns = k.bpf_cg_ns;
	t->kernel_bpf_cgroup_runs = k.bpf_cg_cnt;
}
