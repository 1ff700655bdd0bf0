/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/decode.h>: decoding taskstats netlink messages and payloads
 * into struct cgs_record, without a listener. Part of <cgstats.h>.
 */
#ifndef CGSTATS_DECODE_H
#define CGSTATS_DECODE_H

#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counters the decoder keeps; a listener keeps one set per shard. */
struct cgs_decode_stats {
	size_t sz;                /* sizeof(struct cgs_decode_stats) */
	uint64_t messages;        /* netlink messages looked at */
	uint64_t records;         /* records produced */
	uint64_t malformed;       /* messages rejected */
	uint64_t unknown_version; /* records newer than the library knows,
				   * decoded by their known prefix */
	uint64_t unknown_bytes;   /* sum of their undecoded trailing bytes */
	uint64_t layout_guesses;  /* records whose layout was inferred (version
				   * 0 or a v14 header on a longer payload) */
	uint64_t tgid_skipped;    /* TGID records ignored (CGS_NO_TGID) */
	/* From 1.3: records with version 0 (the TGID aggregates of kernels
	 * before 16c4f0211aaa "taskstats: set version in TGID exit
	 * notifications"), decoded by their size (or by the layout of the
	 * task record beside them); also in layout_guesses */
	uint64_t version0;
};

/*
 * CGS_DECODE_REUSE: a cgs_decode_msg() flag saying that *task and *group
 * are records the library filled before (the previous call's) or that were
 * zeroed (CGS_OPTS): the bytes no field of the kernel's struct version
 * maps to -- padding, the delay slots no kernel version fills (from
 * cgs_delay_classes() to CGS_DELAY_SLOTS) -- are then left as they are,
 * zero, and a v15+ record is written field by field without clearing the
 * record first. The result is byte for byte the same. The listener does
 * this with its own records. Without the flag every byte is written.
 */
#define CGS_DECODE_REUSE (1u << 1)

/* cgs_decode_msg() return bits */
#define CGS_DECODED_TASK (1u << 0)  /* *task was filled (thread/process) */
#define CGS_DECODED_GROUP (1u << 1) /* *group was filled (TGID kind) */

/**
 * cgs_decode_msg() - Decode one taskstats generic-netlink message.
 * @msg: The message, nlmsghdr included, carrying a TASKSTATS_CMD_NEW (an
 *	exit event or a query's reply); any alignment is fine. Not kept.
 * @len: Bytes readable at @msg; the message's nlmsg_len must fit in them.
 *	Only the first message is decoded; bytes after it are ignored.
 * @flags: 0, or CGS_NO_TGID (the TGID record is skipped, not decoded)
 *	and/or CGS_DECODE_REUSE (see there).
 * @task: Receives the thread or process record; not NULL, sz set (see
 *	top). A smaller (older) struct gets its first sz bytes.
 * @group: Receives the TGID aggregate, as @task; may be NULL only with
 *	CGS_NO_TGID.
 * @st: Counters to add to, or NULL: messages counts every message looked
 *	at (-ENOMSG ones too), malformed the -EBADMSG ones, the others only
 *	accepted messages.
 *
 * A task record whose message also carries a TGID record, or with
 * CGS_AC_AGROUP, is of kind CGS_KIND_PROCESS. Never reads outside
 * [msg, msg+len). On error *task and *group may have been written.
 *
 * Context: Any thread; no allocation, no locks.
 * Return: A bitmask (> 0): CGS_DECODED_TASK if *task was filled (thread
 * or process kind), CGS_DECODED_GROUP if *group was filled (TGID kind);
 * 0 if the only record was skipped (CGS_NO_TGID); -EINVAL for a NULL
 * @msg or @task, a NULL @group without CGS_NO_TGID, or an sz too small to
 * hold sz; -ENOMSG for a message that is not a taskstats record (an
 * error, ack, done or overrun message, or another command); -EBADMSG for
 * malformed input.
 */
CGS_EXPORT int cgs_decode_msg(const void *msg, size_t len, unsigned flags,
			      struct cgs_record *task, struct cgs_record *group,
			      struct cgs_decode_stats *st);

/**
 * cgs_decode_payload() - Decode a bare struct taskstats payload.
 * @payload: The STATS attribute's data; any alignment. Not kept.
 * @len: Its length in bytes.
 * @kind: Stored in out->kind as given (not checked).
 * @out: Receives the record; not NULL, sz set (see <cgstats.h>). out->pid is
 *	ac_pid (0 for the TGID kind).
 * @st: Counters to add to (malformed, layout_guesses, unknown_version,
 *	unknown_bytes; not messages or records), or NULL.
 *
 * Version 0 payloads (TGID aggregates of older kernels) are decoded with
 * the largest known layout that fits, versions newer than the library by
 * their known prefix.
 *
 * Context: Any thread; no allocation, no locks.
 * Return: 0; -EINVAL for a NULL @payload or @out or an sz too small to
 * hold sz; -EBADMSG when the payload is shorter than its version requires
 * (counted in st->malformed).
 */
CGS_EXPORT int
cgs_decode_payload(const void *payload, size_t len, enum cgs_kind kind,
		   struct cgs_record *out, struct cgs_decode_stats *st);

/**
 * cgs_taskstats_size() - Size of a struct taskstats version.
 * @version: Struct version, 1..CGS_TASKSTATS_VERSION_MAX.
 *
 * Context: Any thread.
 * Return: Its size in bytes on x86-64; 0 for 0 or a version newer than
 * the library knows.
 */
CGS_EXPORT size_t cgs_taskstats_size(unsigned version);

/* Newest struct version this library decodes fully. */
#define CGS_TASKSTATS_VERSION_MAX 17

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_DECODE_H */
