/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Join of taskstats records with the kernel's exit-time entries (one table
 * per shard, no locking of its own). Entries are kept in arrival order in
 * a ring (oldest first, for expiry) with a tid-keyed open-addressing index
 * over it. A record pairs only with an entry that provably belongs to it:
 * same tid and tgid, a lifetime that ends where the record's ends (to a
 * tick: the entry's clock is read once a jiffy), the same run time
 * (se.sum_exec_runtime, the record's cpu_run_virtual_total) grown by at
 * most what the task ran between taskstats_exit() and the tracepoint
 * (the gap: a few microseconds as a rule), the same run-queue wait to the
 * nanosecond (cpu_delay_total) unless the task was scheduled again in
 * the gap (then grown by at most the gap), context switches, CPU slices
 * and minor faults that did not grow by more than the gap allows, and a
 * start second that agrees with ac_btime64. (The record's
 * cpu_run_real_total is not used: on this kernel it is sampled at tick
 * granularity, not se.sum_exec_runtime.) Of several candidates (a pid
 * reused while an older record is still queued or was dropped) the one
 * whose run time and wait grew least wins. Pure code: unit-tested with
 * synthetic entries.
 */
#ifndef CGS_ATTRIBUTE_KJOIN_H
#define CGS_ATTRIBUTE_KJOIN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <linux/types.h>

#include "attribute/bpf/exitcg_abi.h"
#include "cgstats.h"

/* An entry whose gap exceeds this is not the record's (the task would
 * have been preempted for that long between taskstats_exit() and the
 * tracepoint: seen beyond 20 ms on a loaded 2-CPU host); the record then
 * falls back, counted. A long gap is safe: a task preempted in it was
 * scheduled again, which the run-queue wait and slices must show. */
#define CGSI_KJOIN_GAP_MAX_NS 2000000000ull

/* How far the entry's clock may be behind the exit (it is the time of
 * the first exit of the jiffy on its CPU, exitcg.bpf.c exit_clock()): a
 * tick (4 ms at HZ=250, 10 at HZ=100), with room for a tick taken late
 * (a vCPU not running). Beyond it an entry looks older than its record and the record
 * falls back, counted, never paired wrongly: the run time and the
 * scheduling fields are the proof. */
#define CGSI_KJOIN_COARSE_NS 50000000ull

struct cgsi_kentry {
	uint32_t tid, tgid;
	uint32_t csw;
	uint32_t live; /* 0: slot free or claimed */
	uint64_t cgid;
	uint64_t start_ns;
	uint64_t now_ns;   /* up to CGSI_KJOIN_COARSE_NS early */
	uint64_t runtime_ns;
	uint64_t run_delay;
	uint32_t pcount;   /* mod 2^32 */
	uint32_t minflt;   /* mod 2^32 */
	uint32_t flags;    /* CGSK_F_* of the entry (exitcg_abi.h): with
			    * CGSK_F_NOSCHED, no pcount nor run_delay */
	char comm[16];     /* the process's command; "" when not asked */
};

/* What a claimed entry says about its record. */
struct cgsi_kinfo {
	uint64_t cgid;
	uint32_t flags;
	uint32_t miss;     /* no match: why (enum cgsi_kmiss, ksrc.h) */
	uint64_t exit_ns;  /* CLOCK_MONOTONIC time at or after the exit */
	char comm[16];
};

static inline void cgsi_kinfo_of(struct cgsi_kinfo *ki,
				 const struct cgsi_kentry *e)
{
	ki->cgid = e->cgid;
	ki->flags = e->flags;
	ki->exit_ns = e->now_ns + CGSI_KJOIN_COARSE_NS;
	memcpy(ki->comm, e->comm, sizeof(ki->comm));
}

struct cgsi_kjoin_stats {
	uint64_t added, matched, expired, evicted, mismatched;
};

/* Tids of entries expired or evicted lately (direct-mapped, tid + 1; 0
 * free): a record without an entry that finds its tid here came too late
 * (slow path only). */
#define CGSI_KJOIN_DROPPED 256u

struct cgsi_kjoin {
	struct cgsi_kentry *ring; /* cap entries, power of two */
	uint32_t *index;          /* 2*cap slots: ring position + 1, 0 free */
	uint32_t cap, imask;
	uint64_t head, tail;      /* ring positions (monotonic) */
	uint32_t count;           /* live entries */
	uint64_t newest_matched_ns;
	struct cgsi_kjoin_stats st;
	uint32_t dropped[CGSI_KJOIN_DROPPED];
};

int cgsi_kjoin_init(struct cgsi_kjoin *j, uint32_t cap);
void cgsi_kjoin_fini(struct cgsi_kjoin *j);

/*
 * Whether the BPF program's entry v (its tid already compared) can be
 * the record's: -1 when it cannot be, else how much it grew since the
 * record (ns of run time and run-queue wait; of lifetime, to a tick,
 * where the record has no delay block): the least is the record's own
 * entry. Inline: the kernel source's common path verifies the entry
 * where it lies in its ring, reading only what each check needs
 * (always: else GCC may leave it out of line).
 */
static inline __attribute__((always_inline)) int64_t
cgsi_kjoin_verify_in(const struct cgsk_exit *v, const struct cgs_record *rec,
		     int64_t real_off_ns)
{
	if ((rec->fields & CGS_HAS_TGID) && v->tgid != rec->tgid)
		return -1;
	/* the entry's life to a tick (its time is an earlier exit's of the
	 * same jiffy on its CPU: it may even end before a start taken since
	 * then), the record's to the microsecond (truncated); the gap
	 * between the two exits is at least lo, at most hi */
	const int64_t coarse = (int64_t)CGSI_KJOIN_COARSE_NS;
	int64_t life = (int64_t)(v->now_ns - v->start_ns);
	int64_t rec_ns = (int64_t)(rec->etime_us * 1000u);
	int64_t lo = life - rec_ns - 1000, hi = life + coarse - rec_ns + 1000;
	if (hi < 0)
		return -1; /* this entry's task ended before the record's did */
	if (lo > (int64_t)CGSI_KJOIN_GAP_MAX_NS)
		return -1;
	uint64_t gap = (uint64_t)hi; /* what grew in the gap: at most this */
	/* the selection: what grew since the record, least for its own
	 * entry (0 as a rule) */
	uint64_t grown = lo > 0 ? (uint64_t)lo : 0;
	if (rec->fields & CGS_HAS_DELAY) {
		/* se.sum_exec_runtime, copied into the record by taskstats;
		 * it grows only while the task runs */
		if (v->runtime_ns < rec->cpu_run_virtual_ns ||
		    v->runtime_ns - rec->cpu_run_virtual_ns > gap)
			return -1;
		grown = v->runtime_ns - rec->cpu_run_virtual_ns;
	}
	if ((rec->fields & CGS_HAS_DELAY) && !(v->type & CGSK_F_NOSCHED)) {
		/* sched_info is copied verbatim into the record and changes
		 * only when the task is scheduled in or out */
		const struct cgs_delay *d = &rec->delay[CGS_DELAY_CPU];
		uint32_t slices = v->pcount - (uint32_t)d->count;
		if (slices > 2)
			return -1;
		if (!slices ? v->run_delay != d->total_ns
			    : (v->run_delay < d->total_ns ||
			       v->run_delay - d->total_ns > gap))
			return -1;
		/* scheduled in again: it was switched out first */
		if (slices && (rec->fields & CGS_HAS_CTXSW) &&
		    v->csw == (uint32_t)(rec->nvcsw + rec->nivcsw))
			return -1;
		/* running and waiting take turns in the gap */
		grown += v->run_delay - d->total_ns;
		if (grown > gap)
			return -1;
	}
	if ((rec->fields & CGS_HAS_BASIC) &&
	    v->minflt - (uint32_t)rec->minflt > 16)
		return -1;
	if ((rec->fields & CGS_HAS_CTXSW) &&
	    v->csw - (uint32_t)(rec->nvcsw + rec->nivcsw) > 2)
		return -1;
	if (rec->fields & CGS_HAS_BTIME64) {
		/* ac_btime64 = real seconds at taskstats time - whole
		 * seconds of life: within [-2, +1] of ours */
		int64_t real_end = (int64_t)v->now_ns + real_off_ns;
		int64_t b = real_end / 1000000000 -
			    (int64_t)(rec->etime_us / 1000000u);
		int64_t d = (int64_t)rec->btime_s - b;
		if (d < -2 || d > 1)
			return -1;
	}
	return grown > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)grown;
}

