/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who holds a pid now: the fields of /proc/<pid>/stat that tell a process
 * from one that reused its pid. See proc_stat.c. */
#ifndef CGS_ATTRIBUTE_PROC_STAT_H
#define CGS_ATTRIBUTE_PROC_STAT_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's PF_EXITING (include/linux/sched.h): set at the start of
 * do_exit(), never cleared, so also on a zombie. */
#define CGSI_PF_EXITING 0x00000004u

struct cgsi_proc_stat {
	char state;           /* field 3: R, S, D, Z, X, ... */
	uint32_t flags;       /* field 9: the task's PF_* flags */
	uint64_t start_ticks; /* field 22: start, clock ticks after boot */
};

/* Parse the text of a /proc/<pid>/stat (len bytes, need not end in NUL).
 * 0 or -EBADMSG. */
int cgsi_proc_stat_parse(const char *text, size_t len,
			 struct cgsi_proc_stat *st);

/* Read and parse <proc_root>/<pid>/stat, scratch (len bytes) holding the
 * text. 0, -ENOENT when the pid is gone, or another -errno. */
int cgsi_proc_stat_read(const char *proc_root, uint32_t pid, char *scratch,
			size_t len, struct cgsi_proc_stat *st);

#endif
