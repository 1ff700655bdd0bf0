/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the taskstats decoder.
 *
 * Payloads are synthesized from this file's own offset table (written
 * from the kernel header history, independent of lib/decode/layout.h):
 * every field of a version gets a distinct value at its offset, and the
 * decoded record is compared field by field; fields the version lacks
 * must come out zero. Every buffer handed to the decoder is a heap copy
 * of exactly the tested length, so ASan catches any read past its end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>
#include <linux/taskstats.h>

#include "cgstats.h"
#include "support/nlmsg.h"
#include "support/snap.h"

#ifndef CGS_DECODE_DATA_DIR
#define CGS_DECODE_DATA_DIR "data"
#endif

/* ---- field table --------------------------------------------------- */

enum fid {
	F_EXITCODE, F_FLAG, F_NICE,
	F_CPU_COUNT, F_CPU_TOTAL, F_BLKIO_COUNT, F_BLKIO_TOTAL,
	F_SWAPIN_COUNT, F_SWAPIN_TOTAL, F_RUN_REAL, F_RUN_VIRTUAL,
	F_COMM, F_SCHED, F_UID, F_GID, F_PID, F_PPID, F_BTIME,
	F_ETIME, F_UTIME, F_STIME, F_MINFLT, F_MAJFLT,
	F_COREMEM, F_VIRTMEM, F_HIWATER_RSS, F_HIWATER_VM,
	F_READ_CHAR, F_WRITE_CHAR, F_READ_SYSCALLS, F_WRITE_SYSCALLS,
	F_READ_BYTES, F_WRITE_BYTES, F_CANCELLED,
	F_NVCSW, F_NIVCSW,
	F_UTIMESCALED, F_STIMESCALED, F_SCALED_RUN_REAL,
	F_FREEPAGES_COUNT, F_FREEPAGES_TOTAL,
	F_THRASHING_COUNT, F_THRASHING_TOTAL,
	F_BTIME64,
	F_COMPACT_COUNT, F_COMPACT_TOTAL,
	F_TGID, F_TGETIME, F_EXE_DEV, F_EXE_INODE,
	F_WPCOPY_COUNT, F_WPCOPY_TOTAL,
	F_IRQ_COUNT, F_IRQ_TOTAL,
	F_CPU_MAX, F_CPU_MIN, F_BLKIO_MAX, F_BLKIO_MIN,
	F_SWAPIN_MAX, F_SWAPIN_MIN, F_FREEPAGES_MAX, F_FREEPAGES_MIN,
	F_THRASHING_MAX, F_THRASHING_MIN, F_COMPACT_MAX, F_COMPACT_MIN,
	F_WPCOPY_MAX, F_WPCOPY_MIN, F_IRQ_MAX, F_IRQ_MIN,
	F__COUNT
};

struct fdesc {
	uint8_t size;    /* bytes on the wire */
	uint8_t since;   /* first version carrying it */
	int16_t off1;    /* v1 old layout, -1 if absent */
	uint16_t off16;  /* v2..v14, v16 */
	uint16_t off15;  /* broken v15 */
	int16_t off14m;  /* linux-next v14 max-only, -1 if absent */
};

/* {size, since, v1, v16, v15, v14max} */
static const struct fdesc fd[F__COUNT] = {
	[F_EXITCODE] = { 4, 2, -1, 4, 4, 4 },
	[F_FLAG] = { 1, 2, -1, 8, 8, 8 },
	[F_NICE] = { 1, 2, -1, 9, 9, 9 },
	[F_CPU_COUNT] = { 8, 1, 8, 16, 16, 16 },
	[F_CPU_TOTAL] = { 8, 1, 16, 24, 24, 24 },
	[F_BLKIO_COUNT] = { 8, 1, 24, 32, 48, 40 },
	[F_BLKIO_TOTAL] = { 8, 1, 32, 40, 56, 48 },
	[F_SWAPIN_COUNT] = { 8, 1, 40, 48, 80, 64 },
	[F_SWAPIN_TOTAL] = { 8, 1, 48, 56, 88, 72 },
	[F_RUN_REAL] = { 8, 1, 56, 64, 112, 88 },
	[F_RUN_VIRTUAL] = { 8, 1, 64, 72, 120, 96 },
	[F_COMM] = { 32, 2, -1, 80, 128, 104 },
	[F_SCHED] = { 1, 2, -1, 112, 160, 136 },
	[F_UID] = { 4, 2, -1, 120, 168, 144 },
	[F_GID] = { 4, 2, -1, 124, 172, 148 },
	[F_PID] = { 4, 2, -1, 128, 176, 152 },
	[F_PPID] = { 4, 2, -1, 132, 180, 156 },
	[F_BTIME] = { 4, 2, -1, 136, 184, 160 },
	[F_ETIME] = { 8, 2, -1, 144, 192, 168 },
	[F_UTIME] = { 8, 2, -1, 152, 200, 176 },
	[F_STIME] = { 8, 2, -1, 160, 208, 184 },
	[F_MINFLT] = { 8, 2, -1, 168, 216, 192 },
	[F_MAJFLT] = { 8, 2, -1, 176, 224, 200 },
	[F_COREMEM] = { 8, 2, -1, 184, 232, 208 },
	[F_VIRTMEM] = { 8, 2, -1, 192, 240, 216 },
	[F_HIWATER_RSS] = { 8, 2, -1, 200, 248, 224 },
	[F_HIWATER_VM] = { 8, 2, -1, 208, 256, 232 },
	[F_READ_CHAR] = { 8, 2, -1, 216, 264, 240 },
	[F_WRITE_CHAR] = { 8, 2, -1, 224, 272, 248 },
	[F_READ_SYSCALLS] = { 8, 2, -1, 232, 280, 256 },
	[F_WRITE_SYSCALLS] = { 8, 2, -1, 240, 288, 264 },
	[F_READ_BYTES] = { 8, 3, -1, 248, 296, 272 },
	[F_WRITE_BYTES] = { 8, 3, -1, 256, 304, 280 },
	[F_CANCELLED] = { 8, 3, -1, 264, 312, 288 },
	[F_NVCSW] = { 8, 5, -1, 272, 320, 296 },
	[F_NIVCSW] = { 8, 5, -1, 280, 328, 304 },
	[F_UTIMESCALED] = { 8, 6, -1, 288, 336, 312 },
	[F_STIMESCALED] = { 8, 6, -1, 296, 344, 320 },
	[F_SCALED_RUN_REAL] = { 8, 6, -1, 304, 352, 328 },
	[F_FREEPAGES_COUNT] = { 8, 7, -1, 312, 360, 336 },
	[F_FREEPAGES_TOTAL] = { 8, 7, -1, 320, 368, 344 },
	[F_THRASHING_COUNT] = { 8, 9, -1, 328, 392, 360 },
	[F_THRASHING_TOTAL] = { 8, 9, -1, 336, 400, 368 },
	[F_BTIME64] = { 8, 10, -1, 344, 424, 384 },
	[F_COMPACT_COUNT] = { 8, 11, -1, 352, 432, 392 },
	[F_COMPACT_TOTAL] = { 8, 11, -1, 360, 440, 400 },
	[F_TGID] = { 4, 12, -1, 368, 464, 416 },
	[F_TGETIME] = { 8, 12, -1, 376, 472, 424 },
	[F_EXE_DEV] = { 8, 12, -1, 384, 480, 432 },
	[F_EXE_INODE] = { 8, 12, -1, 392, 488, 440 },
	[F_WPCOPY_COUNT] = { 8, 13, -1, 400, 496, 448 },
	[F_WPCOPY_TOTAL] = { 8, 13, -1, 408, 504, 456 },
	[F_IRQ_COUNT] = { 8, 14, -1, 416, 528, 472 },
	[F_IRQ_TOTAL] = { 8, 14, -1, 424, 536, 480 },
	[F_CPU_MAX] = { 8, 15, -1, 432, 32, 32 },
	[F_CPU_MIN] = { 8, 15, -1, 440, 40, -1 },
	[F_BLKIO_MAX] = { 8, 15, -1, 448, 64, 56 },
	[F_BLKIO_MIN] = { 8, 15, -1, 456, 72, -1 },
	[F_SWAPIN_MAX] = { 8, 15, -1, 464, 96, 80 },
	[F_SWAPIN_MIN] = { 8, 15, -1, 472, 104, -1 },
	[F_FREEPAGES_MAX] = { 8, 15, -1, 480, 376, 352 },
	[F_FREEPAGES_MIN] = { 8, 15, -1, 488, 384, -1 },
	[F_THRASHING_MAX] = { 8, 15, -1, 496, 408, 376 },
	[F_THRASHING_MIN] = { 8, 15, -1, 504, 416, -1 },
	[F_COMPACT_MAX] = { 8, 15, -1, 512, 448, 408 },
	[F_COMPACT_MIN] = { 8, 15, -1, 520, 456, -1 },
	[F_WPCOPY_MAX] = { 8, 15, -1, 528, 512, 464 },
	[F_WPCOPY_MIN] = { 8, 15, -1, 536, 520, -1 },
	[F_IRQ_MAX] = { 8, 15, -1, 544, 544, 488 },
	[F_IRQ_MIN] = { 8, 15, -1, 552, 552, -1 },
};

