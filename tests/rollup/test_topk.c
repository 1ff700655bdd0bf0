/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The heavy-hitters summary (lib/rollup/topk.c): the issue's case (heavy
 * commands after 10,000 distinct light ones are listed first with exact
 * lower bounds), the bounds of topk.h checked against an exact count for
 * random skewed streams, alone and merged as shards of different
 * capacities, and edge cases (empty, capacity 1, odd and long keys,
 * weight 0, saturation).
 */
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rollup/topk.h"
#include "support/skip.h"

/* ---- an exact count: open addressing, never full ---- */

struct xent {
	bool used;
	uint32_t len;
	unsigned char key[CGSI_TOPK_KEY_MAX];
	uint64_t w;
};

struct exact {
	struct xent *e;
	size_t n; /* power of two */
	size_t used;
	uint64_t total;
};

static void ex_init(struct exact *x)
{
	x->n = 1 << 16;
	x->e = calloc(x->n, sizeof(*x->e));
	assert_non_null(x->e);
	x->used = 0;
	x->total = 0;
}

static void ex_fini(struct exact *x)
{
	free(x->e);
}

static struct xent *ex_slot(struct exact *x, const void *key, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++) {
		h ^= ((const unsigned char *)key)[i];
		h *= 1099511628211ull;
	}
	h ^= len;
	for (size_t i = h & (x->n - 1);; i = (i + 1) & (x->n - 1)) {
		struct xent *e = &x->e[i];
		if (!e->used || (e->len == len && !memcmp(e->key, key, len)))
			return e;
	}
}

static void ex_add(struct exact *x, const void *key, size_t len, uint64_t w)
{
	struct xent *e = ex_slot(x, key, len);
	if (!e->used) {
		assert_true(x->used < x->n / 2);
		e->used = true;
		e->len = (uint32_t)len;
		memcpy(e->key, key, len);
		x->used++;
	}
	e->w += w;
	x->total += w;
}

static uint64_t ex_get(struct exact *x, const void *key, size_t len)
{
	struct xent *e = ex_slot(x, key, len);
	return e->used ? e->w : 0;
}

/* both: the summary and the exact count */
static void add2(struct cgsi_topk *t, struct exact *x, const void *key,
		 size_t len, uint64_t w)
{
	assert_int_equal(cgsi_topk_add(t, key, len, w), 0);
	ex_add(x, key, len, w);
}

static void adds(struct cgsi_topk *t, struct exact *x, const char *key,
		 uint64_t w)
{
	add2(t, x, key, strlen(key), w);
}

/* entries have padding: compare their fields */
static void assert_entry_equal(const struct cgsi_topk_entry *a,
			       const struct cgsi_topk_entry *b)
{
	assert_int_equal(a->len, b->len);
	assert_memory_equal(a->key, b->key, a->len + 1);
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->err, b->err);
}

static void assert_entries_equal(const struct cgsi_topk_entry *a,
				 const struct cgsi_topk_entry *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_entry_equal(&a[i], &b[i]);
}

static bool ranks_before(const struct cgsi_topk_entry *a,
			 const struct cgsi_topk_entry *b)
{
	uint64_t la = a->count - a->err, lb = b->count - b->err;
	if (la != lb)
		return la > lb;
	int r = memcmp(a->key, b->key, a->len < b->len ? a->len : b->len);
	return r ? r < 0 : a->len < b->len;
}

/*
 * Every bound of topk.h for t against x; bcap: the B expected. Returns
 * how many counters are held.
 */
