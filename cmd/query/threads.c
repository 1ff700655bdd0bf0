/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --threads: each thread of /proc/<tgid>/task, queried by its id. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "optparse.h"
#include "threads.h"

void tsq_proc_comm(uint32_t pid, char comm[CGS_COMM_LEN + 1])
{
	char path[48];
	ssize_t n;
	int fd;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, CGS_COMM_LEN);
	close(fd);
	if (n <= 0)
		return;
	comm[n] = '\0';
	if (comm[n - 1] == '\n')
		comm[n - 1] = '\0';
}

int tsq_proc_tgid(uint32_t pid)
{
	char path[48], text[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	text[n] = '\0';
	const char *t = strstr(text, "\nTgid:");
	unsigned long v;
	if (!t || sscanf(t + 6, "%lu", &v) != 1 || !v || v > 0x7fffffff)
		return -EBADMSG;
	return (int)v;
}

static int by_tid(const void *a, const void *b)
{
	const struct tsq_sample *x = a, *y = b;

	return (x->rec.pid > y->rec.pid) - (x->rec.pid < y->rec.pid);
}

int tsq_threads(struct cgs_query *q, uint32_t tgid, struct tsq_sample **out,
		unsigned *n)
{
	struct tsq_sample *v = NULL;
	unsigned len = 0, cap = 0;
	char path[48];
	struct dirent *e;
	struct timespec ts;
	int r = 0;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%u/task", tgid);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d))) {
		unsigned long long tid;

		if (tsc_parse_uint(e->d_name, 1, 0x7fffffff, &tid) < 0)
			continue;
		if (len == cap) {
			cap = cap ? 2 * cap : 16;
			void *p = realloc(v, cap * sizeof(*v));
			if (!p) {
				r = -ENOMEM;
				break;
			}
			v = p;
		}
		struct tsq_sample *s = &v[len];
		memset(s, 0, sizeof(*s));
		s->rec.sz = sizeof(s->rec);
		r = cgs_query_pid(q, (uint32_t)tid, &s->rec);
		if (r == -ESRCH) { /* exited since readdir() */
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s->mono_ns = (uint64_t)ts.tv_sec * 1000000000u +
			     (uint64_t)ts.tv_nsec;
		memcpy(s->comm, s->rec.comm, sizeof(s->comm));
		len++;
	}
	closedir(d);
	if (r < 0) {
		free(v);
		return r;
	}
	qsort(v, len, sizeof(*v), by_tid);
	*out = v;
	*n = len;
	return 0;
}