/* cgsi_kjoin_verify_in() of a table's entry. */
int64_t cgsi_kjoin_verify(const struct cgsi_kentry *e,
			  const struct cgs_record *rec, int64_t real_off_ns);

/* Add an entry (the oldest is evicted, counted, when the table is full). */
void cgsi_kjoin_add(struct cgsi_kjoin *j, const struct cgsi_kentry *e);

/*
 * Find and claim the entry of a task record (thread or process kind).
 * real_off_ns is CLOCK_REALTIME - CLOCK_MONOTONIC now (for the start
 * second check). Returns true and fills *ki on a verified match.
 */
bool cgsi_kjoin_claim(struct cgsi_kjoin *j, const struct cgs_record *rec,
		      int64_t real_off_ns, struct cgsi_kinfo *ki);

/* Whether the table holds an entry of tid (verified or not). */
bool cgsi_kjoin_has_tid(const struct cgsi_kjoin *j, uint32_t tid);

/* Whether an entry of tid was expired or evicted lately. */
static inline bool cgsi_kjoin_dropped(const struct cgsi_kjoin *j,
				      uint32_t tid)
{
	return j->dropped[tid % CGSI_KJOIN_DROPPED] == tid + 1;
}

/* Expire entries taken more than age_ns before `horizon_ns` (their record
 * was dropped by the kernel, or went to a listener we don't have).
 * Returns how many were expired. */
uint32_t cgsi_kjoin_expire(struct cgsi_kjoin *j, uint64_t horizon_ns,
			   uint64_t age_ns);

#endif