static size_t check(const struct cgsi_topk *t, struct exact *x, uint32_t bcap)
{
	assert_int_equal(t->bcap, bcap);
	assert_int_equal(cgsi_topk_total(t), x->total);
	size_t cap = t->cap;
	struct cgsi_topk_entry *l = calloc(cap + 1, sizeof(*l));
	assert_non_null(l);
	uint64_t total = 1, bound = 1;
	size_t n = cgsi_topk_list(t, l, cap + 1, &total, &bound);
	assert_int_equal(n, t->size);
	assert_true(n <= cap);
	assert_int_equal(total, x->total);
	uint64_t F = cgsi_topk_bound(t);
	assert_int_equal(bound, F);
	unsigned __int128 excess = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cgsi_topk_entry *e = &l[i];
		assert_int_equal(e->key[e->len], 0);
		uint64_t tr = ex_get(x, e->key, e->len);
		/* (1) */
		assert_true(e->count - e->err <= tr);
		assert_true(tr <= e->count);
		/* (2) */
		assert_true(e->err <= F);
		assert_true(F <= e->count);
		excess += e->count - F;
		if (i)
			assert_true(ranks_before(&l[i - 1], &l[i]));
		struct cgsi_topk_entry g;
		assert_int_equal(cgsi_topk_get(t, e->key, e->len, &g), 1);
		assert_entry_equal(&g, e);
	}
	/* (4), and its stronger form */
	assert_true((unsigned __int128)F * bcap <= x->total);
	assert_true((unsigned __int128)F * bcap + excess <= x->total);
	/* (3): every key seen, and those above W/B are held */
	for (size_t i = 0; i < x->n; i++) {
		const struct xent *e = &x->e[i];
		if (!e->used)
			continue;
		struct cgsi_topk_entry g;
		if (cgsi_topk_get(t, e->key, e->len, &g))
			continue;
		assert_true(e->w <= F);
		assert_false((unsigned __int128)e->w * bcap > x->total);
	}
	free(l);
	return n;
}

/* ---- random streams ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rnd01(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* The key of rank r: mostly "cmd-<r>", one in five of any bytes and of
 * length 0..32 (NULs, 0xff, newlines; short ones collide, on purpose). */
static size_t key_of(uint32_t r, unsigned char *k)
{
	if (r % 5)
		return (size_t)snprintf((char *)k, CGSI_TOPK_KEY_MAX + 1,
					"cmd-%u", r);
	size_t len = (r * 7u) % (CGSI_TOPK_KEY_MAX + 1);
	uint64_t h = r * 0x9e3779b97f4a7c15ull + 1;
	for (size_t i = 0; i < len; i++) {
		h ^= h >> 29;
		h *= 0xbf58476d1ce4e5b9ull;
		k[i] = (unsigned char)(h >> 56);
	}
	return len;
}

struct zipf {
	double *cdf;
	uint32_t n;
};

static void zipf_init(struct zipf *z, uint32_t n, double s)
{
	z->n = n;
	z->cdf = malloc(n * sizeof(*z->cdf));
	assert_non_null(z->cdf);
	double sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		sum += 1.0 / pow(i + 1.0, s);
		z->cdf[i] = sum;
	}
	for (uint32_t i = 0; i < n; i++)
		z->cdf[i] /= sum;
}

