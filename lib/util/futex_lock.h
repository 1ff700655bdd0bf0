/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A lock for state that one thread takes for every record and others
 * only now and then (the kernel source's shards: the owner per record,
 * another shard on a miss, the stats): uncontended it costs a compare
 * and swap and a decrement, inline, where pthread_mutex_lock() and
 * _unlock() cost ~57 instructions a pair. Contended it sleeps on a futex
 * (Drepper, "Futexes Are Tricky", mutex3). Zeroed memory is a free lock;
 * nothing to destroy. Not recursive, no owner check.
 */
#ifndef CGS_UTIL_FUTEX_LOCK_H
#define CGS_UTIL_FUTEX_LOCK_H

#include <stdatomic.h>
#include <stdint.h>

struct cgsi_flock {
	_Atomic uint32_t v; /* 0 free, 1 held, 2 held and maybe waited for */
};

/* The contended halves (futex_lock.c). */
void cgsi_flock_wait(struct cgsi_flock *l, uint32_t c);
void cgsi_flock_wake(struct cgsi_flock *l);

static inline void cgsi_flock_lock(struct cgsi_flock *l)
{
	uint32_t c = 0;
	if (__builtin_expect(!atomic_compare_exchange_strong_explicit(
				     &l->v, &c, 1, memory_order_acquire,
				     memory_order_relaxed),
			     0))
		cgsi_flock_wait(l, c);
}

/* 0: taken; non-zero: held by another (as pthread_mutex_trylock()). */
static inline int cgsi_flock_trylock(struct cgsi_flock *l)
{
	uint32_t c = 0;
	return !atomic_compare_exchange_strong_explicit(
		&l->v, &c, 1, memory_order_acquire, memory_order_relaxed);
}

static inline void cgsi_flock_unlock(struct cgsi_flock *l)
{
	if (__builtin_expect(atomic_fetch_sub_explicit(&l->v, 1,
						       memory_order_release) != 1,
			     0))
		cgsi_flock_wake(l);
}

#endif
