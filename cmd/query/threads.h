/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The threads of a thread group, from /proc, and their records. */
#ifndef TSQ_THREADS_H
#define TSQ_THREADS_H

#include "query.h"

/* /proc/<pid>/comm into comm (NUL-terminated, newline dropped); "" when
 * it cannot be read. */
void tsq_proc_comm(uint32_t pid, char comm[CGS_COMM_LEN + 1]);

/* Tgid: of /proc/<pid>/status (> 0), or -errno (-ENOENT: no such task). */
int tsq_proc_tgid(uint32_t pid);

/*
 * Query every thread of /proc/<tgid>/task: *out (malloc'd, by thread id)
 * and *n. A thread that exits meanwhile is left out. 0, or -errno:
 * -ESRCH when the group is gone, a query's error otherwise.
 */
int tsq_threads(struct cgs_query *q, uint32_t tgid, struct tsq_sample **out,
		unsigned *n);

#endif
