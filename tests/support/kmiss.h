/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel source's reasons (cgs_rollup_totals.kmiss_*): one place
 * that lists them, for the tests that add them up. */
#ifndef CGS_TEST_KMISS_H
#define CGS_TEST_KMISS_H

#include <stdint.h>
#include <stdio.h>

#include "cgstats.h"

#define CGT_KMISS_N 11

/* Reason i's name and value (i < CGT_KMISS_N). */
const char *cgt_kmiss_name(unsigned i);
uint64_t *cgt_kmiss_at(struct cgs_rollup_totals *t, unsigned i);
/* Their sum (== kernel_unmatched when they add up). */
uint64_t cgt_kmiss_sum(const struct cgs_rollup_totals *t);
/* t -= t0, the reasons and the record counters (a burst's own). */
void cgt_kmiss_sub(struct cgs_rollup_totals *t,
		   const struct cgs_rollup_totals *t0);
/* "lost 3 expired 0 ..." on f. */
void cgt_kmiss_print(FILE *f, const struct cgs_rollup_totals *t);

#endif
