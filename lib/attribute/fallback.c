/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The /proc fallback attribution source: an exit's cgroup found after the
 * fact (process cache, /proc/<tgid>/cgroup, the parent, the fork
 * ancestry, else the unknown bucket, counted), where the kernel source
 * cannot load or has no verified entry. The steps, their error and the
 * bound on moves: docs/design/attribution-fallback.md.
 */
#include <sys/stat.h>

#include "attribute/fallback_int.h"

int cgsi_fb_read_proc(struct cgsi_attr *a, struct cgsi_ashard *s,
		      uint32_t pid)
{
	s->st.proc_reads++;
	int n = cgsi_proc_cgroup_read(a->proc_root, pid, a->mount->hier,
				      s->text, sizeof(s->text), s->path,
				      sizeof(s->path), &s->deleted,
				      &s->exited);
	if (n >= 0)
		cgsi_deaths_seen(&a->deaths, pid);
	/* " (deleted)" is also a legal cgroup name suffix: the kernel's
	 * marker only if no live directory has the literal name (rare, slow
	 * path: only when the suffix is there) */
	static const char del[] = " (deleted)";
	if (n >= 0 && s->deleted &&
	    (size_t)n + sizeof(del) <= sizeof(s->path)) {
		char dir[sizeof(a->mount->mnt) + sizeof(s->path)];
		memcpy(s->path + n, del, sizeof(del));
		struct stat st;
		if (cgsi_cg_dir(a->mount, s->path, dir, sizeof(dir)) >= 0 &&
		    stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
			s->deleted = false;
			return n + (int)sizeof(del) - 1;
		}
		s->path[n] = '\0';
	}
	return n;
}

static void *miss(struct cgsi_attr *a, struct cgsi_ashard *s,
				const struct cgs_record *rec, uint32_t key,
				bool pexit, uint64_t now)
{
	struct cgsi_pcache_policy pol = { &a->deaths, now, a->grace_ms };
	uint32_t gen = cgsi_death_gen(cgsi_deaths_load(&a->deaths, key));
	void *cg = NULL;
	bool born_dead = false;
	bool via_fp = false, dropped = false;
	uint64_t peer_dead = 0; /* cgsi_fb_seen_elsewhere(): when it died there */
	int n = 0;
	/* fast: only short lives (churn, where the read costs); a process
	 * that lived longer had time to move, and its read is amortised */
	bool tried_fp = a->fast && pexit && a->forks &&
			life_ms(rec) < a->revalidate_ms;
	if (tried_fp && (cg = cgsi_fb_fork_parent_cg(a, s, rec, key, now))) {
		s->st.via_fork_parent++;
		via_fp = true;
	} else if ((n = cgsi_fb_read_proc(a, s, key)) >= 0 &&
		   !(pexit && v1_exit_root(a, s, n) && (n = -ENOENT)) &&
		   !(cgsi_fb_pid_reused(a, s, rec, key, pexit) && (n = -ENOENT)) &&
		   (cg = intern_read(a, s, n, now))) {
		s->st.via_proc++;
		if (pexit && !tried_fp) /* that tried the parent already */
			cgsi_fb_note_parent(a, s, rec->ppid, now);
		if (a->forks)
			cgsi_forks_maybe_drain(a->forks, now);
	} else if (n == -ENOENT &&
		   (cg = cgsi_fb_seen_elsewhere(a, s, rec, key, now, &dropped,
					&peer_dead))) {
		/* reaped, but another shard saw it alive: its own cgroup,
		 * not its reaper's or parent's */
		s->st.via_cache++;
	} else {
		born_dead = true;
		struct cgsi_fork_hop hop[CGSI_FORKS_MAX_HOPS];
		int nhops = 0, first = 0;
		uint32_t fp = 0;
		if (a->forks && rec->kind != CGS_KIND_TGID) {
			/* catch up: this process's fork event is queued */
			struct cgsi_forks *f = a->forks;
			pthread_mutex_lock(&f->lock);
			cgsi_forks_drain_locked(f, now);
			fp = cgsi_forks_parent_locked(f, key, life_ms(rec), now);
			nhops = cgsi_forks_chain_locked(f, key, life_ms(rec), now,
							hop,
							CGSI_FORKS_MAX_HOPS);
			pthread_mutex_unlock(&f->lock);
		}
		/* ac_ppid first when it is the fork parent (or nothing is
		 * known); not when that pid was forked again since (nhops 0:
		 * another process has it now); last when the process was
		 * reparented (ac_ppid is then the reaper) */
		bool use_ppid = !fp || (fp == rec->ppid && nhops > 0);
		bool reaper = fp && fp != rec->ppid;
		if (use_ppid &&
		    (cg = cgsi_fb_parent_cg(a, s, rec->ppid, now, &dropped))) {
			s->st.via_parent++;
		} else if ((first = use_ppid && fp ? 1 : 0) < nhops &&
			   (cg = cgsi_fb_ancestors_cg(a, s, hop + first, nhops - first,
					      now))) {
			s->st.via_ancestor++;
		} else if (reaper &&
			   (cg = cgsi_fb_parent_cg(a, s, rec->ppid, now, &dropped))) {
			s->st.via_parent++;
		} else {
			cg = s->unknown;
		}
	}
	bool inferred = cg != s->unknown && (born_dead || via_fp);
	s->last_inferred = inferred;
	struct cgsi_pentry *raced;
	if (dropped && (raced = cgsi_pcache_find(&s->cache, key)))
		cgsi_pcache_remove(&s->cache, raced); /* never two entries */
	struct cgsi_pentry *e = cgsi_pcache_insert(&s->cache, key, cg, &pol);
	if (e) {
		e->inferred = inferred;
		e->gen = gen & CGSI_DEATH_GEN_MASK;
		e->gone = n == -ENOENT;
		e->resolved_ms = now;
		e->dead_ms = born_dead ? now : peer_dead;
		if (pexit)
			mark_exit(a, e, key, now);
	} else if (pexit) {
		cgsi_deaths_mark(&a->deaths, key, now);
	}
	return cg;
}

