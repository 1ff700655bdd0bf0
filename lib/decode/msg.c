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

/* inlined in both callers: the hot path must not pay a call for it */
static inline __attribute__((always_inline)) int
decode(const unsigned char *m, size_t len, unsigned flags,
       struct cgs_record *task, struct cgs_record *group,
       struct cgs_decode_stats *st)
{
	struct ts_rec rp = { 0 }, rt = { 0 };
	const unsigned char *p, *end, *data;
	unsigned type, last_id = 0;
	uint32_t mlen, pending = 0;
	size_t dlen;
	int rc, ret = 0;

	if (cgs_unlikely(len < NLMSG_HDR_LEN))
		return -EBADMSG;
	mlen = ld32(m);
	if (ld16(m + 4) < NLMSG_MIN_TYPE)
		return -ENOMSG; /* error/ack/done/overrun */
	if (cgs_unlikely(mlen < NLMSG_HDR_LEN + GENL_HDR_LEN || mlen > len))
		return -EBADMSG;
	if (m[NLMSG_HDR_LEN] != TS_CMD_NEW)
		return -ENOMSG;

	p = m + NLMSG_HDR_LEN + GENL_HDR_LEN;
	end = m + mlen;
	while ((rc = nla_next(&p, end, &type, &data, &dlen)) == 0) {
		switch (type) {
		case TS_TYPE_AGGR_PID:
			if (parse_nest(data, dlen, TS_TYPE_PID, &rp))
				return -EBADMSG;
			last_id = 0;
			break;
		case TS_TYPE_AGGR_TGID:
			/* a skipped TGID record still marks a process exit;
			 * its nest is never looked into */
			if (flags & CGS_NO_TGID) {
				if (rt.seen)
					return -EBADMSG;
				rt.seen = true;
			} else if (parse_nest(data, dlen, TS_TYPE_TGID,
					      &rt)) {
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
			struct ts_rec *r = last_id == TS_TYPE_PID ? &rp : &rt;

			if (!last_id || r->seen)
				return -EBADMSG;
			last_id = 0;
			if (r == &rt && (flags & CGS_NO_TGID)) {
				rt.seen = true;
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
	if (rc < 0 || (!rp.seen && !rt.seen))
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
	r = decode(msg, len, flags, &tt, group ? &tg : NULL, &ls);
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
	r = decode(msg, len, flags, task, group, &ls);
	if (st)
		stats_add_msg(st, r, &ls);
	return r;
}
