/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Churn driver of the cgroup churn test (issue 13 item 2): creates, uses
 * and removes N cgroups, each with a short known workload, and says
 * exactly what ran where.
 *
 *   cgroup_churn [-c ALIVE] [-p PROCS] [-t THREADS] [-m MODE] [-r RATE]
 *                MOUNT PARENT N LOG
 *
 * MOUNT is a cgroup mount (/sys/fs/cgroup/unified for cgroup2, or a v1
 * one such as /sys/fs/cgroup/cpu), PARENT the scratch cgroup below it
 * ("/cgs-churn-123"; made if missing, removed at the end if made here).
 * ALIVE workers (default 4), each for cgroups i = w, w + ALIVE, ...:
 * mkdir PARENT/c<i>, start PROCS processes (default 1) in it, each of
 * which starts and joins THREADS threads (default 2) and exits; reap them,
 * rmdir the cgroup. So at most ALIVE cgroups are alive at once. With
 * -r, cgroup i is not made before RATE * i seconds from the start (a
 * steady RATE cgroups/s); without, as fast as the workers go.
 *
 * How a process gets into its cgroup (MODE, default "mix"):
 *   clone3  clone3(CLONE_INTO_CGROUP): born there (cgroup2 only)
 *   procs   fork; the parent writes the child's pid into cgroup.procs
 *           while the child waits on a pipe, then releases it
 *   mix     clone3 for even i, procs for odd i (procs only on v1)
 *
 * LOG gets one line per cgroup once it is removed:
 *   <path as /proc/<pid>/cgroup shows it> TAB <task exits> TAB
 *   <process exits> TAB <CLOCK_MONOTONIC seconds when it was removed>
 * (tasks = PROCS * (THREADS + 1), processes = PROCS). The workers' own
 * exits are not in those cgroups. At the end one JSON line on stdout:
 * {"cgroups":N,"tasks":...,"processes":...,"seconds":...,"mode":...}.
 * Exit status 0, or 1 if anything failed (the message says what).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#define CGROUP2_MAGIC 0x63677270

enum mode { M_MIX, M_CLONE3, M_PROCS };

struct cfg {
	const char *mount, *parent;
	long n;
	unsigned alive, procs, threads;
	enum mode mode;
	int log_fd;
	bool v2;
	double rate, t0;
};

static void *noop(void *arg)
{
	return arg;
}

/* A workload process: THREADS threads started and joined, then exit. */
static _Noreturn void work(unsigned threads)
{
	for (unsigned i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, noop, NULL) ||
		    pthread_join(t, NULL))
			_exit(3);
	}
	_exit(0);
}

static pid_t start_clone3(int cgfd, unsigned threads)
{
	struct clone_args a;
	memset(&a, 0, sizeof(a));
	a.flags = CLONE_INTO_CGROUP;
	a.exit_signal = SIGCHLD;
	a.cgroup = (uint64_t)cgfd;
	long pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid == 0)
		work(threads);
	return (pid_t)pid;
}

/* fork, move the child by writing its pid into cgroup.procs, release it */
static pid_t start_procs(int procs_fd, unsigned threads)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(4); /* not moved: the parent failed */
		work(threads);
	}
	close(p[0]);
	if (pid > 0) {
		char num[24];
		int len = snprintf(num, sizeof(num), "%d", (int)pid);
		if (pwrite(procs_fd, num, (size_t)len, 0) != len) {
			int e = errno;
			close(p[1]); /* the child sees EOF and exits 4 */
			waitpid(pid, NULL, 0);
			errno = e;
			return -1;
		}
		if (write(p[1], "g", 1) != 1) {
			close(p[1]);
			waitpid(pid, NULL, 0);
			return -1;
		}
	}
	close(p[1]);
	return pid;
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "cgroup_churn: %s %s: %s\n", what, path,
		strerror(errno));
	return -1;
}