static uint32_t zipf_draw(const struct zipf *z)
{
	double u = rnd01();
	uint32_t lo = 0, hi = z->n - 1;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (z->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* weight kinds: unit (exits), CPU-like (1..1000 us, one in 50 up to 1e6) */
static uint64_t weight(int kind)
{
	if (!kind)
		return 1;
	if (rnd() % 50 == 0)
		return 1 + rnd() % 1000000;
	return 1 + rnd() % 1000;
}


/* ---- 1. the issue's case ---- */

/*
 * 10,000 distinct light commands first, then N heavy ones interleaved
 * among themselves and with more new light ones: the first N listed are
 * the heavy ones, in order, with lower bounds equal to their totals.
 * cpu: random weights (light 1..1000, heavy 2000..8000), else unit ones.
 */
static void issue_case(uint32_t cap, unsigned nheavy, bool cpu, uint64_t seed)
{
	struct cgsi_topk t;
	struct exact x;
	assert_int_equal(cgsi_topk_init(&t, cap), 0);
	ex_init(&x);
	rng_state = seed;
	char k[CGSI_TOPK_KEY_MAX + 1];
	for (unsigned i = 0; i < 10000; i++) {
		snprintf(k, sizeof(k), "light-%05u", i);
		adds(&t, &x, k, cpu ? 1 + rnd() % 1000 : 1);
	}
	uint64_t truth[16] = { 0 };
	unsigned left[16], more = 0;
	assert_true(nheavy <= 16);
	for (unsigned h = 0; h < nheavy; h++)
		left[h] = (cpu ? 300 : 1000) + 37 * (nheavy - h);
	for (bool any = true; any;) {
		any = false;
		for (unsigned h = 0; h < nheavy; h++) {
			if (!left[h])
				continue;
			left[h]--;
			any = true;
			uint64_t w = cpu ? 2000 + rnd() % 6001 : 1;
			snprintf(k, sizeof(k), "heavy-%u", h);
			adds(&t, &x, k, w);
			truth[h] += w;
			if (rnd() % 7 == 0) {
				snprintf(k, sizeof(k), "light2-%05u", more++);
				adds(&t, &x, k, cpu ? 1 + rnd() % 1000 : 1);
			}
		}
	}
	assert_true(more > 100);
	struct cgsi_topk_entry l[16];
	uint64_t total, bound;
	assert_int_equal(cgsi_topk_list(&t, l, nheavy, &total, &bound),
			 nheavy);
	assert_int_equal(total, x.total);
	assert_true(bound > 0);
	/* the heavy ones, largest first, exact */
	bool seen[16] = { false };
	uint64_t prev = UINT64_MAX;
	for (unsigned i = 0; i < nheavy; i++) {
		unsigned h;
		assert_int_equal(sscanf(l[i].key, "heavy-%u", &h), 1);
		assert_true(h < nheavy && !seen[h]);
		seen[h] = true;
		assert_int_equal(l[i].count - l[i].err, truth[h]);
		assert_true(truth[h] <= prev);
		prev = truth[h];
	}
	if (!cpu) /* unit weights: totals set by construction */
		for (unsigned i = 0; i < nheavy; i++)
			assert_int_equal(atoi(l[i].key + 6), i);
	check(&t, &x, cap);
	ex_fini(&x);
	cgsi_topk_fini(&t);
}

static void test_issue_exits(void **state)
{
	(void)state;
	issue_case(64, 5, false, 1);
	issue_case(40, 10, false, 2); /* 4N */
	issue_case(80, 10, false, 3); /* 8N */
}

static void test_issue_cpu(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		issue_case(64, 5, true, seed);
		issue_case(40, 10, true, seed + 10);
		issue_case(80, 10, true, seed + 20);
	}
}

/* ---- 2. random streams against the exact count ---- */

static const double skews[] = { 0.0, 0.8, 1.1, 1.5 };

static void stream(struct cgsi_topk *t, struct exact *x, const struct zipf *z,
		   unsigned len, int wkind)
{
	unsigned char k[CGSI_TOPK_KEY_MAX + 1];
	for (unsigned i = 0; i < len; i++) {
		size_t n = key_of(zipf_draw(z), k);
		add2(t, x, k, n, weight(wkind));
	}
}

static void test_random_single(void **state)
{
	(void)state;
	static const uint32_t caps[] = { 1, 2, 16, 64, 200 };
	for (uint64_t seed = 1; seed <= 5; seed++)
		for (size_t si = 0; si < 4; si++)
			for (size_t ci = 0; ci < 5; ci++)
				for (int wk = 0; wk < 2; wk++) {
					rng_state = seed * 1000 + si * 10 + ci;
					struct zipf z;
					zipf_init(&z, 3000, skews[si]);
					struct cgsi_topk t;
					struct exact x;
					assert_int_equal(
						cgsi_topk_init(&t, caps[ci]), 0);
					ex_init(&x);
					for (int round = 0; round < 4; round++) {
						stream(&t, &x, &z, 3000, wk);
						check(&t, &x, caps[ci]);
					}
					ex_fini(&x);
					cgsi_topk_fini(&t);
					free(z.cdf);
				}
}

/* A summary that never fills is exact. */
static void test_not_full_exact(void **state)
{
	(void)state;
	struct cgsi_topk t;
	struct exact x;
	assert_int_equal(cgsi_topk_init(&t, 64), 0);
	ex_init(&x);
	rng_state = 7;
	unsigned char k[CGSI_TOPK_KEY_MAX + 1];
	for (unsigned i = 0; i < 5000; i++) {
		size_t n = key_of((uint32_t)(rnd() % 64) * 5 + 1, k);
		add2(&t, &x, k, n, weight(1));
	}
	assert_int_equal(check(&t, &x, 64), 64);
	assert_int_equal(cgsi_topk_bound(&t), 0);
	for (uint32_t i = 0; i < 64; i++) {
		assert_int_equal(t.slots[i].err, 0);
		assert_int_equal(t.slots[i].count,
				 ex_get(&x, t.slots[i].key, t.slots[i].len));
	}
	ex_fini(&x);
	cgsi_topk_fini(&t);
}

/*
 * Shards: one stream split at random over 2..4 summaries (capacities all
 * m, or mixed), merged into a fresh one and, as a cgroup tree folds its
 * children, into shard 0 itself and through a copy; each result checked
 * against the exact union with B = the smallest capacity involved.
 */
static void merge_case(uint64_t seed, double skew, int wk, unsigned nsh,
		       const uint32_t *caps, uint32_t dcap)
{
	rng_state = seed;
	struct zipf z;
	zipf_init(&z, 3000, skew);
	struct cgsi_topk sh[4], d, c;
	struct exact xs[4], x;
	ex_init(&x);
	uint32_t bmin = dcap;
	for (unsigned i = 0; i < nsh; i++) {
		assert_int_equal(cgsi_topk_init(&sh[i], caps[i]), 0);
		ex_init(&xs[i]);
		bmin = caps[i] < bmin ? caps[i] : bmin;
	}
	unsigned char k[CGSI_TOPK_KEY_MAX + 1];
	for (unsigned i = 0; i < 12000; i++) {
		size_t n = key_of(zipf_draw(&z), k);
		uint64_t w = weight(wk);
		unsigned s = (unsigned)(rnd() % nsh);
		add2(&sh[s], &xs[s], k, n, w);
		ex_add(&x, k, n, w);
	}
	for (unsigned i = 0; i < nsh; i++)
		check(&sh[i], &xs[i], caps[i]);

	/* into a fresh summary of capacity dcap */
	assert_int_equal(cgsi_topk_init(&d, dcap), 0);
	for (unsigned i = 0; i < nsh; i++)
		assert_int_equal(cgsi_topk_merge(&d, &sh[i]), 0);
	check(&d, &x, bmin);

	/* a copy of it (same capacity: exact copy) */
	assert_int_equal(cgsi_topk_init(&c, dcap), 0);
	assert_int_equal(cgsi_topk_copy(&c, &d), 0);
	check(&c, &x, bmin);
	assert_int_equal(c.size, d.size);
	assert_memory_equal(c.slots, d.slots, d.size * sizeof(*d.slots));
	cgsi_topk_fini(&c);

	/* folded into shard 0 from the last one up, through copies of
	 * capacity caps[0] (a snapshot taken under a lock) */
	uint32_t b0 = caps[0];
	for (unsigned i = nsh; i-- > 1;) {
		assert_int_equal(cgsi_topk_init(&c, caps[0]), 0);
		assert_int_equal(cgsi_topk_copy(&c, &sh[i]), 0);
		assert_int_equal(cgsi_topk_merge(&sh[0], &c), 0);
		cgsi_topk_fini(&c);
		b0 = caps[i] < b0 ? caps[i] : b0;
		/* xs[0] += xs[i] */
		for (size_t j = 0; j < xs[i].n; j++)
			if (xs[i].e[j].used)
				ex_add(&xs[0], xs[i].e[j].key, xs[i].e[j].len,
				       xs[i].e[j].w);
		check(&sh[0], &xs[0], b0);
	}

	/* merged again: d (everything) with shard 0 (everything): twice */
	assert_int_equal(cgsi_topk_merge(&d, &sh[0]), 0);
	for (size_t j = 0; j < x.n; j++)
		if (x.e[j].used)
			x.e[j].w *= 2;
	x.total *= 2;
	check(&d, &x, bmin < b0 ? bmin : b0);

	cgsi_topk_fini(&d);
	for (unsigned i = 0; i < nsh; i++) {
		cgsi_topk_fini(&sh[i]);
		ex_fini(&xs[i]);
	}
	ex_fini(&x);
	free(z.cdf);
}

static void test_random_merge(void **state)
{
	(void)state;
	static const uint32_t same[4] = { 32, 32, 32, 32 };
	for (uint64_t seed = 1; seed <= 3; seed++)
		for (size_t si = 0; si < 4; si++)
			for (int wk = 0; wk < 2; wk++)
				for (unsigned nsh = 2; nsh <= 4; nsh++)
					merge_case(seed * 100 + si * 10 + nsh,
						   skews[si], wk, nsh, same, 32);
}

static void test_random_merge_caps(void **state)
{
	(void)state;
	static const uint32_t mixed[][4] = {
		{ 64, 8, 32, 1 }, { 8, 64, 16, 64 }, { 1, 2, 3, 100 },
	};
	static const uint32_t dcaps[] = { 64, 8, 33 };
	for (uint64_t seed = 1; seed <= 3; seed++)
		for (size_t si = 0; si < 4; si++)
			for (size_t mi = 0; mi < 3; mi++)
				for (unsigned nsh = 2; nsh <= 4; nsh++)
					merge_case(seed * 1000 + si * 100 +
							   mi * 10 + nsh,
						   skews[si], (int)(seed & 1),
						   nsh, mixed[mi], dcaps[mi]);
}

/* ---- 3. edge cases ---- */

static void test_empty(void **state)
{
	(void)state;
	struct cgsi_topk t, u;
	struct cgsi_topk_entry e[2];
	uint64_t total = 1, bound = 1;
	assert_int_equal(cgsi_topk_init(&t, 0), -EINVAL);
	assert_int_equal(cgsi_topk_init(&t, CGSI_TOPK_CAP_MAX + 1), -EINVAL);
	assert_int_equal(cgsi_topk_init(&t, 4), 0);
	assert_int_equal(cgsi_topk_init(&u, 4), 0);
	assert_int_equal(cgsi_topk_list(&t, e, 2, &total, &bound), 0);
	assert_int_equal(total, 0);
	assert_int_equal(bound, 0);
	assert_int_equal(cgsi_topk_list(&t, e, 0, NULL, NULL), 0);
	assert_int_equal(cgsi_topk_get(&t, "a", 1, e), 0);
	assert_int_equal(cgsi_topk_merge(&t, &u), 0);
	assert_int_equal(cgsi_topk_copy(&u, &t), 0);
	assert_int_equal(t.size, 0);
	assert_int_equal(cgsi_topk_total(&t), 0);
	assert_int_equal(cgsi_topk_merge(&t, &t), -EINVAL);
	assert_int_equal(cgsi_topk_copy(&t, &t), -EINVAL);
	/* an empty key is a key */
	assert_int_equal(cgsi_topk_add(&t, "", 0, 3), 0);
	assert_int_equal(cgsi_topk_list(&t, e, 2, NULL, NULL), 1);
	assert_int_equal(e[0].len, 0);
	assert_int_equal(e[0].count, 3);
	/* reset */
	cgsi_topk_reset(&t);
	assert_int_equal(cgsi_topk_list(&t, e, 2, &total, &bound), 0);
	assert_int_equal(total, 0);
	assert_int_equal(cgsi_topk_get(&t, "", 0, e), 0);
	cgsi_topk_fini(&t);
	cgsi_topk_fini(&u);
	cgsi_topk_fini(&t); /* twice: harmless */
}

static void test_cap1(void **state)
{
	(void)state;
	struct cgsi_topk t;
	struct exact x;
	struct cgsi_topk_entry e;
	assert_int_equal(cgsi_topk_init(&t, 1), 0);
	ex_init(&x);
	adds(&t, &x, "a", 1);
	adds(&t, &x, "a", 1);
	adds(&t, &x, "a", 1);
	adds(&t, &x, "b", 1);
	assert_int_equal(cgsi_topk_get(&t, "b", 1, &e), 1);
	assert_int_equal(e.count, 4);
	assert_int_equal(e.err, 3);
	assert_int_equal(cgsi_topk_bound(&t), 3);
	check(&t, &x, 1);
	adds(&t, &x, "b", 5);
	assert_int_equal(cgsi_topk_get(&t, "b", 1, &e), 1);
	assert_int_equal(e.count - e.err, 6);
	check(&t, &x, 1);
	ex_fini(&x);
	cgsi_topk_fini(&t);
}

static void test_odd_keys(void **state)
{
	(void)state;
	struct cgsi_topk t;
	struct exact x;
	struct cgsi_topk_entry e, l[16];
	assert_int_equal(cgsi_topk_init(&t, 16), 0);
	ex_init(&x);
	char k32[CGSI_TOPK_KEY_MAX + 2];
	memset(k32, 'z', sizeof(k32));
	k32[CGSI_TOPK_KEY_MAX + 1] = 0;
	add2(&t, &x, k32, CGSI_TOPK_KEY_MAX, 7);
	/* 33 bytes: refused, nothing counted */
	assert_int_equal(cgsi_topk_add(&t, k32, CGSI_TOPK_KEY_MAX + 1, 1),
			 -EINVAL);
	assert_int_equal(cgsi_topk_get(&t, k32, CGSI_TOPK_KEY_MAX + 1, &e), 0);
	assert_int_equal(cgsi_topk_total(&t), 7);
	/* the same 31 bytes is another key */
	add2(&t, &x, k32, CGSI_TOPK_KEY_MAX - 1, 1);
	static const char *odd[] = {
		"\xff\xff\xff", "a\nb", "say \"hi\"", "tab\tx", "\x01",
		"'", "\\", "(sd-pam)", "kworker/0:1H",
	};
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		adds(&t, &x, odd[i], i + 1);
	/* embedded NULs: "a\0b" (3), "a" (1), "a\0" (2) are three keys */
	add2(&t, &x, "a\0b", 3, 10);
	add2(&t, &x, "a", 1, 11);
	add2(&t, &x, "a\0", 2, 12);
	assert_int_equal(cgsi_topk_get(&t, "a\0b", 3, &e), 1);
	assert_int_equal(e.count, 10);
	assert_int_equal(e.len, 3);
	assert_memory_equal(e.key, "a\0b", 4);
	assert_int_equal(cgsi_topk_get(&t, "a\0", 2, &e), 1);
	assert_int_equal(e.count, 12);
	assert_int_equal(cgsi_topk_get(&t, k32, CGSI_TOPK_KEY_MAX, &e), 1);
	assert_int_equal(e.len, CGSI_TOPK_KEY_MAX);
	assert_int_equal(e.count, 7);
	assert_int_equal(e.key[CGSI_TOPK_KEY_MAX], 0);
	assert_int_equal(check(&t, &x, 16), 14);
	/* ties of the lower bound by key bytes, a prefix first */
	struct cgsi_topk u;
	assert_int_equal(cgsi_topk_init(&u, 8), 0);
	assert_int_equal(cgsi_topk_add(&u, "b", 1, 5), 0);
	assert_int_equal(cgsi_topk_add(&u, "ab", 2, 5), 0);
	assert_int_equal(cgsi_topk_add(&u, "a", 1, 5), 0);
	assert_int_equal(cgsi_topk_add(&u, "\xff", 1, 5), 0);
	assert_int_equal(cgsi_topk_add(&u, "c", 1, 6), 0);
	assert_int_equal(cgsi_topk_list(&u, l, 16, NULL, NULL), 5);
	assert_string_equal(l[0].key, "c");
	assert_string_equal(l[1].key, "a");
	assert_string_equal(l[2].key, "ab");
	assert_string_equal(l[3].key, "b");
	assert_string_equal(l[4].key, "\xff");
	/* k < size: the best k, in order */
	assert_int_equal(cgsi_topk_list(&u, l, 2, NULL, NULL), 2);
	assert_string_equal(l[0].key, "c");
	assert_string_equal(l[1].key, "a");
	cgsi_topk_fini(&u);
	ex_fini(&x);
	cgsi_topk_fini(&t);
}

/* Every length 0..32 from a buffer of exactly that size (memcheck sees
 * any read past it), any bytes: held and listed byte for byte, and two
 * keys that differ only in their last byte, or by a trailing NUL, apart. */
static void test_key_lengths(void **state)
{
	(void)state;
	struct cgsi_topk t;
	struct exact x;
	struct cgsi_topk_entry e;
	assert_int_equal(cgsi_topk_init(&t, 128), 0);
	ex_init(&x);
	rng_state = 5;
	for (size_t len = 0; len <= CGSI_TOPK_KEY_MAX; len++) {
		unsigned char *b = malloc(len ? len : 1);
		assert_non_null(b);
		for (size_t i = 0; i < len; i++)
			b[i] = (unsigned char)rnd();
		add2(&t, &x, b, len, len + 1);
		assert_int_equal(cgsi_topk_get(&t, b, len, &e), 1);
		assert_int_equal(e.len, len);
		assert_memory_equal(e.key, b, len);
		assert_int_equal(e.key[len], 0);
		assert_int_equal(e.count, ex_get(&x, b, len));
		if (len) {
			b[len - 1] ^= 0x80;
			add2(&t, &x, b, len, 1000);
			b[len - 1] ^= 0x80;
			assert_int_equal(cgsi_topk_get(&t, b, len, &e), 1);
			assert_int_equal(e.count, ex_get(&x, b, len));
			/* the same bytes, one shorter */
			add2(&t, &x, b, len - 1, 3);
			assert_int_equal(cgsi_topk_get(&t, b, len, &e), 1);
			assert_int_equal(e.count, ex_get(&x, b, len));
		}
		free(b);
	}
	check(&t, &x, 128);
	ex_fini(&x);
	cgsi_topk_fini(&t);
}

static void test_weight0(void **state)
{
	(void)state;
	struct cgsi_topk t;
	struct exact x;
	struct cgsi_topk_entry e;
	assert_int_equal(cgsi_topk_init(&t, 2), 0);
	ex_init(&x);
	adds(&t, &x, "zero", 0);
	assert_int_equal(cgsi_topk_get(&t, "zero", 4, &e), 1);
	assert_int_equal(e.count, 0);
	assert_int_equal(e.err, 0);
	adds(&t, &x, "one", 1);
	adds(&t, &x, "zero", 0);
	check(&t, &x, 2);
	/* full: a weight-0 newcomer takes the minimum's place */
	adds(&t, &x, "other", 0);
	assert_int_equal(cgsi_topk_get(&t, "zero", 4, &e), 0);
	assert_int_equal(cgsi_topk_get(&t, "other", 5, &e), 1);
	assert_int_equal(e.count, 0);
	check(&t, &x, 2);
	ex_fini(&x);
	cgsi_topk_fini(&t);
}

static void test_saturate(void **state)
{
	(void)state;
	struct cgsi_topk t, u;
	struct cgsi_topk_entry e;
	assert_int_equal(cgsi_topk_init(&t, 2), 0);
	assert_int_equal(cgsi_topk_init(&u, 2), 0);
	assert_int_equal(cgsi_topk_add(&t, "big", 3, UINT64_MAX - 1), 0);
	assert_int_equal(cgsi_topk_add(&t, "big", 3, 5), 0);
	assert_int_equal(cgsi_topk_get(&t, "big", 3, &e), 1);
	assert_int_equal(e.count, UINT64_MAX);
	assert_int_equal(e.err, 0);
	assert_int_equal(cgsi_topk_total(&t), UINT64_MAX);
	assert_int_equal(cgsi_topk_add(&t, "x", 1, UINT64_MAX), 0);
	assert_int_equal(cgsi_topk_add(&t, "y", 1, UINT64_MAX), 0);
	/* evicted a saturated one: F saturated, the newcomer too */
	assert_int_equal(cgsi_topk_bound(&t), UINT64_MAX);
	assert_int_equal(cgsi_topk_get(&t, "y", 1, &e), 1);
	assert_int_equal(e.count, UINT64_MAX);
	assert_int_equal(e.err, UINT64_MAX);
	assert_int_equal(cgsi_topk_add(&u, "big", 3, UINT64_MAX), 0);
	assert_int_equal(cgsi_topk_add(&u, "z", 1, 1), 0);
	assert_int_equal(cgsi_topk_merge(&u, &t), 0);
	assert_int_equal(cgsi_topk_total(&u), UINT64_MAX);
	assert_int_equal(cgsi_topk_bound(&u), UINT64_MAX);
	assert_int_equal(u.size, 2);
	for (uint32_t i = 0; i < u.size; i++)
		assert_int_equal(u.slots[i].count, UINT64_MAX);
	cgsi_topk_fini(&t);
	cgsi_topk_fini(&u);
}

static void test_merge_edges(void **state)
{
	(void)state;
	struct cgsi_topk a, b, s;
	struct exact x;
	struct cgsi_topk_entry la[64], lb[64];
	ex_init(&x);
	assert_int_equal(cgsi_topk_init(&a, 16), 0);
	assert_int_equal(cgsi_topk_init(&b, 16), 0);
	assert_int_equal(cgsi_topk_init(&s, 4), 0);
	rng_state = 99;
	struct zipf z;
	zipf_init(&z, 500, 1.0);
	stream(&a, &x, &z, 4000, 1);
	/* into an empty one of the same capacity: the same summary */
	assert_int_equal(cgsi_topk_merge(&b, &a), 0);
	size_t na = cgsi_topk_list(&a, la, 64, NULL, NULL);
	assert_int_equal(cgsi_topk_list(&b, lb, 64, NULL, NULL), na);
	assert_entries_equal(la, lb, na);
	assert_int_equal(cgsi_topk_bound(&b), cgsi_topk_bound(&a));
	check(&b, &x, 16);
	/* an empty one into it: unchanged */
	cgsi_topk_reset(&s);
	assert_int_equal(cgsi_topk_merge(&b, &s), 0);
	assert_int_equal(cgsi_topk_list(&b, lb, 64, NULL, NULL), na);
	assert_entries_equal(la, lb, na);
	assert_int_equal(b.bcap, 4); /* B follows capacity, not content */
	/* into a smaller one: the 4 largest counts, B = 4 */
	assert_int_equal(cgsi_topk_merge(&s, &a), 0);
	check(&s, &x, 4);
	assert_int_equal(s.size, 4);
	uint64_t c4[16];
	for (uint32_t i = 0; i < a.size; i++)
		c4[i] = a.slots[i].count;
	for (uint32_t i = 0; i < s.size; i++) {
		unsigned larger = 0;
		for (uint32_t j = 0; j < a.size; j++)
			larger += c4[j] > s.slots[i].count;
		assert_true(larger < 4);
	}
	/* copy across capacities: a merge into an emptied dst */
	assert_int_equal(cgsi_topk_copy(&s, &a), 0);
	check(&s, &x, 4);
	/* a small one into a larger empty one: not full, yet keys were
	 * dropped: the floor comes along, and a newcomer starts at it */
	struct cgsi_topk big;
	assert_int_equal(cgsi_topk_init(&big, 64), 0);
	assert_int_equal(cgsi_topk_merge(&big, &s), 0);
	assert_int_equal(big.size, 4);
	assert_true(cgsi_topk_bound(&big) > 0);
	check(&big, &x, 4);
	unsigned char k[CGSI_TOPK_KEY_MAX + 1];
	for (uint32_t r = 0; r < 500; r++) {
		size_t n = key_of(r, k);
		add2(&big, &x, k, n, 1);
	}
	check(&big, &x, 4);
	cgsi_topk_fini(&big);
	cgsi_topk_fini(&a);
	cgsi_topk_fini(&b);
	cgsi_topk_fini(&s);
	ex_fini(&x);
	free(z.cdf);
}

/* Both listings the same: every entry, W and F. */
static void same_list(const struct cgsi_topk *a, const struct cgsi_topk *b)
{
	struct cgsi_topk_entry x[8], y[8];
	uint64_t wa, fa, wb, fb;
	size_t n = cgsi_topk_list(a, x, 8, &wa, &fa);
	assert_int_equal(cgsi_topk_list(b, y, 8, &wb, &fb), n);
	assert_int_equal(wa, wb);
	assert_int_equal(fa, fb);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(x[i].len, y[i].len);
		assert_memory_equal(x[i].key, y[i].key, x[i].len);
		assert_int_equal(x[i].count, y[i].count);
		assert_int_equal(x[i].err, y[i].err);
	}
}