static const size_t vsize[] = { 0, 72, 248, 272, 272, 288, 312, 328, 328,
				344, 352, 368, 400, 416, 432, 560, 560 };

#define L_V14MAX 1000 /* this file's id for the max-only layout */

static int field_off(int f, int layout)
{
	switch (layout) {
	case 1:
		return fd[f].off1;
	case 15:
		return fd[f].off15;
	case L_V14MAX:
		return fd[f].off14m;
	default:
		return fd[f].off16;
	}
}

static bool field_in(int f, int version, int layout)
{
	if (layout == L_V14MAX)
		return fd[f].off14m >= 0;
	if (layout == 1)
		return fd[f].off1 >= 0;
	return fd[f].since <= version;
}

/* Distinct per field and version; no zero bytes, fits each size. */
static uint64_t fval(int f, int version)
{
	uint64_t v = 0x0101010101010101ull * (uint64_t)(f + 1) +
		     ((uint64_t)version << 40) + 0x1234;

	switch (fd[f].size) {
	case 1:
		return (uint64_t)((f * 3 + version) % 250 + 1);
	case 4:
		return (uint32_t)v;
	default:
		return v;
	}
}

static void comm_val(char *c, int version)
{
	/* 32 bytes, no NUL: the decoder must terminate it */
	for (int i = 0; i < 32; i++)
		c[i] = (char)('A' + (i + version) % 26);
	c[0] = (char)0xff; /* comm may hold any bytes */
}

