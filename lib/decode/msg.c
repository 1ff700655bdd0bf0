/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One TASKSTATS_CMD_NEW generic-netlink message -> task/group records.
 *
 * Own attribute walker rather than libnl's: every header is read with
 * memcpy from inside [msg, msg + nlmsg_len), every length is checked
 * before it is used, and nothing is allocated. Exit events carry
 *   AGGR_PID { PID u32, STATS } [AGGR_TGID { TGID u32, STATS }] [NULL]
 * (nests without NLA_F_NESTED); a reply to a query the same. Plain
 * top-level PID/TGID followed by STATS are accepted as well.
 *
 * The kernel builds every such message alike (kernel/taskstats.c,
 * mk_reply(): nla_nest_start_noflag(), nla_put_u32(), then
 * nla_reserve_64bit(), which adds no NULL pad where unaligned access is
 * cheap, as on x86-64 and arm64), so its attributes sit at fixed offsets
 * for a payload of S bytes:
 *   20  AGGR_PID  len 16 + S
 *   24    PID     len 8, the pid at 28
 *   32    STATS   len 4 + S, the payload at 36
 *   [36 + S  AGGR_TGID { TGID, STATS } the same, for a process exit]
 * decode_fixed() reads such a message directly when every header is
 * where and what it would be, S is the size of the payload's (known)
 * version, and nlmsg_len ends exactly after the last nest; the TGID
 * payload must have the PID payload's version or 0. Anything else takes
 * the attribute walk, which gives the same records and counters for a
 * message decode_fixed() takes (test_decode_fast compares the two over
 * every version; fuzz_decode over its inputs: cgsi_decode_msg_path()).
 */
#include <stddef.h>
#include "util/common.h"
#include "decode/layout.h"

#define NLMSG_HDR_LEN 16u
#define GENL_HDR_LEN 4u
#define NLA_HDR_LEN 4u
#define NLA_ALIGN4(n) (((n) + 3u) & ~(size_t)3u)
#define NLA_TYPE_MASK 0x3fffu /* strip NLA_F_NESTED / NET_BYTEORDER */
#define NLMSG_MIN_TYPE 0x10u  /* below: NOOP, ERROR, DONE, OVERRUN */

enum {
	TS_CMD_NEW = 2,
	TS_TYPE_PID = 1,
	TS_TYPE_TGID = 2,
	TS_TYPE_STATS = 3,
	TS_TYPE_AGGR_PID = 4,
	TS_TYPE_AGGR_TGID = 5,
	TS_TYPE_NULL = 6,
};

struct ts_rec {
	const unsigned char *stats;
	size_t stats_len;
	uint32_t id;
	bool seen;
};

static inline uint16_t ld16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t ld32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Next attribute of [*p, end): 0 and its type, data and length, 1 at the
 * end, -EBADMSG for a length that does not fit. Trailing bytes shorter than a
 * header are alignment padding. */
static inline int nla_next(const unsigned char **p, const unsigned char *end,
			   unsigned *type, const unsigned char **data,
			   size_t *dlen)
{
	size_t rem = (size_t)(end - *p), alen;
	uint16_t nlen;

	if (rem < NLA_HDR_LEN)
		return 1;
	nlen = ld16(*p);
	if (cgs_unlikely(nlen < NLA_HDR_LEN || nlen > rem))
		return -EBADMSG;
	*type = ld16(*p + 2) & NLA_TYPE_MASK;
	*data = *p + NLA_HDR_LEN;
	*dlen = nlen - NLA_HDR_LEN;
	alen = NLA_ALIGN4(nlen);
	*p += alen < rem ? alen : rem;
	return 0;
}

/* The 4-byte attribute header of length len and type, as ld32() reads
 * it from the wire (host byte order). */
static inline uint32_t nla_hdr(unsigned len, unsigned type)
{
	const uint16_t h[2] = { (uint16_t)len, (uint16_t)type };
	uint32_t v;

	memcpy(&v, h, sizeof(v));
	return v;
}

#define FIX_NEST (NLMSG_HDR_LEN + GENL_HDR_LEN) /* the first nest */
#define FIX_ID 8u                               /* its id, in a nest */
#define FIX_STATS 12u                           /* its STATS header */
#define FIX_PAYLOAD 16u                         /* the payload */

