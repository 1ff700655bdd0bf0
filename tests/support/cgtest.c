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

#define CGT_MAX_SAVED 8

static char mnt[4096];
static char *dirs[CGT_MAX_DIRS];
static int ndirs;
static pid_t owner;
/* files cgt_set_file() changed, with the text they held */
static struct {
	char *path, *old;
} saved[CGT_MAX_SAVED];
static int nsaved;

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

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = strlen(text);
	int rc = write(fd, text, n) == (ssize_t)n ? 0 : -errno;
	close(fd);
	return rc;
}

void cgt_restore_files(void)
{
	if (getpid() != owner)
		return;
	for (int i = nsaved - 1; i >= 0; i--) {
		int rc = write_text(saved[i].path, saved[i].old);
		if (rc < 0)
			fprintf(stderr, "restore %s: %s\n", saved[i].path,
				strerror(-rc));
		free(saved[i].path);
		free(saved[i].old);
	}
	nsaved = 0;
}

void cgt_cleanup(void)
{
	if (getpid() != owner)
		return; /* a forked child exiting through exit() */
	cgt_restore_files();
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

static void own_cleanup(void)
{
	if (owner)
		return;
	owner = getpid();
	atexit(cgt_cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

int cgt_mkdir(const char *rel, char *dir, size_t dirlen)
{
	const char *m = cgt_cgroup2_mount();
	if (!m)
		return said(ENOENT, "cgroup2 mount for", rel);
	return cgt_mkdir_at(m, rel, dir, dirlen);
}

int cgt_mkdir_at(const char *m, const char *rel, char *dir, size_t dirlen)
{
	if (ndirs == CGT_MAX_DIRS)
		return said(ENOSPC, "scratch cgroup", rel);
	own_cleanup();
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

int cgt_write(const char *dir, const char *file, const char *text)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	int rc = write_text(p, text);
	return rc < 0 ? said(-rc, "write", p) : 0;
}

int cgt_set_file(const char *path, const char *text)
{
	char old[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return said(errno, "open", path);
	ssize_t n = read(fd, old, sizeof(old) - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return said(err, "read", path);
	old[n] = '\0';
	if (nsaved == CGT_MAX_SAVED)
		return said(ENOSPC, "save", path);
	own_cleanup();
	/* saved before the change: restored even if it half-succeeds */
	if (!(saved[nsaved].path = strdup(path)) ||
	    !(saved[nsaved].old = strdup(old))) {
		free(saved[nsaved].path);
		return said(ENOMEM, "save", path);
	}
	nsaved++;
	int rc = write_text(path, text);
	return rc < 0 ? said(-rc, "write", path) : 0;
}

int cgt_move(const char *dir, pid_t pid)
{
	char b[32];
	snprintf(b, sizeof(b), "%d\n", pid ? (int)pid : (int)getpid());
	return cgt_write(dir, "cgroup.procs", b);
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
