/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/deprecated.h>: names of 1.0 and 1.1 that 1.2 replaced, kept so
 * that programs written against them still compile and programs linked
 * against them still run: each is the same function as its new name (an
 * alias in the library, exported at its old symbol version). Part of
 * <cgstats.h>.
 *
 * A call gives a deprecation warning naming the new function; define
 * CGS_NO_DEPRECATION_WARNINGS before including <cgstats.h> to silence it.
 * They stay as long as the SONAME libcgstats.so.1 does.
 */
#ifndef CGSTATS_DEPRECATED_H
#define CGSTATS_DEPRECATED_H

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

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_DEPRECATED_H */
