/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fork tracking (CGS_ROLLUP_TRACK_FORKS): the last fork of each process,
 * from the proc connector, so that an exit whose process and parent are
 * both reaped is attributed to its nearest live fork ancestor. Bounded
 * tables, drained on the rollup's slow path (no thread of its own).
 * Design, bounds and why: docs/design/attribution-forks.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "attribute/forks.h"
#include "util/common.h"
#include "util/nlreq.h"

#define PID_MAX_LIMIT (1u << CGSI_FORKS_PID_BITS)
#define PID_MASK (PID_MAX_LIMIT - 1)
#define RCVBUF (16u << 20)
#define SLOTS 64
#define SLOT_SZ 256
#define LISTEN_TIMEOUT_MS 1000

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif
#ifndef SK_MEMINFO_DROPS
#define SK_MEMINFO_DROPS 8
#define SK_MEMINFO_VARS 9
#endif

/* Linux 6.6 (uapi cn_proc.h): LISTEN with an event-type filter. Debian
 * 12's headers predate it; the layout is two u32 enums. */
struct cgsi_proc_input {
	uint32_t mcast_op;   /* enum proc_cn_mcast_op */
	uint32_t event_type; /* enum proc_cn_event */
};

/* Offsets in a received message: nlmsghdr (16), cn_msg (20), then
 * proc_event: what, cpu, timestamp_ns, event_data. */
#define OFF_DATA (NLMSG_HDRLEN + (int)sizeof(struct cn_msg))
#define OFF_WHAT OFF_DATA
#define OFF_TS (OFF_DATA + 8)
#define OFF_FORK (OFF_DATA + 16) /* parent_pid, parent_tgid, child_pid,
				  * child_tgid */

static uint32_t pid_max(const char *proc_root)
{
	char fn[512], buf[32];
	unsigned long v = PID_MAX_LIMIT;
	snprintf(fn, sizeof(fn), "%s/sys/kernel/pid_max", proc_root);
	if (cgsi_read_file(fn, buf, sizeof(buf)) > 0) {
		unsigned long x = strtoul(buf, NULL, 10);
		if (x >= 2 && x <= PID_MAX_LIMIT)
			v = x;
	}
	return (uint32_t)v;
}

static inline uint32_t idx_home(const struct cgsi_forks *f, uint32_t pid)
{
	return (pid * 2654435761u) & f->imask;
}

/* Slot of pid in idx[], or of the free slot ending its probe run. */
static uint32_t idx_slot(const struct cgsi_forks *f, uint32_t pid)
{
	uint32_t i = idx_home(f, pid);
	while (f->idx[i] && f->node[f->idx[i]].pid != pid)
		i = (i + 1) & f->imask;
	return i;
}

static const struct cgsi_fork_node *lookup(const struct cgsi_forks *f,
					   uint32_t pid)
{
	if (!pid || pid > PID_MASK)
		return NULL;
	uint32_t n = f->idx[idx_slot(f, pid)];
	return n ? &f->node[n] : NULL;
}

static inline uint64_t node_link(const struct cgsi_fork_node *n)
{
	return n ? n->link : 0;
}

/* Backward-shift deletion of idx[i] (as in pcache.c). */
static void idx_remove(struct cgsi_forks *f, uint32_t i)
{
	for (uint32_t j = (i + 1) & f->imask;; j = (j + 1) & f->imask) {
		if (!f->idx[j])
			break;
		uint32_t h = idx_home(f, f->node[f->idx[j]].pid);
		if (((j - h) & f->imask) >= ((j - i) & f->imask)) {
			f->idx[i] = f->idx[j];
			i = j;
		}
	}
	f->idx[i] = 0;
}

static void list_unlink(struct cgsi_forks *f, uint32_t n)
{
	struct cgsi_fork_node *x = &f->node[n];
	f->node[x->prev].next = x->next;
	f->node[x->next].prev = x->prev;
}

