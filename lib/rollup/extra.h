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
 * A carry pair (struct cgsi_xpair) is dense, every word; it is made with
 * the first descendant retired into a node (cgtable.h, struct cgsi_carry).
 */
struct cgsi_xpair {
	uint64_t w[CGSI_XSET_WORDS][2]; /* [i][0] a set's, [i][1] its base */
};

/* Words of a set: every one, or the histogram words only; bytes of a
 * pair of such sets. */
#define CGSI_XWORDS(full) ((full) ? CGSI_XSET_WORDS : CGSI_XSET_HIST_WORDS)
#define CGSI_XPAIR_BYTES(full) (CGSI_XWORDS(full) * sizeof(uint64_t[2]))

/*
 * A node's cum | base pair (struct cgsi_xnode), made when first needed
 * and only as big as needed: slot[i] says where the pair of histogram
 * word i is in w (CGSI_XNOSLOT: none yet, the word is 0 in both sets).
 * The sums have slots 0 .. CGS_HIST__COUNT - 1 from the start (the hot
 * path adds to them without looking), the buckets are given slots as they
 * are first added to: a cgroup with one exit uses 8 of the 156 histogram
 * words, 288 bytes instead of 2,496; `cap` slots allocated, `used` given,
 * each word marked in the node's nz when it gets its slot. From the
 * node's first signal count (cgsi_node_widen(), node.c) there is room for
 * every histogram word's slot and the signal counts' pairs follow at
 * their own word index (CGSI_XW_SIG()).
 */
#define CGSI_XNOSLOT 0xffu
#define CGSI_XSLOTS_FIRST 8u /* a process record's 4 buckets and 4 sums */
_Static_assert(CGSI_XSET_HIST_WORDS < CGSI_XNOSLOT, "slots fit a byte");
_Static_assert(CGSI_XSLOTS_FIRST > CGS_HIST__COUNT, "the sums' slots");

struct cgsi_xnode {
	uint8_t slot[CGSI_XSET_HIST_WORDS];
	uint8_t used, cap; /* sparse: slots given, allocated */
	uint64_t w[][2];   /* [slot][0] a word of cum, [slot][1] of base */
};

/* Bytes of a node pair of `slots` slots (with the signal counts:
 * CGSI_XSET_WORDS). */
#define CGSI_XNODE_BYTES(slots)                                               \
	(offsetof(struct cgsi_xnode, w) + (size_t)(slots) * sizeof(uint64_t[2]))

/* Word `word` of a node's cum may not be zero now: its bit in nz (bit
 * i % 64 of nz[i / 64], set when the word is first added to). */
static inline void cgsi_nz_mark(uint64_t *nz, size_t word)
{
	nz[word / 64] |= 1ull << (word % 64);
}

/*
 * Word of a value in ns (see CGSI_HIST_BUCKETS), by its bit length: the
 * values of one length, [2^b, 2^(b+1)) (b = 0..63, the index of the
 * highest bit; 0 and 1 share slot 0: ns | 1), span a factor of 2 and so
 * hold at most one bucket bound; cgsi_hist_steps says, by b, the word of
 * the values up to that bound (le[b], ns rounded down) and that the next
 * holds those above. A compare and an add instead of the division by
 * 1e9 / 2^19 (outcome.c has the table; tests/rollup/test_features.c checks
 * it against the division at every bound). Arrays, not an array of
 * pairs: both are read from one base, le scaled by 8, word by 1.
 */
struct cgsi_hist_steps {
	uint64_t le[64];   /* the last ns of word[b] at bit length b + 1 */
	uint8_t word[64];  /* word of the values up to le[b]; + 1 above */
};

extern const struct cgsi_hist_steps cgsi_hist_steps;

static inline unsigned cgsi_hist_bucket(uint64_t ns)
{
	unsigned b = 63u - (unsigned)__builtin_clzll(ns | 1);
	/* unsigned throughout: the word indexes with no sign extension */
	return (unsigned)cgsi_hist_steps.word[b] +
	       (unsigned)(ns > cgsi_hist_steps.le[b]);
}

/* Word of bucket b of histogram k, of its sum, of signal sig (struct
 * cgsi_xset). */
#define CGSI_XW_BUCKET(k, b) ((size_t)(k) * CGSI_HIST_BUCKETS + (b))
#define CGSI_XW_SUM(k) ((size_t)CGS_HIST__COUNT * CGSI_HIST_BUCKETS + (k))
#define CGSI_XW_SIG(sig) (CGSI_XSET_HIST_WORDS + (size_t)(sig))

/* The pair of word `word` of a node's cum | base, NULL if it has none
 * (then 0 in both); a signal word only once the node has them. */
static inline uint64_t *cgsi_xw(const struct cgsi_xnode *x, size_t word)
{
	if (word >= CGSI_XSET_HIST_WORDS)
		return (uint64_t *)x->w[word];
	unsigned s = x->slot[word];
	return s == CGSI_XNOSLOT ? NULL : (uint64_t *)x->w[s];
}

/* Word `word` of a node's cumulative set, for a signal count: the node
 * has them (cgsi_node_widen()). */
static inline uint64_t *cgsi_x4_cum(struct cgsi_xnode *x, size_t word)
{
	return &x->w[word][0];
}

/* node.c: a slot for histogram word `word` of the sparse *xp (grown,
 * *xp moved; the word marked in nz): its pair, NULL on ENOMEM. */
uint64_t *cgsi_xnode_slot(struct cgsi_xnode **xp, uint64_t *nz, size_t word);

/* cum's word `word` of *xp += v (slow path: its first time). */
static inline void cgsi_xnode_add(struct cgsi_xnode **xp, uint64_t *nz,
				  size_t word, uint64_t v)
{
	unsigned s = (*xp)->slot[word];
	if (__builtin_expect(s != CGSI_XNOSLOT, 1)) {
		(*xp)->w[s][0] += v;
		return;
	}
	uint64_t *p = cgsi_xnode_slot(xp, nz, word);
	if (p)
		p[0] += v;
}

/* One observation of sum_ns ns of histogram k in a node's cumulative
 * set; a word's first time marked in the node's nz. */
static inline void cgsi_x4_one(struct cgsi_xnode **xp, uint64_t *nz,
			       enum cgs_hist_kind k, uint64_t sum_ns)
{
	cgsi_xnode_add(xp, nz, CGSI_XW_BUCKET(k, cgsi_hist_bucket(sum_ns)), 1);
	(*xp)->w[k][0] += sum_ns; /* its slot, cgsi_xnode_new() */
}

/* Observe one task record in a node's cumulative set (hot path: always
 * inlined, GCC would rather call it). */
static inline __attribute__((always_inline)) void
cgsi_x4_observe(struct cgsi_xnode **x, uint64_t *nz,
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
