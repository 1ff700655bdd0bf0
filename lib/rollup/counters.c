/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Counter arithmetic on the slow path (snapshots, retirement): after sz
 * the struct is all u64 words, sums except the peaks listed below. */
#include <stdbool.h>
#include <stddef.h>

#include "rollup/counters.h"

#define NWORDS (sizeof(struct cgs_counters) / sizeof(uint64_t))
#define FIRST (offsetof(struct cgs_counters, tasks) / sizeof(uint64_t))
#define WORD(f) (offsetof(struct cgs_counters, f) / sizeof(uint64_t))

_Static_assert(sizeof(struct cgs_counters) % sizeof(uint64_t) == 0 &&
		       offsetof(struct cgs_counters, tasks) % sizeof(uint64_t) ==
			       0,
	       "counters are u64 words after sz");

/* The words that are peaks (max), not sums; a new peak is added here. */
static const unsigned char peak_words[] = {
	WORD(hiwater_rss_kb_max),
	WORD(hiwater_vm_kb_max),
};

#define CGS_MAXU(a, b) ((a) > (b) ? (a) : (b))

void cgsi_counters_add(struct cgs_counters *dst,
		       const struct cgs_counters *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;
	uint64_t pk[sizeof(peak_words)];
	/* a plain loop over all words (vectorised), then the peaks fixed */
	for (size_t i = 0; i < sizeof(peak_words); i++)
		pk[i] = CGS_MAXU(d[peak_words[i]], s[peak_words[i]]);
	for (size_t i = FIRST; i < NWORDS; i++)
		d[i] += s[i];
	for (size_t i = 0; i < sizeof(peak_words); i++)
		d[peak_words[i]] = pk[i];
}

void cgsi_counters_sub(struct cgs_counters *dst, const struct cgs_counters *a,
		       const struct cgs_counters *b)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	for (size_t i = FIRST; i < NWORDS; i++)
		d[i] = x[i] - y[i];
	for (size_t i = 0; i < sizeof(peak_words); i++)
		d[peak_words[i]] = x[peak_words[i]];
}
