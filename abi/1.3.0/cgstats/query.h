/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/query.h>: queries of live tasks and cgroup v1 task states
 * (cgs_query_open() ... cgs_query_close()). Part of <cgstats.h>.
 */
#ifndef CGSTATS_QUERY_H
#define CGSTATS_QUERY_H

#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cgs_query;

struct cgs_query_opts {
	size_t sz;           /* sizeof(struct cgs_query_opts) */
	unsigned timeout_ms; /* longest wait for the kernel's answer to one
			      * request; 0: 2000 */
};

/**
 * cgs_query_open() - Open a handle for queries of live tasks.
 * @out: Receives the handle on success, NULL on failure; owned by the
 *	caller, freed with cgs_query_close().
 * @opts: Options, or NULL for the defaults; not kept after the call.
 *
 * Opens one generic-netlink socket and resolves the TASKSTATS family. No
 * namespace or privilege check is made here.
 *
 * Return: 0 on success; -EINVAL for a NULL @out or opts->sz too small;
 * -E2BIG for options this library does not know; -ENOMEM;
 * -CGS_ERR_NO_TASKSTATS; another -errno from the socket.
 */
CGS_EXPORT int
cgs_query_open(struct cgs_query **out, const struct cgs_query_opts *opts);
/**
 * cgs_query_close() - Close a query handle.
 * @q: The handle, or NULL (nothing is done).
 */
CGS_EXPORT void cgs_query_close(struct cgs_query *q);

/**
 * cgs_query_pid() - Stats of a live thread.
 * @q: The handle.
 * @pid: Thread id (not 0).
 * @out: Receives the record, of kind CGS_KIND_THREAD; set out->sz first
 *	(CGS_OPTS): at most that many bytes are written, and sz says how many.
 *
 * Context: One request at a time per handle: not thread-safe; use one
 * handle per thread. Waits up to opts->timeout_ms for the answer.
 * Return: 0; -EINVAL for a NULL @q or @out, out->sz 0 or a @pid of 0;
 * -ESRCH when it does not exist; -ETIMEDOUT when the kernel did not answer
 * in time; -EBADMSG for an answer that cannot be decoded (or an ack with no
 * answer); -ENOMSG for an answer that is not a taskstats record; -ENOBUFS
 * when the query socket overran; another -errno the kernel answered with.
 */
CGS_EXPORT int
cgs_query_pid(struct cgs_query *q, uint32_t pid, struct cgs_record *out);
/**
 * cgs_query_tgid() - Stats of a live thread group, summed over threads.
 * @q: The handle.
 * @tgid: Thread group id (not 0).
 * @out: Receives the record, of kind CGS_KIND_TGID (pid 0, tgid @tgid);
 *	set out->sz first (CGS_OPTS), as for cgs_query_pid().
 *
 * Context: As cgs_query_pid().
 * Return: As cgs_query_pid(); -ESRCH when the group does not exist.
 */
CGS_EXPORT int cgs_query_tgid(struct cgs_query *q, uint32_t tgid,
			      struct cgs_record *out);

/* Tasks of a cgroup v1 directory by state (the kernel's cgroupstats). */
struct cgs_task_states {
	size_t sz; /* sizeof(struct cgs_task_states) */
	/* tasks of the cgroup by state: sleeping, running, stopped,
	 * uninterruptible sleep, waiting for I/O */
	uint64_t nr_sleeping, nr_running, nr_stopped, nr_uninterruptible,
		nr_io_wait;
};

/**
 * cgs_query_cgroup() - Task state counts of a cgroup v1 directory.
 * @q: The handle.
 * @cgroup_dir: Path of the cgroup's directory; not kept.
 * @out: Receives the counts; set out->sz first (CGS_OPTS): at most that
 *	many bytes are written, and sz says how many.
 *
 * Since 1.3; before, cgs_query_cgroupstats() filling a struct
 * cgs_cgroupstats of the same layout (kept: <cgstats/deprecated.h>).
 *
 * Context: As cgs_query_pid().
 * Return: 0; -EINVAL for a NULL argument or out->sz 0; -CGS_ERR_CGROUP2
 * for a cgroup2 directory; -ENOENT/-ENOTDIR for a bad path, -ENOTDIR also for a
 * directory not on a cgroup v1 file system; another -errno from open()
 * (e.g. -EACCES); -ETIMEDOUT, -EBADMSG or a kernel error as for
 * cgs_query_pid().
 */
CGS_EXPORT int cgs_query_cgroup(struct cgs_query *q, const char *cgroup_dir,
				struct cgs_task_states *out);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_QUERY_H */
