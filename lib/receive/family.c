/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A shard's cpumask: (de)register it, keeping the events that race the
 * ack. */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <stdlib.h>

#include "receive/listener_int.h"
#include "util/genl.h"

#define CGSI_ACK_TIMEOUT_MS 2000
#define CGSI_PENDING_MAX (8u << 20)

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
	const struct cgsi_genl_attr a = { .type = attr, .str = cpus };
	struct mask_ctx c = { .s = s, .family = family };
	struct cgsi_nlreq q = {
		.timeout_ms = CGSI_ACK_TIMEOUT_MS,
		/* slot memory is free at open/close */
		.buf = s->bufs,
		.buflen = (size_t)CGSI_RECV_SLOTS * CGSI_RECV_SLOT_SIZE,
		.other = keep_events ? keep_event : NULL,
		.ctx = &c,
		.overruns = &s->loss.enobufs,
	};
	return cgsi_genl_request(s->sk, family, TASKSTATS_CMD_GET,
				 TASKSTATS_GENL_VERSION, &a, &q);
}
