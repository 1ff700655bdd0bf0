/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The TASKSTATS generic-netlink family: resolve it, (de)register masks. */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <poll.h>
#include <stdlib.h>

#include "receive/listener_int.h"

#define CGSI_ACK_TIMEOUT_MS 2000
#define CGSI_PENDING_MAX (8u << 20)

uint32_t cgsi_test_next_port;

int cgsi_genl_socket(struct nl_sock **out, int *family, uint32_t port)
{
	struct nl_sock *sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	if (port)
		nl_socket_set_local_port(sk, port);
	/* exit events carry the kernel's per-CPU sequence numbers */
	nl_socket_disable_seq_check(sk);
	int r = genl_connect(sk);
	if (r < 0) {
		r = cgsi_nl_err(r);
		goto fail;
	}
	r = genl_ctrl_resolve(sk, TASKSTATS_GENL_NAME);
	if (r == -NLE_OBJ_NOTFOUND || r == 0) {
		r = -CGS_ERR_NO_TASKSTATS;
		goto fail;
	}
	if (r < 0) {
		r = cgsi_nl_err(r);
		goto fail;
	}
	*family = r;
	*out = sk;
	return 0;
fail:
	nl_socket_free(sk);
	return r;
}

static void keep_pending(struct cgsi_shard *s, const void *m, size_t len)
{
	if (s->pending_len + len + sizeof(uint32_t) > CGSI_PENDING_MAX) {
		s->loss.dropped++; /* we, not the kernel, had to drop it */
		return;
	}
	unsigned char *p = realloc(s->pending,
				   s->pending_len + len + sizeof(uint32_t));
	if (!p) {
		s->loss.dropped++;
		return;
	}
	uint32_t l32 = (uint32_t)len;
	memcpy(p + s->pending_len, &l32, sizeof(l32));
	memcpy(p + s->pending_len + sizeof(l32), m, len);
	s->pending = p;
	s->pending_len += len + sizeof(l32);
}

/*
 * Send (DE)REGISTER_CPUMASK from the shard's own socket (the kernel keys
 * listeners by the sender's port id) and wait for the ack. Exit events that
 * race ahead of the ack are kept for the first drain when keep_events.
 */
int cgsi_send_mask(struct cgsi_shard *s, int family, int attr,
		   const char *cpus, bool keep_events)
{
	struct nl_msg *msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	int r = -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_ACK,
			 TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION))
		goto out;
	r = nla_put_string(msg, attr, cpus);
	if (r < 0) {
		r = cgsi_nl_err(r);
		goto out;
	}
	r = nl_send_auto(s->sk, msg);
	if (r < 0) {
		r = cgsi_nl_err(r);
		goto out;
	}
	uint32_t seq = nlmsg_hdr(msg)->nlmsg_seq;
	uint32_t port = nl_socket_get_local_port(s->sk);

	unsigned char *buf = s->bufs; /* slot memory is free at open/close */
	size_t buflen = (size_t)CGSI_RECV_SLOTS * CGSI_RECV_SLOT_SIZE;
	uint64_t deadline = cgsi_now_mono_ms() + CGSI_ACK_TIMEOUT_MS;
	for (;;) {
		uint64_t now = cgsi_now_mono_ms();
		if (now >= deadline) {
			r = -ETIMEDOUT;
			goto out;
		}
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		int pr = poll(&pfd, 1, (int)(deadline - now));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		ssize_t n = recv(s->fd, buf, buflen, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == ENOBUFS) {
				s->loss.enobufs++;
				continue;
			}
			r = -errno;
			goto out;
		}
		size_t rem = (size_t)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf;
		     NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
			if (h->nlmsg_type == NLMSG_ERROR &&
			    h->nlmsg_seq == seq && h->nlmsg_pid == port) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					r = -EBADMSG;
				else
					r = e->error; /* 0 or -errno */
				goto out;
			}
			if (h->nlmsg_type == family && keep_events)
				keep_pending(s, h, h->nlmsg_len);
		}
	}
out:
	nlmsg_free(msg);
	return r;
}
