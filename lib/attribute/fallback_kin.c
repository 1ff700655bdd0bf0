/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc fallback's steps 3 and 4 (docs/design/attribution-fallback.md):
 * a reaped process's cgroup from its parent or its fork ancestors, and
 * fast attribution by the fork parent (CGS_ROLLUP_FAST_ATTRIBUTION). */
#include "attribute/fallback_int.h"

/* Cache pid -> cg, just read from its /proc (gen: pid's death generation
 * loaded before the read). The entry, or NULL on ENOMEM. */
static struct cgsi_pentry *cache_read(struct cgsi_attr *a,
				      struct cgsi_ashard *s, uint32_t pid,
				      void *cg, uint32_t gen, uint64_t now)
{
	struct cgsi_pcache_policy pol = { &a->deaths, now, a->grace_ms };
	struct cgsi_pentry *e = cgsi_pcache_insert(&s->cache, pid, cg, &pol);
	if (e) {
		e->gen = gen & CGSI_DEATH_GEN_MASK;
		e->resolved_ms = now;
	}
	return e;
}

/*
 * The parent's cgroup: this shard's entry for ppid, else its /proc, else
 * (reaped, this shard lagging behind) another shard's entry if one saw
 * it alive (cgsi_fb_seen_elsewhere(), which may drop s->lock: *dropped).
 */
void *cgsi_fb_parent_cg(struct cgsi_attr *a, struct cgsi_ashard *s,
			uint32_t ppid, uint64_t now, bool *dropped)
{
	if (!ppid)
		return NULL;
	struct cgsi_pentry *e = cgsi_pcache_find(&s->cache, ppid);
	if (e) {
		uint64_t since;
		if (!cgsi_pentry_dead(e, &a->deaths, &since)) {
			if (now < e->resolved_ms + a->revalidate_ms)
				return e->cg;
		} else if (now <= since + a->grace_ms) {
			/* the pid may be a new parent already (reuse) */
			if (!e->dead_ms)
				e->dead_ms = since ? since : now;
			if (!dead_recheck(e, now))
				return e->cg;
		} else {
			cgsi_pcache_remove(&s->cache, e);
			e = NULL;
		}
	}
	if (e)
		return cgsi_fb_revalidate(a, s, e, ppid, NULL, now, false);
	uint32_t gen = cgsi_death_gen(cgsi_deaths_load(&a->deaths, ppid));
	int n = cgsi_fb_read_proc(a, s, ppid);
	if (n == -ENOENT) {
		/* answered as a late thread record of the parent would be:
		 * the child exited while the parent was there (else ac_ppid
		 * would be its reaper) */
		struct cgs_record pr = { .kind = CGS_KIND_THREAD,
					 .pid = ppid, .tgid = ppid };
		uint64_t dead = 0;
		return cgsi_fb_seen_elsewhere(a, s, &pr, ppid, now, dropped, &dead);
	}
	if (n < 0)
		return NULL;
	void *cg = intern_read(a, s, n, now);
	if (cg)
		cache_read(a, s, ppid, cg, gen, now);
	return cg;
}

/*
 * Step 2's companion: cache the parent of a process exit that was just
 * read from /proc. The parent is there (its child is not reaped yet), so
 * this is what it is now; a parent that moved itself before forking (a
 * shell that joined a cgroup, cgexec) and is reaped before its own exit
 * is read is then answered from its own cgroup, not from its parent's
 * (step 3, wrong exactly there). The parent's own first record still
 * reads /proc (e->kin), as it would have without the note, and keeps the
 * noted cgroup only if the parent is reaped by then. One read per parent
 * per shard per revalidate_ms: nothing when the parent is cached already.
 */
void cgsi_fb_note_parent(struct cgsi_attr *a, struct cgsi_ashard *s,
			 uint32_t ppid, uint64_t now)
{
	if (ppid <= 1 || cgsi_pcache_find(&s->cache, ppid))
		return;
	uint32_t gen = cgsi_death_gen(cgsi_deaths_load(&a->deaths, ppid));
	int n = cgsi_fb_read_proc(a, s, ppid);
	void *cg = n >= 0 ? intern_read(a, s, n, now) : NULL;
	struct cgsi_pentry *e = cg ? cache_read(a, s, ppid, cg, gen, now) : NULL;
	if (e)
		e->kin = 1;
}

