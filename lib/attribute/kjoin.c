/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Record <-> kernel entry join; see kjoin.h. */
#include <stdlib.h>
#include <string.h>

#include "attribute/kjoin.h"
#include "util/common.h"

static inline uint32_t tid_hash(uint32_t tid)
{
	return tid * 2654435761u;
}

int cgsi_kjoin_init(struct cgsi_kjoin *j, uint32_t cap)
{
	memset(j, 0, sizeof(*j));
	uint32_t c = 64;
	while (c < cap && c < (1u << 24))
		c <<= 1;
	/* calloc: pages a quiet host never fills are never touched */
	j->ring = calloc(c, sizeof(*j->ring));
	j->index = calloc(2 * (size_t)c, sizeof(*j->index));
	if (!j->ring || !j->index) {
		cgsi_kjoin_fini(j);
		return -ENOMEM;
	}
	j->cap = c;
	j->imask = 2 * c - 1;
	return 0;
}

void cgsi_kjoin_fini(struct cgsi_kjoin *j)
{
	free(j->ring);
	free(j->index);
	memset(j, 0, sizeof(*j));
}

/* Remove index slot i (linear probing: shift the cluster back). */
static void index_del(struct cgsi_kjoin *j, uint32_t i)
{
	uint32_t hole = i;
	for (uint32_t k = (i + 1) & j->imask; j->index[k];
	     k = (k + 1) & j->imask) {
		uint32_t pos = j->index[k] - 1;
		uint32_t home = tid_hash(j->ring[pos].tid) & j->imask;
		/* can the entry at k move back to the hole? */
		if (((k - home) & j->imask) >= ((k - hole) & j->imask)) {
			j->index[hole] = j->index[k];
			hole = k;
		}
	}
	j->index[hole] = 0;
}

static void unlink_pos(struct cgsi_kjoin *j, uint32_t pos)
{
	uint32_t tid = j->ring[pos].tid;
	for (uint32_t i = tid_hash(tid) & j->imask; j->index[i];
	     i = (i + 1) & j->imask) {
		if (j->index[i] == pos + 1) {
			index_del(j, i);
			break;
		}
	}
	j->ring[pos].live = 0;
	j->count--;
}

/* Drop claimed or dead slots at the head of the ring. */
static void trim_head(struct cgsi_kjoin *j)
{
	while (j->head < j->tail && !j->ring[j->head & (j->cap - 1)].live)
		j->head++;
}

void cgsi_kjoin_add(struct cgsi_kjoin *j, const struct cgsi_kentry *e)
{
	if (j->tail - j->head == j->cap) {
		uint32_t pos = (uint32_t)(j->head & (j->cap - 1));
		if (j->ring[pos].live) {
			j->dropped[j->ring[pos].tid % CGSI_KJOIN_DROPPED] =
				j->ring[pos].tid + 1;
			unlink_pos(j, pos);
			j->st.evicted++;
		}
		j->head++;
		trim_head(j);
	}
	uint32_t pos = (uint32_t)(j->tail & (j->cap - 1));
	j->ring[pos] = *e;
	j->ring[pos].live = 1;
	j->tail++;
	j->count++;
	j->st.added++;
	uint32_t i = tid_hash(e->tid) & j->imask;
	while (j->index[i])
		i = (i + 1) & j->imask;
	j->index[i] = pos + 1;
}


int64_t cgsi_kjoin_verify(const struct cgsi_kentry *e,
			  const struct cgs_record *rec, int64_t real_off_ns)
{
	const struct cgsk_exit x = {
		.type = e->flags, .tid = e->tid, .tgid = e->tgid,
		.csw = e->csw, .cgid = e->cgid, .start_ns = e->start_ns,
		.now_ns = e->now_ns, .runtime_ns = e->runtime_ns,
		.run_delay = e->run_delay, .pcount = e->pcount,
		.minflt = e->minflt,
	};
	return cgsi_kjoin_verify_in(&x, rec, real_off_ns);
}

bool cgsi_kjoin_has_tid(const struct cgsi_kjoin *j, uint32_t tid)
{
	for (uint32_t i = tid_hash(tid) & j->imask; j->index[i];
	     i = (i + 1) & j->imask)
		if (j->ring[j->index[i] - 1].tid == tid)
			return true;
	return false;
}

bool cgsi_kjoin_claim(struct cgsi_kjoin *j, const struct cgs_record *rec,
		      int64_t real_off_ns, struct cgsi_kinfo *ki)
{
	int64_t best_gap = -1;
	uint32_t best = 0;
	bool seen = false;
	for (uint32_t i = tid_hash(rec->pid) & j->imask; j->index[i];
	     i = (i + 1) & j->imask) {
		uint32_t pos = j->index[i] - 1;
		const struct cgsi_kentry *e = &j->ring[pos];
		if (e->tid != rec->pid)
			continue;
		seen = true;
		int64_t g = cgsi_kjoin_verify(e, rec, real_off_ns);
		if (g >= 0 && (best_gap < 0 || g < best_gap)) {
			best_gap = g;
			best = pos;
		}
	}
	if (best_gap < 0) {
		if (seen)
			j->st.mismatched++;
		return false;
	}
	struct cgsi_kentry *e = &j->ring[best];
	cgsi_kinfo_of(ki, e);
	if (e->now_ns > j->newest_matched_ns)
		j->newest_matched_ns = e->now_ns;
	unlink_pos(j, best);
	j->st.matched++;
	trim_head(j);
	return true;
}

uint32_t cgsi_kjoin_expire(struct cgsi_kjoin *j, uint64_t horizon_ns,
			   uint64_t age_ns)
{
	uint32_t n = 0;
	if (horizon_ns <= age_ns)
		return 0;
	uint64_t limit = horizon_ns - age_ns;
	while (j->head < j->tail) {
		uint32_t pos = (uint32_t)(j->head & (j->cap - 1));
		struct cgsi_kentry *e = &j->ring[pos];
		if (e->live) {
			if (e->now_ns >= limit)
				break;
			j->dropped[e->tid % CGSI_KJOIN_DROPPED] = e->tid + 1;
			unlink_pos(j, pos);
			n++;
		}
		j->head++;
	}
	j->st.expired += n;
	return n;
}
