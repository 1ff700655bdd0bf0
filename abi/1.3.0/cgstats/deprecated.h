/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/deprecated.h>: names of 1.0, 1.1 and 1.2 that 1.2 and 1.3
 * replaced, kept so that programs written against them still compile and
 * programs linked against them still run: each is the same function as
 * its new name (an alias in the library, exported at its old symbol
 * version), or a wrapper where the arguments or return values changed
 * (said at each). Part of <cgstats.h>.
 *
 * A call gives a deprecation warning naming the new function; define
 * CGS_NO_DEPRECATION_WARNINGS before including <cgstats.h> to silence it.
 * They stay as long as the SONAME libcgstats.so.1 does.
 */
#ifndef CGSTATS_DEPRECATED_H
#define CGSTATS_DEPRECATED_H

#include "identity.h"
#include "outcome.h"
#include "query.h"
#include "rollup.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CGS_NO_DEPRECATION_WARNINGS)
#define CGS_DEPRECATED(MSG)
#else
#define CGS_DEPRECATED(MSG) __attribute__((deprecated(MSG)))
#endif

/**
 * cgs_rollup_totals() - Deprecated name of cgs_rollup_get_totals().
 * @r: The rollup.
 * @out: Receives the totals.
 *
 * 1.0's name (symbol version CGSTATS_1.0), which is also the name of the
 * struct it fills.
 *
 * Return: As cgs_rollup_get_totals().
 */
CGS_DEPRECATED("use cgs_rollup_get_totals()")
CGS_EXPORT int
cgs_rollup_totals(struct cgs_rollup *r, struct cgs_rollup_totals *out);

/**
 * cgs_exit_outcome() - Deprecated name of cgs_exit_classify().
 * @status: Raw wait status.
 * @sig: If not NULL, receives the signal number.
 *
 * 1.1's name (symbol version CGSTATS_1.1), which is also the name of the
 * enum it returns.
 *
 * Return: As cgs_exit_classify().
 */
CGS_DEPRECATED("use cgs_exit_classify()")
CGS_EXPORT enum cgs_exit_outcome cgs_exit_outcome(uint32_t status, int *sig);

/**
 * cgs_identity_new() - Deprecated: cgs_identity_src_new(), out first.
 * @opts: As cgs_identity_src_new().
 * @out: As cgs_identity_src_new().
 *
 * 1.2's name (CGSTATS_1.2), of a constructor that took its out pointer
 * last and bore the name of the result type.
 *
 * Return: As cgs_identity_src_new().
 */
CGS_DEPRECATED("use cgs_identity_src_new(out, opts)")
CGS_EXPORT int cgs_identity_new(const struct cgs_identity_opts *opts,
				struct cgs_identity_src **out);

/**
 * cgs_identity_free() - Deprecated name of cgs_identity_src_free().
 * @src: As cgs_identity_src_free().
 */
CGS_DEPRECATED("use cgs_identity_src_free()")
CGS_EXPORT void cgs_identity_free(struct cgs_identity_src *src);

/**
 * cgs_identity_resolve() - Deprecated name of cgs_identity_src_resolve().
 * @src: As cgs_identity_src_resolve().
 * @cgroup_path: As cgs_identity_src_resolve().
 * @out: As cgs_identity_src_resolve().
 *
 * Return: As cgs_identity_src_resolve().
 */
CGS_DEPRECATED("use cgs_identity_src_resolve()")
CGS_EXPORT int cgs_identity_resolve(struct cgs_identity_src *src,
				    const char *cgroup_path, struct cgs_identity *out);

/**
 * cgs_identity_get_counts() - Deprecated: cgs_identity_src_get_counts().
 * @src: As cgs_identity_src_get_counts().
 * @out: As cgs_identity_src_get_counts().
 *
 * Return: As cgs_identity_src_get_counts().
 */
CGS_DEPRECATED("use cgs_identity_src_get_counts()")
CGS_EXPORT int cgs_identity_get_counts(const struct cgs_identity_src *src,
				       struct cgs_identity_counts *out);

/**
 * cgs_listener_loss() - Deprecated name of cgs_listener_get_loss().
 * @l: As cgs_listener_get_loss().
 * @shard: As cgs_listener_get_loss().
 * @out: As cgs_listener_get_loss().
 *
 * 1.0's name (CGSTATS_1.0), a getter without the getter verb.
 *
 * Return: As cgs_listener_get_loss().
 */
CGS_DEPRECATED("use cgs_listener_get_loss()")
CGS_EXPORT int cgs_listener_loss(struct cgs_listener *l, unsigned shard,
				 struct cgs_loss *out);

/**
 * cgs_snapshot_get() - Deprecated name of cgs_snapshot_get_cgroup().
 * @s: As cgs_snapshot_get_cgroup().
 * @i: As cgs_snapshot_get_cgroup().
 *
 * 1.0's name (CGSTATS_1.0).
 *
 * Return: As cgs_snapshot_get_cgroup().
 */
CGS_DEPRECATED("use cgs_snapshot_get_cgroup()")
CGS_EXPORT const struct cgs_cgroup_stats *
cgs_snapshot_get(const struct cgs_snapshot *s,
		 size_t i);

/**
 * cgs_snapshot_totals() - Deprecated name of cgs_snapshot_get_totals().
 * @s: As cgs_snapshot_get_totals().
 *
 * 1.0's name (CGSTATS_1.0), which is also the name of the struct it
 * returns.
 *
 * Return: As cgs_snapshot_get_totals().
 */
