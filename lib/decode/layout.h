/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wire layouts of struct taskstats (x86-64), private to the decoder.
 *
 * The kernel's own header is never used: the running kernel is usually
 * newer than /usr/include, and two of its layouts are incompatible with
 * the rest. Every layout is spelled out with explicit padding and its
 * offsets are checked at compile time against the values we verified:
 *
 *  v2..v14, v16: one layout, each version a prefix of the next; v16 adds
 *    the *_delay_max/min pairs at the end (432..552). Verified against the
 *    upstream fix 0bf2d838de1f "taskstats: fix struct taskstats breaks
 *    backward compatibility since version 15" (stable 6.14 backport
 *    "[PATCH 6.14 758/783]", 2025-05-27), whose added lines are, in order,
 *    cpu_delay_max, cpu_delay_min, blkio_*, swapin_*, freepages_*,
 *    thrashing_*, compact_*, wpcopy_*, irq_* (max before min), and against
 *    a live 6.18 reply (tests/decode/data/v16_query.bin: version 16, 560
 *    bytes, cpu max > min over 200 runqueue waits, max <= total).
 *  v15 (6.14 until the stable fix above): the same patch's removed lines
 *    show the broken order, a max/min pair right after every
 *    *_delay_total: cpu_count, cpu_delay_total, cpu_delay_max,
 *    cpu_delay_min, blkio_count, ... (commits 658eb5ab916d "delayacct:
 *    add delay max", f65c64f311ee "delayacct: add delay min",
 *    b016d0873777 version bump to 15).
 *  v14 "max only": linux-next between 658eb5ab916d and f65c64f311ee
 *    (Dec 2024) inserted only *_delay_max after each *_delay_total and
 *    kept TASKSTATS_VERSION 14 (patch "[PATCH linux next] delayacct: add
 *    delay max to record delay peak", 2024-12-03): 496 bytes.
 *  v17 (proposed on linux-next, Jan 2026: "[PATCH v3] delayacct: add
 *    timestamp of delay max", Wang Yaxin, 2026-01-19; not in 6.18): v16
 *    followed by one 16-byte timespec (tv_sec s64, tv_nsec long) per
 *    class, in the order of the max/min pairs: cpu, blkio, swapin,
 *    freepages, thrashing, compact, wpcopy, irq (560..688). The kernel
 *    stores it with ktime_get_real_ts64() when a new max is recorded
 *    (CLOCK_REALTIME), zero while the class has none. Later postings
 *    spell the type __kernel_timespec: the same 16 bytes on x86-64.
 *  v1 (the first taskstats kernels): version, padding[3], then the delay
 *    block, so cpu_count sits at offset 8, not 16.
 */
#ifndef CGS_DECODE_LAYOUT_H
#define CGS_DECODE_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgstats.h"

/* Packed: every layout spells its padding out, so packing changes no
 * offset (the asserts below), only the alignment: the decoder reads the
 * payload in place, at whatever address the netlink buffer puts it. */
#define CGSI_PACKED __attribute__((packed))

#define CGSI_TS_V1_SIZE 72u
#define CGSI_TS_V14MAX_SIZE 496u
#define CGSI_TS_V16_SIZE 560u
#define CGSI_TS_V17_SIZE 688u

/* Layout ids: the struct version whose layout it is, plus this one. */
#define CGSI_LAYOUT_V14MAX CGS_LAYOUT_V14_MAXONLY

struct CGSI_PACKED cgsi_ts_v1 {
	uint16_t version;
	uint16_t padding[3];
	uint64_t cpu_count, cpu_delay_total;
	uint64_t blkio_count, blkio_delay_total;
	uint64_t swapin_count, swapin_delay_total;
	uint64_t cpu_run_real_total, cpu_run_virtual_total;
};

/* The fields every layout from v2 on shares, between the delay block and
 * its per-class extras; spelled once and reused by each layout. */
#define CGSI_TS_HEAD                                                          \
	uint16_t version;                                                     \
	uint16_t pad0;                                                        \
	uint32_t ac_exitcode;                                                 \
	uint8_t ac_flag;                                                      \
	uint8_t ac_nice;                                                      \
	uint8_t pad1[6]

#define CGSI_TS_BASIC                                                         \
	char ac_comm[32];                                                     \
	uint8_t ac_sched;                                                     \
	uint8_t ac_pad[7];                                                    \
	uint32_t ac_uid, ac_gid, ac_pid, ac_ppid, ac_btime, pad2;             \
	uint64_t ac_etime, ac_utime, ac_stime, ac_minflt, ac_majflt;          \
	uint64_t coremem, virtmem, hiwater_rss, hiwater_vm;                   \
	uint64_t read_char, write_char, read_syscalls, write_syscalls;       \
	uint64_t read_bytes, write_bytes, cancelled_write_bytes;              \
	uint64_t nvcsw, nivcsw;                                               \
	uint64_t ac_utimescaled, ac_stimescaled, cpu_scaled_run_real_total

/* v2 .. v14 and v16 */
struct CGSI_PACKED cgsi_ts_v16 {
	CGSI_TS_HEAD;
	uint64_t cpu_count, cpu_delay_total;
	uint64_t blkio_count, blkio_delay_total;
	uint64_t swapin_count, swapin_delay_total;
	uint64_t cpu_run_real_total, cpu_run_virtual_total;
	CGSI_TS_BASIC;
	uint64_t freepages_count, freepages_delay_total;
	uint64_t thrashing_count, thrashing_delay_total;
	uint64_t ac_btime64;
	uint64_t compact_count, compact_delay_total;
	uint32_t ac_tgid, pad3;
	uint64_t ac_tgetime, ac_exe_dev, ac_exe_inode;
	uint64_t wpcopy_count, wpcopy_delay_total;
	uint64_t irq_count, irq_delay_total;
	uint64_t cpu_delay_max, cpu_delay_min;
	uint64_t blkio_delay_max, blkio_delay_min;
	uint64_t swapin_delay_max, swapin_delay_min;
	uint64_t freepages_delay_max, freepages_delay_min;
	uint64_t thrashing_delay_max, thrashing_delay_min;
	uint64_t compact_delay_max, compact_delay_min;
	uint64_t wpcopy_delay_max, wpcopy_delay_min;
	uint64_t irq_delay_max, irq_delay_min;
};

/* v17: v16, then when each max happened */
struct CGSI_PACKED cgsi_kts {
	int64_t tv_sec, tv_nsec;
};
struct CGSI_PACKED cgsi_ts_v17 {
	struct cgsi_ts_v16 v16;
	struct cgsi_kts max_ts[CGS_DELAY__COUNT]; /* by enum cgs_delay_class */
};

/* v15: pairs inserted after each total */
struct CGSI_PACKED cgsi_ts_v15 {
	CGSI_TS_HEAD;
	uint64_t cpu_count, cpu_delay_total, cpu_delay_max, cpu_delay_min;
	uint64_t blkio_count, blkio_delay_total, blkio_delay_max,
		blkio_delay_min;
	uint64_t swapin_count, swapin_delay_total, swapin_delay_max,
		swapin_delay_min;
	uint64_t cpu_run_real_total, cpu_run_virtual_total;
	CGSI_TS_BASIC;
	uint64_t freepages_count, freepages_delay_total, freepages_delay_max,
		freepages_delay_min;
	uint64_t thrashing_count, thrashing_delay_total, thrashing_delay_max,
		thrashing_delay_min;
	uint64_t ac_btime64;
	uint64_t compact_count, compact_delay_total, compact_delay_max,
		compact_delay_min;
	uint32_t ac_tgid, pad3;
	uint64_t ac_tgetime, ac_exe_dev, ac_exe_inode;
	uint64_t wpcopy_count, wpcopy_delay_total, wpcopy_delay_max,
		wpcopy_delay_min;
	uint64_t irq_count, irq_delay_total, irq_delay_max, irq_delay_min;
};

/* linux-next "v14" with max only */
struct CGSI_PACKED cgsi_ts_v14max {
	CGSI_TS_HEAD;
	uint64_t cpu_count, cpu_delay_total, cpu_delay_max;
	uint64_t blkio_count, blkio_delay_total, blkio_delay_max;
	uint64_t swapin_count, swapin_delay_total, swapin_delay_max;
	uint64_t cpu_run_real_total, cpu_run_virtual_total;
	CGSI_TS_BASIC;
	uint64_t freepages_count, freepages_delay_total, freepages_delay_max;
	uint64_t thrashing_count, thrashing_delay_total, thrashing_delay_max;
	uint64_t ac_btime64;
	uint64_t compact_count, compact_delay_total, compact_delay_max;
	uint32_t ac_tgid, pad3;
	uint64_t ac_tgetime, ac_exe_dev, ac_exe_inode;
	uint64_t wpcopy_count, wpcopy_delay_total, wpcopy_delay_max;
	uint64_t irq_count, irq_delay_total, irq_delay_max;
};

#define CGSI_OFF(t, f) offsetof(struct t, f)
_Static_assert(sizeof(struct cgsi_ts_v1) == CGSI_TS_V1_SIZE, "v1 size");
_Static_assert(CGSI_OFF(cgsi_ts_v1, cpu_count) == 8, "v1 cpu_count");

/* v16 offsets as listed in taskstats-facts.md */
_Static_assert(sizeof(struct cgsi_ts_v16) == CGSI_TS_V16_SIZE, "v16 size");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_exitcode) == 4, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_flag) == 8, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_nice) == 9, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, cpu_count) == 16, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, cpu_run_virtual_total) == 72, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_comm) == 80, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_sched) == 112, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_uid) == 120, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_pid) == 128, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_btime) == 136, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_etime) == 144, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, hiwater_rss) == 200, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, write_syscalls) == 240, "v16/v2 end");
_Static_assert(CGSI_OFF(cgsi_ts_v16, cancelled_write_bytes) == 264, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, nivcsw) == 280, "v16/v5 end");
_Static_assert(CGSI_OFF(cgsi_ts_v16, cpu_scaled_run_real_total) == 304, "");
_Static_assert(CGSI_OFF(cgsi_ts_v16, freepages_count) == 312, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, thrashing_count) == 328, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_btime64) == 344, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, compact_count) == 352, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_tgid) == 368, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_tgetime) == 376, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, ac_exe_inode) == 392, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, wpcopy_count) == 400, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, irq_count) == 416, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, cpu_delay_max) == 432, "v16");
_Static_assert(CGSI_OFF(cgsi_ts_v16, irq_delay_min) == 552, "v16");

