/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct taskstats payload -> struct cgs_record, for every struct version.
 *
 * v15 and later (every kernel since 6.14) are read in place from the
 * netlink buffer through the packed layout structs, straight into the
 * record, which is not cleared first when the library filled it before
 * (CGS_DECODE_REUSE). Older, shorter layouts are copied into an aligned
 * buffer, zero past the layout, so fields a version lacks come out zero.
 */
#include "util/common.h"
#include "decode/layout.h"

/* Sizes by version; index 15 is the broken v15 layout. */
const uint16_t cgsi_ts_size[CGS_TASKSTATS_VERSION_MAX + 1] = {
	[1] = 72,   [2] = 248,  [3] = 272,  [4] = 272,  [5] = 288,
	[6] = 312,  [7] = 328,  [8] = 328,  [9] = 344,  [10] = 352,
	[11] = 368, [12] = 400, [13] = 416, [14] = 432, [15] = 560,
	[16] = 560, [17] = 688,
};

#define F_V2 (CGS_HAS_DELAY | CGS_HAS_BASIC | CGS_HAS_XACCT)
#define F_V3 (F_V2 | CGS_HAS_IO)
#define F_V5 (F_V3 | CGS_HAS_CTXSW)
#define F_V6 (F_V5 | CGS_HAS_SCALED)
#define F_V7 (F_V6 | CGS_HAS_FREEPAGES)
#define F_V9 (F_V7 | CGS_HAS_THRASHING)
#define F_V10 (F_V9 | CGS_HAS_BTIME64)
#define F_V11 (F_V10 | CGS_HAS_COMPACT)
#define F_V12 (F_V11 | CGS_HAS_TGID)
#define F_V13 (F_V12 | CGS_HAS_WPCOPY)
#define F_V14 (F_V13 | CGS_HAS_IRQ)
#define F_V15 (F_V14 | CGS_HAS_DELAY_MAXMIN)
#define F_V17 (F_V15 | CGS_HAS_DELAY_MAX_TS)

static const uint32_t ts_fields[CGS_TASKSTATS_VERSION_MAX + 1] = {
	[1] = CGS_HAS_DELAY, [2] = F_V2,   [3] = F_V3,   [4] = F_V3,
	[5] = F_V5,          [6] = F_V6,   [7] = F_V7,   [8] = F_V7,
	[9] = F_V9,          [10] = F_V10, [11] = F_V11, [12] = F_V12,
	[13] = F_V13,        [14] = F_V14, [15] = F_V15, [16] = F_V15,
	[17] = F_V17,
};

static const char *const delay_names[CGS_DELAY__COUNT] = {
	"cpu", "blkio", "swapin", "freepages", "thrashing", "compact",
	"wpcopy", "irq",
};

size_t cgs_taskstats_size(unsigned version)
{
	return version < CGS_ARRAY_SIZE(cgsi_ts_size) ? cgsi_ts_size[version]
						      : 0;
}

const char *cgs_delay_name(enum cgs_delay_class c)
{
	return (unsigned)c < CGS_DELAY__COUNT ? delay_names[c] : NULL;
}

/* Largest known layout that fits in len (version-0 payloads). */
static unsigned layout_for_len(size_t len)
{
	for (unsigned v = CGS_TASKSTATS_VERSION_MAX; v >= 1; v--) {
		if (v == 15)
			continue; /* 560 bytes reads as the sane v16 */
		if (len >= cgsi_ts_size[v])
			return v;
	}
	return 0;
}

/* Bytes from the start of field `first` to the end of `last` of type t. */
#define SPAN(t, first, last)                                                  \
	(offsetof(t, last) + sizeof(((t *)0)->last) - offsetof(t, first))

/* Copy the fields first..last of the layout s to the record's ofirst..
 * olast with one memcpy: the record holds the same fields, of the same
 * types, in the same order there (a 16-byte pair is one load and one
 * store, not two of each). The runs' sizes are checked at compile time; the order by the
 * field-by-field tests (test_decode's own offset table). */
