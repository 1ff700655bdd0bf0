/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Generic netlink requests, shared by the listener (family resolution,
 * cpumask registration) and the query API: every request is one message
 * with one attribute, acked.
 */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "util/common.h"
#include "util/genl.h"

#define CGSI_CTRL_TIMEOUT_MS 2000
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

int cgsi_genl_request(struct nl_sock *sk, int family, uint8_t cmd,
		      uint8_t version, const struct cgsi_genl_attr *a,
		      struct cgsi_nlreq *q)
{
	struct nl_msg *msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	int r = -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_ACK,
			 cmd, version))
		goto out;
	r = a->str ? nla_put_string(msg, a->type, a->str)
		   : nla_put_u32(msg, a->type, a->u32);
	if (r < 0) {
		r = cgsi_nl_err(r);
		goto out;
	}
	q->msg = msg;
	r = cgsi_nl_request(sk, q);
	q->msg = NULL;
out:
	nlmsg_free(msg);
	return r;
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
	const struct cgsi_genl_attr a = {
		.type = CTRL_ATTR_FAMILY_NAME,
		.str = TASKSTATS_GENL_NAME,
	};
	struct cgsi_nlreq q = {
		.timeout_ms = CGSI_CTRL_TIMEOUT_MS,
		.buf = buf,
		.buflen = sizeof(buf),
		.reply = family_reply,
		.ctx = family,
	};
	*family = 0;
	int r = cgsi_genl_request(sk, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, &a,
				  &q);
	if (r == -ENOENT || (r == 0 && *family <= 0))
		r = -CGS_ERR_NO_TASKSTATS;
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