/* Is n a nest of the kernel's exact shape: { id, STATS of s bytes }? */
static inline bool fixed_nest(const unsigned char *n, unsigned nest_type,
			      unsigned id_type, unsigned s)
{
	return ld32(n) == nla_hdr(FIX_PAYLOAD + s, nest_type) &&
	       ld32(n + NLA_HDR_LEN) == nla_hdr(FIX_ID, id_type) &&
	       ld32(n + FIX_STATS) == nla_hdr(NLA_HDR_LEN + s, TS_TYPE_STATS);
}

/* The task record of the fixed-shape AGGR_PID nest pn (version v). */
static inline __attribute__((always_inline)) void
decode_fixed_task(const unsigned char *pn, uint16_t v, unsigned flags,
		  bool with_tgid, struct cgs_record *task)
{
	cgsi_decode_payload_exact(pn + FIX_PAYLOAD, v, v, CGS_KIND_THREAD,
				  flags & CGS_DECODE_REUSE, task);
	task->pid = ld32(pn + FIX_ID);
	if (with_tgid || (task->flag & CGS_AC_AGROUP))
		task->kind = CGS_KIND_PROCESS;
}

/* m (mlen bytes, a TASKSTATS_CMD_NEW) as the kernel builds it: decoded
 * directly, the records and counters as the walk would give them. 0 for
 * any other shape: the caller walks it. */
static inline __attribute__((always_inline)) int
decode_fixed(const unsigned char *m, uint32_t mlen, unsigned flags,
	     struct cgs_record *task, struct cgs_record *group,
	     struct cgs_decode_stats *st)
{
	const unsigned char *pn = m + FIX_NEST, *tn;
	unsigned s, rec;
	uint16_t v, tv;

	if (cgs_unlikely(mlen < FIX_NEST + FIX_PAYLOAD + sizeof(v)))
		return 0;
	v = ld16(pn + FIX_PAYLOAD);
	if (cgs_unlikely(v - 1u >= CGS_TASKSTATS_VERSION_MAX))
		return 0; /* version 0 or newer than ours: by length */
	s = cgsi_ts_size[v];
	rec = FIX_PAYLOAD + s;
	if (cgs_unlikely(!fixed_nest(pn, TS_TYPE_AGGR_PID, TS_TYPE_PID, s)))
		return 0;
	if (mlen == FIX_NEST + rec) {
		decode_fixed_task(pn, v, flags, false, task);
		return CGS_DECODED_TASK;
	}
	if (mlen != FIX_NEST + 2 * rec)
		return 0;
	tn = pn + rec; /* inside the message only now */
	if (!fixed_nest(tn, TS_TYPE_AGGR_TGID, TS_TYPE_TGID, s))
		return 0;
	tv = ld16(tn + FIX_PAYLOAD);
	if (tv && tv != v)
		return 0;

	decode_fixed_task(pn, v, flags, true, task);
	if (flags & CGS_NO_TGID) {
		/* the walk never looks into a skipped nest: no tgid from it */
		st->tgid_skipped++;
		return CGS_DECODED_TASK;
	}
	if (!task->tgid)
		task->tgid = ld32(tn + FIX_ID); /* pre-v12 structs lack it */
	/* a version-0 aggregate is read by its PID record's layout */
	cgsi_decode_payload_exact(tn + FIX_PAYLOAD, tv, v, CGS_KIND_TGID,
				  flags & CGS_DECODE_REUSE, group);
	group->pid = 0;
	group->tgid = ld32(tn + FIX_ID);
	if (!tv) {
		st->layout_guesses++;
		st->version0++;
	}
	return CGS_DECODED_TASK | CGS_DECODED_GROUP;
}

/* AGGR_PID/AGGR_TGID nest: exactly one id (u32) and one STATS; other
 * attribute types are skipped. */
static int parse_nest(const unsigned char *p, size_t len, unsigned id_type,
		      struct ts_rec *r)
{
	const unsigned char *end = p + len, *data;
	bool have_id = false;
	unsigned type;
	size_t dlen;
	int rc;

	if (cgs_unlikely(r->seen))
		return -EBADMSG; /* the kernel sends each at most once */
	while ((rc = nla_next(&p, end, &type, &data, &dlen)) == 0) {
		if (type == id_type) {
			if (dlen != sizeof(uint32_t) || have_id)
				return -EBADMSG;
			r->id = ld32(data);
			have_id = true;
		} else if (type == TS_TYPE_STATS) {
			if (r->stats)
				return -EBADMSG;
			r->stats = data;
			r->stats_len = dlen;
		}
		/* NULL padding, or something a newer kernel added */
	}
	if (rc < 0 || !have_id || !r->stats)
		return -EBADMSG;
	r->seen = true;
	return 0;
}