/*
 * Whether cache entry e (may be NULL) tells the cgroup of fork ancestor h
 * now: alive, /proc/<pid> not seen gone, fresh, and read from /proc after
 * the ancestor's own fork (else it may be a previous holder of the pid).
 */
static bool hop_entry_ok(const struct cgsi_attr *a,
			 const struct cgsi_pentry *e,
			 const struct cgsi_fork_hop *h, uint64_t now)
{
	uint64_t since;
	return e && !cgsi_pentry_dead(e, &a->deaths, &since) && !e->gone &&
	       now < e->resolved_ms + a->revalidate_ms &&
	       (h->seq ? (int32_t)((uint32_t)e->resolved_ms - h->when) >
				 (int32_t)CGSI_FORKS_SLACK_MS
		       : h->cache_ok);
}

/*
 * Cgroup of a fork ancestor: its live cache entry if read from /proc after
 * the ancestor's fork, else /proc/<pid>/cgroup, which counts only if the
 * pid was not forked again meanwhile (re-checked after a drain).
 */
static void *ancestor_cg(struct cgsi_attr *a,
				       struct cgsi_ashard *s,
				       const struct cgsi_fork_hop *h,
				       uint64_t now)
{
	struct cgsi_forks *f = a->forks;
	struct cgsi_pentry *e = cgsi_pcache_find(&s->cache, h->pid);
	uint64_t since;
	if (hop_entry_ok(a, e, h, now))
		return e->cg;
	uint32_t gen = cgsi_death_gen(cgsi_deaths_load(&a->deaths, h->pid));
	int n = cgsi_fb_read_proc(a, s, h->pid);
	if (n < 0)
		return NULL;
	pthread_mutex_lock(&f->lock);
	cgsi_forks_drain_locked(f, now);
	bool same = cgsi_forks_same_locked(f, h->pid, h);
	pthread_mutex_unlock(&f->lock);
	if (!same)
		return NULL;
	void *cg = intern_read(a, s, n, now);
	if (!cg)
		return NULL;
	/* cache it for the siblings (a dead entry still serves the late
	 * records of the process it was resolved for: left alone) */
	if (e) {
		if (!cgsi_pentry_dead(e, &a->deaths, &since)) {
			cgsi_pentry_repoint(&s->cache, e, cg);
			e->resolved_ms = now;
		}
	} else {
		cache_read(a, s, h->pid, cg, gen, now);
	}
	return cg;
}

/* Step 4: walk the fork ancestors of a reaped process. */
void *cgsi_fb_ancestors_cg(struct cgsi_attr *a, struct cgsi_ashard *s,
			   struct cgsi_fork_hop *hop, int n, uint64_t now)
{
	for (int i = 0; i < n; i++) {
		void *cg = ancestor_cg(a, s, &hop[i], now);
		if (cg)
			return cg;
	}
	return NULL;
}

/*
 * Fast attribution of a process exit that missed the cache: its fork
 * parent's cgroup when the fork event (drained first: it is queued before
 * the child runs) names a parent consistent with the record's lifetime and
 * not forked again since, and the parent's cache entry passes
 * hop_entry_ok(). When this shard has no entry for the parent, or one
 * too old or not provably read after the parent's fork (a parent that
 * forks right after its own fork, e.g. after moving itself to its
 * cgroup), the parent's /proc is read instead of the child's
 * (ancestor_cg(): the pid is re-checked against forks after the read) and
 * cached, so a long-lived parent costs one read per shard per
 * revalidate_ms instead of one per child. A parent known dead or reaped:
 * NULL, resolve as without the flag.
 */
void *cgsi_fb_fork_parent_cg(struct cgsi_attr *a, struct cgsi_ashard *s,
			     const struct cgs_record *rec, uint32_t key,
			     uint64_t now)
{
	struct cgsi_forks *f = a->forks;
	struct cgsi_fork_hop h;
	pthread_mutex_lock(&f->lock);
	cgsi_forks_drain_locked(f, now);
	int nhops = cgsi_forks_chain_locked(f, key, life_ms(rec), now, &h, 1);
	pthread_mutex_unlock(&f->lock);
	if (nhops < 1)
		return NULL;
	struct cgsi_pentry *e = cgsi_pcache_find(&s->cache, h.pid);
	if (hop_entry_ok(a, e, &h, now))
		return e->cg;
	uint64_t since;
	if (e && (e->gone || cgsi_pentry_dead(e, &a->deaths, &since)))
		return NULL;
	return ancestor_cg(a, s, &h, now);
}