static uint64_t rec_get(const struct cgs_record *r, int f)
{
	const struct cgs_delay *d = r->delay;

	switch (f) {
	case F_EXITCODE: return r->exit_status;
	case F_FLAG: return r->flag;
	case F_NICE: return (uint8_t)r->nice;
	case F_CPU_COUNT: return d[CGS_DELAY_CPU].count;
	case F_CPU_TOTAL: return d[CGS_DELAY_CPU].total_ns;
	case F_BLKIO_COUNT: return d[CGS_DELAY_BLKIO].count;
	case F_BLKIO_TOTAL: return d[CGS_DELAY_BLKIO].total_ns;
	case F_SWAPIN_COUNT: return d[CGS_DELAY_SWAPIN].count;
	case F_SWAPIN_TOTAL: return d[CGS_DELAY_SWAPIN].total_ns;
	case F_RUN_REAL: return r->cpu_run_real_ns;
	case F_RUN_VIRTUAL: return r->cpu_run_virtual_ns;
	case F_SCHED: return r->sched;
	case F_UID: return r->uid;
	case F_GID: return r->gid;
	case F_PID: return r->pid;
	case F_PPID: return r->ppid;
	case F_ETIME: return r->etime_us;
	case F_UTIME: return r->utime_us;
	case F_STIME: return r->stime_us;
	case F_MINFLT: return r->minflt;
	case F_MAJFLT: return r->majflt;
	case F_COREMEM: return r->coremem_mbus;
	case F_VIRTMEM: return r->virtmem_mbus;
	case F_HIWATER_RSS: return r->hiwater_rss_kb;
	case F_HIWATER_VM: return r->hiwater_vm_kb;
	case F_READ_CHAR: return r->read_char;
	case F_WRITE_CHAR: return r->write_char;
	case F_READ_SYSCALLS: return r->read_syscalls;
	case F_WRITE_SYSCALLS: return r->write_syscalls;
	case F_READ_BYTES: return r->read_bytes;
	case F_WRITE_BYTES: return r->write_bytes;
	case F_CANCELLED: return r->cancelled_write_bytes;
	case F_NVCSW: return r->nvcsw;
	case F_NIVCSW: return r->nivcsw;
	case F_UTIMESCALED: return r->utimescaled_us;
	case F_STIMESCALED: return r->stimescaled_us;
	case F_SCALED_RUN_REAL: return r->cpu_scaled_run_real_ns;
	case F_FREEPAGES_COUNT: return d[CGS_DELAY_FREEPAGES].count;
	case F_FREEPAGES_TOTAL: return d[CGS_DELAY_FREEPAGES].total_ns;
	case F_THRASHING_COUNT: return d[CGS_DELAY_THRASHING].count;
	case F_THRASHING_TOTAL: return d[CGS_DELAY_THRASHING].total_ns;
	case F_COMPACT_COUNT: return d[CGS_DELAY_COMPACT].count;
	case F_COMPACT_TOTAL: return d[CGS_DELAY_COMPACT].total_ns;
	case F_TGID: return r->tgid;
	case F_TGETIME: return r->tgetime_us;
	case F_EXE_DEV: return r->exe_dev;
	case F_EXE_INODE: return r->exe_inode;
	case F_WPCOPY_COUNT: return d[CGS_DELAY_WPCOPY].count;
	case F_WPCOPY_TOTAL: return d[CGS_DELAY_WPCOPY].total_ns;
	case F_IRQ_COUNT: return d[CGS_DELAY_IRQ].count;
	case F_IRQ_TOTAL: return d[CGS_DELAY_IRQ].total_ns;
	case F_CPU_MAX: return d[CGS_DELAY_CPU].max_ns;
	case F_CPU_MIN: return d[CGS_DELAY_CPU].min_ns;
	case F_BLKIO_MAX: return d[CGS_DELAY_BLKIO].max_ns;
	case F_BLKIO_MIN: return d[CGS_DELAY_BLKIO].min_ns;
	case F_SWAPIN_MAX: return d[CGS_DELAY_SWAPIN].max_ns;
	case F_SWAPIN_MIN: return d[CGS_DELAY_SWAPIN].min_ns;
	case F_FREEPAGES_MAX: return d[CGS_DELAY_FREEPAGES].max_ns;
	case F_FREEPAGES_MIN: return d[CGS_DELAY_FREEPAGES].min_ns;
	case F_THRASHING_MAX: return d[CGS_DELAY_THRASHING].max_ns;
	case F_THRASHING_MIN: return d[CGS_DELAY_THRASHING].min_ns;
	case F_COMPACT_MAX: return d[CGS_DELAY_COMPACT].max_ns;
	case F_COMPACT_MIN: return d[CGS_DELAY_COMPACT].min_ns;
	case F_WPCOPY_MAX: return d[CGS_DELAY_WPCOPY].max_ns;
	case F_WPCOPY_MIN: return d[CGS_DELAY_WPCOPY].min_ns;
	case F_IRQ_MAX: return d[CGS_DELAY_IRQ].max_ns;
	case F_IRQ_MIN: return d[CGS_DELAY_IRQ].min_ns;
	default: return UINT64_MAX; /* checked elsewhere */
	}
}

/* Payload of `len` bytes (zero-filled) with `version` in its header and
 * every field of `layout` present in `fields_of` set. */
static void build_payload(unsigned char *p, size_t len, int version,
			  int layout, int fields_of)
{
	memset(p, 0, len);
	memcpy(p, &(uint16_t){ (uint16_t)version }, 2);
	for (int f = 0; f < F__COUNT; f++) {
		int off = field_off(f, layout);
		uint64_t v;

		if (off < 0 || !field_in(f, fields_of, layout))
			continue;
		assert_true((size_t)off + fd[f].size <= len);
		if (f == F_COMM) {
			comm_val((char *)p + off, fields_of);
			continue;
		}
		v = fval(f, fields_of);
		memcpy(p + off, &v, fd[f].size); /* little endian */
	}
}

/* check_ids: pid and tgid come from the payload (bare payload decode) */
static void check_record(const struct cgs_record *r, int fields_of,
			 int layout, bool check_ids)
{
	char comm[33];

	for (int f = 0; f < F__COUNT; f++) {
		uint64_t want;

		if (f == F_COMM || f == F_BTIME || f == F_BTIME64)
			continue;
		if ((f == F_PID || f == F_TGID) && !check_ids)
			continue;
		want = field_in(f, fields_of, layout) ? fval(f, fields_of) : 0;
		if (rec_get(r, f) != want)
			fail_msg("field %d (layout %d, values of v%d): got "
				 "%#llx want %#llx", f, layout, fields_of,
				 (unsigned long long)rec_get(r, f),
				 (unsigned long long)want);
	}
	if (field_in(F_COMM, fields_of, layout)) {
		comm_val(comm, fields_of);
		comm[32] = '\0';
		assert_memory_equal(r->comm, comm, 33);
	} else {
		assert_int_equal(r->comm[0], 0);
	}
	if (field_in(F_BTIME64, fields_of, layout))
		assert_int_equal(r->btime_s, fval(F_BTIME64, fields_of));
	else if (field_in(F_BTIME, fields_of, layout))
		assert_int_equal(r->btime_s, fval(F_BTIME, fields_of));
	else
		assert_int_equal(r->btime_s, 0);
}

static uint32_t expect_fields(int v)
{
	uint32_t f = CGS_HAS_DELAY;

	if (v >= 2)
		f |= CGS_HAS_BASIC | CGS_HAS_XACCT;
	if (v >= 3)
		f |= CGS_HAS_IO;
	if (v >= 5)
		f |= CGS_HAS_CTXSW;
	if (v >= 6)
		f |= CGS_HAS_SCALED;
	if (v >= 7)
		f |= CGS_HAS_FREEPAGES;
	if (v >= 9)
		f |= CGS_HAS_THRASHING;
	if (v >= 10)
		f |= CGS_HAS_BTIME64;
	if (v >= 11)
		f |= CGS_HAS_COMPACT;
	if (v >= 12)
		f |= CGS_HAS_TGID;
	if (v >= 13)
		f |= CGS_HAS_WPCOPY;
	if (v >= 14)
		f |= CGS_HAS_IRQ;
	if (v >= 15)
		f |= CGS_HAS_DELAY_MAXMIN;
	return f;
}

/* Decode from a heap copy of exactly len bytes placed at offset `shift`
 * of its allocation (alignment tests). */
static int decode_at(const void *buf, size_t len, size_t shift, unsigned fl,
		     struct cgs_record *t, struct cgs_record *g,
		     struct cgs_decode_stats *st)
{
	unsigned char *h = malloc(len + shift + 1);
	int r;

	assert_non_null(h);
	memcpy(h + shift, buf, len);
	r = cgs_decode_msg(h + shift, len, fl, t, g, st);
	free(h);
	return r;
}

/* A heap copy of len bytes, at the very end of its allocation. */
static unsigned char *exact_copy(const void *buf, size_t len)
{
	unsigned char *h = malloc(len ? len : 1);

	assert_non_null(h);
	if (len)
		memcpy(h, buf, len);
	return h;
}

