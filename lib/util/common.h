/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers shared by every stage of the library. */
#ifndef CGS_UTIL_COMMON_H
#define CGS_UTIL_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "cgstats.h"

/* Public entry points are exported by their declarations (CGS_EXPORT in
 * include/cgstats/); everything else stays hidden (-fvisibility=hidden)
 * and internal symbols use the cgsi_ prefix. */

/* An old name kept for a renamed function of the same signature: one
 * function under both names, the old one exported at its own symbol
 * version (libcgstats.map) and declared in <cgstats/deprecated.h>. */
#define CGSI_ALIAS(old, new)                                                 \
	__typeof__(new) old __attribute__((alias(#new)))

/* A function whose signature or return values changed keeps the old ones
 * for programs linked against them (glibc's scheme): the new definition
 * is the name's default version (CGSI_VERSIONED), the old one a
 * compatibility version (CGSI_COMPAT); libcgstats.map lists the name in
 * the node of its first release. Both definitions have internal names,
 * declared in no header: so they carry their visibility themselves. */
#define CGSI_VERSIONED(name, node)                                           \
	__attribute__((visibility("default"), symver(#name "@@" #node)))
#define CGSI_COMPAT(name, node)                                              \
	__attribute__((visibility("default"), symver(#name "@" #node)))

/* A return value as 1.0 .. 1.2 gave it: each CGS_ERR_* code as the plain
 * errno it was then (<cgstats/common.h>), anything else as it is. For the
 * CGSI_COMPAT versions of the functions that return them. */
int cgsi_err_compat(int rc);

#define CGS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define CGS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CGS_MAX(a, b) ((a) > (b) ? (a) : (b))
#define cgs_likely(x) __builtin_expect(!!(x), 1)
#define cgs_unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Options structs grow at the end: copy what the caller's version has,
 * zero the rest. Rejects a size larger than ours whose tail is non-zero
 * (a newer caller asking for something we can't do).
 */
int cgsi_opts_copy(void *dst, size_t dst_sz, const void *src, size_t src_sz);

/*
 * Results the library writes into a caller's sz-prefixed struct: copy the
 * first min(dst->sz, src_sz) bytes of src and leave that size in dst->sz.
 * -EINVAL when dst->sz cannot even hold sz.
 */
int cgsi_out_copy(void *dst, const void *src, size_t src_sz);

/* The caller's sz of a result struct is large enough for ours (the fast
 * path: fill it in place). */
#define CGSI_OUT_FULL(p) ((p)->sz >= sizeof(*(p)))
/* ... or at least holds its own sz (the slow path: a copy). */
#define CGSI_OUT_OK(p) ((p)->sz >= sizeof(size_t))

/*
 * A record handed in by the caller (cgs_rollup_account): the record itself
 * when the caller's struct is as large as ours (inline: the hot path), else
 * its prefix copied into *tmp with the rest zeroed; NULL when rec->sz is too
 * small to be a record.
 */
const struct cgs_record *cgsi_rec_in_copy(const struct cgs_record *rec,
					  struct cgs_record *tmp);
static inline const struct cgs_record *cgsi_rec_in(const struct cgs_record *rec,
						   struct cgs_record *tmp)
{
	if (cgs_likely(rec->sz >= sizeof(*rec)))
		return rec;
	return cgsi_rec_in_copy(rec, tmp);
}

/* Translate a libnl NLE_* code (positive or negative) into -errno. */
int cgsi_nl_err(int nle);

/* Read a small file into buf (NUL-terminated). Returns length or -errno. */
int cgsi_read_file(const char *path, char *buf, size_t len);

uint64_t cgsi_now_mono_ms(void);
/* CLOCK_BOOTTIME in ms: the clock of /proc/<pid>/stat's start time. */
uint64_t cgsi_now_boot_ms(void);
uint64_t cgsi_now_real_ns(void);

#endif
