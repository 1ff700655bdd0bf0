/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel attribution source (ksrc.h): records joined with the exit
 * entries the BPF program wrote, and the paths of their cgroup ids. Its
 * other parts: ksrc_open.c, ksrc_cgev.c (ksrc_int.h). */
#ifdef CGS_HAVE_BPF

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attribute/ksrc_int.h"
#include "attribute/ksrc_util.h"
#include "exitcg.skel.h"
#include "util/common.h"

/* Entry at ring index idx (cpu * nslots + position). */
static void entry_of(struct cgsi_kentry *e, const struct cgsi_ksrc *k,
		     size_t idx)
{
	const struct cgsk_exit *x = &k->slots[idx];
	*e = (struct cgsi_kentry){
		.tid = x->tid, .tgid = x->tgid, .csw = x->csw,
		.cgid = x->cgid, .start_ns = x->start_ns,
		.now_ns = x->now_ns, .runtime_ns = x->runtime_ns,
		.pcount = x->pcount, .run_delay = x->run_delay, .minflt = x->minflt,
		.flags = x->type & ~CGSK_EV_TYPE_MASK,
	};
	if (k->comms) {
		memcpy(e->comm, k->comms[idx].comm, sizeof(e->comm));
		e->comm[sizeof(e->comm) - 1] = '\0';
	}
}

/*
 * The common case, without a copy or a hash: a shard reads its CPUs'
 * records in the order they exited, which is the order of their rings, so
 * a record's entry is usually the oldest unread one of a ring. It is
 * verified where the program wrote it; only what the record needs of it
 * is copied out, and only once it is the record's.
 */
static inline __attribute__((always_inline)) bool
claim_head(struct cgsi_ksrc *k, struct kshard *s, const struct cgs_record *rec,
	   int64_t off, struct cgsi_kinfo *ki)
{
	for (unsigned i = 0; i < s->ncpus; i++) {
		struct cgsk_ctl *c = &k->ctl[s->cpus[i]];
		uint64_t t = c->tail;
		if (t == __atomic_load_n(&c->head, __ATOMIC_ACQUIRE))
			continue;
		size_t idx = (size_t)s->cpus[i] * k->nslots +
			     (t & (k->nslots - 1));
		const struct cgsk_exit *x = &k->slots[idx];
		if (x->tid != rec->pid)
			continue;
		if (cgsi_kjoin_verify_in(x, rec, off) < 0)
			continue;
		uint64_t now_ns = x->now_ns;
		ki->cgid = x->cgid;
		ki->flags = x->type & ~CGSK_EV_TYPE_MASK;
		ki->exit_ns = now_ns + CGSI_KJOIN_COARSE_NS;
		if (k->comms) {
			memcpy(ki->comm, k->comms[idx].comm, sizeof(ki->comm));
			ki->comm[sizeof(ki->comm) - 1] = '\0';
		} else {
			ki->comm[0] = '\0';
		}
		if (now_ns > s->join.newest_matched_ns)
			s->join.newest_matched_ns = now_ns;
		s->join.st.matched++;
		/* the slot is read: the program may reuse it */
		__atomic_store_n(&c->tail, t + 1, __ATOMIC_RELEASE);
		return true;
	}
	return false;
}

/* Move what the shard's CPUs wrote into its join table (no syscall). */
static void consume(struct cgsi_ksrc *k, struct kshard *s)
{
	for (unsigned i = 0; i < s->ncpus; i++) {
		unsigned cpu = s->cpus[i];
		struct cgsk_ctl *c = &k->ctl[cpu];
		uint64_t h = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		uint64_t t = c->tail;
		if (t == h)
			continue;
		if (h - t > s->ring_peak)
			s->ring_peak = h - t;
		size_t base = (size_t)cpu * k->nslots;
		for (; t != h; t++) {
			struct cgsi_kentry e;
			entry_of(&e, k, base + (t & (k->nslots - 1)));
			cgsi_kjoin_add(&s->join, &e);
		}
		/* the slots are read: the program may reuse them */
		__atomic_store_n(&c->tail, t, __ATOMIC_RELEASE);
	}
}


