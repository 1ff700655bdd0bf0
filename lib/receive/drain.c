/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hot path: batched receive, decode into per-shard records, deliver. */
#include <linux/netlink.h>
#include <stdlib.h>

#include "receive/listener_int.h"

/* A message not of the family: an error the kernel reports is logged. */
static __attribute__((cold)) void note_other(struct cgs_listener *l,
					     const struct cgsi_shard *s,
					     const struct nlmsghdr *h)
{
	if (h->nlmsg_type == NLMSG_ERROR &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
		const struct nlmsgerr *e = NLMSG_DATA(h);
		if (e->error)
			cgsi_log(l, CGS_LOG_WARNING,
				 "shard %u: netlink error %d", s->idx,
				 e->error);
	}
}

static void note_seq(struct cgsi_shard *s, uint32_t seq)
{
	/* nlmsg_seq of exit events is a per-CPU counter: on a one-CPU shard
	 * a jump is a loss (sk_drops stays the exact figure). */
	if (s->have_seq) {
		uint32_t gap = seq - s->last_seq - 1;
		if (gap && gap < (1u << 30))
			s->loss.seq_gaps += gap;
	}
	s->last_seq = seq;
	s->have_seq = true;
}

/* What the events of one recvmmsg() batch share. ev: its sz, shard and
 * recv_ns set once; each message sets the rest (the callback sees it
 * through a const pointer, valid only during the call, so it cannot keep
 * or change it). */
struct batch {
	struct cgs_exit ev;
	unsigned dflags; /* cgs_decode_msg()'s */
	cgs_exit_fn fn;
	void *user;
};

static inline void batch_start(struct batch *b, const struct cgs_listener *l,
			       const struct cgsi_shard *s, cgs_exit_fn fn,
			       void *user)
{
	*b = (struct batch){
		.ev = { .sz = sizeof(struct cgs_exit), .shard = s->idx,
			.recv_ns = cgsi_now_real_ns() },
		.dflags = (l->flags & CGS_NO_TGID) | CGS_DECODE_REUSE,
		.fn = fn,
		.user = user,
	};
}

/* The messages of one datagram to the batch's callback. Inlined in both
 * loops that call it. */
static inline __attribute__((always_inline)) int
deliver_datagram(struct cgs_listener *l, struct cgsi_shard *s,
		 struct batch *b, const unsigned char *buf, size_t len)
{
	struct cgs_exit *ev = &b->ev;
	int delivered = 0;
	/* int, as NLMSG_NEXT expects: a last message whose length is not
	 * aligned makes it negative (a size_t would wrap and read on) */
	int rem = (int)len;
	for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	     NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
		if (cgs_unlikely(h->nlmsg_type != l->family)) {
			note_other(l, s, h);
			continue;
		}
		if (s->single_cpu >= 0)
			note_seq(s, h->nlmsg_seq);
		/* the shard's own records, zeroed at open: their unused
		 * delay slots stay zero */
		int r = cgs_decode_msg(h, h->nlmsg_len, b->dflags, &s->task,
				       &s->group, &s->dstats);
		if (r <= 0)
			continue;
		ev->task = (r & CGS_DECODED_TASK) ? &s->task : NULL;
		ev->group = (r & CGS_DECODED_GROUP) ? &s->group : NULL;
		ev->raw = h;
		ev->raw_len = h->nlmsg_len;
		delivered++;
		if (!b->fn)
			s->loss.discarded++;
		else if (b->fn(ev, b->user))
			s->halt = true;
	}
	return delivered;
}

static int drain_pending(struct cgs_listener *l, struct cgsi_shard *s,
			 cgs_exit_fn fn, void *user)
{
	int total = 0;
	size_t off = 0;
	struct batch b;

	batch_start(&b, l, s, fn, user);
	while (off + sizeof(uint32_t) <= s->pending_len) {
		uint32_t len;
		memcpy(&len, s->pending + off, sizeof(len));
		off += sizeof(len);
		if (len > s->pending_len - off || len > CGSI_RECV_SLOT_SIZE)
			break;
		memcpy(s->bufs, s->pending + off, len); /* aligned copy */
		off += len;
		total += deliver_datagram(l, s, &b, s->bufs, len);
	}
	free(s->pending);
	s->pending = NULL;
	s->pending_len = 0;
	return total;
}

int cgsi_shard_drain(struct cgs_listener *l, struct cgsi_shard *s,
		     cgs_exit_fn fn, void *user)
{
	return cgsi_shard_drain_max(l, s, fn, user, ~0u, NULL);
}

int cgsi_shard_drain_max(struct cgs_listener *l, struct cgsi_shard *s,
			 cgs_exit_fn fn, void *user, unsigned max_batches,
			 bool *more)
{
	int total = 0;
	if (cgs_unlikely(s->pending_len))
		total = drain_pending(l, s, fn, user);
	for (;;) {
		/* recvmmsg sets msg_len and msg_flags of each slot it fills,
		 * and only those are read: no per-batch reset */
		int n = recvmmsg(s->fd, s->msgs, CGSI_RECV_SLOTS, MSG_DONTWAIT,
				 NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return total;
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* one report per overrun episode; the exact
				 * number lost is in sk_drops */
				s->loss.enobufs++;
				continue;
			}
			return -errno;
		}
		struct batch b;

		batch_start(&b, l, s, fn, user);
		for (int i = 0; i < n; i++) {
			if (cgs_unlikely(s->msgs[i].msg_hdr.msg_flags &
					 MSG_TRUNC)) {
				s->loss.truncated++;
				continue;
			}
			total += deliver_datagram(l, s, &b, s->iov[i].iov_base,
						  s->msgs[i].msg_len);
		}
		if (n < CGSI_RECV_SLOTS || s->halt) {
			s->halt = false;
			return total;
		}
		if (!--max_batches) {
			*more = true; /* the socket may hold more */
			return total;
		}
	}
}

int cgs_listener_drain(struct cgs_listener *l, unsigned shard,
		       cgs_exit_fn fn, void *user)
{
	if (!l || shard >= l->nshards)
		return -EINVAL;
	return cgsi_shard_drain(l, &l->shards[shard], fn, user);
}