static int decode_exact(const void *buf, size_t len, unsigned fl,
			struct cgs_record *t, struct cgs_record *g,
			struct cgs_decode_stats *st)
{
	unsigned char *h = exact_copy(buf, len);
	int r = cgs_decode_msg(h, len, fl, t, g, st);

	free(h);
	return r;
}

static int payload_exact(const void *p, size_t len, enum cgs_kind k,
			 struct cgs_record *out, struct cgs_decode_stats *st)
{
	unsigned char *h = exact_copy(p, len);
	int r = cgs_decode_payload(h, len, k, out, st);

	free(h);
	return r;
}

/* An exit event as the kernel sends it (TASKSTATS_CMD_NEW of family 0x17)
 * with one AGGR_PID nest: pid and n bytes of stats. Not finished: more
 * attributes may follow, or damage. */
static void exit_msg(struct mb *m, uint32_t pid, const void *p, size_t n)
{
	mb_init(m, 0x17, 2);
	mb_record(m, 4, 1, pid, p, n);
}

/* m finished, then decoded from an exact copy. */
static int decode_mb(struct mb *m, unsigned fl, struct cgs_record *t,
		     struct cgs_record *g, struct cgs_decode_stats *st)
{
	mb_finish(m);
	return decode_exact(m->b, m->len, fl, t, g, st);
}

/* ---- tests ----------------------------------------------------------- */

static void test_sizes_and_names(void **state)
{
	(void)state;
	for (unsigned v = 1; v <= 16; v++)
		assert_int_equal(cgs_taskstats_size(v), vsize[v]);
	assert_int_equal(cgs_taskstats_size(0), 0);
	assert_int_equal(cgs_taskstats_size(17), 688);
	assert_int_equal(cgs_taskstats_size(18), 0);
	assert_int_equal(cgs_taskstats_size(65535), 0);
	assert_string_equal(cgs_delay_name(CGS_DELAY_CPU), "cpu");
	assert_string_equal(cgs_delay_name(CGS_DELAY_BLKIO), "blkio");
	assert_string_equal(cgs_delay_name(CGS_DELAY_SWAPIN), "swapin");
	assert_string_equal(cgs_delay_name(CGS_DELAY_FREEPAGES), "freepages");
	assert_string_equal(cgs_delay_name(CGS_DELAY_THRASHING), "thrashing");
	assert_string_equal(cgs_delay_name(CGS_DELAY_COMPACT), "compact");
	assert_string_equal(cgs_delay_name(CGS_DELAY_WPCOPY), "wpcopy");
	assert_string_equal(cgs_delay_name(CGS_DELAY_IRQ), "irq");
	assert_null(cgs_delay_name(CGS_DELAY__COUNT));
	assert_null(cgs_delay_name((enum cgs_delay_class)-1));
}

/* Every version 1..16 as a bare payload and inside a message. */
static void test_every_version(void **state)
{
	unsigned char p[1024];
	(void)state;

	for (int v = 1; v <= 16; v++) {
		CGS_OPTS(cgs_decode_stats, st);
		CGS_OPTS(cgs_record, r);
		CGS_OPTS(cgs_record, t);
		CGS_OPTS(cgs_record, g);
		struct mb m;
		size_t n = vsize[v];

		build_payload(p, n, v, v, v);
		assert_int_equal(payload_exact(p, n, CGS_KIND_THREAD, &r, &st),
				 0);
		assert_int_equal(r.version, v);
		assert_int_equal(r.layout, v);
		assert_int_equal(r.payload_len, n);
		assert_int_equal(r.unknown_bytes, 0);
		assert_int_equal(r.fields, expect_fields(v));
		assert_int_equal(r.kind, CGS_KIND_THREAD);
		check_record(&r, v, v, true);
		assert_int_equal(st.layout_guesses + st.unknown_version +
					 st.unknown_bytes + st.malformed, 0);

		/* in a message: pid from the attribute, kind from ac_flag
		 * (AGROUP is bit 0x20: clear it to get a thread) */
		if (v >= 2)
			p[8] &= (unsigned char)~CGS_AC_AGROUP;
		exit_msg(&m, 4242, p, n);
		mb_finish(&m);
		for (size_t shift = 0; shift < 8; shift++) {
			memset(&t, 0x5a, sizeof(t));
			t.sz = sizeof(t);
			assert_int_equal(decode_at(m.b, m.len, shift, 0, &t, &g,
						   &st), 1);
			assert_int_equal(t.pid, 4242);
			assert_int_equal(t.kind, CGS_KIND_THREAD);
			assert_int_equal(t.version, v);
			assert_int_equal(t.payload_len, n);
		}
		if (v >= 2)
			p[8] |= CGS_AC_AGROUP;
	}
}

/* The broken 6.14 layout, read by its own table. */
static void test_v15_layout(void **state)
{
	unsigned char p[560];
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, r);
	(void)state;

	build_payload(p, 560, 15, 15, 15);
	assert_int_equal(payload_exact(p, 560, CGS_KIND_THREAD, &r, &st), 0);
	assert_int_equal(r.version, 15);
	assert_int_equal(r.layout, 15);
	assert_int_equal(r.fields, expect_fields(15));
	check_record(&r, 15, 15, true);
	assert_int_equal(st.layout_guesses, 0);
	/* the facts' anchor offsets */
	assert_int_equal(r.pid, fval(F_PID, 15));
	assert_int_equal(fd[F_COMM].off15, 128);
	assert_int_equal(fd[F_PID].off15, 176);
	assert_int_equal(fd[F_TGID].off15, 464);
}

/* 6.14-rc / linux-next: version 14 with a longer payload. */
static void test_v14_long(void **state)
{
	unsigned char p[600];
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, r);
	(void)state;

	/* >= 560: the v15 layout with a v14 header */
	build_payload(p, 560, 14, 15, 15);
	assert_int_equal(payload_exact(p, 560, CGS_KIND_THREAD, &r, &st), 0);
	assert_int_equal(r.version, 14);
	assert_int_equal(r.layout, 15);
	assert_int_equal(r.unknown_bytes, 0);
	check_record(&r, 15, 15, true);
	assert_int_equal(st.layout_guesses, 1);

	/* 496: max only */
	build_payload(p, 496, 14, L_V14MAX, 15);
	assert_int_equal(payload_exact(p, 496, CGS_KIND_THREAD, &r, &st), 0);
	assert_int_equal(r.version, 14);
	assert_int_equal(r.layout, CGS_LAYOUT_V14_MAXONLY);
	check_record(&r, 15, L_V14MAX, true);
	assert_true(r.fields & CGS_HAS_DELAY_MAXMIN);
	assert_int_equal(st.layout_guesses, 2);

	/* a few bytes more than 432 but less than 496: plain v14 with
	 * unknown trailing bytes, no guess */
	build_payload(p, 440, 14, 14, 14);
	assert_int_equal(payload_exact(p, 440, CGS_KIND_THREAD, &r, &st), 0);
	assert_int_equal(r.layout, 14);
	assert_int_equal(r.unknown_bytes, 8);
	check_record(&r, 14, 14, true);
	assert_int_equal(st.layout_guesses, 2);
	assert_int_equal(st.unknown_bytes, 8);
	assert_int_equal(st.unknown_version, 0);
}

