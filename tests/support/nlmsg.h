/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One builder for the netlink messages tests synthesize: a generic netlink
 * header, attributes, nests. Written byte by byte (not with the kernel's
 * structs) so a test can also build what no kernel sends: bad lengths,
 * unaligned attributes, unknown types.
 */
#ifndef CGS_TESTS_NLMSG_H
#define CGS_TESTS_NLMSG_H

#include <stddef.h>
#include <stdint.h>

struct mb {
	unsigned char b[8192];
	size_t len;
};

/* nlmsghdr of `type` (flags, seq, port 0) and genlmsghdr (cmd, version 1). */
void mb_init(struct mb *m, uint16_t type, uint8_t cmd);
/* nlmsg_flags and nlmsg_seq: for a message sent to the kernel (a request,
 * its ack asked for), not one it is made to look as if it had sent. */
void mb_request(struct mb *m, uint16_t flags, uint32_t seq);
/* An attribute: returns its offset (for mb_nest_end or to damage it). */
size_t mb_put(struct mb *m, uint16_t type, const void *d, size_t n);
/* Open a nest; mb_nest_end(m, its offset) closes it. */
size_t mb_nest(struct mb *m, uint16_t type);
void mb_nest_end(struct mb *m, size_t at);
/* Write nlmsg_len: call last. */
void mb_finish(struct mb *m);
/* A taskstats AGGR nest: the id attribute (PID or TGID) and stats (type
 * 3, TASKSTATS_TYPE_STATS) of n bytes. */
void mb_record(struct mb *m, uint16_t nest, uint16_t idt, uint32_t id,
	       const void *stats, size_t n);

#endif
