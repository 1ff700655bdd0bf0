/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cgtest.h"

#define CGT_MAX_DIRS 4096

static char mnt[4096];
static char *dirs[CGT_MAX_DIRS];
static int ndirs;
static pid_t owner;

const char *cgt_cgroup2_mount(void)
{
	if (mnt[0])
		return mnt;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return NULL;
	char line[8192];
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, " - cgroup2 "))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1)
			break;
		mnt[0] = '\0';
	}
	fclose(f);
	return mnt[0] ? mnt : NULL;
}

void cgt_cleanup(void)
{
	if (getpid() != owner)
		return; /* a forked child exiting through exit() */
	for (int i = ndirs - 1; i >= 0; i--) {
		if (rmdir(dirs[i]) < 0 && errno != ENOENT)
			fprintf(stderr, "rmdir %s: %s\n", dirs[i],
				strerror(errno));
		free(dirs[i]);
	}
	ndirs = 0;
}

static void on_signal(int sig)
{
	cgt_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

int cgt_mkdir(const char *rel, char *dir, size_t dirlen)
{
	const char *m = cgt_cgroup2_mount();
	if (!m)
		return -ENOENT;
	if (ndirs == CGT_MAX_DIRS)
		return -ENOSPC;
	if (!owner) {
		owner = getpid();
		atexit(cgt_cleanup);
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
	}
	int n = snprintf(dir, dirlen, "%s%s", m, rel);
	if (n < 0 || (size_t)n >= dirlen)
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) < 0)
		return -errno;
	if (!(dirs[ndirs] = strdup(dir)))
		return -ENOMEM;
	ndirs++;
	return 0;
}

int cgt_move(const char *dir, pid_t pid)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char b[32];
	int n = snprintf(b, sizeof(b), "%d\n", pid ? (int)pid : (int)getpid());
	int rc = write(fd, b, (size_t)n) == n ? 0 : -errno;
	close(fd);
	return rc;
}
