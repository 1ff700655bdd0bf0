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
#include "rollup.h"

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
int cgs_rollup_totals(struct cgs_rollup *r, struct cgs_rollup_totals *out);

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
enum cgs_exit_outcome cgs_exit_outcome(uint32_t status, int *sig);

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
int cgs_identity_new(const struct cgs_identity_opts *opts,
		     struct cgs_identity_src **out);

/**
 * cgs_identity_free() - Deprecated name of cgs_identity_src_free().
 * @src: As cgs_identity_src_free().
 */
CGS_DEPRECATED("use cgs_identity_src_free()")
void cgs_identity_free(struct cgs_identity_src *src);

/**
 * cgs_identity_resolve() - Deprecated name of cgs_identity_src_resolve().
 * @src: As cgs_identity_src_resolve().
 * @cgroup_path: As cgs_identity_src_resolve().
 * @out: As cgs_identity_src_resolve().
 *
 * Return: As cgs_identity_src_resolve().
 */
CGS_DEPRECATED("use cgs_identity_src_resolve()")
int cgs_identity_resolve(struct cgs_identity_src *src,
			 const char *cgroup_path, struct cgs_identity *out);

/**
 * cgs_identity_get_counts() - Deprecated: cgs_identity_src_get_counts().
 * @src: As cgs_identity_src_get_counts().
 * @out: As cgs_identity_src_get_counts().
 *
 * Return: As cgs_identity_src_get_counts().
 */
CGS_DEPRECATED("use cgs_identity_src_get_counts()")
int cgs_identity_get_counts(const struct cgs_identity_src *src,
			    struct cgs_identity_counts *out);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_DEPRECATED_H */