/* Re-read /proc/<tgid>/cgroup for a cached entry; for a record of the
 * process (rec, else NULL), a holder of the pid that is provably another
 * process (cgsi_fb_pid_reused()) counts as the process reaped. */
void *cgsi_fb_revalidate(struct cgsi_attr *a, struct cgsi_ashard *s,
			 struct cgsi_pentry *e, uint32_t key,
			 const struct cgs_record *rec, uint64_t now,
			 bool count)
{
	int n = cgsi_fb_read_proc(a, s, key);
	size_t was_len = 0;
	uint64_t was_ino;
	if (n >= 0 && v1_exit_root(a, s, n) && e->cg && e->cg != s->unknown &&
	    a->ops->path(e->cg, &was_len, &was_ino) && was_len > 1)
		n = -ESRCH; /* most likely exiting: keep what was seen */
	if (n >= 0 && rec &&
	    cgsi_fb_pid_reused(a, s, rec, key, rec->kind == CGS_KIND_PROCESS))
		n = -ENOENT;
	void *cg = n >= 0 ? intern_read(a, s, n, now) : NULL;
	e->kin = 0;
	if (cg) {
		cgsi_pentry_repoint(&s->cache, e, cg);
		e->inferred = 0;
		s->last_inferred = false;
		if (count)
			s->st.via_proc++;
	} else {
		/* reaped before we looked again: its last known cgroup */
		if (n == -ENOENT) {
			uint64_t since;
			if (!e->gone && !cgsi_pentry_dead(e, &a->deaths, &since))
				e->reaped = 1;
			e->gone = 1;
			if (!e->dead_ms)
				e->dead_ms = now;
		}
		if (count)
			s->st.via_cache++;
	}
	e->resolved_ms = now;
	return e->cg;
}

/*
 * Keep the bound on moves when the records come too late to look: a
 * process that moved and was reaped before its next record was read can
 * only be answered from what the cache last saw. So live entries are
 * re-read in the background of the records, every CGSI_REVAL_STEP_MS a
 * slice of the table, sized by the time since the last step so that the
 * table is covered every revalidate_ms: each live process costs one /proc
 * read per revalidate_ms per shard, and the cache is never more than
 * revalidate_ms (+ two steps) behind a move, as long as the host has
 * exits: a shard with records also steps the shards that have none
 * (cgsi_fallback_sweep_others()).
 */
#define CGSI_REVAL_STEP_MS 50u
static void reval_sweep(struct cgsi_attr *a, struct cgsi_ashard *s,
			uint64_t now);

void cgsi_fallback_sweep_others(struct cgsi_attr *a, unsigned self,
				uint64_t now)
{
	__atomic_store_n(&a->sweep_next, now + CGSI_REVAL_STEP_MS,
			 __ATOMIC_RELAXED);
	for (unsigned i = 0; i < a->nshards; i++) {
		struct cgsi_ashard *o = &a->sh[i];
		if (i == self || cgsi_flock_trylock(o->lock))
			continue; /* busy: its owner is stepping it */
		if (now >= o->reval_next)
			reval_sweep(a, o, now);
		cgsi_flock_unlock(o->lock);
	}
}

