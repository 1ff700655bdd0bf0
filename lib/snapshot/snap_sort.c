/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The order of a snapshot's entries (snapshot.c merges the shards' copies
 * in it): by path, '/' lowest (a pre-order walk of the tree), then by
 * incarnation, oldest first; a shard's node list is kept in the same
 * order.
 */
#include <stdlib.h>

#include "snapshot/snap_int.h"

/* Path order with '/' lowest: a parent, then its subtree, then siblings. */
static int path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned ca = (unsigned char)*a, cb = (unsigned char)*b;
		if (ca == cb) {
			if (!ca)
				return 0;
			continue;
		}
		if (!ca)
			return -1;
		if (!cb)
			return 1;
		if (ca == '/')
			return -1;
		if (cb == '/')
			return 1;
		return ca < cb ? -1 : 1;
	}
}

/* Where an incarnation of a path sorts among the others: by its
 * directory's inode; one whose inode is not known yet, first if a newer
 * one superseded it in its shard, else last (its shard's current one).
 * Not by the superseded flag first: a shard that never saw the newer
 * incarnation holds the same one unsuperseded, and the shards' nodes of
 * one incarnation must sort together to be merged into one row
 * (order_incarnations() then puts the superseded ones first). */
static uint64_t age_key(bool superseded, uint64_t ino)
{
	return ino ? ino : superseded ? 0 : UINT64_MAX;
}

/* The unknown bucket last; same path: older incarnations first, so that
 * the current one is the ancestor its descendants attach to. */
static int order(bool ua, const char *pa, bool sa, uint64_t ia, bool ub,
		 const char *pb, bool sb, uint64_t ib)
{
	if (ua != ub)
		return ua ? 1 : -1;
	int c = path_cmp(pa, pb);
	if (c)
		return c;
	uint64_t ka = age_key(sa, ia), kb = age_key(sb, ib);
	return ka < kb ? -1 : ka > kb;
}

static int sent_cmp(const struct sent *a, const struct sent *b)
{
	return order(a->unknown, a->path, a->superseded, a->ino, b->unknown,
		     b->path, b->superseded, b->ino);
}

int cgsi_snap_node_cmp(const struct cgsi_cgnode *a,
		       const struct cgsi_cgnode *b)
{
	return order(a->unknown, a->path, !a->hashed, a->ino, b->unknown,
		     b->path, !b->hashed, b->ino);
}

int cgsi_snap_node_pcmp(const void *pa, const void *pb)
{
	return cgsi_snap_node_cmp(*(struct cgsi_cgnode *const *)pa,
			*(struct cgsi_cgnode *const *)pb);
}

/*
 * Sort by merging the ascending runs already there (each shard's copy is
 * one, in the order its list keeps): n log(runs) comparisons. Returns
 * -ENOMEM (a leaves unsorted) or 0.
 */
int cgsi_snap_sort_runs(struct vec *a, struct snap_scratch *sc)
{
	size_t n = a->n, nr = 0;
	if (n < 2)
		return 0;
	size_t i1 = 1; /* one run (a single shard, nothing new): sorted */
	while (i1 < n && sent_cmp(&a->v[i1 - 1], &a->v[i1]) <= 0)
		i1++;
	if (i1 == n)
		return 0;
	size_t *run = cgsi_sbuf_get(&sc->runs, (n + 1) * sizeof(*run));
	struct sent *tmp = cgsi_sbuf_get(&sc->tmp, n * sizeof(*tmp));
	if (!run || !tmp)
		return -ENOMEM;
	run[nr++] = 0;
	run[nr++] = i1;
	for (size_t i = i1 + 1; i < n; i++)
		if (sent_cmp(&a->v[i - 1], &a->v[i]) > 0)
			run[nr++] = i;
	run[nr] = n;
	struct sent *src = a->v, *dst = tmp;
	while (nr > 1) {
		size_t w = 0;
		for (size_t r = 0; r < nr; r += 2) {
			size_t lo = run[r], mid = run[r + 1];
			size_t hi = r + 2 <= nr ? run[r + 2] : mid;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = sent_cmp(&src[j], &src[i]) < 0
						   ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
			run[w++] = lo;
		}
		run[w] = n;
		nr = w;
		struct sent *t = src;
		src = dst;
		dst = t;
	}
	if (src != a->v)
		memcpy(a->v, src, n * sizeof(*src));
	return 0;
}

/* Within each path's run of incarnations (merged), the superseded ones
 * first: the last is the current one, the ancestor its descendants
 * attach to. Inodes give creation order in cgroupfs (kernfs), not on
 * every file system: superseded, as a shard saw it, says more. */
void cgsi_snap_order_incarnations(struct vec *a)
{
	for (size_t lo = 0, hi; lo < a->n; lo = hi) {
		for (hi = lo + 1; hi < a->n && !a->v[lo].unknown &&
				  !strcmp(a->v[lo].path, a->v[hi].path);
		     hi++)
			;
		for (size_t i = lo + 1; i < hi; i++) { /* a few: insertion */
			struct sent e = a->v[i];
			size_t j = i;
			for (; j > lo && a->v[j - 1].superseded < e.superseded;
			     j--)
				a->v[j] = a->v[j - 1];
			a->v[j] = e;
		}
	}
}