/* A newer struct (v18, 816 bytes) decoded by its v17 prefix (v17's
 * own fields: test_decode_v17.c). */
static void test_future_version(void **state)
{
	unsigned char p[820];
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, r);
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, g);
	struct mb m;
	(void)state;

	build_payload(p, 816, 18, 16, 16);
	for (int i = 688; i < 816; i++)
		p[i] = (unsigned char)(i * 7 + 1);
	assert_int_equal(payload_exact(p, 816, CGS_KIND_THREAD, &r, &st), 0);
	assert_int_equal(r.version, 18);
	assert_int_equal(r.layout, 17);
	assert_int_equal(r.payload_len, 816);
	assert_int_equal(r.unknown_bytes, 128);
	assert_int_equal(r.fields,
			 expect_fields(16) | CGS_HAS_DELAY_MAX_TS);
	check_record(&r, 16, 16, true);
	assert_int_equal(st.unknown_version, 1);
	assert_int_equal(st.unknown_bytes, 128);

	/* in a PID+TGID message: both records counted */
	exit_msg(&m, 10, p, 816);
	mb_record(&m, 5, 2, 11, p, 816);
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), 3);
	assert_int_equal(st.unknown_version, 3);
	assert_int_equal(st.unknown_bytes, 3 * 128);
	assert_int_equal(g.unknown_bytes, 128);

	/* a rejected message leaves the per-record counters alone */
	exit_msg(&m, 10, p, 816);
	mb_record(&m, 5, 2, 11, p, 100);
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), -EBADMSG);
	assert_int_equal(st.unknown_version, 3);
	assert_int_equal(st.unknown_bytes, 3 * 128);
	assert_int_equal(st.malformed, 1);
	st.malformed = 0;

	/* a future version shorter than what we know must be refused */
	assert_int_equal(payload_exact(p, 687, CGS_KIND_THREAD, &r, &st),
			 -EBADMSG);
	assert_int_equal(st.malformed, 1);
}

/* Version 0 (TGID aggregates of older kernels): layout from length. */
static void test_version0(void **state)
{
	unsigned char p[600];
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, r);
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, g);
	struct mb m;
	(void)state;

	build_payload(p, 560, 0, 16, 16);
	assert_int_equal(payload_exact(p, 560, CGS_KIND_TGID, &r, &st), 0);
	assert_int_equal(r.version, 0);
	assert_int_equal(r.layout, 16);
	assert_int_equal(r.pid, 0);
	assert_int_equal(r.tgid, fval(F_TGID, 16));
	check_record(&r, 16, 16, false);
	assert_int_equal(st.layout_guesses, 1);

	build_payload(p, 432, 0, 14, 14);
	assert_int_equal(payload_exact(p, 432, CGS_KIND_TGID, &r, &st), 0);
	assert_int_equal(r.layout, 14);
	check_record(&r, 14, 14, false);

	build_payload(p, 300, 0, 5, 5);
	assert_int_equal(payload_exact(p, 300, CGS_KIND_TGID, &r, &st), 0);
	assert_int_equal(r.layout, 5);
	assert_int_equal(r.unknown_bytes, 12);
	check_record(&r, 5, 5, false);

	assert_int_equal(payload_exact(p, 71, CGS_KIND_TGID, &r, &st),
			 -EBADMSG);

	/* in a message next to a v15 PID record: read with v15 too */
	{
		unsigned char pid15[560], tg15[560];

		build_payload(pid15, 560, 15, 15, 15);
		build_payload(tg15, 560, 0, 15, 15);
		exit_msg(&m, 77, pid15, 560);
		mb_record(&m, 5, 2, 76, tg15, 560);
		assert_int_equal(decode_mb(&m, 0, &t, &g, &st), 3);
		assert_int_equal(t.layout, 15);
		assert_int_equal(g.layout, 15);
		assert_int_equal(g.version, 0);
		assert_int_equal(g.kind, CGS_KIND_TGID);
		assert_int_equal(g.tgid, 76);
		check_record(&g, 15, 15, false);
	}
}

/* Every length shorter than a version needs is refused. */
static void test_truncated_payloads(void **state)
{
	unsigned char p[560];
	(void)state;

	for (int v = 1; v <= 16; v++) {
		CGS_OPTS(cgs_decode_stats, st);
		CGS_OPTS(cgs_record, r);
		CGS_OPTS(cgs_record, t);
		CGS_OPTS(cgs_record, g);
		unsigned bad = 0;

		build_payload(p, vsize[v], v, v, v);
		for (size_t n = 0; n < vsize[v]; n++) {
			struct mb m;

			assert_int_equal(payload_exact(p, n, CGS_KIND_THREAD,
						       &r, &st), -EBADMSG);
			exit_msg(&m, 1, p, n);
			mb_finish(&m);
			assert_int_equal(decode_exact(m.b, m.len, 0, &t, &g,
						      &st), -EBADMSG);
			bad += 2;
		}
		assert_int_equal(st.malformed, bad);
		assert_int_equal(st.records, 0);
	}
}