#define RUN(o, ofirst, olast, s, first, last)                                 \
	do {                                                                  \
		_Static_assert(SPAN(__typeof__(*(o)), ofirst, olast) ==       \
				       SPAN(__typeof__(*(s)), first, last),   \
			       "runs of different sizes");                    \
		memcpy(&(o)->ofirst, &(s)->first,                             \
		       SPAN(__typeof__(*(s)), first, last));                  \
	} while (0)

/* Fields every v2+ layout names alike; the delay block differs. The
 * 15 counters from ac_minflt to nivcsw are one run in every layout. */
#define CONV_COMMON(s, o, f)                                                   \
	do {                                                                  \
		(o)->exit_status = (s)->ac_exitcode;                          \
		(o)->flag = (s)->ac_flag;                                     \
		(o)->nice = (int8_t)(s)->ac_nice;                             \
		(o)->sched = (s)->ac_sched;                                   \
		memcpy((o)->comm, (s)->ac_comm, CGS_COMM_LEN);                \
		(o)->comm[CGS_COMM_LEN] = '\0';                               \
		RUN(o, uid, gid, s, ac_uid, ac_gid);                          \
		(o)->pid = (s)->ac_pid;                                       \
		(o)->tgid = (s)->ac_tgid;                                     \
		(o)->ppid = (s)->ac_ppid;                                     \
		(o)->btime_s = (f) & CGS_HAS_BTIME64 ? (s)->ac_btime64        \
						     : (s)->ac_btime;         \
		(o)->etime_us = (s)->ac_etime;                                \
		RUN(o, utime_us, stime_us, s, ac_utime, ac_stime);            \
		RUN(o, utimescaled_us, stimescaled_us, s, ac_utimescaled,     \
		    ac_stimescaled);                                          \
		(o)->tgetime_us = (s)->ac_tgetime;                            \
		RUN(o, cpu_run_real_ns, cpu_run_virtual_ns, s,                \
		    cpu_run_real_total, cpu_run_virtual_total);               \
		(o)->cpu_scaled_run_real_ns = (s)->cpu_scaled_run_real_total; \
		RUN(o, minflt, nivcsw, s, ac_minflt, nivcsw);                 \
		RUN(o, exe_dev, exe_inode, s, ac_exe_dev, ac_exe_inode);      \
	} while (0)

/* A class's count and total (every layout); with its max (v14max), with
 * max and min (v15: the four in the record's order); max and min (v16,
 * where the pairs sit at the end). */