/* The attributes of [m + headers, m + mlen) into *rp (the PID record)
 * and *rt (the TGID record): 0, or -EBADMSG. */
static int walk_attrs(const unsigned char *m, uint32_t mlen, unsigned flags,
		      struct ts_rec *rp, struct ts_rec *rt)
{
	const unsigned char *p, *end, *data;
	unsigned type, last_id = 0;
	uint32_t pending = 0;
	size_t dlen;
	int rc;

	p = m + NLMSG_HDR_LEN + GENL_HDR_LEN;
	end = m + mlen;
	while ((rc = nla_next(&p, end, &type, &data, &dlen)) == 0) {
		switch (type) {
		case TS_TYPE_AGGR_PID:
			if (parse_nest(data, dlen, TS_TYPE_PID, rp))
				return -EBADMSG;
			last_id = 0;
			break;
		case TS_TYPE_AGGR_TGID:
			/* a skipped TGID record still marks a process exit;
			 * its nest is never looked into */
			if (flags & CGS_NO_TGID) {
				if (rt->seen)
					return -EBADMSG;
				rt->seen = true;
			} else if (parse_nest(data, dlen, TS_TYPE_TGID,
					      rt)) {
				return -EBADMSG;
			}
			last_id = 0;
			break;
		case TS_TYPE_PID:
		case TS_TYPE_TGID:
			if (dlen != sizeof(uint32_t))
				return -EBADMSG;
			pending = ld32(data);
			last_id = type;
			break;
		case TS_TYPE_STATS: {
			struct ts_rec *r = last_id == TS_TYPE_PID ? rp : rt;

			if (!last_id || r->seen)
				return -EBADMSG;
			last_id = 0;
			if (r == rt && (flags & CGS_NO_TGID)) {
				rt->seen = true;
				break;
			}
			r->id = pending;
			r->stats = data;
			r->stats_len = dlen;
			r->seen = true;
			break;
		}
		default:
			/* NULL padding, or attributes of a newer kernel */
			break;
		}
	}
	return rc < 0 || (!rp->seen && !rt->seen) ? -EBADMSG : 0;
}

/* Any message the kernel's shape does not fit: walk its attributes. */
static __attribute__((noinline)) int
decode_walk(const unsigned char *m, uint32_t mlen, unsigned flags,
	    struct cgs_record *task, struct cgs_record *group,
	    struct cgs_decode_stats *st)
{
	struct ts_rec rp = { 0 }, rt = { 0 };
	int rc, ret = 0;

	if (walk_attrs(m, mlen, flags, &rp, &rt))
		return -EBADMSG;
	if (rp.seen) {
		rc = cgsi_decode_payload_hint(rp.stats, rp.stats_len,
					      CGS_KIND_THREAD, 0,
					      flags & CGS_DECODE_REUSE,
					      task, st);
		if (rc < 0)
			return rc;
		task->pid = rp.id;
		if ((task->flag & CGS_AC_AGROUP) || rt.seen)
			task->kind = CGS_KIND_PROCESS;
		if (!task->tgid && rt.id)
			task->tgid = rt.id; /* pre-v12 structs lack ac_tgid */
		ret |= CGS_DECODED_TASK;
	}
	if (rt.seen && (flags & CGS_NO_TGID)) {
		st->tgid_skipped++;
	} else if (rt.seen) {
		rc = cgsi_decode_payload_hint(rt.stats, rt.stats_len,
					      CGS_KIND_TGID,
					      rp.seen ? task->layout : 0,
					      flags & CGS_DECODE_REUSE,
					      group, st);
		if (rc < 0)
			return rc;
		group->pid = 0;
		group->tgid = rt.id;
		ret |= CGS_DECODED_GROUP;
	}
	return ret;
}

/* inlined in both callers: the hot path must not pay a call for it.
 * path: CGSI_PATH_AUTO but for cgsi_decode_msg_path(). */
static inline __attribute__((always_inline)) int
decode(const unsigned char *m, size_t len, unsigned flags,
       enum cgsi_decode_path path,
       struct cgs_record *task, struct cgs_record *group,
       struct cgs_decode_stats *st)
{
	uint32_t mlen;
	int ret;

