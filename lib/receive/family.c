/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The TASKSTATS generic-netlink family: resolve it, (de)register masks. */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <stdlib.h>

#include "receive/listener_int.h"
#include "util/nlreq.h"

#define CGSI_ACK_TIMEOUT_MS 2000
#define CGSI_PENDING_MAX (8u << 20)
#define CGSI_CTRL_BUF 8192 /* the controller's answer for taskstats: <1 KiB */

int cgsi_genl_connect(struct nl_sock **out, uint32_t port)
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
		nl_socket_free(sk);
		return cgsi_nl_err(r);
	}
	*out = sk;
	return 0;
}

static int family_reply(const struct nlmsghdr *h, void *arg)
{
	int *family = arg;
	struct nlmsghdr *m = (struct nlmsghdr *)h; /* libnl wants no const */
	if (h->nlmsg_type != GENL_ID_CTRL || !genlmsg_valid_hdr(m, 0))
		return -EBADMSG;
	struct nlattr *a = nlmsg_find_attr(m, GENL_HDRLEN, CTRL_ATTR_FAMILY_ID);
	if (!a || nla_len(a) < (int)sizeof(uint16_t))
		return -EBADMSG;
	*family = nla_get_u16(a);
	return 0; /* the ack follows */
}

/* CTRL_CMD_GETFAMILY "TASKSTATS": its id, or -CGS_ERR_NO_TASKSTATS. */
static int resolve(struct nl_sock *sk, int *family)
{
	unsigned char buf[CGSI_CTRL_BUF];
	struct nl_msg *msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	int r = -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0,
			 NLM_F_ACK, CTRL_CMD_GETFAMILY, 1))
		goto out;
	r = nla_put_string(msg, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME);
	if (r < 0) {
		r = cgsi_nl_err(r);
		goto out;
	}
	*family = 0;
	struct cgsi_nlreq q = {
		.msg = msg,
		.timeout_ms = CGSI_ACK_TIMEOUT_MS,
		.buf = buf,
		.buflen = sizeof(buf),
		.reply = family_reply,
		.ctx = family,
	};
	r = cgsi_nl_request(sk, &q);
	if (r == -ENOENT || (r == 0 && *family <= 0))
		r = -CGS_ERR_NO_TASKSTATS;
out:
	nlmsg_free(msg);
	return r;
}

int cgsi_genl_socket(struct nl_sock **out, int *family)
{
	int r = cgsi_genl_connect(out, 0);
	if (r < 0)
		return r;
	r = resolve(*out, family);
	if (r < 0) {
		nl_socket_free(*out);
		*out = NULL;
	}
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

struct mask_ctx {
	struct cgsi_shard *s;
	int family;
};

/* An exit event that raced the registration ack. */
static int keep_event(const struct nlmsghdr *h, void *arg)
{
	struct mask_ctx *c = arg;
	if (h->nlmsg_type == c->family)
		keep_pending(c->s, h, h->nlmsg_len);
	return 0;
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
	struct mask_ctx c = { .s = s, .family = family };
	struct cgsi_nlreq q = {
		.msg = msg,
		.timeout_ms = CGSI_ACK_TIMEOUT_MS,
		/* slot memory is free at open/close */
		.buf = s->bufs,
		.buflen = (size_t)CGSI_RECV_SLOTS * CGSI_RECV_SLOT_SIZE,
		.other = keep_events ? keep_event : NULL,
		.ctx = &c,
		.overruns = &s->loss.enobufs,
	};
	r = cgsi_nl_request(s->sk, &q);
out:
	nlmsg_free(msg);
	return r;
}