static void test_kinds(void **state)
{
	unsigned char p[560], tg[560];
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, g);
	CGS_OPTS(cgs_record, g0);
	struct mb m;
	(void)state;

	build_payload(p, 560, 16, 16, 16);
	build_payload(tg, 560, 16, 16, 16);
	memset(tg + 80, 0, 32); /* the kernel leaves comm empty there */

	/* thread: no AGROUP, no TGID record */
	p[8] = CGS_AC_FORK;
	exit_msg(&m, 500, p, 560);
	mb_put(&m, 6, NULL, 0); /* NULL padding attribute */
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), 1);
	assert_int_equal(t.kind, CGS_KIND_THREAD);
	assert_int_equal(t.pid, 500);
	assert_int_equal(t.tgid, fval(F_TGID, 16));

	/* process: AGROUP */
	p[8] = CGS_AC_AGROUP | CGS_AC_FORK;
	exit_msg(&m, 501, p, 560);
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), 1);
	assert_int_equal(t.kind, CGS_KIND_PROCESS);

	/* process because a TGID record travels with it (even w/o AGROUP) */
	p[8] = 0;
	exit_msg(&m, 502, p, 560);
	mb_record(&m, 5, 2, 499, tg, 560);
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), 3);
	assert_int_equal(t.kind, CGS_KIND_PROCESS);
	assert_int_equal(t.pid, 502);
	assert_int_equal(g.kind, CGS_KIND_TGID);
	assert_int_equal(g.tgid, 499);
	assert_int_equal(g.pid, 0);
	assert_int_equal(g.comm[0], 0);
	assert_int_equal(g.utime_us, fval(F_UTIME, 16));
	assert_int_equal(st.records, 4);
	assert_int_equal(st.messages, 3);

	/* NO_TGID: group untouched, counted, still a process */
	memset(&g0, 0xa5, sizeof(g0));
	memcpy(&g, &g0, sizeof(g));
	assert_int_equal(decode_exact(m.b, m.len, CGS_NO_TGID, &t, &g,
				      &st), 1);
	assert_memory_equal(&g, &g0, sizeof(g));
	assert_int_equal(t.kind, CGS_KIND_PROCESS);
	assert_int_equal(st.tgid_skipped, 1);
	/* ... and the group pointer may be NULL then */
	assert_int_equal(decode_exact(m.b, m.len, CGS_NO_TGID, &t,
				      NULL, &st), 1);
	assert_int_equal(st.tgid_skipped, 2);
	assert_int_equal(cgs_decode_msg(m.b, m.len, 0, &t, NULL, &st),
			 -EINVAL);

	/* NO_TGID skips the nest without looking inside it */
	exit_msg(&m, 503, p, 560);
	mb_record(&m, 5, 2, 499, tg, 20); /* malformed inside */
	mb_finish(&m);
	assert_int_equal(decode_exact(m.b, m.len, CGS_NO_TGID, &t, &g,
				      &st), 1);
	assert_int_equal(decode_exact(m.b, m.len, 0, &t, &g, &st), -EBADMSG);

	/* a TGID record alone (query by TGID) */
	mb_init(&m, 0x17, 2);
	mb_record(&m, 5, 2, 600, tg, 560);
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), 2);
	assert_int_equal(g.tgid, 600);
	/* ... which NO_TGID turns into nothing, successfully */
	assert_int_equal(decode_exact(m.b, m.len, CGS_NO_TGID, &t, &g,
				      &st), 0);

	/* pre-v12 struct: tgid taken from the TGID attribute */
	build_payload(p, 344, 9, 9, 9);
	exit_msg(&m, 700, p, 344);
	mb_record(&m, 5, 2, 699, p, 344);
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), 3);
	assert_int_equal(t.tgid, 699);
	assert_int_equal(t.btime_s, fval(F_BTIME, 9)); /* no btime64 in v9 */

	/* plain top-level PID + STATS, TGID + STATS */
	build_payload(p, 560, 16, 16, 16);
	mb_init(&m, 0x17, 2);
	mb_put(&m, 1, &(uint32_t){ 800 }, 4);
	mb_put(&m, 3, p, 560);
	mb_put(&m, 2, &(uint32_t){ 801 }, 4);
	mb_put(&m, 3, tg, 560);
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), 3);
	assert_int_equal(t.pid, 800);
	assert_int_equal(g.tgid, 801);

	/* NLA_F_NESTED set on the nest is fine too */
	mb_init(&m, 0x17, 2);
	mb_record(&m, 4 | 0x8000, 1, 900, p, 560);
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), 1);
	assert_int_equal(t.pid, 900);
}

static void test_not_records(void **state)
{
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, g);
	unsigned char p[560];
	struct mb m;
	(void)state;

	build_payload(p, 560, 16, 16, 16);
	for (uint16_t type = 1; type <= 4; type++) { /* NOOP..OVERRUN */
		mb_init(&m, type, 0);
		mb_put(&m, 0, &(uint32_t){ 0 }, 4);
		assert_int_equal(decode_mb(&m, 0, &t, &g, &st), -ENOMSG);
		assert_int_equal(decode_exact(m.b, 16, 0, &t, &g, &st),
				 -ENOMSG);
	}
	mb_init(&m, 0x17, 1); /* TASKSTATS_CMD_GET */
	mb_record(&m, 4, 1, 1, p, 560);
	assert_int_equal(decode_mb(&m, 0, &t, &g, &st), -ENOMSG);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.messages, 9);
	for (size_t n = 0; n < 16; n++)
		assert_int_equal(decode_exact(m.b, n, 0, &t, &g, &st),
				 -EBADMSG);
	assert_int_equal(st.malformed, 16);
}

/* 1 as an integer of n bytes (2, 4 or 8), in host order */
static const void *one_in(size_t n)
{
	static const uint16_t one16 = 1;
	static const uint32_t one32 = 1;
	static const uint64_t one64 = 1;

	if (n == 2)
		return &one16;
	return n == 4 ? (const void *)&one32 : (const void *)&one64;
}

static void test_malformed(void **state)
{
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, g);
	unsigned char p[560];
	struct mb m;
	size_t at, expect = 0;
	(void)state;

	build_payload(p, 560, 16, 16, 16);