CGS_DEPRECATED("use cgs_snapshot_get_totals()")
CGS_EXPORT const struct cgs_rollup_totals *
cgs_snapshot_totals(const struct cgs_snapshot *s);

/**
 * cgs_snapshot_signals() - Deprecated name of cgs_snapshot_get_signals().
 * @s: As cgs_snapshot_get_signals().
 * @i: As cgs_snapshot_get_signals().
 * @set: As cgs_snapshot_get_signals().
 * @out: As cgs_snapshot_get_signals().
 *
 * 1.1's name (CGSTATS_1.1).
 *
 * Return: As cgs_snapshot_get_signals().
 */
CGS_DEPRECATED("use cgs_snapshot_get_signals()")
CGS_EXPORT int cgs_snapshot_signals(const struct cgs_snapshot *s, size_t i,
				    enum cgs_counter_set set,
				    struct cgs_signal_counts *out);

/**
 * cgs_snapshot_hist() - Deprecated name of cgs_snapshot_get_hist().
 * @s: As cgs_snapshot_get_hist().
 * @i: As cgs_snapshot_get_hist().
 * @set: As cgs_snapshot_get_hist().
 * @k: As cgs_snapshot_get_hist().
 * @out: As cgs_snapshot_get_hist().
 *
 * 1.1's name (CGSTATS_1.1).
 *
 * Return: As cgs_snapshot_get_hist().
 */
CGS_DEPRECATED("use cgs_snapshot_get_hist()")
CGS_EXPORT int cgs_snapshot_hist(const struct cgs_snapshot *s, size_t i,
				 enum cgs_counter_set set, enum cgs_hist_kind k,
				 struct cgs_hist *out);

/**
 * cgs_snapshot_comm() - Deprecated name of cgs_snapshot_get_comm().
 * @s: As cgs_snapshot_get_comm().
 * @i: As cgs_snapshot_get_comm().
 * @by: As cgs_snapshot_get_comm().
 * @j: As cgs_snapshot_get_comm().
 *
 * 1.1's name (CGSTATS_1.1).
 *
 * Return: As cgs_snapshot_get_comm().
 */
CGS_DEPRECATED("use cgs_snapshot_get_comm()")
CGS_EXPORT const struct cgs_comm *
cgs_snapshot_comm(const struct cgs_snapshot *s,
		  size_t i, enum cgs_comm_rank by,
		  size_t j);

/* 1.0's name of struct cgs_task_states (the same layout), which differed
 * from struct cgs_cgroup_stats (a snapshot's cgroup) by an underscore. */
struct cgs_cgroupstats {
	size_t sz; /* sizeof(struct cgs_cgroupstats) */
	uint64_t nr_sleeping, nr_running, nr_stopped, nr_uninterruptible,
		nr_io_wait;
};

/**
 * cgs_query_cgroupstats() - Deprecated: cgs_query_cgroup().
 * @q: As cgs_query_cgroup().
 * @cgroup_dir: As cgs_query_cgroup().
 * @out: As cgs_query_cgroup().
 *
 * 1.0's name (CGSTATS_1.0).
 *
 * Return: As cgs_query_cgroup().
 */
CGS_DEPRECATED("use cgs_query_cgroup() and struct cgs_task_states")
CGS_EXPORT int
cgs_query_cgroupstats(struct cgs_query *q, const char *cgroup_dir,
		      struct cgs_cgroupstats *out);

/**
 * cgs_rollup_account() - Deprecated: cgs_rollup_add(r, shard, rec, NULL, ...).
 * @r: As cgs_rollup_add().
 * @shard: As cgs_rollup_add().
 * @rec: As cgs_rollup_add().
 * @path_out: If not NULL, receives what cgs_add_result.path does.
 *
 * 1.0's accounting call (CGSTATS_1.0), one of three siblings that
 * cgs_rollup_add() and its growable options replaced.
 *
 * Return: As cgs_rollup_add().
 */
CGS_DEPRECATED("use cgs_rollup_add()")
CGS_EXPORT int cgs_rollup_account(struct cgs_rollup *r, unsigned shard,
				  const struct cgs_record *rec, const char **path_out);

/**
 * cgs_rollup_account_src() - Deprecated: cgs_rollup_add() with a result.
 * @r: As cgs_rollup_add().
 * @shard: As cgs_rollup_add().
 * @rec: As cgs_rollup_add().
 * @path_out: If not NULL, receives what cgs_add_result.path does.
 * @src_out: If not NULL, receives what cgs_add_result.source does.
 *
 * 1.0's name (CGSTATS_1.0).
 *
 * Return: As cgs_rollup_add().
 */
CGS_DEPRECATED("use cgs_rollup_add() and struct cgs_add_result")
CGS_EXPORT int cgs_rollup_account_src(struct cgs_rollup *r, unsigned shard,
				      const struct cgs_record *rec, const char **path_out,
				      enum cgs_source *src_out);

/**
 * cgs_rollup_account_path() - Deprecated: cgs_rollup_add() given a path.
 * @r: As cgs_rollup_add().
 * @shard: As cgs_rollup_add().
 * @rec: As cgs_rollup_add().
 * @path: What cgs_add_opts.path takes; not NULL.
 *
 * 1.0's name (CGSTATS_1.0).
 *
 * Return: As cgs_rollup_add() with o->path set; -EINVAL for a NULL @path.
 */
CGS_DEPRECATED("use cgs_rollup_add() and struct cgs_add_opts")
CGS_EXPORT int cgs_rollup_account_path(struct cgs_rollup *r, unsigned shard,
				       const struct cgs_record *rec, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_DEPRECATED_H */
