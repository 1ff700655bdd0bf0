/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CGS_RECEIVE_LISTENER_INT_H
#define CGS_RECEIVE_LISTENER_INT_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "util/common.h"

struct nl_sock;

/* Receive slots per recvmmsg() call and their size: a v16 exit message is
 * 596 bytes, 1172 with its TGID record; 4 KiB leaves room for versions to
 * come, and a datagram that still doesn't fit is counted as truncated. */
#define CGSI_RECV_SLOTS 64
#define CGSI_RECV_SLOT_SIZE 4096

/* Everything a shard's receive thread writes lives in its own cache lines;
 * other threads only read the counters (relaxed loads). */
struct cgsi_shard {
	struct cgs_listener *owner;
	unsigned idx;
	struct nl_sock *sk;
	int fd;
	char *cpus;          /* cpulist, owned */
	int single_cpu;      /* the CPU if the shard has exactly one, else -1 */
	unsigned ncpus;      /* CPUs in cpus */
	size_t rcvbuf;
	uint64_t drops_base; /* sk_drops when registered */

	/* written by the draining thread only */
	struct cgs_loss loss;
	struct cgs_decode_stats dstats;
	uint32_t last_seq;
	bool have_seq;
	bool halt; /* the callback asked to stop after this batch */
	struct cgs_record task, group;

	struct mmsghdr *msgs; /* recvmmsg slots, allocated at open */
	struct iovec *iov;
	unsigned char *bufs;

	/* events that arrived while we waited for the registration ack */
	unsigned char *pending;
	size_t pending_len;

	/* the runner: 1 while a receive thread drains it (one at a time) */
	int draining;
	uint64_t wait_cap_ns; /* longest batch wait a burst cannot overflow */
	uint64_t seen_drops;  /* sk_drops at the last look (adaptive) */
} __attribute__((aligned(64)));

/*
 * A receive thread of the runner (runner.c). Worker k of n active ones
 * serves the shards i with i % n == k; the controller (adapt.c) changes n.
 */
struct cgsi_worker {
	struct cgs_listener *owner;
	unsigned idx;
	int wake_fd;        /* eventfd: the set of active threads changed */
	pthread_t thread;
	bool started;

	/* written by this thread only; worker 0 reads busy_ns (relaxed) */
	uint64_t busy_ns;   /* time spent draining, cumulative */

	/* this thread's own */
	unsigned gen;       /* l->gen its poll set was built for */
	uint64_t wait_ns;   /* current batch wait */
	uint64_t wait_cap_ns;
	uint64_t win_start_ns, win_busy_ns; /* busy-fraction window */
	struct pollfd *pfd; /* its shards' sockets, then wake_fd, stop_fd */
	unsigned *pshard;
	unsigned npfd;
} __attribute__((aligned(64)));

struct cgs_listener {
	int family;
	unsigned nshards;
	struct cgsi_shard *shards;
	unsigned flags;
	cgs_log_fn log;
	void *log_ctx;

	/* runner */
	int stop_fd; /* eventfd */
	bool stop;   /* set once, read by shard threads */
	bool running;
	cgs_exit_fn fn;
	void *user;
	unsigned batch_ms;  /* fixed batch wait, ms; 0 with adapt_wait */
	bool pin;
	bool adapt_wait;    /* cgs_run_opts.batch_ms was 0: adaptive wait */
	bool fixed_threads; /* cgs_listener_opts.shards given: a thread each */
	struct cgsi_worker *workers; /* nshards of them, started on demand */
	unsigned active;    /* workers running (atomic) */
	unsigned gen;       /* bumped when active changes (atomic) */
	uint64_t last_grow_ns; /* under grow_lock */
	uint64_t shrink_start_ns, shrink_busy_ns; /* all threads' window */
	uint64_t grows, shrinks; /* under grow_lock */
	pthread_mutex_t grow_lock;
};

/* log.c */
void cgsi_log(struct cgs_listener *l, enum cgs_log_level lvl,
	      const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* namespace.c: 0 when we are in the initial namespaces (or cannot tell) */
int cgsi_check_namespaces(void);
int cgsi_have_net_admin(void);

/* Options of cgsi_listener_open() that are not the API's. */
struct cgsi_listener_iopts {
	uint32_t shard0_port; /* bind shard 0 to this port id (white-box
			       * tests of stale registrations); 0: autobind */
};

/* cgs_listener_open() with internal options (NULL: none). */
int cgsi_listener_open(struct cgs_listener **out,
		       const struct cgs_listener_opts *opts,
		       const struct cgsi_listener_iopts *io);

/* family.c */
int cgsi_send_mask(struct cgsi_shard *s, int family, int attr,
		   const char *cpus, bool keep_events);

/* runner.c */
void *cgsi_worker_main(void *arg);
/* adapt.c: the batch wait and the number of receive threads */
struct cgsi_round {
	unsigned fill_pm;  /* the fullest socket at the round's start, per
			    * mille of its receive buffer */
	bool dropped;      /* the kernel dropped on one of them */
	bool more;         /* a drain stopped at its batch limit */
	uint64_t start_ns, end_ns;
};
int cgsi_sock_meminfo(int fd, uint32_t *rmem, uint32_t *rcvbuf,
		      uint32_t *drops);
void cgsi_adapt_round(struct cgs_listener *l, struct cgsi_worker *w,
		      const struct cgsi_round *r);
int cgsi_set_active(struct cgs_listener *l, unsigned n);
uint64_t cgsi_wait_cap_ns(size_t rcvbuf, unsigned ncpus);

/* drain.c */
int cgsi_shard_drain(struct cgs_listener *l, struct cgsi_shard *s,
		     cgs_exit_fn fn, void *user);
/* ... at most max_batches recvmmsg() batches; *more set when it stopped
 * there (more may not be NULL unless max_batches is ~0u) */
int cgsi_shard_drain_max(struct cgs_listener *l, struct cgsi_shard *s,
			 cgs_exit_fn fn, void *user, unsigned max_batches,
			 bool *more);

#endif