_Static_assert(sizeof(struct cgsi_ts_v17) == CGSI_TS_V17_SIZE, "v17 size");
_Static_assert(CGSI_OFF(cgsi_ts_v17, max_ts) == 560, "v17 cpu_delay_max_ts");
_Static_assert(CGSI_OFF(cgsi_ts_v17, max_ts[CGS_DELAY_IRQ]) == 672, "v17");

/* v15 offsets as the facts file gives them */
_Static_assert(sizeof(struct cgsi_ts_v15) == CGSI_TS_V16_SIZE, "v15 size");
_Static_assert(CGSI_OFF(cgsi_ts_v15, cpu_delay_max) == 32, "v15");
_Static_assert(CGSI_OFF(cgsi_ts_v15, ac_comm) == 128, "v15");
_Static_assert(CGSI_OFF(cgsi_ts_v15, ac_pid) == 176, "v15");
_Static_assert(CGSI_OFF(cgsi_ts_v15, ac_tgid) == 464, "v15");
_Static_assert(CGSI_OFF(cgsi_ts_v15, irq_delay_min) == 552, "v15");

_Static_assert(sizeof(struct cgsi_ts_v14max) == CGSI_TS_V14MAX_SIZE, "");
_Static_assert(CGSI_OFF(cgsi_ts_v14max, ac_comm) == 104, "v14max");
_Static_assert(CGSI_OFF(cgsi_ts_v14max, ac_tgid) == 416, "v14max");

