/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc fallback and the other shards: a reaped process another shard
 * saw alive, and whether a pid's holder is provably another process. */
#include "attribute/fallback_int.h"

/*
 * Whether a thread record's thread group started after `death_ms`, the time
 * we accounted the exit of the process that had this pid before. The group
 * started at (its exit - ac_tgetime), and its exit happened at most
 * CGSI_LATE_LAG_MS before we read it; a late record of the dead process
 * started before the death. Under heavy churn pids come round within the
 * grace period, and this is what tells the two apart (v12+ records).
 */
#define CGSI_LATE_LAG_MS 50u
bool cgsi_fb_group_started_after(const struct cgs_record *rec,
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
bool cgsi_fb_started_by(const struct cgs_record *rec, uint64_t t,
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
			   cgsi_fb_group_started_after(rec, died, now)) {
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
void *cgsi_fb_seen_elsewhere(struct cgsi_attr *a, struct cgsi_ashard *s,
			     const struct cgs_record *rec, uint32_t key,
			     uint64_t now, bool *dropped, uint64_t *dead_ms)
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
		bool busy = cgsi_flock_trylock(o->lock) != 0;
		if (busy) {
			s->st.peer_waits++;
			*dropped = true;
			cgsi_flock_unlock(s->lock);
			cgsi_flock_lock(o->lock);
		}
		len = peer_entry(a, o, rec, key, now, buf, sizeof(buf), &ino,
				 dead_ms);
		cgsi_flock_unlock(o->lock);
		if (busy)
			cgsi_flock_lock(s->lock);
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
bool cgsi_fb_pid_reused(struct cgsi_attr *a, struct cgsi_ashard *s,
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

