/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Snapshot and random-sequence helpers of the unit tests (snap.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "support/snap.h"

struct cgs_snapshot *cgt_snap(struct cgs_rollup *r, unsigned fold,
			      bool no_delta, unsigned comms)
{
	struct cgs_snapshot_opts o = { .sz = sizeof(o), .fold_depth = fold,
				       .no_delta = no_delta, .comms = comms };
	struct cgs_snapshot *s = NULL;

	assert_int_equal(cgs_rollup_snapshot(r, &o, &s), 0);
	return s;
}

const struct cgs_cgroup_stats *cgt_cgroup_at(const struct cgs_snapshot *s,
					     const char *path,
					     enum cgt_which which)
{
	for (size_t i = 0; i < cgs_snapshot_count(s); i++) {
		const struct cgs_cgroup_stats *c = cgs_snapshot_get_cgroup(s, i);
		if (strcmp(c->path, path))
			continue;
		if (which == CGT_ANY || c->removed == (which == CGT_REMOVED))
			return c;
	}
	return NULL;
}

uint64_t cgt_xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}
