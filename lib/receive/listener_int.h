/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CGS_RECEIVE_LISTENER_INT_H
#define CGS_RECEIVE_LISTENER_INT_H

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

	pthread_t thread;
	bool thread_started;
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
	unsigned batch_ms;
	bool pin;
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

/* drain.c */
int cgsi_shard_drain(struct cgs_listener *l, struct cgsi_shard *s,
		     cgs_exit_fn fn, void *user);
int cgsi_process_datagram(struct cgs_listener *l, struct cgsi_shard *s,
			  const unsigned char *buf, size_t len,
			  uint64_t now_ns, cgs_exit_fn fn, void *user);

#endif