static bool try_claim(struct cgsi_ksrc *k, struct kshard *s,
		      const struct cgs_record *rec, int64_t off,
		      struct cgsi_kinfo *ki)
{
	if (claim_head(k, s, rec, off, ki))
		return true;
	consume(k, s);
	return cgsi_kjoin_claim(&s->join, rec, off, ki);
}

/* A task that migrated between taskstats_exit() and the tracepoint left
 * its entry on another shard's ring: look there (slow path). */
static bool claim_elsewhere(struct cgsi_ksrc *k, unsigned shard,
			    const struct cgs_record *rec, int64_t off,
			    struct cgsi_kinfo *ki)
{
	for (unsigned i = 0; i < k->nshards; i++) {
		if (i == shard)
			continue;
		struct kshard *o = &k->sh[i];
		cgsi_flock_lock(&o->lock);
		bool ok = try_claim(k, o, rec, off, ki);
		cgsi_flock_unlock(&o->lock);
		if (ok)
			return true;
	}
	return false;
}

static uint64_t lost_now(struct cgsi_ksrc *k, unsigned shard)
{
	uint64_t n = 0;
	const struct kshard *s = &k->sh[shard];
	for (unsigned i = 0; i < s->ncpus; i++)
		n += __atomic_load_n(&k->ctl[s->cpus[i]].lost,
				     __ATOMIC_RELAXED);
	return n;
}

/* Why a record found no entry (slow path: after the wait): entries of
 * its tid that did not verify, the wait's end, a lost entry (exact
 * counts: before a dropped tid, which may be an earlier task's of that
 * pid), an entry of its tid expired or evicted, or none. */
static enum cgsi_kmiss miss_reason(struct cgsi_ksrc *k,
				   const struct cgs_record *rec,
				   bool timed_out, bool started)
{
	bool seen = false, dropped = false;
	for (unsigned i = 0; i < k->nshards; i++) {
		struct kshard *o = &k->sh[i];
		cgsi_flock_lock(&o->lock);
		seen = seen || cgsi_kjoin_has_tid(&o->join, rec->pid);
		dropped = dropped || cgsi_kjoin_dropped(&o->join, rec->pid);
		cgsi_flock_unlock(&o->lock);
	}
	if (seen)
		return CGSI_KMISS_MISMATCH;
	if (timed_out)
		return CGSI_KMISS_TIMEOUT;
	if (cgsi_ksrc_charge_lost(k->ctl, k->ncpu, &k->lost_charged))
		return CGSI_KMISS_LOST;
	if (dropped)
		return CGSI_KMISS_EXPIRED;
	/* a shard's records come in the order they were queued: those
	 * before its first match were queued before the attach */
	return started ? CGSI_KMISS_NO_ENTRY : CGSI_KMISS_BEFORE_ATTACH;
}

/* Every KSRC_CG_EVERY lookups of a shard, and at its first: start the
 * reader (once), read the clock offset afresh (it moves only when the
 * clock is set) and the cgroup events (slow path). */
static __attribute__((noinline, cold)) void
lookup_refresh(struct cgsi_ksrc *k, struct kshard *s)
{
	if (!atomic_load_explicit(&k->reader_tried, memory_order_relaxed))
		cgsi_ksrc_reader_start(k);
	s->off = cgsi_ksrc_real_off_ns();
	s->off_left = KSRC_CG_EVERY - 1;
	if (!pthread_mutex_trylock(&k->idlock)) {
		k->now_ms = cgsi_now_mono_ms();
		ring_buffer__consume(k->cgrb);
		pthread_mutex_unlock(&k->idlock);
	}
}

/* A record claimed its entry on shard s (its lock held): expire old
 * entries now and then, and unlock. */
static inline bool matched_unlock(struct kshard *s)
{
	if (s->join.newest_matched_ns > KSRC_EXPIRE_NS &&
	    (++s->expired_calls & 255) == 0)
		cgsi_kjoin_expire(&s->join, s->join.newest_matched_ns,
				  KSRC_EXPIRE_NS);
	cgsi_flock_unlock(&s->lock);
	return true;
}

