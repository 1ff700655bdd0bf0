/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An attribution tally for the real-kernel tests that account a workload's
 * records themselves (from the listener's threads) and check where they
 * went: how many were accounted, how many landed in the expected cgroup
 * or in the unknown bucket, how many the rollup refused, and the first
 * few misses, to say where they went.
 */
#ifndef CGS_TESTS_TALLY_H
#define CGS_TESTS_TALLY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cgstats.h"

#define CGT_TALLY_NOTES 8

struct cgt_tally {
	atomic_uint_fast64_t seen, ok, unknown, errors;
	pthread_mutex_t lock; /* notes */
	char notes[CGT_TALLY_NOTES][400];
	int nnotes;
};

#define CGT_TALLY_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }

/*
 * cgs_rollup_add() of rec on shard, tallied against the cgroup `want`:
 * a refusal counts in errors (and returns its error); else the record
 * counts in seen, and in ok where it went to `want`; a miss counts in
 * unknown if it went to the unknown bucket, and is noted while there is
 * room. Returns 0 when the record was accounted, right or wrong.
 */
int cgt_tally_account(struct cgt_tally *t, struct cgs_rollup *r,
		      unsigned shard, const struct cgs_record *rec,
		      const char *want);

/* ok in % of seen; 0 when nothing was seen. */
double cgt_tally_rate(struct cgt_tally *t);

/*
 * Once the listener has stopped: print the noted misses ("misattributed:
 * ..."), then fail (1, after a FAIL line) when the kernel dropped records
 * (`dropped`), the rollup refused one, or fewer than 99 % of the `expected`
 * records were seen; 0 otherwise.
 */
int cgt_tally_report(struct cgt_tally *t, uint64_t dropped,
		     uint64_t expected);

#endif
