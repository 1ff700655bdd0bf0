/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-cgroup counters kept beside struct cgs_counters, only where needed:
 * signal counts (a node gets them with its first exit by signal) and
 * histograms (every node, with CGS_ROLLUP_HISTOGRAMS). All sums, so the
 * slow path adds and subtracts them word by word like the counters.
 */
#ifndef CGS_ROLLUP_EXTRA_H
#define CGS_ROLLUP_EXTRA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cgstats.h"

/*
 * Buckets at the powers of 2 of a second (Prometheus' native histogram
 * schema 0): word 0 the observations of 0, word 1 + e those in
 * (2^(e-20), 2^(e-19)] s, e = 0..35 (up to 2^16 s, 18.2 h; the lowest
 * (0, 2^-19 s = 1.9 us]), word 37 those above 2^16 s.
 */
#define CGSI_HIST_FINE_MIN (-19) /* exponent of word 1's upper bound */
#define CGSI_HIST_FINE_MAX 16    /* ... of word CGSI_HIST_BUCKETS - 2 */
#define CGSI_HIST_BUCKETS (CGSI_HIST_FINE_MAX - CGSI_HIST_FINE_MIN + 3)

/* The histograms first: the sets of a cgroup that never had an exit by
 * signal are zero from `sig` on, and a snapshot keeps only the words
 * before it (CGSI_XSET_HIST_WORDS) for such a cgroup. */
struct cgsi_xset {
	uint64_t hist[CGS_HIST__COUNT][CGSI_HIST_BUCKETS];
	uint64_t hist_sum_ns[CGS_HIST__COUNT];
	uint64_t sig[CGS_SIGNAL_SLOTS];
};

#define CGSI_XSET_WORDS (sizeof(struct cgsi_xset) / sizeof(uint64_t))
#define CGSI_XSET_HIST_WORDS (offsetof(struct cgsi_xset, sig) / sizeof(uint64_t))

#define CGSI_XMASKS ((CGSI_XSET_WORDS + 63) / 64)

/*
 * A node's sets come in pairs interleaved word by word: word i of a set
 * beside word i of its baseline (cum | base; carry | carry_base). A
 * snapshot reads both words of a pair (the set and its delta since the
 * baseline), and so one cache line per word it reads instead of two a set
 * (2.3 KB) apart. Which words of cum may not be zero the node keeps beside
 * its pointer to these (nz, cgsi_nz_mark()): a snapshot reads only those,
 * a few cache lines instead of a whole set (most words of a cgroup's sets
 * stay zero).
 *
 * Made when first needed, and only as wide as needed: a node's cum pair
 * holds the histogram words only (CGSI_XPAIR_BYTES(false), 2,496 bytes)
 * until its first signal count (an exit by signal, or a retired child's),
 * then all of them (4,544); its carry pair is made (full) with the first
 * descendant retired into it (cgtable.h, struct cgsi_carry).
 */
struct cgsi_xpair {
	uint64_t w[CGSI_XSET_WORDS][2]; /* [i][0] a set's, [i][1] its base */
};

/* Words of a set: every one, or the histogram words only; bytes of a
 * pair of such sets. */
#define CGSI_XWORDS(full) ((full) ? CGSI_XSET_WORDS : CGSI_XSET_HIST_WORDS)
#define CGSI_XPAIR_BYTES(full) (CGSI_XWORDS(full) * sizeof(uint64_t[2]))

/* Word `word` of a node's cum may not be zero now: its bit in nz (bit
 * i % 64 of nz[i / 64], set when the word is first added to). */
static inline void cgsi_nz_mark(uint64_t *nz, size_t word)
{
	nz[word / 64] |= 1ull << (word % 64);
}

/* Word of a value in ns (see CGSI_HIST_BUCKETS). O(1): with
 * c = ceil(ns * 2^19 / 1e9) (2^-19 s is 1953125 / 1024 ns),
 * ns <= 2^(e-19) s exactly when c <= 2^e, so e is the bit length of
 * c - 1. */
static inline unsigned cgsi_hist_bucket(uint64_t ns)
{
	if (!ns)
		return 0;
	if (ns > (1000000000ull << CGSI_HIST_FINE_MAX))
		return CGSI_HIST_BUCKETS - 1;
	uint64_t c = (ns * 1024u + 1953124u) / 1953125u;
	unsigned e = c > 1 ? 64u - (unsigned)__builtin_clzll(c - 1) : 0;
	return 1 + e;
}


/* Word of bucket b of histogram k, of its sum, of signal sig (struct
 * cgsi_xset). */
#define CGSI_XW_BUCKET(k, b) ((size_t)(k) * CGSI_HIST_BUCKETS + (b))
#define CGSI_XW_SUM(k) ((size_t)CGS_HIST__COUNT * CGSI_HIST_BUCKETS + (k))
#define CGSI_XW_SIG(sig) (CGSI_XSET_HIST_WORDS + (size_t)(sig))

/* Word `word` of a node's cumulative set (of its cum | base pair). */
static inline uint64_t *cgsi_x4_cum(struct cgsi_xpair *x, size_t word)
{
	return &x->w[word][0];
}

/* One observation of sum_ns ns of histogram k in a node's cumulative
 * set; the words marked in the node's nz. */
static inline void cgsi_x4_one(struct cgsi_xpair *x, uint64_t *nz,
			       enum cgs_hist_kind k, uint64_t sum_ns)
{
	size_t b = CGSI_XW_BUCKET(k, cgsi_hist_bucket(sum_ns));
	(*cgsi_x4_cum(x, b))++;
	*cgsi_x4_cum(x, CGSI_XW_SUM(k)) += sum_ns;
	cgsi_nz_mark(nz, b);
	cgsi_nz_mark(nz, CGSI_XW_SUM(k));
}

/* Observe one task record in a node's cumulative set (hot path). */
static inline void cgsi_x4_observe(struct cgsi_xpair *x, uint64_t *nz,
				   const struct cgs_record *r)
{
	uint64_t cpu = r->utime_us + r->stime_us;
	uint64_t dly = r->delay[CGS_DELAY_CPU].total_ns;
	cgsi_x4_one(x, nz, CGS_HIST_LIFETIME, r->etime_us * 1000);
	cgsi_x4_one(x, nz, CGS_HIST_CPU, cpu * 1000);
	cgsi_x4_one(x, nz, CGS_HIST_CPU_DELAY, dly);
	if (r->kind == CGS_KIND_PROCESS) {
		uint64_t life = (r->fields & CGS_HAS_TGID) ? r->tgetime_us
							   : r->etime_us;
		cgsi_x4_one(x, nz, CGS_HIST_PROC_LIFETIME, life * 1000);
	}
}

/* d += s, the first n words (CGSI_XSET_WORDS, or CGSI_XSET_HIST_WORDS
 * where the signal counts are known to be zero). */
static inline void cgsi_xset_add_n(struct cgsi_xset *d,
				   const struct cgsi_xset *s, size_t n)
{
	uint64_t *a = (uint64_t *)d;
	const uint64_t *b = (const uint64_t *)s;
	for (size_t i = 0; i < n; i++)
		a[i] += b[i];
}

/* Fill a public histogram from set x (hist k). */
void cgsi_hist_fill(struct cgs_hist *h, const struct cgsi_xset *x,
		    enum cgs_hist_kind k);

#endif