/* The record's entry is not at the head of one of its shard's rings
 * (s->lock held, released here): the shard's table, the other shards,
 * a bounded wait for an entry not yet published, and why none came
 * (slow path: out of line, so the common one stays short). */
static __attribute__((noinline, cold)) bool
lookup_slow(struct cgsi_ksrc *k, unsigned shard, const struct cgs_record *rec,
	    struct cgsi_kinfo *ki)
{
	struct kshard *s = &k->sh[shard];
	int64_t off = s->off;
	consume(k, s);
	if (cgsi_kjoin_claim(&s->join, rec, off, ki))
		return matched_unlock(s);
	cgsi_flock_unlock(&s->lock);
	s->off = off = cgsi_ksrc_real_off_ns();
	s->off_left = KSRC_CG_EVERY - 1;
	if (claim_elsewhere(k, shard, rec, off, ki))
		return true;
	/* Not published yet (the tracepoint runs after taskstats_exit(), and
	 * the task may be preempted in between), or lost, or never coming.
	 * The task itself tells which: until the tracepoint has run it is
	 * neither a zombie nor gone. So wait while it is still exiting,
	 * bounded; a task that is done (its entry lost) costs no wait. */
	uint64_t t0 = cgsi_ksrc_mono_ns(), deadline = t0 + k->wait_us * 1000ull;
	struct timespec nap = { 0, 50000 };
	bool ok = false, waited = false, timed_out = false;
	unsigned naps = 0;
	/* /proc is looked at every ~1 ms, the rings every ~50 us */
	while (!ok && (naps++ % 20 || !cgsi_ksrc_task_done(rec->pid)) &&
	       !(timed_out = cgsi_ksrc_mono_ns() >= deadline)) {
		waited = true;
		nanosleep(&nap, NULL);
		cgsi_flock_lock(&s->lock);
		ok = try_claim(k, s, rec, off, ki);
		cgsi_flock_unlock(&s->lock);
		if (!ok)
			ok = claim_elsewhere(k, shard, rec, off, ki);
	}
	/* done (meanwhile, or already at the first look: the entry may have
	 * come out between the claims above and that look): its entry is out
	 * now, unless lost */
	if (!ok) {
		cgsi_flock_lock(&s->lock);
		ok = try_claim(k, s, rec, off, ki);
		cgsi_flock_unlock(&s->lock);
		if (!ok)
			ok = claim_elsewhere(k, shard, rec, off, ki);
	}
	cgsi_flock_lock(&s->lock);
	s->waits += waited; /* a miss is counted by the caller's fallback */
	bool started = s->join.newest_matched_ns != 0;
	cgsi_flock_unlock(&s->lock);
	if (!ok)
		ki->miss = miss_reason(k, rec, timed_out, started);
	return ok;
}

/* The common case is short and inline: the entry at the head of one of
 * the shard's rings, verified in place, under the shard's lock. */
bool cgsi_ksrc_lookup(struct cgsi_ksrc *k, unsigned shard,
		      const struct cgs_record *rec, struct cgsi_kinfo *ki)
{
	struct kshard *s = &k->sh[shard];
	/* 0 (zeroed) at a shard's first lookup: the reader starts then */
	if (cgs_unlikely(!s->off_left--))
		lookup_refresh(k, s);
	cgsi_flock_lock(&s->lock);
	if (cgs_likely(claim_head(k, s, rec, s->off, ki)))
		return matched_unlock(s);
	return lookup_slow(k, shard, rec, ki);
}

/* An unknown id (idlock held): -ESTALE, -ENOENT or -EAGAIN (ksrc.h). A
 * walk that started after the exit finds the cgroup or proves it gone,
 * so none is made for an id that a walk since its exit did not find. */
