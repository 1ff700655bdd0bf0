/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Counter arithmetic on the slow path (snapshots, retirement): the struct
 * is all u64, sums first and the two peaks last. */
#include <stddef.h>

#include "rollup/counters.h"

#define NWORDS (sizeof(struct cgs_counters) / sizeof(uint64_t))
#define FIRST_PEAK (offsetof(struct cgs_counters, hiwater_rss_kb_max) / \
		    sizeof(uint64_t))

_Static_assert(sizeof(struct cgs_counters) % sizeof(uint64_t) == 0,
	       "counters are u64 only");
_Static_assert(offsetof(struct cgs_counters, hiwater_vm_kb_max) ==
		       sizeof(struct cgs_counters) - sizeof(uint64_t) &&
		       FIRST_PEAK == NWORDS - 2,
	       "the peaks are the last two words");

void cgsi_counters_add(struct cgs_counters *dst,
		       const struct cgs_counters *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;
	for (size_t i = 0; i < FIRST_PEAK; i++)
		d[i] += s[i];
	for (size_t i = FIRST_PEAK; i < NWORDS; i++)
		if (s[i] > d[i])
			d[i] = s[i];
}

void cgsi_counters_sub(struct cgs_counters *dst, const struct cgs_counters *a,
		       const struct cgs_counters *b)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	for (size_t i = 0; i < FIRST_PEAK; i++)
		d[i] = x[i] - y[i];
	for (size_t i = FIRST_PEAK; i < NWORDS; i++)
		d[i] = x[i];
}

void cgsi_counters_peak(struct cgs_counters *dst,
			const struct cgs_counters *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;
	for (size_t i = FIRST_PEAK; i < NWORDS; i++)
		if (s[i] > d[i])
			d[i] = s[i];
}