#define CONV_DELAY(s, o, c, name)                                             \
	RUN(o, delay[c].count, delay[c].total_ns, s, name##_count,            \
	    name##_delay_total)
#define CONV_DELAY_MAX(s, o, c, name)                                         \
	RUN(o, delay[c].count, delay[c].max_ns, s, name##_count,              \
	    name##_delay_max)
#define CONV_DELAY4(s, o, c, name)                                            \
	RUN(o, delay[c].count, delay[c].min_ns, s, name##_count,              \
	    name##_delay_min)
#define CONV_MAXMIN(s, o, c, name)                                            \
	RUN(o, delay[c].max_ns, delay[c].min_ns, s, name##_delay_max,         \
	    name##_delay_min)

#define CONV_ALL(s, o, M)                                                     \
	do {                                                                  \
		M(s, o, CGS_DELAY_CPU, cpu);                                  \
		M(s, o, CGS_DELAY_BLKIO, blkio);                              \
		M(s, o, CGS_DELAY_SWAPIN, swapin);                            \
		M(s, o, CGS_DELAY_FREEPAGES, freepages);                      \
		M(s, o, CGS_DELAY_THRASHING, thrashing);                      \
		M(s, o, CGS_DELAY_COMPACT, compact);                          \
		M(s, o, CGS_DELAY_WPCOPY, wpcopy);                            \
		M(s, o, CGS_DELAY_IRQ, irq);                                  \
	} while (0)

static void conv_v1(const struct cgsi_ts_v1 *s, struct cgs_record *o)
{
	CONV_DELAY(s, o, CGS_DELAY_CPU, cpu);
	CONV_DELAY(s, o, CGS_DELAY_BLKIO, blkio);
	CONV_DELAY(s, o, CGS_DELAY_SWAPIN, swapin);
	RUN(o, cpu_run_real_ns, cpu_run_virtual_ns, s, cpu_run_real_total,
	    cpu_run_virtual_total);
}

/* v16: count and total of each class up front, max and min at the end;
 * v15: all four together after each other, as the record has them. */
static void conv_v16(const struct cgsi_ts_v16 *s, struct cgs_record *o,
		     uint32_t f)
{
	CONV_COMMON(s, o, f);
	CONV_ALL(s, o, CONV_DELAY);
	CONV_ALL(s, o, CONV_MAXMIN);
}

static void conv_v15(const struct cgsi_ts_v15 *s, struct cgs_record *o,
		     uint32_t f)
{
	CONV_COMMON(s, o, f);
	CONV_ALL(s, o, CONV_DELAY4);
}

/* v17's times of the maxima: ns since the epoch, 0 for a time the
 * kernel left zero (no such delay) or one out of range */
static void conv_v17_ts(const struct cgsi_ts_v17 *s, struct cgs_record *o)
{
	for (unsigned c = 0; c < CGS_DELAY__COUNT; c++) {
		const struct cgsi_kts *t = &s->max_ts[c];
		bool ok = t->tv_sec > 0 && t->tv_nsec >= 0 &&
			  t->tv_nsec < 1000000000 &&
			  (uint64_t)t->tv_sec < UINT64_MAX / 1000000000u - 1;
		o->delay_max_at_ns[c] =
			ok ? (uint64_t)t->tv_sec * 1000000000u +
				     (uint64_t)t->tv_nsec
			   : 0;
	}
}

/* v17: v16's fields and the times of the maxima; out of line, so that
 * conv_full() ends in a call on every path. */
static __attribute__((noinline)) void
conv_v17(const struct cgsi_ts_v17 *s, struct cgs_record *o, uint32_t f)
{
	conv_v17_ts(s, o);
	conv_v16(&s->v16, o, f);
}

static void conv_v14max(const struct cgsi_ts_v14max *s, struct cgs_record *o,
			uint32_t f)
{
	CONV_COMMON(s, o, f);
	CONV_ALL(s, o, CONV_DELAY_MAX);
}

/* The record's own fields for a payload of len bytes read by the given
 * layout, whose first known bytes it describes (known <= len). */
static inline void fill_head(size_t len, size_t known, uint16_t version,
			     unsigned layout, uint32_t fields,
			     enum cgs_kind kind, struct cgs_record *out)
{
	out->sz = sizeof(*out);
	out->kind = kind;
	out->version = version;
	out->layout = (uint16_t)layout;
	out->payload_len = (uint32_t)CGS_MIN(len, UINT32_MAX);
	out->unknown_bytes = (uint32_t)CGS_MIN(len - known, UINT32_MAX);
	out->fields = fields;
}

/* fill() of a layout shorter than v15 (v1..v14, the max-only v14): the
 * payload copied into an aligned buffer, zero past the layout, and read
 * through the v16 layout, so the fields the version lacks come out zero.
 * Old kernels only: out of the hot path. */
static __attribute__((noinline)) void
fill_short(const void *payload, size_t len, size_t known, uint16_t version,
	   unsigned layout, uint32_t fields, enum cgs_kind kind,
	   struct cgs_record *out)
{
	union {
		struct cgsi_ts_v1 v1;
		struct cgsi_ts_v14max v14max;
		struct cgsi_ts_v16 v16;
		unsigned char raw[CGSI_TS_V16_SIZE];
	} b;

	memcpy(b.raw, payload, known);
	memset(b.raw + known, 0, sizeof(b.raw) - known);
	memset(out, 0, sizeof(*out));
	if (layout == 1)
		conv_v1(&b.v1, out);
	else if (layout == CGSI_LAYOUT_V14MAX)
		conv_v14max(&b.v14max, out, fields);
	else
		conv_v16(&b.v16, out, fields);
	fill_head(len, known, version, layout, fields, kind, out);
}

/* v15, v16, v17 (and newer): the payload holds the whole layout, read in
 * place (the layouts are packed), nothing copied. The conversion writes
 * every field of the record but v17's times of the maxima and the
 * record's own fields (fill_head()): the record's other bytes --
 * padding, the slots no kernel fills -- must be zero already (a record
 * the library filled before, CGS_DECODE_REUSE, or one just cleared), and
 * only those times are cleared for a layout without them. */
static inline void conv_full(const void *payload, unsigned layout,
			     uint32_t fields, struct cgs_record *out)
{
	/* each branch ends in a call with nothing after it (a tail call:
	 * no registers kept across it) */
	if (layout == 17) {
		conv_v17(payload, out, fields);
		return;
	}
	memset(out->delay_max_at_ns, 0,
	       sizeof(out->delay_max_at_ns[0]) * CGS_DELAY__COUNT);
	if (layout == 15)
		conv_v15(payload, out, fields);
	else
		conv_v16(payload, out, fields);
}

/* The record from a payload of len bytes read by the given layout; its
 * pid is ac_pid's, whatever the kind (the callers set it). v15+ write
 * the record's own fields first, so that the conversion is the last call
 * and nothing is kept across a call on this path. */
static inline __attribute__((always_inline)) void
fill(const void *payload, size_t len, size_t known, uint16_t version,
     unsigned layout, uint32_t fields, enum cgs_kind kind, bool clean_tail,
     struct cgs_record *out)
{
	if (cgs_unlikely(layout < 15 || layout > CGS_TASKSTATS_VERSION_MAX)) {
		fill_short(payload, len, known, version, layout, fields, kind,
			   out);
		return;
	}
	if (!clean_tail)
		memset(out, 0, sizeof(*out));
	fill_head(len, known, version, layout, fields, kind, out);
	conv_full(payload, layout, fields, out);
}

void cgsi_decode_payload_exact(const void *payload, uint16_t version,
			       unsigned layout, enum cgs_kind kind,
			       bool clean_tail, struct cgs_record *out)
{
	size_t n = cgsi_ts_size[layout];

	fill(payload, n, n, version, layout, ts_fields[layout], kind,
	     clean_tail, out);
}

int cgsi_decode_payload_hint(const void *payload, size_t len,
			     enum cgs_kind kind, unsigned hint_layout,
			     bool clean_tail, struct cgs_record *out,
			     struct cgs_decode_stats *st)
{
	uint16_t version;
	unsigned layout;
	size_t need, known;
	uint32_t fields;
	bool guessed = false;

	if (cgs_unlikely(len < sizeof(version) || !payload))
		return -EBADMSG;
	memcpy(&version, payload, sizeof(version));

	if (cgs_likely(version >= 1 && version <= CGS_TASKSTATS_VERSION_MAX)) {
		layout = version;
		need = known = cgsi_ts_size[version];
		if (version == 14 && len > known) {
			/* 6.14-rc / linux-next kernels added max(/min) fields
			 * in the middle without (yet) bumping the version. */
			if (len >= CGSI_TS_V16_SIZE) {
				layout = 15;
				known = CGSI_TS_V16_SIZE;
				guessed = true;
			} else if (len >= CGSI_TS_V14MAX_SIZE) {
				layout = CGSI_LAYOUT_V14MAX;
				known = CGSI_TS_V14MAX_SIZE;
				guessed = true;
			}
		}
	} else if (version > CGS_TASKSTATS_VERSION_MAX) {
		/* newer than us: appended fields only, by the rules the
		 * header states since v16 */
		layout = CGS_TASKSTATS_VERSION_MAX;
		need = known = CGSI_TS_V17_SIZE;
	} else {
		/* version 0: TGID aggregates of older kernels */
		if (hint_layout && hint_layout != CGSI_LAYOUT_V14MAX &&
		    hint_layout <= CGS_TASKSTATS_VERSION_MAX &&
		    len >= cgsi_ts_size[hint_layout])
			layout = hint_layout;
		else if (hint_layout == CGSI_LAYOUT_V14MAX &&
			 len >= CGSI_TS_V14MAX_SIZE)
			layout = hint_layout;
		else
			layout = layout_for_len(len);
		if (!layout)
			return -EBADMSG;
		need = known = layout == CGSI_LAYOUT_V14MAX
				       ? CGSI_TS_V14MAX_SIZE
				       : cgsi_ts_size[layout];
		guessed = true;
	}
	/* from here on known <= len: every layout is read within it */
	if (cgs_unlikely(len < need))
		return -EBADMSG;

	if (layout == CGSI_LAYOUT_V14MAX)
		fields = F_V14 | CGS_HAS_DELAY_MAXMIN;
	else
		fields = ts_fields[layout];
	fill(payload, len, known, version, layout, fields, kind, clean_tail,
	     out);
	/* ac_pid names the thread; the message decoder overrides it with
	 * the PID attribute, and a TGID aggregate carries none */
	out->pid = kind == CGS_KIND_TGID ? 0 : out->pid;

	if (st) {
		if (guessed)
			st->layout_guesses++;
		if (!version)
			st->version0++;
		if (version > CGS_TASKSTATS_VERSION_MAX)
			st->unknown_version++;
		st->unknown_bytes += len - known;
	}
	return 0;
}

void cgsi_decode_stats_add(struct cgs_decode_stats *st,
			   const struct cgs_decode_stats *d)
{
	const unsigned char *src = (const unsigned char *)d;

	if (cgs_likely(CGSI_OUT_FULL(st))) {
		st->messages += d->messages;
		st->malformed += d->malformed;
		st->records += d->records;
		st->layout_guesses += d->layout_guesses;
		st->unknown_version += d->unknown_version;
		st->unknown_bytes += d->unknown_bytes;
		st->tgid_skipped += d->tgid_skipped;
		st->version0 += d->version0;
		return;
	}

	for (size_t off = offsetof(struct cgs_decode_stats, messages);
	     off + sizeof(uint64_t) <= sizeof(*d) &&
	     off + sizeof(uint64_t) <= st->sz;
	     off += sizeof(uint64_t)) {
		uint64_t a, b;
		memcpy(&a, (unsigned char *)st + off, sizeof(a));
		memcpy(&b, src + off, sizeof(b));
		a += b;
		memcpy((unsigned char *)st + off, &a, sizeof(a));
	}
}

int cgs_decode_payload(const void *payload, size_t len,
		       enum cgs_kind kind, struct cgs_record *out,
		       struct cgs_decode_stats *st)
{
	struct cgs_decode_stats ls = { .sz = sizeof(ls) };
	struct cgs_record tmp, *o = out;

	if (!payload || !out || !CGSI_OUT_OK(out) ||
	    (st && !CGSI_OUT_OK(st)))
		return -EINVAL;
	if (!CGSI_OUT_FULL(out))
		o = &tmp;
	int r = cgsi_decode_payload_hint(payload, len, kind, 0, false, o, &ls);
	if (r < 0)
		ls.malformed++;
	else if (o != out)
		cgsi_out_copy(out, o, sizeof(*o));
	if (st)
		cgsi_decode_stats_add(st, &ls);
	return r;
}

unsigned cgs_delay_classes(void)
{
	return CGS_DELAY__COUNT;
}
