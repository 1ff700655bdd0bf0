/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/<pid>/cgroup parser. Lines are "hierarchy-ID:controller-list:path";
 * cgroup2 is the "0::" line, v1 lines list their controllers comma-joined
 * ("2:cpu,cpuacct:/x", "1:name=systemd:/"). On cgroup2 the kernel appends
 * " (deleted)" to the path of a removed cgroup still holding a zombie:
 * it is stripped, the path is what identifies the cgroup.
 */
#include <stdbool.h>
#include <stdio.h>

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attribute/proc_cgroup.h"
#include "util/common.h"

static bool list_has(const char *list, size_t len, const char *want)
{
	size_t wl = strlen(want);
	const char *p = list, *end = list + len;
	while (p < end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		size_t tl = c ? (size_t)(c - p) : (size_t)(end - p);
		if (tl == wl && !memcmp(p, want, wl))
			return true;
		p += tl + 1;
	}
	return false;
}

int cgs_parse_proc_cgroup(const char *text, size_t len,
			  const char *hierarchy, char *buf,
			  size_t buflen)
{
	return cgsi_parse_proc_cgroup(text, len, hierarchy, buf, buflen, NULL);
}

int cgsi_parse_proc_cgroup(const char *text, size_t len, const char *hierarchy,
			   char *buf, size_t buflen, bool *deleted)
{
	if (deleted)
		*deleted = false;
	if (!text || !buf || !buflen)
		return -EINVAL;
	bool v2 = !hierarchy || !strcmp(hierarchy, "v2");
	const char *p = text, *end = text + len;
	bool any = false;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le == p) {
			p = le + 1;
			continue;
		}
		const char *c1 = memchr(p, ':', (size_t)(le - p));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1))
				    : NULL;
		if (!c1 || !c2 || c1 == p)
			return -EBADMSG;
		for (const char *q = p; q < c1; q++)
			if (*q < '0' || *q > '9')
				return -EBADMSG;
		any = true;
		const char *ctl = c1 + 1;
		size_t ctl_len = (size_t)(c2 - ctl);
		bool hit = v2 ? (c1 - p == 1 && *p == '0' && ctl_len == 0)
			      : (ctl_len && list_has(ctl, ctl_len, hierarchy));
		if (hit) {
			const char *path = c2 + 1;
			size_t pl = (size_t)(le - path);
			static const char del[] = " (deleted)";
			if (v2 && pl > sizeof(del) - 1 &&
			    !memcmp(le - (sizeof(del) - 1), del,
				    sizeof(del) - 1)) {
				pl -= sizeof(del) - 1;
				if (deleted)
					*deleted = true;
			}
			if (pl == 0 || path[0] != '/')
				return -EBADMSG;
			if (pl + 1 > buflen)
				return -ENAMETOOLONG;
			memcpy(buf, path, pl);
			buf[pl] = '\0';
			return (int)pl;
		}
		p = le + 1;
	}
	return any ? -ENOENT : -EBADMSG;
}

int cgsi_proc_cgroup_read(const char *proc_root, uint32_t pid,
			  const char *hier, char *scratch, size_t scratch_len,
			  char *out, size_t out_len, bool *deleted,
			  bool *exited)
{
	if (exited)
		*exited = false;
	char fn[512];
	int n = snprintf(fn, sizeof(fn), "%s/%u/cgroup", proc_root, pid);
	if (n < 0 || (size_t)n >= sizeof(fn))
		return -ENAMETOOLONG;
	int len = cgsi_read_file(fn, scratch, scratch_len);
	if (len < 0)
		return len == -ESRCH ? -ENOENT : len;
	/*
	 * /proc/<n> also answers for a thread id n (hidden from readdir). The
	 * pids we look up are processes (tgids); if one was reaped and n now
	 * belongs to another process's thread, its cgroup is not ours. Fork
	 * tracking ignores thread creations, so ask the kernel: pidfd_open()
	 * accepts only thread-group leaders, zombies included (a thread id
	 * gets ENOENT or EINVAL, by kernel version). Asked only after a
	 * successful read: a reaped process costs nothing more. The pidfd
	 * also tells, by a poll that does not wait, whether its process has
	 * exited (a zombie: readable once the whole group is gone).
	 */
	if (strcmp(proc_root, "/proc") == 0) {
		int pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0u);
		if (pfd >= 0) {
			struct pollfd pf = { .fd = pfd, .events = POLLIN };
			if (exited && poll(&pf, 1, 0) == 1 &&
			    (pf.revents & POLLIN))
				*exited = true;
			close(pfd);
		} else if (errno == EINVAL || errno == ESRCH ||
			   errno == ENOENT) {
			return -ENOENT;
		}
	}
	if (len == 0)
		return -ENOENT; /* a task being torn down reads empty */
	return cgsi_parse_proc_cgroup(scratch, (size_t)len, hier, out, out_len,
				      deleted);
}