static const char *path_unknown(struct cgsi_ksrc *k, uint64_t id,
				uint64_t exit_ns, uint64_t now_ms, int *rc)
{
	*rc = -ESTALE;
	if (cgsi_cgid_was_purged(&k->ids, id))
		return NULL;
	*rc = -ENOENT;
	if (k->ids.last_walk_ms * 1000000ull > exit_ns)
		return NULL;
	if (cgsi_cgid_walk(&k->ids, now_ms, 0) > 0)
		return cgsi_cgid_get(&k->ids, id);
	*rc = -EAGAIN;
	return NULL;
}

int cgsi_ksrc_path(struct cgsi_ksrc *k, uint64_t id, uint64_t exit_ns,
		   char *buf, size_t len)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&k->idlock);
	/* one clock for every stamp of the id table (removal, purge, walk):
	 * the caller's (a rollup's, counting from its start) would have
	 * purged a removed cgroup stamped by it at once */
	uint64_t now_ms = k->now_ms = cgsi_now_mono_ms();
	const char *p = cgsi_cgid_get(&k->ids, id);
	if (!p) {
		ring_buffer__consume(k->cgrb);
		p = cgsi_cgid_get(&k->ids, id);
	}
	if (!p)
		p = path_unknown(k, id, exit_ns, now_ms, &rc);
	if (p) {
		size_t n = strlen(p);
		if (n < len) {
			memcpy(buf, p, n + 1);
			rc = (int)n;
		} else {
			rc = -ENAMETOOLONG;
		}
	} else {
		k->ids.unresolved++;
	}
	pthread_mutex_unlock(&k->idlock);
	return rc;
}

void cgsi_ksrc_stats(struct cgsi_ksrc *k, struct cgsi_ksrc_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!k)
		return;
	for (unsigned i = 0; i < k->nshards; i++) {
		struct kshard *s = &k->sh[i];
		cgsi_flock_lock(&s->lock);
		out->matched += s->join.st.matched;
		out->expired += s->join.st.expired;
		out->evicted += s->join.st.evicted;
		out->waits += s->waits;
		out->ring_peak = CGS_MAX(out->ring_peak, s->ring_peak);
		cgsi_flock_unlock(&s->lock);
		out->lost += lost_now(k, i);
	}
	out->ring_queued = cgsi_ksrc_queued(k->ctl, k->ncpu);
	pthread_mutex_lock(&k->idlock);
	ring_buffer__consume(k->cgrb);
	out->unresolved = k->ids.unresolved;
	out->walks = k->ids.walks;
	out->walk_ms_last = k->ids.walk_ms_last;
	pthread_mutex_unlock(&k->idlock);
	out->cg_lost = __atomic_load_n(&k->skel->bss->cg_lost, __ATOMIC_RELAXED);
	out->exe_lost = __atomic_load_n(&k->skel->bss->exe_lost, __ATOMIC_RELAXED);
	out->ring_bytes = k->ring_bytes;
	out->ring_slots = k->nslots;
	cgsi_ksrc_prog_stats(k->skel->obj, out);
}

void cgsi_ksrc_sync_ids(struct cgsi_ksrc *k, struct cgsi_ksrc_rmstate *rm)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->idlock);
	k->now_ms = cgsi_now_mono_ms();
	ring_buffer__consume(k->cgrb);
	if (rm) {
		rm->rmdirs = k->ids.rmdirs;
		rm->missed = k->ids.rm_unknown + k->cg_unreadable +
			     __atomic_load_n(&k->skel->bss->cg_lost,
					     __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&k->idlock);
}

int cgsi_ksrc_removed(struct cgsi_ksrc *k, uint64_t id)
{
	if (!k || !id)
		return 0;
	pthread_mutex_lock(&k->idlock);
	int rc = cgsi_cgid_is_removed(&k->ids, id);
	pthread_mutex_unlock(&k->idlock);
	return rc;
}


size_t cgsi_ksrc_ids(struct cgsi_ksrc *k)
{
	if (!k)
		return 0;
	pthread_mutex_lock(&k->idlock);
	size_t n = k->ids.count;
	pthread_mutex_unlock(&k->idlock);
	return n;
}

#endif /* CGS_HAVE_BPF */