static void reval_sweep(struct cgsi_attr *a, struct cgsi_ashard *s,
			uint64_t now)
{
	/* the cursor moves by the time since the last step (cap slots per
	 * revalidate_ms, the remainder carried over), not by a fixed slice
	 * per step: steps run only when records come, and after a gap (no
	 * exits, or the collector was not scheduled) the one that comes
	 * covers the whole gap */
	uint64_t last = s->reval_last ? s->reval_last
				      : now - CGS_MIN(now, CGSI_REVAL_STEP_MS);
	s->reval_last = now;
	s->reval_next = now + CGSI_REVAL_STEP_MS;
	struct cgsi_pcache *c = &s->cache;
	uint32_t cap = c->mask + 1;
	uint64_t budget = (uint64_t)cap * (now - last) + s->reval_rem;
	uint64_t n = budget / a->revalidate_ms;
	s->reval_rem = budget % a->revalidate_ms;
	if (n >= cap) {
		n = cap;
		s->reval_rem = 0;
	}
	/* an entry comes round again revalidate_ms after its last visit (one
	 * step late at most): re-read at every visit unless read within the
	 * last two steps (by a record), so that none is ever more than
	 * revalidate_ms + two steps old, and none read twice per cycle */
	uint64_t due = CGS_MIN(2 * CGSI_REVAL_STEP_MS, a->revalidate_ms);
	for (uint64_t k = 0; k < n; k++) {
		struct cgsi_pentry *e = &c->slot[s->reval_cursor];
		s->reval_cursor = (s->reval_cursor + 1) & c->mask;
		uint64_t since;
		if (e->tgid && !e->gone && !e->inferred &&
		    now >= e->resolved_ms + due &&
		    !cgsi_pentry_dead(e, &a->deaths, &since))
			cgsi_fb_revalidate(a, s, e, e->tgid, NULL, now, false);
	}
}

static void *attribute(struct cgsi_attr *a,
				     struct cgsi_ashard *s,
				     const struct cgs_record *rec, uint64_t now);

void *cgsi_fallback_node(struct cgsi_attr *a,
				       struct cgsi_ashard *s,
				       const struct cgs_record *rec,
				       uint64_t now, enum cgs_source *how)
{
	s->last_inferred = false;
	void *n = attribute(a, s, rec, now);
	*how = n == s->unknown ? CGS_SOURCE_NONE
			  : s->last_inferred ? CGS_SOURCE_INFERRED
					     : CGS_SOURCE_PROC;
	return n;
}

static void *attribute(struct cgsi_attr *a,
				     struct cgsi_ashard *s,
				     const struct cgs_record *rec, uint64_t now)
{
	if (cgs_unlikely(now >= s->reval_next))
		reval_sweep(a, s, now);
	uint32_t key = rec->tgid ? rec->tgid : rec->pid;
	bool pexit = rec->kind == CGS_KIND_PROCESS;
	if (cgs_unlikely(!key))
		return s->unknown;
	struct cgsi_pentry *e = cgsi_pcache_find(&s->cache, key);
	if (cgs_likely(e != NULL)) {
		uint64_t since;
		void *cg;
		s->last_inferred = e->inferred;
		if (cgs_likely(!cgsi_pentry_dead(e, &a->deaths, &since))) {
			/* inferred at fork time (fast attribution): never
			 * the answer for a process that is still there; read
			 * as a parent only (kin): its own record reads again */
			if (cgs_unlikely(now >= e->resolved_ms +
						       a->revalidate_ms ||
					 (e->inferred && !pexit) || e->kin)) {
				cg = cgsi_fb_revalidate(a, s, e, key, rec, now, true);
			} else {
				s->st.via_cache++;
				cg = e->cg;
			}
			if (pexit)
				mark_exit(a, e, key, now);
			return cg;
		}
		/* Only seen gone from /proc (reaped before its records were
		 * read: a re-read found it so), no exit accounted since, and
		 * the record's process had started by then: this is that
		 * process's exit, not that of a new one with the pid. */
		if (pexit && e->reaped && now <= since + a->grace_ms &&
		    cgsi_death_gen(cgsi_deaths_load(&a->deaths, key)) ==
			    e->gen &&
		    cgsi_fb_started_by(rec, e->dead_ms, now)) {
			s->st.via_cache++;
			mark_exit(a, e, key, now);
			return e->cg;
		}
		/* Dead: late records of it are answered for grace_ms, after
		 * a re-read of /proc when dead_recheck() says so (a process
		 * that reused the pid, or the zombie moved since we last
		 * looked); the TGID record that follows a process exit in the
		 * same message needs none. A second process exit is a new
		 * process (a process exits once). */
		if (!pexit && now <= since + a->grace_ms) {
			if (!e->dead_ms)
				e->dead_ms = since ? since : now;
			if (cgsi_fb_group_started_after(rec, e->dead_ms, now)) {
				/* not a late record: a process that reused the
				 * pid after the death we saw */
				cgsi_pcache_remove(&s->cache, e);
				return miss(a, s, rec, key, pexit, now);
			}
			if (rec->kind != CGS_KIND_TGID && dead_recheck(e, now))
				return cgsi_fb_revalidate(a, s, e, key, rec, now, true);
			s->st.via_cache++;
			return e->cg;
		}
		cgsi_pcache_remove(&s->cache, e);
	}
	return miss(a, s, rec, key, pexit, now);
}
