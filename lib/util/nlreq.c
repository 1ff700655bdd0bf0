/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one request/reply loop: family resolution, listener (de)registration,
 * queries and the proc connector's subscription all send one message and
 * wait, with a deadline, for what answers it. The receive is ours, not
 * nl_recvmsgs(): it must not allocate, must see the exit events that race
 * a registration ack, and must give up on time.
 */
#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "util/common.h"
#include "util/nlreq.h"

/* One received message: 0 go on, else *done and what the request ends
 * with. */
static int one(const struct cgsi_nlreq *q, const struct nlmsghdr *h,
	       uint32_t seq, uint32_t port, bool *done)
{
	int r;
	bool cn = q->flags & CGSI_NLREQ_CONNECTOR;
	if (!cn && (h->nlmsg_seq != seq || h->nlmsg_pid != port)) {
		r = q->other ? q->other(h, q->ctx) : 0;
		*done = r != 0;
		return r;
	}
	if (!cn) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);
			*done = true;
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EBADMSG;
			return e->error; /* 0 (the ack) or -errno */
		}
		if (h->nlmsg_type == NLMSG_DONE) {
			*done = true;
			return 0;
		}
	}
	r = q->reply ? q->reply(h, q->ctx) : 0;
	*done = r != 0;
	return r;
}

int cgsi_nl_request(struct nl_sock *sk, const struct cgsi_nlreq *q)
{
	uint32_t seq;
	int r;
	if (q->msg) {
		r = nl_send_auto(sk, q->msg);
		seq = nlmsg_hdr(q->msg)->nlmsg_seq;
	} else {
		r = nl_sendto(sk, (void *)q->raw, q->raw_len);
		seq = ((const struct nlmsghdr *)q->raw)->nlmsg_seq;
	}
	if (r < 0)
		return cgsi_nl_err(r);
	/* the kernel answers a unicast request to its sender's port id */
	uint32_t port = nl_socket_get_local_port(sk);
	int fd = nl_socket_get_fd(sk);
	uint64_t deadline = cgsi_now_mono_ms() + q->timeout_ms;
	for (;;) {
		uint64_t now = cgsi_now_mono_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t left = deadline - now;
		int n = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		ssize_t len = recv(fd, q->buf, q->buflen, MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == ENOBUFS && q->overruns) {
				(*q->overruns)++;
				continue;
			}
			return -errno;
		}
		/* int, as NLMSG_NEXT expects: see receive/drain.c */
		int rem = (int)len;
		for (const struct nlmsghdr *h = q->buf; NLMSG_OK(h, rem);
		     h = NLMSG_NEXT(h, rem)) {
			bool done = false;
			r = one(q, h, seq, port, &done);
			if (done)
				return r;
		}
	}
}
