/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Versioned binary capture of raw taskstats exit messages (--record,
 * --replay). All integers little-endian.
 *
 * File header:
 *    0  magic    8 bytes "\x89TSCAP\r\n" (catches text-mode mangling)
 *    8  u32      format version (CAP_VERSION)
 *   12  u32      header length in bytes (>= 32; records start here)
 *   16  u64      creation time, ns since the epoch
 *   24  u32      shards of the recording listener
 *   28  u32      CRC-32 of the header bytes with this field zeroed
 *   32  text     host info, "key=value\n" lines, up to the header length
 *
 * Record:
 *    0  u32      marker "TSCR"
 *    4  u32      type (CAP_REC_EXIT, CAP_REC_COUNTERS; readers skip
 *                types they don't know)
 *    8  u32      body length (<= CAP_BODY_MAX)
 *   12  u32      CRC-32 of the 16-byte record header (this field zeroed)
 *                followed by the body
 *   16  body
 *
 * CAP_REC_EXIT body: u64 recv_ns, u32 shard, u32 raw_len, u16 task path
 * length, u16 group path length, u32 zero, then the netlink message exactly
 * as received (nlmsghdr included), the cgroup path the task record was
 * attributed to, the path of the TGID record (empty if none); paths are not
 * NUL-terminated.
 *
 * CAP_REC_COUNTERS body (written at each snapshot and on stop): u64 time_ns,
 * dropped, malformed, enobufs, seq_gaps, truncated; a longer body is fine.
 */
#ifndef TSC_CAPTURE_H
#define TSC_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"

#define CAP_MAGIC "\x89TSCAP\r\n"
#define CAP_VERSION 1u
#define CAP_HDR_FIXED 32u
#define CAP_REC_HDR 16u
#define CAP_REC_MARKER 0x52435354u /* "TSCR" little-endian */
#define CAP_BODY_MAX (1u << 20)
#define CAP_PATH_MAX 65535u

enum cap_rec_type { CAP_REC_EXIT = 1, CAP_REC_COUNTERS = 2 };

struct cap_counters {
	uint64_t time_ns;
	uint64_t dropped, malformed, enobufs, seq_gaps, truncated;
};

uint32_t cap_crc32(uint32_t crc, const void *p, size_t n);

/* Encoders append to b. */
void cap_encode_header(struct buf *b, uint64_t created_ns, unsigned shards,
		       const char *hostinfo);
/* Fails with -E2BIG when the message or a path can't be represented. */
int cap_encode_exit(struct buf *b, uint64_t recv_ns, unsigned shard,
		    const void *raw, size_t raw_len, const char *task_path,
		    const char *group_path);
void cap_encode_counters(struct buf *b, const struct cap_counters *c);

struct cap_exit {
	uint64_t recv_ns;
	unsigned shard;
	const void *raw;       /* owned by the reader, valid until next read */
	size_t raw_len;
	const char *task_path; /* NUL-terminated copies, same lifetime */
	const char *group_path;
};

struct cap_reader;

/* Open and validate the header. On failure returns -errno / -EBADMSG /
 * -EPROTO (other version) with a one-line reason in err. */
int cap_open(struct cap_reader **out, const char *path, char *err,
	     size_t errlen);
/* Same, on an already open stream (owned by the reader afterwards). */
int cap_open_stream(struct cap_reader **out, FILE *f, char *err,
		    size_t errlen);
void cap_close(struct cap_reader *r);

uint64_t cap_created_ns(const struct cap_reader *r);
const char *cap_hostinfo(const struct cap_reader *r);

/*
 * Next record: returns CAP_REC_EXIT (fills *ex) or CAP_REC_COUNTERS (fills
 * *ctr), 0 at a clean end of file, or a negative errno with a message that
 * names the record number and byte offset (truncated file, bad marker,
 * length out of range, checksum mismatch, inconsistent lengths).
 */
int cap_next(struct cap_reader *r, struct cap_exit *ex,
	     struct cap_counters *ctr, char *err, size_t errlen);
/* Records returned so far; unknown record types skipped. */
uint64_t cap_records(const struct cap_reader *r);
uint64_t cap_skipped(const struct cap_reader *r);

#endif
