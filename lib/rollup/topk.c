/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Weighted Space-Saving summary (see topk.h for the bounds). m slots, an
 * open-addressing index over them (linear probing, 4m..8m entries, a power
 * of two: load <= 1/4, short runs for the hot keys too; backward-shift
 * deletion: no tombstones however many evictions),
 * and a binary min-heap of the slots by count. An add on a key present is
 * a hash, a probe and a sift-down that stops at once for a key whose count
 * already leads its children (the heavy ones); on a key absent, at worst
 * O(log m).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "rollup/cgtable.h" /* cgsi_hash_seed */
#include "rollup/topk.h"
#include "util/common.h"

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t s;
	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t ld32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The r (0..8) bytes at p + at, zero-padded, knowing p[0..at + r) holds
 * at least 8 bytes: the last 8, shifted down (in two steps: no shift by
 * 64). */
static inline uint64_t key_tail(const unsigned char *p, size_t at, size_t r)
{
	unsigned sh = 4 * (8 - (unsigned)r);
	return (ld64(p + at + r - 8) >> sh) >> sh;
}

/* p[0..len), len < 8, zero-padded */
static inline uint64_t key_small(const unsigned char *p, size_t len)
{
	if (len >= 4)
		return ld32(p) | (uint64_t)ld32(p + len - 4) << (8 * (len - 4));
	if (!len)
		return 0;
	return p[0] | (uint64_t)p[len / 2] << (8 * (len / 2)) |
	       (uint64_t)p[len - 1] << (8 * (len - 1));
}

/* k = key[0..len) zero-padded to 32 bytes, as a memcpy into a zeroed k
 * would give, reading nothing outside key[0..len): a few loads, no call */
static inline void key_load(uint64_t k[4], const void *key, size_t len)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const unsigned char *p = key;
	k[1] = k[2] = k[3] = 0;
	if (len < 8) {
		k[0] = key_small(p, len);
		return;
	}
	k[0] = ld64(p);
	if (len <= 16) {
		k[1] = key_tail(p, 8, len - 8);
		return;
	}
	k[1] = ld64(p + 8);
	if (len <= 24) {
		k[2] = key_tail(p, 16, len - 16);
		return;
	}
	k[2] = ld64(p + 16);
	k[3] = key_tail(p, 24, len - 24);
#else
	k[0] = k[1] = k[2] = k[3] = 0;
	memcpy(k, key, len);
#endif
}

/* Seeded per process (cgsi_hash_seed, cgtable.c): each word XORed with
 * its seed before its multiply, so which keys collide differs from run to
 * run. Word 1's term has the seed's own product (key1_c1) taken out
 * again: zero for a zero word, so that a key of less than 8 bytes hashes
 * word 0 alone (key_hash_small: the hot case, one XOR more than an
 * unseeded hash). A key of 16 bytes or less (wide false: words 2 and 3
 * are zero) hashes its first two words only; wide must be len > 16. */
#define KEY_C0 0x9e3779b97f4a7c15ull
#define KEY_C1 0xc2b2ae3d27d4eb4full
static inline uint32_t key_fin(uint64_t h, uint32_t len)
{
	h ^= len;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	return (uint32_t)(h >> 32);
}

static inline uint64_t key_w0(const struct cgsi_topk *t, uint64_t k0)
{
	return (k0 ^ t->seed0) * KEY_C0; /* t->seed0: cgsi_hash_seed.key[0] */
}

static inline uint32_t key_hash(const struct cgsi_topk *t, const uint64_t k[4],
				uint32_t len, bool wide)
{
	const uint64_t *s = cgsi_hash_seed.key;
	uint64_t h = key_w0(t, k[0]) ^ ((k[1] ^ s[1]) * KEY_C1) ^
		     cgsi_hash_seed.key1_c1;
	if (wide)
		h ^= ((k[2] ^ s[2]) * 0x165667b19e3779f9ull) ^
		     ((k[3] ^ s[3]) * 0xd6e8feb86659fd93ull);
	return key_fin(h, len);
}