/* A snapshot's copy (cgsi_topk_dup): the same summary, and it goes on
 * as the original would (adds, merges) though its unused part was never
 * written. */
static void test_dup(void **state)
{
	(void)state;
	struct cgsi_topk t, d, m1, m2;
	assert_int_equal(cgsi_topk_init(&t, 4), 0);
	rng_state = 7;
	for (int i = 0; i < 40; i++) { /* 12 keys into 4 counters */
		char k = (char)('a' + rnd() % 12);
		assert_int_equal(cgsi_topk_add(&t, &k, 1, 1 + i % 5), 0);
	}
	assert_int_equal(cgsi_topk_dup(&d, &t), 0);
	assert_ptr_not_equal(d.slots, t.slots);
	same_list(&t, &d);
	for (int i = 0; i < 20; i++) {
		char k = (char)('f' + i % 9);
		assert_int_equal(cgsi_topk_add(&t, &k, 1, 3), 0);
		assert_int_equal(cgsi_topk_add(&d, &k, 1, 3), 0);
	}
	same_list(&t, &d);
	assert_int_equal(cgsi_topk_init(&m1, 4), 0);
	assert_int_equal(cgsi_topk_init(&m2, 4), 0);
	assert_int_equal(cgsi_topk_add(&m1, "z", 1, 50), 0);
	assert_int_equal(cgsi_topk_add(&m2, "z", 1, 50), 0);
	assert_int_equal(cgsi_topk_merge(&m1, &t), 0);
	assert_int_equal(cgsi_topk_merge(&m2, &d), 0);
	same_list(&m1, &m2);
	cgsi_topk_fini(&t);
	cgsi_topk_fini(&d);
	cgsi_topk_fini(&m1);
	cgsi_topk_fini(&m2);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_issue_exits),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_issue_cpu),
		cmocka_unit_test(test_random_single),
		cmocka_unit_test(test_not_full_exact),
		cmocka_unit_test(test_random_merge),
		cmocka_unit_test(test_random_merge_caps),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_cap1),
		cmocka_unit_test(test_odd_keys),
		cmocka_unit_test(test_key_lengths),
		cmocka_unit_test(test_weight0),
		cmocka_unit_test(test_saturate),
		cmocka_unit_test(test_merge_edges),
	};
	return CGT_RUN(argc, argv, tests);
}
