/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The /proc fallback attribution source: an exit's cgroup found after the
 * fact (process cache, /proc/<tgid>/cgroup, the parent, the fork
 * ancestry, else the unknown bucket, counted), where the kernel source
 * cannot load or has no verified entry. The steps, their error and the
 * bound on moves: docs/design/attribution-fallback.md.
 */
#include <sys/stat.h>

#include "attribute/attr.h"
#include "attribute/mounts.h"
#include "attribute/proc_cgroup.h"
#include "attribute/proc_stat.h"
#include "util/common.h"

static int read_proc(struct cgsi_attr *a, struct cgsi_ashard *s,
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

/*
 * cgroup v1 shows an exiting task (a zombie too) in the root cgroup: on a
 * v1 hierarchy a "/" read for an exiting process, or one that would move a
 * cached process to the root, says nothing of where it ran. (cgroup2
 * keeps the real path, " (deleted)" once removed.)
 */
static bool v1_exit_root(const struct cgsi_attr *a, const struct cgsi_ashard *s,
			 int n)
{
	return n == 1 && s->path[0] == '/' && strcmp(a->mount->hier, "v2");
}

/* The owner's node of cgroup s->path (len bytes): by its id (inode)
 * when known, else by path with CGSI_INTERN_* flags. */
static void *intern(struct cgsi_attr *a, struct cgsi_ashard *s, size_t len,
		    uint64_t ino, unsigned flags, uint64_t now)
{
	return ino ? a->ops->intern_id(a->ctx, s->idx, s->path, len, ino, now)
		   : a->ops->intern(a->ctx, s->idx, s->path, len, flags, now);
}

/* Node of the path read_proc() just left in s->path (n bytes). */
static void *intern_read(struct cgsi_attr *a, struct cgsi_ashard *s, int n,
			 uint64_t now)
{
	return intern(a, s, (size_t)n, 0,
		      CGSI_INTERN_PROC |
			      (s->deleted ? CGSI_INTERN_DELETED : 0),
		      now);
}

static void mark_exit(struct cgsi_attr *a, struct cgsi_pentry *e,
		      uint32_t key, uint64_t now)
{
	e->dead_ms = now;
	e->reaped = 0;
	cgsi_deaths_mark(&a->deaths, key, now);
}

static void *revalidate(struct cgsi_attr *a,
				      struct cgsi_ashard *s,
				      struct cgsi_pentry *e, uint32_t key,
				      const struct cgs_record *rec,
				      uint64_t now, bool count);

/*
 * Whether a dead entry (within grace) must look at /proc again before it
 * answers: not if /proc/<tgid> was already seen gone; yes if it was last
 * read before the death was known, or more than CGSI_DEAD_RECHECK_MS ago.
 * A pid comes round again only after the pid allocator wrapped (about a
 * second under the heaviest churn), so a process that reused the pid is
 * found in /proc by the re-read, while the late records of the dead one
 * cost at most one read per shard per CGSI_DEAD_RECHECK_MS.
 */
static bool dead_recheck(const struct cgsi_pentry *e, uint64_t now)
{
	return !e->gone && (e->resolved_ms <= e->dead_ms ||
			    now >= e->resolved_ms + CGSI_DEAD_RECHECK_MS);
}

static void *seen_elsewhere(struct cgsi_attr *a,
					  struct cgsi_ashard *s,
					  const struct cgs_record *rec,
					  uint32_t key, uint64_t now,
					  bool *dropped, uint64_t *dead_ms);

/*
 * The parent's cgroup: this shard's entry for ppid, else its /proc, else
 * (reaped, this shard lagging behind) another shard's entry if one saw
 * it alive (seen_elsewhere(), which may drop s->lock: *dropped).
 */
static void *parent_cg(struct cgsi_attr *a,
				     struct cgsi_ashard *s, uint32_t ppid,
				     uint64_t now, bool *dropped)
{
	if (!ppid)
		return NULL;
	struct cgsi_pcache_policy pol = { &a->deaths, now, a->grace_ms };
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
		return revalidate(a, s, e, ppid, NULL, now, false);
	uint32_t gen = cgsi_death_gen(cgsi_deaths_load(&a->deaths, ppid));
	int n = read_proc(a, s, ppid);
	if (n == -ENOENT) {
		/* answered as a late thread record of the parent would be:
		 * the child exited while the parent was there (else ac_ppid
		 * would be its reaper) */
		struct cgs_record pr = { .kind = CGS_KIND_THREAD,
					 .pid = ppid, .tgid = ppid };
		uint64_t dead = 0;
		return seen_elsewhere(a, s, &pr, ppid, now, dropped, &dead);
	}
	if (n < 0)
		return NULL;
	void *cg = intern_read(a, s, n, now);
	if (!cg)
		return NULL;
	e = cgsi_pcache_insert(&s->cache, ppid, cg, &pol);
	if (e) {
		e->gen = gen & CGSI_DEATH_GEN_MASK;
		e->resolved_ms = now;
	}
	return cg;
}

/* Lifetime of the task of rec in ms, for the fork-time check (forks.c):
 * the thread group's for a process exit, the thread's otherwise. */
static uint64_t life_ms(const struct cgs_record *rec)
{
	uint64_t us = rec->kind == CGS_KIND_PROCESS && rec->tgetime_us
			      ? rec->tgetime_us
			      : rec->etime_us;
	return us / 1000u;
}

/* Age in ms of rec's thread group when the record was made: a process
 * exit's life (life_ms()), else the group's age the record carries
 * (ac_tgetime, v12+); 0 when the record tells none. */
static uint64_t group_age_ms(const struct cgs_record *rec)
{
	return rec->kind == CGS_KIND_PROCESS ? life_ms(rec)
					     : rec->tgetime_us / 1000u;
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
	int n = read_proc(a, s, h->pid);
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
	struct cgsi_pcache_policy pol = { &a->deaths, now, a->grace_ms };
	if (e) {
		if (!cgsi_pentry_dead(e, &a->deaths, &since)) {
			cgsi_pentry_repoint(&s->cache, e, cg);
			e->resolved_ms = now;
		}
	} else if ((e = cgsi_pcache_insert(&s->cache, h->pid, cg, &pol))) {
		e->gen = gen & CGSI_DEATH_GEN_MASK;
		e->resolved_ms = now;
	}
	return cg;
}

/* Step 4: walk the fork ancestors of a reaped process. */
static void *ancestors_cg(struct cgsi_attr *a,
					struct cgsi_ashard *s,
					struct cgsi_fork_hop *hop, int n,
					uint64_t now)
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
static void *fork_parent_cg(struct cgsi_attr *a,
					  struct cgsi_ashard *s,
					  const struct cgs_record *rec,
					  uint32_t key, uint64_t now)
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

/*
 * Whether a thread record's thread group started after `death_ms`, the time
 * we accounted the exit of the process that had this pid before. The group
 * started at (its exit - ac_tgetime), and its exit happened at most
 * CGSI_LATE_LAG_MS before we read it; a late record of the dead process
 * started before the death. Under heavy churn pids come round within the
 * grace period, and this is what tells the two apart (v12+ records).
 */
#define CGSI_LATE_LAG_MS 50u
static bool group_started_after(const struct cgs_record *rec,
				uint64_t death_ms, uint64_t now)
{
	if (rec->kind != CGS_KIND_THREAD || !rec->tgetime_us)
		return false;
	uint64_t age = group_age_ms(rec);
	return age < now && now - age > death_ms + CGSI_LATE_LAG_MS;
}

/*
 * Whether rec's thread group had surely started by `t`: it started its
 * age before its exit, which was at most the records' lag before now, so
 * now - age is never earlier than the truth. False when the record tells
 * no age.
 */
static bool started_by(const struct cgs_record *rec, uint64_t t,
		       uint64_t now)
{
	uint64_t age = group_age_ms(rec);
	return age && (age >= now || now - age <= t);
}

/*
 * Copy into buf the cgroup of o's entry for the process of rec (key) if
 * o read it from the process's own /proc (not inferred) and o's answer
 * would hold: alive; seen gone from /proc (reaped) with no exit accounted
 * since; or for a thread or TGID record dead once since and within
 * grace_ms, the group started before that death (the rules o applies to
 * its own late records, attribute()); o->lock held. Returns
 * the path's length (0: no such entry), *ino its cgroup's inode, *dead_ms
 * when the process died (0: alive as far as o knows).
 */
static size_t peer_entry(struct cgsi_attr *a, struct cgsi_ashard *o,
			 const struct cgs_record *rec, uint32_t key,
			 uint64_t now, char *buf, size_t size, uint64_t *ino,
			 uint64_t *dead_ms)
{
	struct cgsi_pentry *e = cgsi_pcache_find(&o->cache, key);
	uint64_t since;
	*dead_ms = 0;
	size_t len = 0;
	const char *path = NULL;
	if (e && !e->inferred && e->cg && e->cg != o->unknown)
		path = a->ops->path(e->cg, &len, ino);
	if (!path || len >= size)
		return 0;
	if (cgsi_pentry_dead(e, &a->deaths, &since)) {
		uint32_t gen = cgsi_death_gen(cgsi_deaths_load(&a->deaths, key));
		uint32_t deaths = (gen - e->gen) & CGSI_DEATH_GEN_MASK;
		uint64_t died = e->dead_ms ? e->dead_ms : since ? since : now;
		if (rec->kind == CGS_KIND_PROCESS) {
			/* only seen gone from /proc (reaped), no exit
			 * accounted since: this is the exit (a process exits
			 * once); it dies now, on this shard */
			if (deaths)
				return 0;
		} else if (deaths > 1 || now > since + a->grace_ms ||
			   group_started_after(rec, died, now)) {
			return 0;
		} else {
			*dead_ms = died;
		}
	}
	memcpy(buf, path, len + 1);
	return len;
}

/*
 * A process reaped before this shard looked may have been seen alive by
 * another shard (its threads exited on other CPUs, or its exit was
 * accounted there before these late thread records): that shard's entry
 * (peer_entry()), its path interned into this shard's table. Only tried
 * when the shared death slot says some shard read the process alive since
 * its last death (so the records of a churn, reaped before anyone looked,
 * cost nothing here); then a busy shard is waited for, not skipped (it
 * may be in the middle of a /proc read): this shard's lock is dropped
 * first and taken again after, so that no two shard locks are ever waited
 * for while holding one (snapshots and retirement take them in index
 * order). Nothing of this shard is kept across the gap: the caller
 * re-finds its cache entry (miss()).
 */
static void *seen_elsewhere(struct cgsi_attr *a,
					  struct cgsi_ashard *s,
					  const struct cgs_record *rec,
					  uint32_t key, uint64_t now,
					  bool *dropped, uint64_t *dead_ms)
{
	if (a->nshards < 2 || !cgsi_deaths_was_seen(&a->deaths, key))
		return NULL;
	char buf[sizeof(s->path)];
	uint64_t ino = 0;
	size_t len = 0;
	for (unsigned i = 0; i < a->nshards && !len; i++) {
		struct cgsi_ashard *o = &a->sh[i];
		if (o == s)
			continue;
		bool busy = pthread_mutex_trylock(o->lock) != 0;
		if (busy) {
			s->st.peer_waits++;
			*dropped = true;
			pthread_mutex_unlock(s->lock);
			pthread_mutex_lock(o->lock);
		}
		len = peer_entry(a, o, rec, key, now, buf, sizeof(buf), &ino,
				 dead_ms);
		pthread_mutex_unlock(o->lock);
		if (busy)
			pthread_mutex_lock(s->lock);
	}
	if (!len)
		return NULL;
	memcpy(s->path, buf, len + 1);
	return intern(a, s, len, ino, 0, now);
}

/*
 * A time (CLOCK_BOOTTIME ms) by which rec's thread group had surely
 * started, 0 when the record tells none. Two bounds, the lower taken:
 *  - its age before its exit, which was before now: now - age. Records
 *    read late push it later, by their lag;
 *  - the start its task had, in epoch seconds (btime): the kernel takes
 *    whole seconds of the exit time and of the task's age, so the task
 *    started less than a second after btime, and a group's leader no
 *    later than any of its threads. This one does not move with the lag.
 *    real_ms (CLOCK_REALTIME) is read before now (CLOCK_BOOTTIME), so
 *    that a delay between the two reads moves the bound later, never
 *    earlier; a step of the wall clock between the exit and now moves it
 *    too (forward: a holder may be taken for another, counted as a guess).
 */
static uint64_t started_by_boot_ms(const struct cgs_record *rec,
				   uint64_t now, uint64_t real_ms)
{
	uint64_t age = group_age_ms(rec);
	uint64_t by = age && age < now ? now - age : 0;
	uint64_t b = (rec->btime_s + 1u) * 1000u;
	if (rec->btime_s && b <= real_ms && real_ms - b < now) {
		uint64_t bb = now - (real_ms - b);
		by = by ? CGS_MIN(by, bb) : bb;
	}
	return by;
}

/*
 * Whether the process that holds pid `key` now, whose /proc/<key>/cgroup
 * was just read, is provably not the one rec is of: that one was reaped
 * and the pid handed out again before its record was read (at once with
 * ns_last_pid, as CRIU restores pids; after a wrap of the pid space when
 * the records lag). Told by /proc/<key>/stat, read after the cgroup so
 * that a holder that changes in between is seen:
 *  - a process exit's process is exiting (PF_EXITING, set at the start of
 *    do_exit() and kept by the zombie): a holder without it is another;
 *  - the record's thread group had started by started_by_boot_ms(): a
 *    holder that started later (plus the stat's 10 ms ticks and slack) is
 *    another. A record with neither age nor btime is checked by the first
 *    rule alone.
 * A process exit whose holder was a zombie at the read (its pidfd) needs
 * the stat only when that bound lies before now by more than the ticks
 * and slack: else no holder can be proven younger. That skips the short
 * lives of a churn read in time (the common case); a zombie that reused
 * the pid while the records lagged (it lived and exited meanwhile) is
 * caught when the process it replaced lived longer than the lag, or
 * started a second or more before it. A stat gone since the read cannot
 * confirm the holder either. The caller then treats the process as
 * reaped (another shard's entry, the parent: a guess, counted), never as
 * what the holder's /proc says.
 */
#define CGSI_START_SLACK_MS 20u
static bool pid_reused(struct cgsi_attr *a, struct cgsi_ashard *s,
		       const struct cgs_record *rec, uint32_t key, bool pexit)
{
	uint64_t real_ms = cgsi_now_real_ns() / 1000000u;
	uint64_t now = cgsi_now_boot_ms();
	uint64_t by = 0, margin = 0;
	if (a->clk_tck > 0 && (by = started_by_boot_ms(rec, now, real_ms)))
		margin = 1000u / (uint64_t)a->clk_tck + CGSI_START_SLACK_MS;
	if (pexit && s->exited && (!by || by + margin >= now))
		return false;
	struct cgsi_proc_stat st;
	if (cgsi_proc_stat_read(a->proc_root, key, s->text, sizeof(s->text),
				&st) < 0)
		return true;
	if (pexit && !(st.flags & CGSI_PF_EXITING))
		return true;
	if (!st.start_ticks || !by)
		return false;
	return st.start_ticks * 1000u / (uint64_t)a->clk_tck > by + margin;
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
	uint64_t peer_dead = 0; /* seen_elsewhere(): when it died there */
	int n = 0;
	/* fast: only short lives (churn, where the read costs); a process
	 * that lived longer had time to move, and its read is amortised */
	if (a->fast && pexit && a->forks &&
	    life_ms(rec) < a->revalidate_ms &&
	    (cg = fork_parent_cg(a, s, rec, key, now))) {
		s->st.via_fork_parent++;
		via_fp = true;
	} else if ((n = read_proc(a, s, key)) >= 0 &&
		   !(pexit && v1_exit_root(a, s, n) && (n = -ENOENT)) &&
		   !(pid_reused(a, s, rec, key, pexit) && (n = -ENOENT)) &&
		   (cg = intern_read(a, s, n, now))) {
		s->st.via_proc++;
		if (a->forks)
			cgsi_forks_maybe_drain(a->forks, now);
	} else if (n == -ENOENT &&
		   (cg = seen_elsewhere(a, s, rec, key, now, &dropped,
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
		    (cg = parent_cg(a, s, rec->ppid, now, &dropped))) {
			s->st.via_parent++;
		} else if ((first = use_ppid && fp ? 1 : 0) < nhops &&
			   (cg = ancestors_cg(a, s, hop + first, nhops - first,
					      now))) {
			s->st.via_ancestor++;
		} else if (reaper &&
			   (cg = parent_cg(a, s, rec->ppid, now, &dropped))) {
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
 * process (pid_reused()) counts as the process reaped. */
static void *revalidate(struct cgsi_attr *a,
				      struct cgsi_ashard *s,
				      struct cgsi_pentry *e, uint32_t key,
				      const struct cgs_record *rec,
				      uint64_t now, bool count)
{
	int n = read_proc(a, s, key);
	size_t was_len = 0;
	uint64_t was_ino;
	if (n >= 0 && v1_exit_root(a, s, n) && e->cg && e->cg != s->unknown &&
	    a->ops->path(e->cg, &was_len, &was_ino) && was_len > 1)
		n = -ESRCH; /* most likely exiting: keep what was seen */
	if (n >= 0 && rec &&
	    pid_reused(a, s, rec, key, rec->kind == CGS_KIND_PROCESS))
		n = -ENOENT;
	void *cg = n >= 0 ? intern_read(a, s, n, now) : NULL;
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
		if (i == self || pthread_mutex_trylock(o->lock))
			continue; /* busy: its owner is stepping it */
		if (now >= o->reval_next)
			reval_sweep(a, o, now);
		pthread_mutex_unlock(o->lock);
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
			revalidate(a, s, e, e->tgid, NULL, now, false);
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
			 * the answer for a process that is still there */
			if (cgs_unlikely(now >= e->resolved_ms +
						       a->revalidate_ms ||
					 (e->inferred && !pexit))) {
				cg = revalidate(a, s, e, key, rec, now, true);
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
		    started_by(rec, e->dead_ms, now)) {
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
			if (group_started_after(rec, e->dead_ms, now)) {
				/* not a late record: a process that reused the
				 * pid after the death we saw */
				cgsi_pcache_remove(&s->cache, e);
				return miss(a, s, rec, key, pexit, now);
			}
			if (rec->kind != CGS_KIND_TGID && dead_recheck(e, now))
				return revalidate(a, s, e, key, rec, now, true);
			s->st.via_cache++;
			return e->cg;
		}
		cgsi_pcache_remove(&s->cache, e);
	}
	return miss(a, s, rec, key, pexit, now);
}
