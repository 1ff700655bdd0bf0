/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Process exit generations, indexed by pid: the only memory the shards
 * share on the hot path. A slot is written (relaxed store) only when a
 * process exit record (AGROUP) is accounted and read (relaxed load, a
 * plain mov on x86-64) on each cache hit. See pcache.c for why.
 * Slot: generation (24 bits) << 40 | seen (2 bits) << 38 | time of the
 * last death (38 bits of rollup-relative ms, 8 years). Seen: some shard
 * read the pid's own /proc/<pid>/cgroup since its last death (bit 39) or
 * in the life before (bit 38; late records of a process come after its
 * death): a hint for the shard that finds the process already reaped
 * that another shard may know its cgroup, worth waiting for that shard's
 * lock (fallback.c). Pids beyond the array alias modulo its size, which
 * only makes entries look dead early (re-resolved: safe) or a hint true
 * for nothing (a wasted wait).
 *
 * Bounded: the array never has more than CGSI_DEATHS_SLOTS slots (1 MiB)
 * whatever pid_max says (4194304 on most distributions would make it
 * 32 MiB, resident once exits have walked the pid space), and
 * CGSI_DEATHS_SLOTS_KERNEL (8 KiB) with the kernel source, where only the
 * rare record without a kernel entry goes through the cache. Aliasing
 * costs a spurious death: the entry of a live process whose slot mate
 * exited serves grace_ms (re-reading /proc every CGSI_DEAD_RECHECK_MS)
 * and is then resolved afresh, as a process first seen would be; up to
 * 131072 pids (32768 on these hosts) nothing aliases.
 */
#ifndef CGS_ATTRIBUTE_DEATHS_H
#define CGS_ATTRIBUTE_DEATHS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CGSI_DEATH_GEN_SHIFT 40
#define CGSI_DEATH_SEEN (1ull << 39)
#define CGSI_DEATH_SEEN_BEFORE (1ull << 38)
#define CGSI_DEATH_MS_MASK (CGSI_DEATH_SEEN_BEFORE - 1)
#define CGSI_DEATH_GEN_MASK 0xffffffu
#define CGSI_DEATHS_SLOTS (1u << 17)
#define CGSI_DEATHS_SLOTS_KERNEL (1u << 10)

struct cgsi_deaths {
	_Atomic uint64_t *slot;
	uint32_t mask;
};

/* Sized from <proc_root>/sys/kernel/pid_max (4M when unreadable), at
 * least 1024 and at most max_slots (a power of two). The array is
 * calloc'ed: untouched pages cost no memory. */
int cgsi_deaths_init(struct cgsi_deaths *d, const char *proc_root,
		     uint32_t max_slots);
void cgsi_deaths_fini(struct cgsi_deaths *d);

static inline uint64_t cgsi_deaths_load(const struct cgsi_deaths *d,
					uint32_t pid)
{
	return atomic_load_explicit(&d->slot[pid & d->mask],
				    memory_order_relaxed);
}

static inline uint32_t cgsi_death_gen(uint64_t v)
{
	return (uint32_t)(v >> CGSI_DEATH_GEN_SHIFT);
}

static inline uint64_t cgsi_death_ms(uint64_t v)
{
	return v & CGSI_DEATH_MS_MASK;
}

/* Not a read-modify-write atomic: two shards reporting the same pid's
 * exit at the same instant may bump once instead of twice, which still
 * changes the generation every earlier entry holds. */
static inline void cgsi_deaths_mark(struct cgsi_deaths *d, uint32_t pid,
				    uint64_t now_ms)
{
	uint64_t v = cgsi_deaths_load(d, pid);
	uint64_t g = (cgsi_death_gen(v) + 1) & CGSI_DEATH_GEN_MASK;
	uint64_t before = v & CGSI_DEATH_SEEN ? CGSI_DEATH_SEEN_BEFORE : 0;
	atomic_store_explicit(&d->slot[pid & d->mask],
			      g << CGSI_DEATH_GEN_SHIFT | before |
				      (now_ms & CGSI_DEATH_MS_MASK),
			      memory_order_relaxed);
}

/* Some shard read pid's own /proc alive (slow path: after a /proc read).
 * A read-modify-write, so that it survives a concurrent hint; a death
 * marked at the same instant may still clear it (then the shard that
 * finds the process reaped does not wait, and infers: counted). */
static inline void cgsi_deaths_seen(struct cgsi_deaths *d, uint32_t pid)
{
	if (!(cgsi_deaths_load(d, pid) & CGSI_DEATH_SEEN))
		atomic_fetch_or_explicit(&d->slot[pid & d->mask],
					 CGSI_DEATH_SEEN, memory_order_relaxed);
}

/* Whether pid was read alive since its last death or in the life
 * before (a hint). */
static inline bool cgsi_deaths_was_seen(const struct cgsi_deaths *d,
					uint32_t pid)
{
	return cgsi_deaths_load(d, pid) &
	       (CGSI_DEATH_SEEN | CGSI_DEATH_SEEN_BEFORE);
}

#endif