static void list_append(struct cgsi_forks *f, uint32_t n)
{
	struct cgsi_fork_node *x = &f->node[n];
	x->prev = f->node[0].prev;
	x->next = 0;
	f->node[x->prev].next = n;
	f->node[0].prev = n;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct listen_msg {
	struct nlmsghdr nh;
	struct cn_msg cn;
	unsigned char data[8];
} __attribute__((packed));

/* PROC_CN_MCAST_* (op: a u32, or struct cgsi_proc_input) to the proc
 * connector. Its ack renumbers seq but answers ack + 1: with ack = seq,
 * ours is told apart from other listeners' (acks are multicast too).
 * Returns the message's length. */
static size_t listen_msg(struct listen_msg *m, uint32_t seq, const void *op,
			 size_t len)
{
	memset(m, 0, sizeof(*m));
	size_t total = NLMSG_HDRLEN + sizeof(struct cn_msg) + len;
	m->nh.nlmsg_len = (uint32_t)total;
	m->nh.nlmsg_type = NLMSG_DONE;
	m->nh.nlmsg_pid = 0; /* the kernel fills in our port id */
	m->nh.nlmsg_seq = seq;
	m->cn.id.idx = CN_IDX_PROC;
	m->cn.id.val = CN_VAL_PROC;
	m->cn.seq = seq;
	m->cn.ack = seq;
	m->cn.len = (uint16_t)len;
	memcpy(m->data, op, len);
	return total;
}

/* Without waiting for an ack. */
static void send_listen(struct nl_sock *sk, const void *op, size_t len)
{
	struct listen_msg m;
	size_t total = listen_msg(&m, nl_socket_use_seq(sk), op, len);
	nl_sendto(sk, &m, total);
}

/* The ack of our plain LISTEN (what == PROC_EVENT_NONE, ack seq + 1);
 * anything else is an event or someone else's ack. */
static int listen_ack(const struct nlmsghdr *h, void *arg)
{
	const uint32_t *seq = arg;
	if (h->nlmsg_len < OFF_FORK + 4)
		return 0;
	const unsigned char *p = (const unsigned char *)h;
	struct cn_msg cn;
	uint32_t what, err;
	memcpy(&cn, p + NLMSG_HDRLEN, sizeof(cn));
	memcpy(&what, p + OFF_WHAT, 4);
	memcpy(&err, p + OFF_FORK, 4);
	if (what != PROC_EVENT_NONE || cn.ack != *seq + 1)
		return 0;
	return err ? -(int)err : 1;
}

static int attach_filter(int fd)
{
	/* ld loads big-endian words: compare with ntohl(host value). */
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_WHAT),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(PROC_EVENT_FORK), 1,
			 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 4, 5), /* ack */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_FORK + 8), /* child_pid */
		BPF_STMT(BPF_MISC | BPF_TAX, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_FORK + 12), /* tgid */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { CGS_ARRAY_SIZE(code), code };
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)))
		return -errno;
	return 0;
}

static int connect_socket(struct cgsi_forks *f)
{
	struct nl_sock *sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	int rc = nl_connect(sk, NETLINK_CONNECTOR);
	if (rc < 0) {
		nl_socket_free(sk);
		return cgsi_nl_err(rc);
	}
	int fd = nl_socket_get_fd(sk);
	int sz = RCVBUF;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	/* the filter before the group: nothing unfiltered is ever queued */
	if ((rc = attach_filter(fd)) < 0)
		goto fail;
	if ((rc = nl_socket_add_membership(sk, CN_IDX_PROC)) < 0) {
		rc = cgsi_nl_err(rc);
		goto fail;
	}
	uint32_t op = PROC_CN_MCAST_LISTEN;
	struct listen_msg m;
	/* libnl seeds seq from the time: two connector sockets opened in the
	 * same second would share it, and acks are multicast; the port id
	 * makes ours unique */
	uint32_t seq = nl_socket_use_seq(sk) ^ nl_socket_get_local_port(sk);
	/* an overrun here is counted from SO_MEMINFO by the first drain */
	uint64_t overruns = 0;
	struct cgsi_nlreq q = {
		.raw = &m,
		.raw_len = listen_msg(&m, seq, &op, sizeof(op)),
		.flags = CGSI_NLREQ_CONNECTOR,
		.timeout_ms = LISTEN_TIMEOUT_MS,
		.buf = f->buf,
		.buflen = SLOT_SZ,
		.reply = listen_ack,
		.ctx = &seq,
		.overruns = &overruns,
	};
	if ((rc = cgsi_nl_request(sk, &q)) < 0)
		goto fail;
	/* Narrow to forks (6.6+; its ack is filtered out, older kernels
	 * ignore a message of this size). */
	struct cgsi_proc_input in = { PROC_CN_MCAST_LISTEN, PROC_EVENT_FORK };
	send_listen(sk, &in, sizeof(in));
	f->sk = sk;
	f->fd = fd;
	return 0;
fail:
	nl_socket_free(sk);
	return rc;
}

