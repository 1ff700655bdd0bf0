/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fork tracking from the proc connector: who forked each process. See
 * forks.c. */
#ifndef CGS_ATTRIBUTE_FORKS_H
#define CGS_ATTRIBUTE_FORKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct nl_sock;

#define CGSI_FORKS_PID_BITS 22 /* PID_MAX_LIMIT is 4194304 = 1 << 22 */
#define CGSI_FORKS_MAX_HOPS 16
/* Tolerance, ms, between the kernel's fork timestamp and the rollup clock
 * (coarse clock lag, rounding, a preempted copy_process). */
#define CGSI_FORKS_SLACK_MS 20u
/* Opportunistic drains on cache misses at most this often. */
#define CGSI_FORKS_DRAIN_MS 20u
/* Processes whose fork is remembered, at most (forks.c: Tables). */
#define CGSI_FORKS_KEEP (1u << 16)

/* The last fork of one pid; the nodes form a list in fork order. */
struct cgsi_fork_node {
	uint64_t link; /* seq << 22 | fork parent tgid */
	uint32_t pid;
	uint32_t when;       /* fork time, rollup ms (mod 2^32) */
	uint32_t prev, next; /* node indices; 0 is the list head */
};

struct cgsi_forks {
	pthread_mutex_t lock; /* guards everything below except last_drain */
	struct nl_sock *sk;   /* connector socket, or NULL and fd -1: */
	int fd;               /* injected events only */
	uint32_t nmax;        /* nodes (processes remembered) at most */
	uint32_t nused;       /* nodes in use (1..nused) */
	struct cgsi_fork_node *node; /* nmax + 1; node[0]: list head, whose
				      * next is the oldest fork */
	uint32_t *idx;        /* pid -> node index, open addressing; 0 free */
	uint32_t imask;       /* idx capacity - 1 */
	uint64_t evicted_seq; /* seq of the last fork forgotten (the oldest
			       * first): every fork after it is known */
	uint64_t evictions;   /* forks forgotten to make room */
	uint64_t seq;         /* sequence number of the last fork recorded */
	uint64_t trust_seq;   /* entries with seq below it may be older than
			       * a lost event: not trusted */
	uint64_t events;      /* process forks recorded */
	uint64_t drops;       /* events the kernel dropped (SO_MEMINFO) */
	uint64_t untracked;   /* forks of pids beyond PID_MAX_LIMIT */
	_Atomic uint64_t last_drain; /* rollup ms of the last drain */
	unsigned char *buf;   /* receive slots */
};

/* One ancestor found by cgsi_forks_chain(). */
struct cgsi_fork_hop {
	uint32_t pid;
	uint32_t when;     /* its fork time (rollup ms mod 2^32) if seq */
	uint64_t seq;      /* its fork's sequence number; 0: not seen */
	bool cache_ok;     /* seq 0 and no event was ever lost or
			    * forgotten: a live cache entry for pid is this
			    * process */
	uint64_t at;       /* the tracker's seq when the chain was taken */
};

/*
 * Set up the tables (for min(<proc_root>/sys/kernel/pid_max,
 * CGSI_FORKS_KEEP) processes) and, when
 * `connect`, the connector socket. Returns 0, -ENOMEM, or the socket's
 * error (-EPERM without CAP_NET_ADMIN before Linux 6.6, -EPROTONOSUPPORT
 * without the connector, -ETIMEDOUT when the subscription is not acked); on a socket error the tables are freed again.
 */
int cgsi_forks_open(struct cgsi_forks *f, const char *proc_root,
		    bool connect, uint64_t now);
void cgsi_forks_close(struct cgsi_forks *f);

/* Receive everything queued (lock held). `now` is rollup ms. */
void cgsi_forks_drain_locked(struct cgsi_forks *f, uint64_t now);

/* Drain if nobody did for CGSI_FORKS_DRAIN_MS and nobody is draining. */
void cgsi_forks_maybe_drain(struct cgsi_forks *f, uint64_t now);

/* Record one process fork (lock held). */
void cgsi_forks_record_locked(struct cgsi_forks *f, uint32_t parent,
			      uint32_t child, uint64_t when_ms);

/*
 * Fork ancestors of `tgid`, nearest first, into hop[] (at most max), under
 * the lock, after a drain. `life_ms` is how long the exiting task lived
 * (UINT64_MAX: unknown): an entry for tgid forked later than now - life_ms
 * belongs to a process that reused the pid and yields nothing. The walk
 * stops before an ancestor pid that was forked again after its child (pid
 * reuse), after one whose own fork is unknown or untrusted, and at max.
 * Returns the number of hops.
 */
int cgsi_forks_chain_locked(struct cgsi_forks *f, uint32_t tgid,
			    uint64_t life_ms, uint64_t now,
			    struct cgsi_fork_hop *hop, int max);

/* Fork parent of tgid when trusted and consistent with life_ms, else 0. */
uint32_t cgsi_forks_parent_locked(struct cgsi_forks *f, uint32_t tgid,
				  uint64_t life_ms, uint64_t now);

/* Whether the hop's pid was not forked again since the chain was taken
 * (lock held, after a drain). */
bool cgsi_forks_same_locked(struct cgsi_forks *f, uint32_t pid,
			    const struct cgsi_fork_hop *h);

/* Test hook: events lost now (as the kernel's drop counter would say). */
void cgsi_forks_lost_locked(struct cgsi_forks *f, uint64_t n);

#endif
