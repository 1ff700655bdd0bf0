/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers shared by every stage of the library. */
#ifndef CGS_UTIL_COMMON_H
#define CGS_UTIL_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "cgstats.h"

/* Public entry points; everything else stays hidden (-fvisibility=hidden)
 * and internal symbols use the cgsi_ prefix. */
#define CGS_EXPORT __attribute__((visibility("default")))

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

/* Translate a libnl NLE_* code (positive or negative) into -errno. */
int cgsi_nl_err(int nle);

/* Read a small file into buf (NUL-terminated). Returns length or -errno. */
int cgsi_read_file(const char *path, char *buf, size_t len);

uint64_t cgsi_now_mono_ms(void);
uint64_t cgsi_now_real_ns(void);

#endif
