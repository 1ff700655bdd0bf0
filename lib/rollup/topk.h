/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bounded heavy hitters (weighted Space-Saving with mergeable summaries):
 * top-N commands and executables per cgroup by exits, CPU or crashes,
 * at most `cap` counters, adding never allocates. The invariants (err <= W/B, every key above
 * W/B listed) and the merge: docs/design/topk.md. Not thread-safe: the
 * caller locks.
 */
#ifndef CGS_ROLLUP_TOPK_H
#define CGS_ROLLUP_TOPK_H

#include <stddef.h>
#include <stdint.h>

#include "cgstats.h"

#define CGSI_TOPK_KEY_MAX CGS_COMM_LEN
#define CGSI_TOPK_CAP_MAX (1u << 24)

struct cgsi_topk_slot {
	uint64_t key[4]; /* the key's bytes, zero-padded */
	uint64_t count;  /* upper bound of the key's weight */
	uint64_t err;    /* count - err: lower bound */
	uint32_t hash;
	uint32_t hpos;   /* position in the heap */
	uint32_t len;    /* key length, 0..32 */
};

struct cgsi_topk_ix {
	uint32_t hash;
	uint32_t slot; /* slot index + 1, 0: empty */
};

struct cgsi_topk {
	struct cgsi_topk_slot *slots; /* [cap], the first `size` in use */
	struct cgsi_topk_ix *ix;      /* [mask + 1], linear probing */
	uint32_t *heap;               /* [size] slot indexes, min count first */
	uint32_t cap, size, mask;
	uint32_t bcap;  /* B of (4) */
	uint64_t total; /* W */
	uint64_t floor; /* F */
	uint64_t seed0; /* cgsi_hash_seed.key[0], beside the hot fields */
};

/* One entry of a listing. key is NUL-terminated after len bytes (which
 * may hold NULs of their own). */
struct cgsi_topk_entry {
	char key[CGSI_TOPK_KEY_MAX + 1];
	uint32_t len;
	uint64_t count; /* true weight <= count */
	uint64_t err;   /* count - err <= true weight */
};

/* cap counters, 1..CGSI_TOPK_CAP_MAX. 0, -EINVAL or -ENOMEM. */
int cgsi_topk_init(struct cgsi_topk *t, uint32_t cap);
void cgsi_topk_fini(struct cgsi_topk *t);
/* Empty again (same capacity, B = cap). */
void cgsi_topk_reset(struct cgsi_topk *t);

/* Add weight w (0 allowed: the key enters as any other) to key[0..len).
 * 0, or -EINVAL when len > CGSI_TOPK_KEY_MAX (nothing changes). */
int cgsi_topk_add(struct cgsi_topk *t, const void *key, size_t len,
		  uint64_t w);

/* The counter of key[0..len) into *e: 1, or 0 when the summary does not
 * hold it (its true weight is then <= cgsi_topk_bound()). */
int cgsi_topk_get(const struct cgsi_topk *t, const void *key, size_t len,
		  struct cgsi_topk_entry *e);

/* dst (initialised, any capacity) becomes a copy of src: an exact one when
 * the capacities are equal (a memcpy of the used part: for a snapshot
 * under a lock), else src merged into an emptied dst. 0 or -EINVAL (dst ==
 * src). */
int cgsi_topk_copy(struct cgsi_topk *dst, const struct cgsi_topk *src);

/* dst (not initialised) becomes an exact copy of src, of its capacity:
 * the used part copied, the rest left unwritten (a summary never reads a
 * slot past its size), so a snapshot's copy costs what src holds, not its
 * capacity. 0 or -ENOMEM (dst then zeroed). */
int cgsi_topk_dup(struct cgsi_topk *dst, const struct cgsi_topk *src);

/* Fold src into dst (see the top of this file); src is unchanged. No
 * allocation. 0, or -EINVAL when dst == src. */
int cgsi_topk_merge(struct cgsi_topk *dst, const struct cgsi_topk *src);

/*
 * The k (at most) entries of the largest lower bound (count - err), ties
 * by key bytes (memcmp order, a prefix first), into out[0..k); returns how
 * many (min(k, size)). *total (if not NULL) gets W, *bound (if not NULL)
 * F: a key the summary does not hold has a true weight <= F (with k <
 * size, the entries left out are still held: each within its own
 * [count - err, count]). O(size log k), no allocation.
 */
size_t cgsi_topk_list(const struct cgsi_topk *t, struct cgsi_topk_entry *out,
		      size_t k, uint64_t *total, uint64_t *bound);

static inline uint64_t cgsi_topk_total(const struct cgsi_topk *t)
{
	return t->total;
}

static inline uint64_t cgsi_topk_bound(const struct cgsi_topk *t)
{
	return t->floor;
}

#endif
