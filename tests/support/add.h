/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgs_rollup_add() in the two shapes the tests use most: a record
 * attributed by the rollup (its path and source wanted), and a record
 * given its cgroup (cgs_add_opts.path).
 */
#ifndef CGS_TESTS_ADD_H
#define CGS_TESTS_ADD_H

#include "cgstats.h"

/* cgs_rollup_add() attributing rec; *path and *src (each if not NULL)
 * receive cgs_add_result's path and source. */
static inline int cgt_add(struct cgs_rollup *r, unsigned shard,
			  const struct cgs_record *rec, const char **path,
			  enum cgs_source *src)
{
	CGS_OPTS(cgs_add_result, res);
	int rc = cgs_rollup_add(r, shard, rec, NULL, &res);
	if (path)
		*path = res.path;
	if (src)
		*src = res.source;
	return rc;
}

/* cgs_rollup_add() of rec to the cgroup at path (no attribution). */
static inline int cgt_add_path(struct cgs_rollup *r, unsigned shard,
			       const struct cgs_record *rec, const char *path)
{
	CGS_OPTS(cgs_add_opts, o, .path = path);
	return cgs_rollup_add(r, shard, rec, &o, NULL);
}

#endif /* CGS_TESTS_ADD_H */
