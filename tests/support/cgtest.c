/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/cgtest.h"

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

const char *cgt_cgroup1_mount(const char *controller)
{
	static char m1[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return NULL;
	char line[8192], opts[4096];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - cgroup ");
		/* super options (the controllers) follow the source */
		if (!sep || sscanf(sep, " - cgroup %*s %4095s", opts) != 1 ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", m1) != 1)
			continue;
		for (char *o = strtok(opts, ","); o && !found;
		     o = strtok(NULL, ","))
			found = !strcmp(o, controller);
	}
	fclose(f);
	return found ? m1 : NULL;
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

static int said(int err, const char *what, const char *where)
{
	fprintf(stderr, "%s %s: %s\n", what, where, strerror(err));
	return -err;
}

int cgt_mkdir(const char *rel, char *dir, size_t dirlen)
{
	const char *m = cgt_cgroup2_mount();
	if (!m)
		return said(ENOENT, "cgroup2 mount for", rel);
	if (ndirs == CGT_MAX_DIRS)
		return said(ENOSPC, "scratch cgroup", rel);
	if (!owner) {
		owner = getpid();
		atexit(cgt_cleanup);
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
	}
	int n = snprintf(dir, dirlen, "%s%s", m, rel);
	if (n < 0 || (size_t)n >= dirlen)
		return said(ENAMETOOLONG, "mkdir", rel);
	if (mkdir(dir, 0755) < 0)
		return said(errno, "mkdir", dir);
	if (!(dirs[ndirs] = strdup(dir)))
		return said(ENOMEM, "mkdir", dir);
	ndirs++;
	return 0;
}

int cgt_move(const char *dir, pid_t pid)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return said(errno, "open", p);
	char b[32];
	int n = snprintf(b, sizeof(b), "%d\n", pid ? (int)pid : (int)getpid());
	int rc = write(fd, b, (size_t)n) == n ? 0 : said(errno, "move to", p);
	close(fd);
	return rc;
}

pid_t cgt_fork_held(const int go[2], const char *dir, void (*fn)(void))
{
	pid_t p = fork();
	if (p < 0) {
		perror("fork");
		return -1;
	}
	if (p == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(5);
		fn();
		_exit(0);
	}
	return cgt_move(dir, p) < 0 ? -1 : p;
}
