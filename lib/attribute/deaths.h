/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Process exit generations, indexed by pid: the only memory the shards
 * share on the hot path. A slot is written (relaxed store) only when a
 * process exit record (AGROUP) is accounted and read (relaxed load, a
 * plain mov on x86-64) on each cache hit. See pcache.c for why.
 * Slot: generation (24 bits) << 40 | time of the last death (40 bits of
 * rollup-relative ms, 34 years). Pids beyond the array alias modulo its
 * size, which only makes entries look dead early (re-resolved: safe).
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
#include <stdint.h>

#define CGSI_DEATH_MS_BITS 40
#define CGSI_DEATH_MS_MASK ((1ull << CGSI_DEATH_MS_BITS) - 1)
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
	return (uint32_t)(v >> CGSI_DEATH_MS_BITS);
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
	atomic_store_explicit(&d->slot[pid & d->mask],
			      g << CGSI_DEATH_MS_BITS |
				      (now_ms & CGSI_DEATH_MS_MASK),
			      memory_order_relaxed);
}

#endif