int cgsi_forks_open(struct cgsi_forks *f, const char *proc_root,
		    bool connect, uint64_t now)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	int rc = pthread_mutex_init(&f->lock, NULL);
	if (rc)
		return -rc;
	f->nmax = pid_max(proc_root);
	if (f->nmax > CGSI_FORKS_KEEP)
		f->nmax = CGSI_FORKS_KEEP;
	uint32_t icap = 64;
	while (icap < 2 * f->nmax) /* load at most 1/2 */
		icap <<= 1;
	f->imask = icap - 1;
	f->node = calloc((size_t)f->nmax + 1, sizeof(*f->node));
	f->idx = calloc(icap, sizeof(*f->idx));
	f->buf = malloc((size_t)SLOTS * SLOT_SZ);
	f->trust_seq = 1;
	atomic_store_explicit(&f->last_drain, now, memory_order_relaxed);
	if (!f->node || !f->idx || !f->buf) {
		cgsi_forks_close(f);
		return -ENOMEM;
	}
	if (connect && (rc = connect_socket(f)) < 0) {
		cgsi_forks_close(f);
		return rc;
	}
	return 0;
}

void cgsi_forks_close(struct cgsi_forks *f)
{
	if (f->sk) {
		uint32_t op = PROC_CN_MCAST_IGNORE;
		send_listen(f->sk, &op, sizeof(op));
		nl_socket_free(f->sk);
	}
	f->sk = NULL;
	f->fd = -1;
	free(f->node);
	free(f->idx);
	free(f->buf);
	f->node = NULL;
	f->idx = NULL;
	f->buf = NULL;
	pthread_mutex_destroy(&f->lock);
}

void cgsi_forks_record_locked(struct cgsi_forks *f, uint32_t parent,
			      uint32_t child, uint64_t when_ms)
{
	if (!child || child > PID_MASK || parent > PID_MASK) {
		f->untracked++;
		return;
	}
	f->seq++;
	f->events++;
	uint32_t i = idx_slot(f, child), n = f->idx[i];
	if (n) {
		list_unlink(f, n); /* forked again: now the newest */
	} else if (f->nused < f->nmax) {
		n = f->idx[i] = ++f->nused;
	} else {
		/* full: forget the oldest fork, reuse its node */
		n = f->node[0].next;
		list_unlink(f, n);
		idx_remove(f, idx_slot(f, f->node[n].pid));
		f->evicted_seq = f->node[n].link >> CGSI_FORKS_PID_BITS;
		f->evictions++;
		f->idx[idx_slot(f, child)] = n;
	}
	struct cgsi_fork_node *x = &f->node[n];
	x->link = f->seq << CGSI_FORKS_PID_BITS | parent;
	x->pid = child;
	x->when = (uint32_t)when_ms;
	list_append(f, n);
}

void cgsi_forks_lost_locked(struct cgsi_forks *f, uint64_t n)
{
	if (!n)
		return;
	f->drops += n;
	f->trust_seq = f->seq + 1;
}

static void read_drops(struct cgsi_forks *f)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);
	if (getsockopt(f->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 ||
	    len < (SK_MEMINFO_DROPS + 1) * sizeof(uint32_t))
		return;
	/* sk_drops counts since the socket opened; 32 bits, may wrap */
	uint32_t total = mem[SK_MEMINFO_DROPS];
	uint32_t seen = (uint32_t)f->drops;
	cgsi_forks_lost_locked(f, (uint32_t)(total - seen));
}

