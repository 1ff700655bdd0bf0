/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which binary an exit record names (issue 39 item 1, a partial): the
 * record carries (ac_exe_dev, ac_exe_inode) since struct taskstats v12,
 * never a path. A bounded map (dev, inode) -> path, filled off the
 * per-record path: once from the usual bin directories (stat of each
 * executable: the short-lived processes of system binaries), and by
 * scanning /proc/<pid>/exe of the live processes (readlink for the path,
 * stat through the link for dev and inode) before the collector sheds its
 * capabilities and after each snapshot (from then on only processes it
 * may ptrace-read: without CAP_SYS_PTRACE, none of root's). An executable
 * learned from a running process whose path no longer names its inode
 * (deleted, or replaced in place by an upgrade) reads "<path> (deleted)",
 * as the kernel writes it. Anything else (a container's binaries, a
 * script's path: the record names its interpreter) stays unknown and is
 * counted.
 */
#ifndef TSC_EXE_CACHE_H
#define TSC_EXE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct exe_cache;

struct exe_counts {
	uint64_t known, unknown; /* look-ups answered, not answered */
	uint64_t entries;        /* executables held */
	uint64_t full;           /* executables not kept: the map was full */
	uint64_t bytes;          /* memory held (entries, paths) */
};

/* A map of at most max executables (0: 4096) for /proc at proc_root.
 * NULL on ENOMEM. */
struct exe_cache *exe_cache_new(const char *proc_root, size_t max);
void exe_cache_free(struct exe_cache *c);
/* One scan of the live processes; returns the processes read. Any
 * thread; look-ups wait for the map's update only, not the scan. */
size_t exe_cache_scan(struct exe_cache *c);
/* The path of (dev, ino) into out (cut to n - 1 bytes): true; false
 * (counted) when unknown. Any thread. */
bool exe_cache_get(struct exe_cache *c, uint64_t dev, uint64_t ino,
		   char *out, size_t n);
void exe_cache_counts(struct exe_cache *c, struct exe_counts *out);

#endif