/* payload.c: struct taskstats sizes by version (1..17; 15 is the broken
 * v15 layout), 0 where none. */
extern const uint16_t cgsi_ts_size[CGS_TASKSTATS_VERSION_MAX + 1];

/* A payload of exactly cgsi_ts_size[layout] bytes (1 <= layout <=
 * CGS_TASKSTATS_VERSION_MAX) -> *out, as cgsi_decode_payload_hint() gives
 * it for that version and length (version: the payload's, 0 for a
 * version-0 TGID record read by its PID record's layout), but for pid:
 * ac_pid's, whatever the kind, for the caller to set. Nothing is checked:
 * the message decoder's fixed-offset path has. */
void cgsi_decode_payload_exact(const void *payload, uint16_t version,
			       unsigned layout, enum cgs_kind kind,
			       bool clean_tail, struct cgs_record *out);

/* Decode with a layout hint for version-0 payloads (0: infer from length
 * alone). Used by the message decoder so that a version-0 TGID aggregate
 * is read with the layout of the PID record it travels with. */
int cgsi_decode_payload_hint(const void *payload, size_t len,
			     enum cgs_kind kind, unsigned hint_layout,
			     bool clean_tail, struct cgs_record *out,
			     struct cgs_decode_stats *st);

/* How cgsi_decode_msg_path() decodes: as cgs_decode_msg() does (the
 * fixed offsets of the kernel's own shape, else the attribute walk), by
 * the walk alone, or by the fixed offsets alone (0, nothing written, for
 * a message of any other shape that passes the header checks). */
enum cgsi_decode_path {
	CGSI_PATH_AUTO,
	CGSI_PATH_WALK,
	CGSI_PATH_FIXED,
};

/* msg.c: cgs_decode_msg() by the given path, for the tests and
 * fuzz_decode, which check that the fixed offsets and the walk give the
 * same bytes. Structs of our own size. */
int cgsi_decode_msg_path(const void *msg, size_t len, unsigned flags,
			 enum cgsi_decode_path path, struct cgs_record *task,
			 struct cgs_record *group, struct cgs_decode_stats *st);

/* payload.c: st += d, as far as the caller's st->sz goes (decoder
 * counters of one call added to the caller's). */
void cgsi_decode_stats_add(struct cgs_decode_stats *st,
			   const struct cgs_decode_stats *d);

#endif
