/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Executables by (dev, inode), as exit records name them (ac_exe_dev,
 * ac_exe_inode: struct taskstats v12+), made paths off the per-record
 * path (issue 39). Sources, the first that knows wins:
 *  1. the kernel source's exec program (ksrc.h cgsi_ksrc_exe_drain()):
 *     every executable exec'd while it is loaded, short-lived ones and
 *     those outside the bin directories too; its ring is read at each
 *     look-up (no syscall when empty);
 *  2. /proc/<pid>/exe of the live processes (cgsi_exe_scan()) and, at
 *     the first scan, the usual bin directories.
 * Held in a bounded map (max executables; when full, the least recently
 * used of a few neighbours makes room, counted). Whether the file is
 * gone (CGS_EXE_DELETED: its path names nothing, or it was unlinked at
 * exec) or was replaced (CGS_EXE_REPLACED: the path names another inode,
 * as after an upgrade in place) is checked at look-up, at most once per
 * recheck interval per executable (a stat(2) of its path), and cached.
 * Paths of other mount namespaces (a container's: CGS_EXE_FOREIGN) are
 * not checked by path: only "unlinked at exec" (kernel) or "no link left"
 * (/proc) marks them deleted.
 */
#ifndef CGS_ATTRIBUTE_EXE_H
#define CGS_ATTRIBUTE_EXE_H

#include <stddef.h>
#include <stdint.h>

#include "cgstats.h"

struct cgsi_ksrc;
struct cgsi_exe;

#define CGSI_EXE_MAX (1u << 20)      /* largest max */
#define CGSI_EXE_RECHECK_MS 1000u    /* deleted/replaced re-checked */

/* A map of at most max executables (0: 4096) for /proc at proc_root,
 * fed by k's exec program when k is not NULL. NULL on ENOMEM. */
struct cgsi_exe *cgsi_exe_new(const char *proc_root, size_t max,
			      struct cgsi_ksrc *k);
void cgsi_exe_free(struct cgsi_exe *c);
/* The kernel's new executables, then /proc/<pid>/exe of every live
 * process (the bin directories too the first time). Returns the
 * processes read. Thread-safe. */
size_t cgsi_exe_scan(struct cgsi_exe *c);
/* The path of (dev, ino) into buf (cut to len - 1 bytes), CGS_EXE_* in
 * *flags (may be NULL): its length, or -ENOENT (unknown, counted).
 * Thread-safe. */
int cgsi_exe_get(struct cgsi_exe *c, uint64_t dev, uint64_t ino, char *buf,
		 size_t len, unsigned *flags);
/* Learn an executable (flags: CGS_EXE_EXEC, _TRUNCATED, _FOREIGN, and
 * _DELETED: unlinked when seen). A kernel one replaces another source's
 * path; a /proc one does not replace a kernel one. Thread-safe. */
void cgsi_exe_put(struct cgsi_exe *c, uint64_t dev, uint64_t ino,
		  const char *path, unsigned flags);
/* How often an executable's deleted/replaced state is re-checked (ms;
 * 0: at every look-up; tests). */
void cgsi_exe_set_recheck(struct cgsi_exe *c, unsigned ms);
void cgsi_exe_counts(struct cgsi_exe *c, struct cgs_exe_counts *out);

#endif
