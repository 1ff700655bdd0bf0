/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The contended halves of the futex lock; see futex_lock.h. */
#include <stddef.h>
#include <unistd.h>

#include <linux/futex.h>
#include <sys/syscall.h>

#include "util/futex_lock.h"

/* Taken: mark it waited for (2), sleep while it stays so, try again. */
void cgsi_flock_wait(struct cgsi_flock *l, uint32_t c)
{
	if (c != 2)
		c = atomic_exchange_explicit(&l->v, 2, memory_order_acquire);
	while (c != 0) {
		syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = atomic_exchange_explicit(&l->v, 2, memory_order_acquire);
	}
}

/* Released with waiters (maybe): free it, wake one. */
void cgsi_flock_wake(struct cgsi_flock *l)
{
	atomic_store_explicit(&l->v, 0, memory_order_release);
	syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