	if (cgs_unlikely(len < NLMSG_HDR_LEN))
		return -EBADMSG;
	mlen = ld32(m);
	if (ld16(m + 4) < NLMSG_MIN_TYPE)
		return -ENOMSG; /* error/ack/done/overrun */
	if (cgs_unlikely(mlen < NLMSG_HDR_LEN + GENL_HDR_LEN || mlen > len))
		return -EBADMSG;
	if (m[NLMSG_HDR_LEN] != TS_CMD_NEW)
		return -ENOMSG;
	if (path != CGSI_PATH_WALK) {
		ret = decode_fixed(m, mlen, flags, task, group, st);
		if (cgs_likely(ret) || path == CGSI_PATH_FIXED)
			return ret;
	}
	return decode_walk(m, mlen, flags, task, group, st);
}

/* Add the counters of one decoded message (r: decode()'s result) to st,
 * a struct of our own size. */
static inline void stats_add_msg(struct cgs_decode_stats *st, int r,
				 const struct cgs_decode_stats *ls)
{
	st->messages++;
	if (r == -EBADMSG) {
		st->malformed++;
	} else if (r >= 0) {
		/* per-record counters only for accepted messages */
		st->records += (unsigned)((r & CGS_DECODED_TASK) +
					  ((r & CGS_DECODED_GROUP) >> 1));
		st->layout_guesses += ls->layout_guesses;
		st->unknown_version += ls->unknown_version;
		st->unknown_bytes += ls->unknown_bytes;
		st->tgid_skipped += ls->tgid_skipped;
		st->version0 += ls->version0;
	}
}

/* A caller whose structs are smaller than ours (built against an older
 * header), or invalid: decode aside and copy out what it has room for. */
static __attribute__((noinline, cold)) int
decode_msg_slow(const void *msg, size_t len, unsigned flags,
		struct cgs_record *task, struct cgs_record *group,
		struct cgs_decode_stats *st)
{
	struct cgs_decode_stats ls = { .sz = sizeof(ls) };
	struct cgs_record tt, tg;
	int r;

	flags &= ~CGS_DECODE_REUSE; /* tt and tg are not zeroed */
	if (!msg || !task || !CGSI_OUT_OK(task) ||
	    (!group && !(flags & CGS_NO_TGID)) ||
	    (group && !CGSI_OUT_OK(group)) || (st && !CGSI_OUT_OK(st)))
		return -EINVAL;
	r = decode(msg, len, flags, CGSI_PATH_AUTO, &tt, group ? &tg : NULL,
		   &ls);
	if (r > 0 && (r & CGS_DECODED_TASK))
		cgsi_out_copy(task, &tt, sizeof(tt));
	if (r > 0 && (r & CGS_DECODED_GROUP))
		cgsi_out_copy(group, &tg, sizeof(tg));
	if (st) {
		struct cgs_decode_stats d = { .sz = sizeof(d) };
		stats_add_msg(&d, r, &ls);
		cgsi_decode_stats_add(st, &d);
	}
	return r;
}

int cgs_decode_msg(const void *msg, size_t len, unsigned flags,
		   struct cgs_record *task,
		   struct cgs_record *group,
		   struct cgs_decode_stats *st)
{
	struct cgs_decode_stats ls = { 0 }; /* ours: sz unused */
	int r;

	/* the hot path: every struct the caller passed is as large as ours */
	if (cgs_unlikely(!msg || !task || !CGSI_OUT_FULL(task) ||
			 (group ? !CGSI_OUT_FULL(group)
				: !(flags & CGS_NO_TGID)) ||
			 (st && !CGSI_OUT_FULL(st))))
		return decode_msg_slow(msg, len, flags, task, group, st);
	r = decode(msg, len, flags, CGSI_PATH_AUTO, task, group, &ls);
	if (st)
		stats_add_msg(st, r, &ls);
	return r;
}

int cgsi_decode_msg_path(const void *msg, size_t len, unsigned flags,
			 enum cgsi_decode_path path, struct cgs_record *task,
			 struct cgs_record *group, struct cgs_decode_stats *st)
{
	struct cgs_decode_stats ls = { 0 };
	int r = decode(msg, len, flags, path, task, group, &ls);

	if (st)
		stats_add_msg(st, r, &ls);
	return r;
}
