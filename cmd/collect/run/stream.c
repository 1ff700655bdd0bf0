/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See stream.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "stream.h"

/* FNV-1a of the path, then the inode mixed in (splitmix64's finaliser):
 * two incarnations of one path differ by their inode. */
static uint64_t row_key(const struct cgs_cgroup_stats *g)
{
	uint64_t h = 1469598103934665603ull;
	for (const unsigned char *p = (const unsigned char *)g->path; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h ^= g->ino + 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static const struct cgs_counters zero;

/* The counters after their size field are all 0. */
static bool counters_zero(const struct cgs_counters *c)
{
	const size_t at = offsetof(struct cgs_counters, tasks);
	return c == NULL || !memcmp((const char *)c + at,
				    (const char *)&zero + at,
				    sizeof(zero) - at);
}

/* A row whose deltas are not 0 changed since the previous line, and so
 * changes again at the next one (its deltas go back to 0). */
static bool row_dirty(const struct cgs_cgroup_stats *g)
{
	return g->inferred_delta || !counters_zero(g->self_delta) ||
	       !counters_zero(g->subtree_delta);
}

bool tsc_stream_row_moved(const struct cgs_cgroup_stats *g)
{
	return g->inferred_delta || !counters_zero(g->self_delta);
}

static int grow(void **p, size_t *cap, size_t need, size_t each)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * each);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static size_t find(const struct tsc_stream *st, uint64_t key)
{
	if (!st->tab)
		return SIZE_MAX;
	for (size_t i = key & st->mask;; i = (i + 1) & st->mask) {
		uint32_t v = st->tab[i];
		if (!v)
			return SIZE_MAX;
		if (st->rows[v - 1].key == key)
			return v - 1;
	}
}

/* The table of rows[0..n) again (st->dup: a key twice). */
static int rehash(struct tsc_stream *st)
{
	size_t slots = 64;
	while (slots < 2 * st->n)
		slots *= 2;
	if (slots - 1 != st->mask || !st->tab) {
		free(st->tab);
		st->tab = malloc(slots * sizeof(*st->tab));
		st->mask = slots - 1;
		if (!st->tab)
			return -ENOMEM;
	}
	memset(st->tab, 0, slots * sizeof(*st->tab));
	st->dup = false;
	for (size_t r = 0; r < st->n; r++) {
		size_t i = st->rows[r].key & st->mask;
		for (; st->tab[i]; i = (i + 1) & st->mask)
			if (st->rows[st->tab[i] - 1].key == st->rows[r].key)
				st->dup = true;
		st->tab[i] = (uint32_t)(r + 1);
	}
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * The changed rows of the m shown (new[k]: the k-th's row), against the
 * previous state: into st->sel, st->at, st->drop. A reader rebuilds the
 * rows kept in their previous order: one that moved before another kept
 * row is written again (dropped and placed). false if a key is there
 * twice (two rows of one cgroup: which one continues the previous row is
 * not known), for a full line.
 */
static bool diff(struct tsc_stream *st, const struct tsc_srow *nw, size_t m)
{
	size_t kept = 0; /* the last kept row's index + 1 */
	st->nsel = st->ndrop = 0;
	for (size_t k = 0; k < m; k++) {
		size_t p = find(st, nw[k].key);
		if (p != SIZE_MAX && st->rows[p].matched)
			return false;
		bool changed = p == SIZE_MAX || nw[k].dirty;
		if (p != SIZE_MAX) {
			struct tsc_srow *o = &st->rows[p];
			o->matched = 1;
			changed = changed || o->dirty ||
				  o->removed != nw[k].removed || p < kept;
			if (changed)
				st->drop[st->ndrop++] = p;
			else
				kept = p + 1;
		}
		if (changed) {
			st->sel[st->nsel] = k;
			st->at[st->nsel++] = k;
		}
	}
	for (size_t p = 0; p < st->n; p++)
		if (!st->rows[p].matched)
			st->drop[st->ndrop++] = p;
	for (size_t i = 1; i < st->ndrop; i++)
		if (st->drop[i - 1] > st->drop[i]) { /* ascending, as written */
			qsort(st->drop, st->ndrop, sizeof(*st->drop), cmp_size);
			break;
		}
	return true;
}

/* The common case on a quiet host: the same rows in the same order as
 * the previous line (nw[k] is rows[k]'s cgroup for every k): the changed
 * ones replace theirs in place, no lookup, and the table stays valid. */
static bool diff_same(struct tsc_stream *st, const struct tsc_srow *nw,
		      size_t m)
{
	if (m != st->n || !st->tab || st->dup)
		return false;
	for (size_t k = 0; k < m; k++)
		if (nw[k].key != st->rows[k].key)
			return false;
	st->nsel = st->ndrop = 0;
	for (size_t k = 0; k < m; k++) {
		const struct tsc_srow *o = &st->rows[k];
		if (nw[k].dirty || o->dirty || o->removed != nw[k].removed) {
			st->drop[st->ndrop++] = k;
			st->sel[st->nsel] = k;
			st->at[st->nsel++] = k;
		}
	}
	return true;
}

/* On ENOMEM: the previous state is lost, so this line and the next are
 * full. */
static void lose_state(struct tsc_stream *st)
{
	st->n = 0;
	st->full_due = true;
	st->pcap = 0;
	free(st->sel), free(st->at), free(st->drop);
	st->sel = st->at = st->drop = NULL;
}

struct tsc_srow *tsc_stream_rows(struct tsc_stream *st, size_t m)
{
	struct tsc_srow *nw = NULL;
	if (grow((void **)&st->sel, &st->pcap, m + st->n + 1,
		 sizeof(size_t)) < 0 ||
	    !(st->at = realloc(st->at, st->pcap * sizeof(size_t))) ||
	    !(st->drop = realloc(st->drop, st->pcap * sizeof(size_t))) ||
	    !(nw = m && m <= st->spare_cap ? st->spare
					   : malloc((m ? m : 1) * sizeof(*nw))))
		lose_state(st);
	return nw;
}

bool tsc_stream_diff(struct tsc_stream *st, struct tsc_srow *nw, size_t m,
		     bool full)
{
	bool same = !full && diff_same(st, nw, m);
	if (!full && !same && !diff(st, nw, m))
		full = true;
	if (!full) {
		st->since_full++;
	} else {
		st->since_full = 0;
		st->full_due = false;
	}
	/* the previous rows' array is the next plan's (no allocation a
	 * line while the number of cgroups does not grow) */
	size_t ncap = m ? m : 1;
	if (nw == st->spare) {
		ncap = st->spare_cap;
	} else {
		free(st->spare);
	}
	st->spare = st->rows;
	st->spare_cap = st->cap;
	st->cap = ncap;
	st->rows = nw;
	st->n = m;
	if (!same && rehash(st) < 0) {
		st->n = 0;
		st->full_due = true;
	}
	return !full;
}

void tsc_stream_plan(struct tsc_stream *st, struct snap_info *in,
		     const struct cgs_snapshot *s, uint64_t out_errors)
{
	if (!st->on)
		return;
	size_t m = snap_shown(in, s);
	bool full = st->full_due || st->dup || in->final ||
		    out_errors != st->errors_seen ||
		    (st->every && st->since_full + 1 >= st->every);
	in->stream = TSC_STREAM_FULL;
	st->errors_seen = out_errors;
	struct tsc_srow *nw = tsc_stream_rows(st, m);
	if (!nw)
		return; /* a full line; the state is lost, so is the next */
	for (size_t k = 0; k < m; k++) {
		const struct cgs_cgroup_stats *g =
			cgs_snapshot_get_cgroup(s, snap_index(in, k));
		nw[k] = (struct tsc_srow){ .key = row_key(g),
					   .removed = g->removed,
					   .dirty = row_dirty(g) };
	}
	if (!tsc_stream_diff(st, nw, m, full))
		return;
	for (size_t i = 0; i < st->nsel; i++)
		st->sel[i] = snap_index(in, st->sel[i]);
	in->stream = TSC_STREAM_CHANGES;
	in->shown = st->sel;
	in->nshown = st->nsel;
	in->at = st->at;
	in->drop = st->drop;
	in->ndrop = st->ndrop;
}

void tsc_stream_free(struct tsc_stream *st)
{
	free(st->rows);
	free(st->spare);
	free(st->tab);
	free(st->sel);
	free(st->at);
	free(st->drop);
	memset(st, 0, sizeof(*st));
}
