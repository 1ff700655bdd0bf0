/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Generic netlink: a socket, the TASKSTATS family, one request. */
#ifndef CGS_UTIL_GENL_H
#define CGS_UTIL_GENL_H

#include <stdbool.h>
#include <stdint.h>

#include "util/nlreq.h"

struct nl_sock;

/* A generic netlink socket bound to port (0: autobind). Sequence checks
 * are off: exit events carry the kernel's per-CPU sequence numbers. */
int cgsi_genl_connect(struct nl_sock **out, uint32_t port);
/* An autobound one and the TASKSTATS family id (-CGS_ERR_NO_TASKSTATS
 * when the kernel has none). */
int cgsi_genl_socket(struct nl_sock **out, int *family);

/* The one attribute of a request: a string, else a u32. */
struct cgsi_genl_attr {
	int type;
	const char *str;
	uint32_t u32;
};

/*
 * Send command cmd (version) of family with NLM_F_ACK and attribute a,
 * and wait for its replies as q says (cgsi_nl_request(); q->msg is set
 * here). -ENOMEM when the message cannot be built.
 */
int cgsi_genl_request(struct nl_sock *sk, int family, uint8_t cmd,
		      uint8_t version, const struct cgsi_genl_attr *a,
		      struct cgsi_nlreq *q);

#endif