#define EXPECT_BAD()                                                          \
	do {                                                                  \
		assert_int_equal(decode_mb(&m, 0, &t, &g, &st), -EBADMSG);    \
		assert_int_equal(st.malformed, ++expect);                     \
	} while (0)

	/* AGGR_PID nests holding these attributes ({type, bytes}; a PID is
	 * 1 in so many bytes, anything else the stats): a PID of 2 and of 8
	 * bytes; missing STATS, missing PID, duplicate STATS; and an unknown
	 * inner type, which is skipped */
	static const struct {
		struct { uint16_t type, n; } a[3];
		int want;
	} nests[] = {
		{ { { 1, 2 }, { 3, 560 } }, -EBADMSG },
		{ { { 1, 8 }, { 3, 560 } }, -EBADMSG },
		{ { { 1, 4 } }, -EBADMSG },
		{ { { 3, 560 } }, -EBADMSG },
		{ { { 1, 4 }, { 3, 560 }, { 3, 560 } }, -EBADMSG },
		{ { { 1, 4 }, { 9, 8 }, { 3, 560 } }, 1 },
	};
	for (size_t i = 0; i < sizeof(nests) / sizeof(nests[0]); i++) {
		mb_init(&m, 0x17, 2);
		at = mb_nest(&m, 4);
		for (size_t k = 0; k < 3 && nests[i].a[k].n; k++) {
			uint16_t type = nests[i].a[k].type, n = nests[i].a[k].n;
			mb_put(&m, type, type == 1 ? one_in(n) : p, n);
		}
		mb_nest_end(&m, at);
		if (nests[i].want < 0) {
			EXPECT_BAD();
			continue;
		}
		assert_int_equal(decode_mb(&m, 0, &t, &g, &st), nests[i].want);
	}

	/* the nest's length (at 20): it runs past the message, is shorter
	 * than its STATS, or below its own header (0..3) */
	for (int c = 0; c < 6; c++) {
		exit_msg(&m, 1, p, 560);
		uint16_t nest = (uint16_t)(m.len - 20);
		uint16_t l = c == 0 ? nest + 4 : c == 1 ? nest - 8 :
				      (uint16_t)(c - 2);
		memcpy(m.b + 20, &l, 2);
		EXPECT_BAD();
	}

	/* nlmsg_len: larger than the buffer, smaller than the headers */
	exit_msg(&m, 1, p, 560);
	mb_finish(&m);
	memcpy(m.b, &(uint32_t){ (uint32_t)m.len + 4 }, 4);
	assert_int_equal(decode_exact(m.b, m.len, 0, &t, &g, &st), -EBADMSG);
	assert_int_equal(st.malformed, ++expect);
	memcpy(m.b, &(uint32_t){ 19 }, 4);
	assert_int_equal(decode_exact(m.b, m.len, 0, &t, &g, &st), -EBADMSG);
	assert_int_equal(st.malformed, ++expect);

	/* no record at all; only padding */
	mb_init(&m, 0x17, 2);
	EXPECT_BAD();
	mb_init(&m, 0x17, 2);
	mb_put(&m, 6, NULL, 0);
	EXPECT_BAD();

	/* STATS without a preceding id; two AGGR_PID; plain PID of 2 bytes */
	mb_init(&m, 0x17, 2);
	mb_put(&m, 3, p, 560);
	EXPECT_BAD();
	exit_msg(&m, 1, p, 560);
	mb_record(&m, 4, 1, 2, p, 560);
	EXPECT_BAD();
	mb_init(&m, 0x17, 2);
	mb_put(&m, 1, &(uint16_t){ 1 }, 2);
	EXPECT_BAD();

	/* STATS too short for its version */
	exit_msg(&m, 1, p, 432);
	EXPECT_BAD();
#undef EXPECT_BAD

	assert_int_equal(st.records, 1);

	/* a trailing message after nlmsg_len is not looked at */
	exit_msg(&m, 1, p, 560);
	mb_finish(&m);
	memset(m.b + m.len, 0xff, 64);
	assert_int_equal(decode_exact(m.b, m.len + 64, 0, &t, &g, &st), 1);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t xrand(void)
{
	return cgt_xorshift(&rng);
}

static void random_case(const unsigned char *buf, size_t len,
			struct cgs_decode_stats *st)
{
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, g);
	int r = decode_exact(buf, len, (unsigned)(xrand() & 1), &t, &g, st);

	if (r < 0) {
		assert_true(r == -EBADMSG || r == -ENOMSG);
		return;
	}
	/* 0: only a TGID record, skipped by CGS_NO_TGID */
	assert_true(r >= 0 && r <= 3);
	if (r & 1) {
		assert_true(t.kind == CGS_KIND_THREAD ||
			    t.kind == CGS_KIND_PROCESS);
		assert_int_equal(t.comm[32], 0);
		assert_true(t.payload_len <= len);
	}
	if (r & 2)
		assert_int_equal(g.kind, CGS_KIND_TGID);
}

static size_t load(const char *name, unsigned char *buf, size_t len)
{
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", CGS_DECODE_DATA_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	n = fread(buf, 1, len, f);
	fclose(f);
	return n;
}

/* Random buffers and mutations of valid messages: no crash, no OOB read
 * (ASan), only the documented results. CGS_DECODE_RANDOM_ITERS=N for a
 * longer run. */
static void test_random_garbage(void **state)
{
	static unsigned char seed[2048], buf[2048];
	CGS_OPTS(cgs_decode_stats, st);
	size_t n = load("v16_exit_tgid.bin", seed, sizeof(seed));
	const char *e = getenv("CGS_DECODE_RANDOM_ITERS");
	long iters = e ? atol(e) : 20000;
	(void)state;

	for (long i = 0; i < iters; i++) {
		size_t len = (size_t)(xrand() % 1300);

		for (size_t j = 0; j < len; j++)
			buf[j] = (unsigned char)xrand();
		if (len >= 20 && (xrand() & 1)) {
			/* plausible header so the walker gets exercised */
			memcpy(buf, &(uint32_t){ (uint32_t)len }, 4);
			memcpy(buf + 4, &(uint16_t){ 0x17 }, 2);
			buf[16] = 2;
		}
		random_case(buf, len, &st);
	}
	for (long i = 0; i < iters; i++) {
		size_t len = n;
		int flips = 1 + (int)(xrand() % 4);

		memcpy(buf, seed, n);
		for (int k = 0; k < flips; k++) {
			size_t at = (size_t)(xrand() % 64);

			/* mostly headers: the first 64 bytes, and those of
			 * the TGID nest at 596 */
			if (xrand() & 1)
				at += 576;
			if (xrand() % 4 == 0)
				at = (size_t)(xrand() % n);
			buf[at] ^= (unsigned char)(1u << (xrand() % 8));
		}
		if (xrand() % 3 == 0)
			len = (size_t)(xrand() % (n + 1));
		random_case(buf, len, &st);
	}
	assert_true(st.malformed > 0);
	assert_true(st.records > 0);
}