void cgsi_forks_drain_locked(struct cgsi_forks *f, uint64_t now)
{
	atomic_store_explicit(&f->last_drain, now, memory_order_relaxed);
	if (f->fd < 0)
		return;
	/* kernel timestamps (CLOCK_MONOTONIC ns) -> rollup ms */
	int64_t off = (int64_t)now - (int64_t)mono_ms();
	struct mmsghdr mm[SLOTS];
	struct iovec iov[SLOTS];
	/* the queue drops only when full, so an empty drain means no drop
	 * since the counter was last read: skip that syscall */
	bool got = false;
	for (;;) {
		for (int i = 0; i < SLOTS; i++) {
			iov[i].iov_base = f->buf + (size_t)i * SLOT_SZ;
			iov[i].iov_len = SLOT_SZ;
			memset(&mm[i], 0, sizeof(mm[i]));
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		int n = recvmmsg(f->fd, mm, SLOTS, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) { /* overrun: counted below */
				got = true;
				continue;
			}
			break; /* EAGAIN: empty */
		}
		got |= n > 0;
		for (int i = 0; i < n; i++) {
			const unsigned char *p = iov[i].iov_base;
			if (mm[i].msg_len < OFF_FORK + 16)
				continue;
			uint32_t what, v[4];
			uint64_t ts;
			memcpy(&what, p + OFF_WHAT, 4);
			if (what != PROC_EVENT_FORK)
				continue;
			memcpy(&ts, p + OFF_TS, 8);
			memcpy(v, p + OFF_FORK, sizeof(v));
			if (v[2] != v[3]) /* a thread (filter not attached?) */
				continue;
			int64_t w = (int64_t)(ts / 1000000u) + off;
			cgsi_forks_record_locked(f, v[1], v[3],
						 w > 0 ? (uint64_t)w : 1);
		}
		if (n < SLOTS)
			break;
	}
	if (got)
		read_drops(f);
}

void cgsi_forks_maybe_drain(struct cgsi_forks *f, uint64_t now)
{
	uint64_t last = atomic_load_explicit(&f->last_drain,
					     memory_order_relaxed);
	if (now < last + CGSI_FORKS_DRAIN_MS)
		return;
	if (pthread_mutex_trylock(&f->lock))
		return; /* someone is draining */
	cgsi_forks_drain_locked(f, now);
	pthread_mutex_unlock(&f->lock);
}

static inline uint64_t link_seq(uint64_t l)
{
	return l >> CGSI_FORKS_PID_BITS;
}

static inline uint32_t link_parent(uint64_t l)
{
	return (uint32_t)(l & PID_MASK);
}

uint32_t cgsi_forks_parent_locked(struct cgsi_forks *f, uint32_t tgid,
				  uint64_t life_ms, uint64_t now)
{
	const struct cgsi_fork_node *x = lookup(f, tgid);
	uint64_t l = node_link(x);
	if (!l || link_seq(l) < f->trust_seq)
		return 0;
	/* forked after the exiting process started: a newer process */
	if (life_ms != UINT64_MAX) {
		if (life_ms >= (1ull << 31) - 2 * CGSI_FORKS_SLACK_MS)
			return 0; /* too old for the 32-bit times */
		uint32_t start = (uint32_t)(now - life_ms);
		if ((int32_t)(x->when - start) >
		    (int32_t)CGSI_FORKS_SLACK_MS)
			return 0;
	}
	return link_parent(l);
}

int cgsi_forks_chain_locked(struct cgsi_forks *f, uint32_t tgid,
			    uint64_t life_ms, uint64_t now,
			    struct cgsi_fork_hop *hop, int max)
{
	uint32_t a = cgsi_forks_parent_locked(f, tgid, life_ms, now);
	if (!a)
		return 0;
	uint64_t child_seq = link_seq(node_link(lookup(f, tgid)));
	int n = 0;
	while (a && n < max) {
		const struct cgsi_fork_node *x = lookup(f, a);
		uint64_t l = node_link(x);
		uint64_t s = link_seq(l);
		if (l && s >= child_seq)
			break; /* pid a was forked again after its child */
		hop[n].pid = a;
		hop[n].seq = s;
		hop[n].when = l ? x->when : 0;
		hop[n].cache_ok = !l && f->trust_seq == 1 && !f->evictions;
		hop[n].at = f->seq;
		n++;
		/* a forked before tracking started, or its fork may predate
		 * a lost event: a itself is right (its child's entry is
		 * trusted and a was not forked again), its parent unknown */
		if (!l || s < f->trust_seq)
			break;
		child_seq = s;
		a = link_parent(l);
	}
	return n;
}

bool cgsi_forks_same_locked(struct cgsi_forks *f, uint32_t pid,
			    const struct cgsi_fork_hop *h)
{
	uint64_t l = node_link(lookup(f, pid));
	if (!l) /* never forked, or forgotten: not forked again unless a
		 * fork after the chain was forgotten too */
		return f->evicted_seq <= h->at;
	return link_seq(l) == h->seq;
}