/* key_hash() of a key of less than 8 bytes (k[1] == 0) */
static inline uint32_t key_hash_small(const struct cgsi_topk *t, uint64_t k0,
				      uint32_t len)
{
	return key_fin(key_w0(t, k0), len);
}

/* Equal lengths mean equal zero padding: a key of 16 bytes or less needs
 * only its first two words compared. */
static inline bool key_eq(const struct cgsi_topk_slot *s, const uint64_t k[4],
			  uint32_t len)
{
	if (s->len != len || ((s->key[0] ^ k[0]) | (s->key[1] ^ k[1])))
		return false;
	return len <= 16 || !((s->key[2] ^ k[2]) | (s->key[3] ^ k[3]));
}

/* ---- heap ---- */

static inline void heap_set(struct cgsi_topk *t, uint32_t pos, uint32_t si)
{
	t->heap[pos] = si;
	t->slots[si].hpos = pos;
}

static void sift_up(struct cgsi_topk *t, uint32_t pos)
{
	uint32_t si = t->heap[pos];
	uint64_t c = t->slots[si].count;
	while (pos) {
		uint32_t up = (pos - 1) / 2;
		uint32_t ui = t->heap[up];
		if (t->slots[ui].count <= c)
			break;
		heap_set(t, pos, ui);
		pos = up;
	}
	heap_set(t, pos, si);
}

__attribute__((noinline)) static void sift_down(struct cgsi_topk *t,
						 uint32_t pos)
{
	uint32_t n = t->size;
	uint32_t si = t->heap[pos];
	uint64_t c = t->slots[si].count;
	for (;;) {
		uint32_t l = 2 * pos + 1;
		if (l >= n)
			break;
		uint32_t ci = t->heap[l];
		uint64_t cc = t->slots[ci].count;
		if (l + 1 < n) {
			uint32_t ri = t->heap[l + 1];
			if (t->slots[ri].count < cc) {
				ci = ri;
				cc = t->slots[ri].count;
				l++;
			}
		}
		if (cc >= c)
			break;
		heap_set(t, pos, ci);
		pos = l;
	}
	heap_set(t, pos, si);
}

static void heapify(struct cgsi_topk *t)
{
	for (uint32_t i = t->size / 2; i-- > 0;)
		sift_down(t, i);
}

/* ---- index ---- */

/* The slot of key k, or -1. */
static inline int64_t ix_find(const struct cgsi_topk *t, const uint64_t k[4],
			      uint32_t len, uint32_t h)
{
	for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
		const struct cgsi_topk_ix *e = &t->ix[i];
		if (!e->slot)
			return -1;
		if (e->hash == h && key_eq(&t->slots[e->slot - 1], k, len))
			return e->slot - 1;
	}
}

static void ix_insert(struct cgsi_topk *t, uint32_t h, uint32_t si)
{
	uint32_t i = h & t->mask;
	while (t->ix[i].slot)
		i = (i + 1) & t->mask;
	t->ix[i].hash = h;
	t->ix[i].slot = si + 1;
}

static void ix_remove(struct cgsi_topk *t, uint32_t h, uint32_t si)
{
	uint32_t m = t->mask, i = h & m;
	while (t->ix[i].slot != si + 1)
		i = (i + 1) & m;
	/* backward shift: pull later entries of the run into the hole when
	 * their home is not cyclically within (hole, j] */
	for (uint32_t j = i;;) {
		j = (j + 1) & m;
		if (!t->ix[j].slot)
			break;
		uint32_t home = t->ix[j].hash & m;
		if (((j - home) & m) >= ((j - i) & m)) {
			t->ix[i] = t->ix[j];
			i = j;
		}
	}
	t->ix[i].slot = 0;
	t->ix[i].hash = 0;
}

/* ---- life cycle ---- */