/* rmdir, retrying while the last task's exit completes (EBUSY) */
static int remove_cgroup(const char *dir)
{
	for (int k = 0; k < 2000; k++) {
		if (rmdir(dir) == 0)
			return 0;
		if (errno != EBUSY)
			break;
		usleep(500);
	}
	return fail("rmdir", dir);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int one_cgroup(const struct cfg *c, long i)
{
	char dir[4096], rel[4096], file[4200];
	snprintf(rel, sizeof(rel), "%s/c%ld", c->parent, i);
	snprintf(dir, sizeof(dir), "%s%s", c->mount, rel);
	if (mkdir(dir, 0755) < 0)
		return fail("mkdir", dir);
	bool clone3 = c->v2 && (c->mode == M_CLONE3 ||
				(c->mode == M_MIX && i % 2 == 0));
	int fd;
	if (clone3) {
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
		fd = open(file, O_WRONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return fail("open", dir);
	unsigned started = 0, bad = 0;
	for (unsigned k = 0; k < c->procs; k++) {
		pid_t pid = clone3 ? start_clone3(fd, c->threads)
				   : start_procs(fd, c->threads);
		if (pid < 0) {
			fail(clone3 ? "clone3 into" : "fork into", dir);
			bad++;
			break;
		}
		started++;
	}
	close(fd);
	for (unsigned k = 0; k < started; k++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "cgroup_churn: a process in %s failed "
				"(status %d)\n", dir, st);
			bad++;
		}
	}
	if (remove_cgroup(dir) < 0 || bad)
		return -1;
	char line[4200];
	int len = snprintf(line, sizeof(line), "%s\t%u\t%u\t%.6f\n", rel,
			   c->procs * (c->threads + 1), c->procs, now_s());
	if (write(c->log_fd, line, (size_t)len) != len) /* O_APPEND: whole */
		return fail("write", "LOG");
	return 0;
}

static int worker(const struct cfg *c, unsigned w)
{
	for (long i = w; i < c->n; i += c->alive) {
		double at = c->rate > 0 ? c->t0 + (double)i / c->rate : 0;
		double wait = at - now_s();
		if (wait > 0)
			usleep((useconds_t)(wait * 1e6));
		if (one_cgroup(c, i) < 0)
			return 1;
	}
	return 0;
}

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-c ALIVE] [-p PROCS] [-t THREADS] "
		"[-m mix|clone3|procs] [-r RATE] MOUNT PARENT N LOG\n", argv0);
	return 2;
}

int main(int argc, char **argv)
{
	struct cfg c = { .alive = 4, .procs = 1, .threads = 2 };
	const char *mname = "mix";
	int opt;
	while ((opt = getopt(argc, argv, "c:p:t:m:r:")) != -1) {
		switch (opt) {
		case 'c': c.alive = (unsigned)atoi(optarg); break;
		case 'p': c.procs = (unsigned)atoi(optarg); break;
		case 't': c.threads = (unsigned)atoi(optarg); break;
		case 'm': mname = optarg; break;
		case 'r': c.rate = atof(optarg); break;
		default: return usage(argv[0]);
		}
	}
	if (argc - optind != 4 || !c.alive || !c.procs)
		return usage(argv[0]);
	c.mode = !strcmp(mname, "clone3") ? M_CLONE3
		 : !strcmp(mname, "procs") ? M_PROCS : M_MIX;
	if (c.mode == M_MIX && strcmp(mname, "mix"))
		return usage(argv[0]);
	c.mount = argv[optind];
	c.parent = argv[optind + 1];
	c.n = atol(argv[optind + 2]);
	struct statfs sf;
	if (statfs(c.mount, &sf) < 0) {
		fail("statfs", c.mount);
		return 1;
	}
	c.v2 = sf.f_type == CGROUP2_MAGIC;
	if (c.mode == M_CLONE3 && !c.v2) {
		fprintf(stderr, "cgroup_churn: clone3 into a cgroup needs "
			"cgroup2; %s is not\n", c.mount);
		return 2;
	}
	c.log_fd = open(argv[optind + 3], O_WRONLY | O_CREAT | O_APPEND |
			O_TRUNC | O_CLOEXEC, 0644);
	if (c.log_fd < 0) {
		fail("open", argv[optind + 3]);
		return 1;
	}
	char top[4096];
	snprintf(top, sizeof(top), "%s%s", c.mount, c.parent);
	bool made = mkdir(top, 0755) == 0;
	if (!made && errno != EEXIST) {
		fail("mkdir", top);
		return 1;
	}

	double t0 = now_s();
	c.t0 = t0;
	pid_t *pids = calloc(c.alive, sizeof(*pids));
	int rc = 0;
	for (unsigned w = 0; w < c.alive; w++) {
		pids[w] = fork();
		if (pids[w] == 0)
			_exit(worker(&c, w));
		if (pids[w] < 0) {
			fail("fork", "worker");
			rc = 1;
			break;
		}
	}
	for (unsigned w = 0; w < c.alive; w++) {
		int st;
		if (pids[w] > 0 && (waitpid(pids[w], &st, 0) < 0 ||
				    !WIFEXITED(st) || WEXITSTATUS(st)))
			rc = 1;
	}
	double secs = now_s() - t0;
	if (made && rmdir(top) < 0)
		fail("rmdir", top);
	printf("{\"cgroups\":%ld,\"tasks\":%llu,\"processes\":%llu,"
	       "\"seconds\":%.3f,\"mode\":\"%s\",\"alive\":%u,"
	       "\"procs\":%u,\"threads\":%u,\"cgroup2\":%s}\n", c.n,
	       (unsigned long long)c.n * c.procs * (c.threads + 1),
	       (unsigned long long)c.n * c.procs, secs,
	       c.v2 ? mname : "procs", c.alive, c.procs, c.threads,
	       c.v2 ? "true" : "false");
	free(pids);
	return rc;
}
