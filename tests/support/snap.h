/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the rollup and decode unit tests shared by copy: a snapshot taken
 * with the case failing if it cannot be, the cgroup of a path in one, and
 * a seeded pseudo-random sequence (xorshift64) for the randomized cases.
 */
#ifndef CGS_TESTS_SNAP_H
#define CGS_TESTS_SNAP_H

#include <stdbool.h>
#include <stdint.h>

#include "cgstats.h"

/* Which of the cgroups at a path cgt_cgroup_at() takes. */
enum cgt_which { CGT_LIVE = 0, CGT_REMOVED = 1, CGT_ANY = 2 };

/* cgs_rollup_snapshot() with fold_depth, no_delta and comms (0: none);
 * fails the case unless it succeeds. Free with cgs_snapshot_free(). */
struct cgs_snapshot *cgt_snap(struct cgs_rollup *r, unsigned fold,
			      bool no_delta, unsigned comms);

/* The first cgroup of s at path, removed or not as which says; NULL if
 * there is none. */
const struct cgs_cgroup_stats *cgt_cgroup_at(const struct cgs_snapshot *s,
					     const char *path,
					     enum cgt_which which);

/* The next value of the xorshift64 sequence in *x (never 0 from a
 * non-zero seed). */
uint64_t cgt_xorshift(uint64_t *x);

#endif