int cgsi_topk_init(struct cgsi_topk *t, uint32_t cap)
{
	cgsi_hash_seed_init();
	memset(t, 0, sizeof(*t));
	if (!cap || cap > CGSI_TOPK_CAP_MAX)
		return -EINVAL;
	uint32_t nix = 2;
	while (nix < 4 * cap)
		nix *= 2;
	size_t sz = (size_t)cap * sizeof(*t->slots) +
		    (size_t)nix * sizeof(*t->ix) +
		    (size_t)cap * sizeof(*t->heap);
	char *mem = calloc(1, sz);
	if (!mem)
		return -ENOMEM;
	t->slots = (struct cgsi_topk_slot *)mem;
	t->ix = (struct cgsi_topk_ix *)(mem + (size_t)cap * sizeof(*t->slots));
	t->heap = (uint32_t *)(t->ix + nix);
	t->cap = cap;
	t->mask = nix - 1;
	t->bcap = cap;
	t->seed0 = cgsi_hash_seed.key[0];
	return 0;
}

void cgsi_topk_fini(struct cgsi_topk *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

void cgsi_topk_reset(struct cgsi_topk *t)
{
	memset(t->ix, 0, ((size_t)t->mask + 1) * sizeof(*t->ix));
	t->size = 0;
	t->bcap = t->cap;
	t->total = 0;
	t->floor = 0;
}

/* ---- add ---- */

/* Key k (hash h) absent: into a free slot, else in place of the minimum.
 * count = F + w, err = F (F updated first by an eviction). */
static void enter(struct cgsi_topk *t, const uint64_t k[4], uint32_t len,
		  uint32_t h, uint64_t count, uint64_t err)
{
	bool fresh = t->size < t->cap;
	uint32_t si = fresh ? t->size++ : t->heap[0];
	struct cgsi_topk_slot *s = &t->slots[si];
	if (!fresh)
		ix_remove(t, s->hash, si);
	memcpy(s->key, k, sizeof(s->key));
	s->len = len;
	s->hash = h;
	s->count = count;
	s->err = err;
	ix_insert(t, h, si);
	if (fresh) {
		heap_set(t, si, si);
		sift_up(t, si);
	} else {
		sift_down(t, 0);
	}
}

/* the key is absent (out of line: the hot path is a hit; the key by
 * value, so that the hot path keeps it in registers) */
__attribute__((noinline)) static void add_new(struct cgsi_topk *t, uint64_t k0,
					      uint64_t k1, uint64_t k2,
					      uint64_t k3, uint64_t len_hash,
					      uint64_t w)
{
	const uint64_t k[4] = { k0, k1, k2, k3 };
	if (t->size == t->cap)
		t->floor = t->slots[t->heap[0]].count; /* the one dropped */
	enter(t, k, (uint32_t)len_hash, (uint32_t)(len_hash >> 32),
	      sat_add(t->floor, w), t->floor);
}

/* One copy for keys of 16 bytes or less (every kernel comm: words 2 and
 * 3 are known zero, the compiler drops them) and one for longer keys. */
static inline __attribute__((always_inline)) int
add_key(struct cgsi_topk *t, const unsigned char *p, uint32_t len, uint64_t w,
	bool wide)
{
	uint64_t k[4] = { 0, 0, 0, 0 };
	uint32_t h;
	if (!wide) {
		if (len < 8) {
			k[0] = key_small(p, len);
			h = key_hash_small(t, k[0], len);
		} else {
			k[0] = ld64(p);
			k[1] = key_tail(p, 8, len - 8);
			h = key_hash(t, k, len, false);
		}
	} else {
		k[0] = ld64(p);
		k[1] = ld64(p + 8);
		if (len <= 24) {
			k[2] = key_tail(p, 16, len - 16);
		} else {
			k[2] = ld64(p + 16);
			k[3] = key_tail(p, 24, len - 24);
		}
		h = key_hash(t, k, len, len > 16); /* big endian: any len */
	}
	int64_t si = ix_find(t, k, len, h);
	if (cgs_unlikely(si < 0)) {
		add_new(t, k[0], k[1], k[2], k[3], (uint64_t)h << 32 | len, w);
		return 0;
	}
	struct cgsi_topk_slot *s = &t->slots[si];
	uint64_t c = s->count = sat_add(s->count, w);
	/* still no larger than its children (a leaf: half the heap)? then
	 * the heap holds as it is */
	uint32_t l = 2 * s->hpos + 1;
	if (l >= t->size)
		return 0;
	if (t->slots[t->heap[l]].count >= c &&
	    (l + 1 >= t->size || t->slots[t->heap[l + 1]].count >= c))
		return 0;
	sift_down(t, s->hpos);
	return 0;
}

int cgsi_topk_add(struct cgsi_topk *t, const void *key, size_t len,
		  uint64_t w)
{
	if (cgs_unlikely(len > CGSI_TOPK_KEY_MAX))
		return -EINVAL;
	t->total = sat_add(t->total, w);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (cgs_likely(len <= 16))
		return add_key(t, key, (uint32_t)len, w, false);
	return add_key(t, key, (uint32_t)len, w, true);
#else
	unsigned char buf[32] = { 0 };
	memcpy(buf, key, len);
	return add_key(t, buf, (uint32_t)len, w, true);
#endif
}

/* ---- copy, merge ---- */

int cgsi_topk_copy(struct cgsi_topk *dst, const struct cgsi_topk *src)
{
	if (dst == src)
		return -EINVAL;
	if (dst->cap != src->cap) {
		cgsi_topk_reset(dst);
		return cgsi_topk_merge(dst, src);
	}
	memcpy(dst->slots, src->slots, (size_t)src->size * sizeof(*src->slots));
	memcpy(dst->ix, src->ix, ((size_t)src->mask + 1) * sizeof(*src->ix));
	memcpy(dst->heap, src->heap, (size_t)src->size * sizeof(*src->heap));
	dst->size = src->size;
	dst->bcap = src->bcap;
	dst->total = src->total;
	dst->floor = src->floor;
	return 0;
}

int cgsi_topk_dup(struct cgsi_topk *dst, const struct cgsi_topk *src)
{
	size_t nix = (size_t)src->mask + 1;
	char *mem = malloc((size_t)src->cap * sizeof(*src->slots) +
			   nix * sizeof(*src->ix) +
			   (size_t)src->cap * sizeof(*src->heap));
	if (!mem) {
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	*dst = *src;
	dst->slots = (struct cgsi_topk_slot *)mem;
	dst->ix = (struct cgsi_topk_ix *)(mem + (size_t)src->cap *
						sizeof(*src->slots));
	dst->heap = (uint32_t *)(dst->ix + nix);
	memcpy(dst->slots, src->slots, (size_t)src->size * sizeof(*src->slots));
	memcpy(dst->ix, src->ix, nix * sizeof(*src->ix));
	memcpy(dst->heap, src->heap, (size_t)src->size * sizeof(*src->heap));
	return 0;
}

int cgsi_topk_merge(struct cgsi_topk *dst, const struct cgsi_topk *src)
{
	if (dst == src)
		return -EINVAL;
	const uint64_t fd = dst->floor, fs = src->floor;
	const uint32_t n0 = dst->size;

	/* Keys in both: sums. hpos of a matched dst slot is set to
	 * UINT32_MAX as a mark (the heap is rebuilt below). */
	for (uint32_t i = 0; i < src->size; i++) {
		const struct cgsi_topk_slot *s = &src->slots[i];
		int64_t di = ix_find(dst, s->key, s->len, s->hash);
		if (di < 0)
			continue;
		struct cgsi_topk_slot *d = &dst->slots[di];
		d->count = sat_add(d->count, s->count);
		d->err = sat_add(d->err, s->err);
		d->hpos = UINT32_MAX;
	}
	/* Keys in dst only: src's floor bounds what src saw of them. */
	for (uint32_t i = 0; i < n0; i++) {
		struct cgsi_topk_slot *d = &dst->slots[i];
		if (d->hpos == UINT32_MAX)
			continue;
		d->count = sat_add(d->count, fs);
		d->err = sat_add(d->err, fs);
	}
	for (uint32_t i = 0; i < n0; i++) {
		dst->heap[i] = i;
		dst->slots[i].hpos = i;
	}
	heapify(dst);

	uint64_t floor = sat_add(fd, fs);
	/* Keys in src only (count + dst's floor): keep the cap largest of
	 * everything, the min-heap holding the largest so far. A src key
	 * matched above but evicted here since is not found again and comes
	 * back as a candidate of count c_src + fd <= c_src + c_dst, the
	 * count it was evicted with, which is <= the minimum from then on:
	 * dropped without raising the floor past what its eviction did. */
	for (uint32_t i = 0; i < src->size; i++) {
		const struct cgsi_topk_slot *s = &src->slots[i];
		if (ix_find(dst, s->key, s->len, s->hash) >= 0)
			continue;
		uint64_t c = sat_add(s->count, fd), e = sat_add(s->err, fd);
		if (dst->size == dst->cap) {
			uint64_t min = dst->slots[dst->heap[0]].count;
			if (c <= min) {
				floor = CGS_MAX(floor, c);
				continue;
			}
			floor = CGS_MAX(floor, min);
		}
		enter(dst, s->key, s->len, s->hash, c, e);
	}
	dst->floor = floor;
	dst->total = sat_add(dst->total, src->total);
	dst->bcap = CGS_MIN(dst->bcap, src->bcap);
	return 0;
}

/* ---- listing ---- */

/* a ranks before b: larger lower bound, then smaller key bytes (memcmp
 * of the common length, then the shorter first) */
static bool before(const struct cgsi_topk_entry *a,
		   const struct cgsi_topk_entry *b)
{
	uint64_t la = a->count - a->err, lb = b->count - b->err;
	if (la != lb)
		return la > lb;
	int r = memcmp(a->key, b->key, CGS_MIN(a->len, b->len));
	if (r)
		return r < 0;
	return a->len < b->len;
}

/* out[0..n) as a heap whose root ranks last */
static void sel_down(struct cgsi_topk_entry *h, size_t n, size_t pos)
{
	struct cgsi_topk_entry x = h[pos];
	for (;;) {
		size_t l = 2 * pos + 1;
		if (l >= n)
			break;
		if (l + 1 < n && before(&h[l], &h[l + 1]))
			l++;
		if (!before(&x, &h[l]))
			break;
		h[pos] = h[l];
		pos = l;
	}
	h[pos] = x;
}

static void entry_of(struct cgsi_topk_entry *e, const struct cgsi_topk_slot *s)
{
	memcpy(e->key, s->key, CGSI_TOPK_KEY_MAX);
	e->key[s->len] = 0;
	e->len = s->len;
	e->count = s->count;
	e->err = s->err;
}

int cgsi_topk_get(const struct cgsi_topk *t, const void *key, size_t len,
		  struct cgsi_topk_entry *e)
{
	if (len > CGSI_TOPK_KEY_MAX)
		return 0;
	uint64_t k[4];
	key_load(k, key, len);
	int64_t si = ix_find(t, k, (uint32_t)len, key_hash(t, k, (uint32_t)len, len > 16));
	if (si < 0)
		return 0;
	entry_of(e, &t->slots[si]);
	return 1;
}

size_t cgsi_topk_list(const struct cgsi_topk *t, struct cgsi_topk_entry *out,
		      size_t k, uint64_t *total, uint64_t *bound)
{
	if (total)
		*total = t->total;
	if (bound)
		*bound = t->floor;
	size_t n = CGS_MIN(k, (size_t)t->size);
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		entry_of(&out[i], &t->slots[i]);
	for (size_t i = n / 2; i-- > 0;)
		sel_down(out, n, i);
	for (size_t i = n; i < t->size; i++) {
		struct cgsi_topk_entry e;
		entry_of(&e, &t->slots[i]);
		if (before(&e, &out[0])) {
			out[0] = e;
			sel_down(out, n, 0);
		}
	}
	/* heap sort: the root (the worst left) goes to the end */
	for (size_t m = n; m > 1; m--) {
		struct cgsi_topk_entry x = out[0];
		out[0] = out[m - 1];
		out[m - 1] = x;
		sel_down(out, m - 1, 0);
	}
	return n;
}
