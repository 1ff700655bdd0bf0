/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading a task's cgroup from /proc/<pid>/cgroup. */
#ifndef CGS_ATTRIBUTE_PROC_CGROUP_H
#define CGS_ATTRIBUTE_PROC_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* cgs_parse_proc_cgroup, also saying whether cgroup2 marked the cgroup
 * " (deleted)" (a zombie left in a removed cgroup). deleted may be NULL. */
int cgsi_parse_proc_cgroup(const char *text, size_t len, const char *hierarchy,
			   char *buf, size_t buflen, bool *deleted);

/*
 * Read <proc_root>/<pid>/cgroup and extract the path of `hier` into out.
 * scratch (scratch_len bytes) holds the file text. Returns the path
 * length, -ENOENT when the process is gone (or lacks the hierarchy),
 * or another -errno. *exited (may be NULL): on the real /proc, the pid's
 * holder had exited (a zombie) when checked just after the read.
 */
int cgsi_proc_cgroup_read(const char *proc_root, uint32_t pid,
			  const char *hier, char *scratch, size_t scratch_len,
			  char *out, size_t out_len, bool *deleted,
			  bool *exited);

#endif
