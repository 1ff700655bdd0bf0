/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One netlink request and its replies, with a deadline. See nlreq.c. */
#ifndef CGS_UTIL_NLREQ_H
#define CGS_UTIL_NLREQ_H

#include <stddef.h>
#include <stdint.h>

struct nl_msg;
struct nl_sock;
struct nlmsghdr;

/* A reply of the request: 0 wait for more, >0 done (returned), <0 the
 * request failed (returned). */
typedef int (*cgsi_nlreq_fn)(const struct nlmsghdr *h, void *ctx);

/* The proc connector answers on its multicast group: every message is
 * NLMSG_DONE from port 0, numbered per CPU, and the ack is in the payload,
 * so every message goes to `reply`, which alone ends the request. */
#define CGSI_NLREQ_CONNECTOR (1u << 0)

struct cgsi_nlreq {
	struct nl_msg *msg;      /* the request (sequence number assigned
				  * on sending), or */
	const void *raw;         /* a complete one (its own sequence number) */
	size_t raw_len;
	unsigned flags;          /* CGSI_NLREQ_* */
	unsigned timeout_ms;
	void *buf;               /* receive buffer */
	size_t buflen;
	cgsi_nlreq_fn reply;     /* NULL: replies are ignored */
	cgsi_nlreq_fn other;     /* messages not of the request (events that
				  * race it); NULL: ignored */
	void *ctx;
	uint64_t *overruns;      /* ENOBUFS: counted here and waited on (an
				  * event socket); NULL: the request fails */
};

/*
 * Send the request on sk and hand its replies to req->reply until an ack
 * (0), NLMSG_DONE (0), an error reply (its -errno), reply() ending it
 * (what it returned) or the deadline (-ETIMEDOUT). libnl errors come back
 * as -errno (cgsi_nl_err).
 */
int cgsi_nl_request(struct nl_sock *sk, const struct cgsi_nlreq *req);

#endif
