/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which binary an exit record names (issue 39): the record carries
 * (ac_exe_dev, ac_exe_inode) since struct taskstats v12, never a path.
 * A thin use of the library's resolver (cgs_rollup_get_exe(), the rollup
 * made with opts.exe_paths): the kernel source's exec-time paths, else
 * /proc/<pid>/exe of the live processes (scanned by cgs_rollup_new(),
 * before the collector sheds its capabilities, and after each snapshot)
 * and the usual bin directories. A file gone since reads
 * "<path> (deleted)", as the kernel writes it; one whose path names
 * another file now (an upgrade in place) "<path> (replaced)". Anything
 * else stays unknown and is counted.
 */
#ifndef TSC_EXE_CACHE_H
#define TSC_EXE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgstats.h"

struct exe_cache;

struct exe_counts {
	uint64_t known, unknown; /* look-ups answered, not answered */
	uint64_t entries;        /* executables held */
	uint64_t full;           /* executables dropped to make room */
	uint64_t bytes;          /* memory held (entries, paths) */
	uint64_t deleted;        /* answers of files gone */
	uint64_t replaced;       /* answers of paths naming another file */
	uint64_t exec;           /* answers from the kernel's exec source */
	uint64_t lost;           /* executables the kernel could not send */
	uint64_t exec_on;        /* 1: the kernel's exec source runs */
};

/* Executables the collector's rollup holds (cgs_rollup_opts.exe_paths),
 * when exe paths are wanted (--events live). */
#define TSC_EXE_PATHS 4096

/* The executables of rollup r (made with exe_paths; kept, not owned).
 * NULL on ENOMEM. */
struct exe_cache *exe_cache_new(const struct cgs_rollup *r);
void exe_cache_free(struct exe_cache *c);
/* One scan of the live processes; returns the processes read. Any
 * thread. */
size_t exe_cache_scan(struct exe_cache *c);
/* The path of (dev, ino) into out (cut to n - 1 bytes), " (deleted)" or
 * " (replaced)" appended when so: true; false (counted) when unknown. Any
 * thread. */
bool exe_cache_get(struct exe_cache *c, uint64_t dev, uint64_t ino,
		   char *out, size_t n);
void exe_cache_counts(struct exe_cache *c, struct exe_counts *out);

#endif