static void test_real_seeds(void **state)
{
	static unsigned char buf[2048];
	CGS_OPTS(cgs_decode_stats, st);
	CGS_OPTS(cgs_record, t);
	CGS_OPTS(cgs_record, g);
	size_t n;
	(void)state;

	n = load("v16_query.bin", buf, sizeof(buf));
	assert_int_equal(n, 596);
	for (size_t shift = 0; shift < 4; shift++) {
		assert_int_equal(decode_at(buf, n, shift, 0, &t, &g, &st), 1);
		assert_int_equal(t.version, 16);
		assert_int_equal(t.layout, 16);
		assert_int_equal(t.payload_len, 560);
		assert_int_equal(t.kind, CGS_KIND_THREAD);
		assert_string_equal(t.comm, "test_decode_ker");
		assert_int_equal(t.pid, t.tgid);
		assert_true(t.delay[CGS_DELAY_CPU].count > 1);
		assert_true(t.delay[CGS_DELAY_CPU].max_ns >
			    t.delay[CGS_DELAY_CPU].min_ns);
		assert_true(t.delay[CGS_DELAY_CPU].max_ns <=
			    t.delay[CGS_DELAY_CPU].total_ns);
		assert_true(t.btime_s > 1600000000ull);
	}

	n = load("v16_exit.bin", buf, sizeof(buf));
	assert_int_equal(n, 596);
	assert_int_equal(decode_exact(buf, n, 0, &t, &g, &st), 1);
	assert_int_equal(t.kind, CGS_KIND_PROCESS);
	assert_string_equal(t.comm, "cgs-exit-probe");
	assert_int_equal(t.exit_status, 0x300);

	n = load("v16_exit_tgid.bin", buf, sizeof(buf));
	assert_int_equal(n, 1172);
	assert_int_equal(decode_at(buf, n, 1, 0, &t, &g, &st), 3);
	assert_int_equal(t.kind, CGS_KIND_PROCESS);
	assert_string_equal(t.comm, "cgs-exit-mt");
	assert_int_equal(g.kind, CGS_KIND_TGID);
	assert_int_equal(g.version, 16);
	assert_int_equal(g.tgid, t.tgid);
	assert_int_equal(g.tgid, t.pid); /* the leader exited last */
	assert_true(g.delay[CGS_DELAY_CPU].count >=
		    t.delay[CGS_DELAY_CPU].count);
	assert_int_equal(decode_at(buf, n, 3, CGS_NO_TGID, &t, &g, &st),
			 1);

	/* every truncation of a real message is refused */
	for (size_t len = 0; len < n; len++)
		assert_int_equal(decode_exact(buf, len, 0, &t, &g, &st),
				 -EBADMSG);
	assert_int_equal(st.malformed, n);
}

/* This file's v2+ offsets against the system's own struct taskstats,
 * for every field that header has (13 here; any prefix works). */
static void test_system_header_offsets(void **state)
{
	static const struct {
		int f;
		size_t off, size;
		unsigned since;
	} sys[] = {
#define S(f, m, v) { f, offsetof(struct taskstats, m),                        \
		     sizeof(((struct taskstats *)0)->m), v }
		S(F_EXITCODE, ac_exitcode, 2), S(F_FLAG, ac_flag, 2),
		S(F_NICE, ac_nice, 2), S(F_CPU_COUNT, cpu_count, 1),
		S(F_CPU_TOTAL, cpu_delay_total, 1),
		S(F_BLKIO_COUNT, blkio_count, 1),
		S(F_BLKIO_TOTAL, blkio_delay_total, 1),
		S(F_SWAPIN_COUNT, swapin_count, 1),
		S(F_SWAPIN_TOTAL, swapin_delay_total, 1),
		S(F_RUN_REAL, cpu_run_real_total, 1),
		S(F_RUN_VIRTUAL, cpu_run_virtual_total, 1),
		S(F_COMM, ac_comm, 2), S(F_SCHED, ac_sched, 2),
		S(F_UID, ac_uid, 2), S(F_GID, ac_gid, 2), S(F_PID, ac_pid, 2),
		S(F_PPID, ac_ppid, 2), S(F_BTIME, ac_btime, 2),
		S(F_ETIME, ac_etime, 2), S(F_UTIME, ac_utime, 2),
		S(F_STIME, ac_stime, 2), S(F_MINFLT, ac_minflt, 2),
		S(F_MAJFLT, ac_majflt, 2), S(F_COREMEM, coremem, 2),
		S(F_VIRTMEM, virtmem, 2), S(F_HIWATER_RSS, hiwater_rss, 2),
		S(F_HIWATER_VM, hiwater_vm, 2), S(F_READ_CHAR, read_char, 2),
		S(F_WRITE_CHAR, write_char, 2),
		S(F_READ_SYSCALLS, read_syscalls, 2),
		S(F_WRITE_SYSCALLS, write_syscalls, 2),
		S(F_READ_BYTES, read_bytes, 3), S(F_WRITE_BYTES, write_bytes, 3),
		S(F_CANCELLED, cancelled_write_bytes, 3),
		S(F_NVCSW, nvcsw, 5), S(F_NIVCSW, nivcsw, 5),
		S(F_UTIMESCALED, ac_utimescaled, 6),
		S(F_STIMESCALED, ac_stimescaled, 6),
		S(F_SCALED_RUN_REAL, cpu_scaled_run_real_total, 6),
		S(F_FREEPAGES_COUNT, freepages_count, 7),
		S(F_FREEPAGES_TOTAL, freepages_delay_total, 7),
#if TASKSTATS_VERSION >= 9
		S(F_THRASHING_COUNT, thrashing_count, 9),
		S(F_THRASHING_TOTAL, thrashing_delay_total, 9),
#endif
#if TASKSTATS_VERSION >= 10
		S(F_BTIME64, ac_btime64, 10),
#endif
#if TASKSTATS_VERSION >= 11
		S(F_COMPACT_COUNT, compact_count, 11),
		S(F_COMPACT_TOTAL, compact_delay_total, 11),
#endif
#if TASKSTATS_VERSION >= 12
		S(F_TGID, ac_tgid, 12), S(F_TGETIME, ac_tgetime, 12),
		S(F_EXE_DEV, ac_exe_dev, 12), S(F_EXE_INODE, ac_exe_inode, 12),
#endif
#if TASKSTATS_VERSION >= 13
		S(F_WPCOPY_COUNT, wpcopy_count, 13),
		S(F_WPCOPY_TOTAL, wpcopy_delay_total, 13),
#endif
#undef S
	};
	(void)state;

	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
		assert_int_equal(fd[sys[i].f].off16, sys[i].off);
		assert_int_equal(fd[sys[i].f].size, sys[i].size);
		assert_int_equal(fd[sys[i].f].since, sys[i].since);
	}
	if (TASKSTATS_VERSION <= 14)
		assert_int_equal(sizeof(struct taskstats),
				 vsize[TASKSTATS_VERSION]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_and_names),
		cmocka_unit_test(test_system_header_offsets),
		cmocka_unit_test(test_every_version),
		cmocka_unit_test(test_v15_layout),
		cmocka_unit_test(test_v14_long),
		cmocka_unit_test(test_future_version),
		cmocka_unit_test(test_version0),
		cmocka_unit_test(test_truncated_payloads),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_not_records),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_random_garbage),
		cmocka_unit_test(test_real_seeds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
