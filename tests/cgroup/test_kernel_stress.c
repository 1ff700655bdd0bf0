/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel source under a mixed overload (issue 23 part 3): process
 * churn (fork/exit children), thread churn (50 threads at a time),
 * cgroup churn (a cgroup made, a child born in it by clone3, reaped, the
 * cgroup removed) and a cgroup storm (2,000 empty cgroups made, then
 * removed, again and again: more events than the event ring holds) run
 * together for DURATION seconds (argv[1], default 20;
 * bench/run-overload.sh runs it for 60) under cgroup2, each workload in
 * a cgroup of its own, while a running listener accounts every record
 * with the kernel source. Asserts:
 *  - every record is from the kernel source or counted under one named
 *    reason: records = via_kernel + kernel_unmatched, and the reasons
 *    (kmiss_*) add up to kernel_unmatched; none is "other";
 *  - each workload's records are what it ran (children, threads, cgroup
 *    children, plus each worker's own exit), exactly when netlink
 *    dropped nothing, else within the drops.
 * Prints one line of figures (the bench's). Cgroups are named after
 * $CGT_STRESS_PREFIX (default cgs-stress) and the pid.
 *
 * Skips (77) without taskstats, CAP_NET_ADMIN, cgroup2, or where the
 * kernel source cannot load, saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/cgtest.h"
#include "support/clock.h"
#include "support/kmiss.h"
#include "support/pipeline.h"
#include "support/skip.h"

enum { W_PROC, W_THR, W_CG, W_STORM, W_N };
static const char *const wname[W_N] = { "proc", "thread", "cgroup",
					 "storm" };
static char rel[W_N][256], dir[W_N][4608];
static size_t cg_rel_len;
/* task records by where they landed: the workload's cgroup, and for the
 * cgroup churn its children's cgroups */
static uint64_t in_cg[W_N], in_child;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_task(const struct cgs_record *rec, const char *path, void *u)
{
	(void)rec, (void)u;
	if (!path)
		return;
	for (int w = 0; w < W_N; w++)
		if (!strcmp(path, rel[w])) {
			__atomic_fetch_add(&in_cg[w], 1, __ATOMIC_RELAXED);
			return;
		}
	if (!strncmp(path, rel[W_CG], cg_rel_len) && path[cg_rel_len] == '/')
		__atomic_fetch_add(&in_child, 1, __ATOMIC_RELAXED);
}

static void *nop(void *a)
{
	return a;
}

static uint64_t churn_procs(double until)
{
	uint64_t n = 0;
	while (now_s() < until) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		if (p < 0)
			continue;
		waitpid(p, NULL, 0);
		n++;
	}
	return n;
}

static uint64_t churn_threads(double until)
{
	uint64_t n = 0;
	pthread_t t[50];
	while (now_s() < until) {
		int k = 0;
		while (k < 50 && pthread_create(&t[k], NULL, nop, NULL) == 0)
			k++;
		for (int i = 0; i < k; i++)
			pthread_join(t[i], NULL);
		n += (uint64_t)k;
	}
	return n;
}

/* A child in cgroup `d` (clone3 into it; else fork and move itself). */
static pid_t child_in(const char *d)
{
	int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	pid_t p = cgt_clone_into(fd);
	if (p < 0 && errno == ENOSYS) {
		p = fork();
		if (p == 0) {
			char f[4800];
			snprintf(f, sizeof(f), "%.4700s/cgroup.procs", d);
			int c = open(f, O_WRONLY);
			_exit(c < 0 || write(c, "0", 1) != 1);
		}
	}
	if (p == 0)
		_exit(0);
	close(fd);
	return p;
}

static uint64_t churn_cgroups(double until)
{
	uint64_t n = 0;
	char d[4700];
	for (unsigned i = 0; now_s() < until; i++) {
		snprintf(d, sizeof(d), "%s/c%u", dir[W_CG], i);
		if (mkdir(d, 0755) < 0)
			continue;
		pid_t p = child_in(d);
		if (p > 0 && waitpid(p, NULL, 0) == p)
			n++;
		for (int k = 0; rmdir(d) < 0 && errno == EBUSY && k < 200; k++)
			usleep(500);
	}
	return n;
}

/* Cgroups without tasks made and removed STORM at a time (as a host
 * starting and stopping many units): mkdir/rmdir events beyond what the
 * kernel source's event ring holds, while the other workloads' records
 * need theirs. */
#define STORM 2000
static uint64_t storm_cgroups(double until)
{
	uint64_t n = 0;
	char d[4700];
	while (now_s() < until) {
		unsigned k = 0;
		for (; k < STORM; k++) {
			snprintf(d, sizeof(d), "%s/s%u", dir[W_STORM], k);
			if (mkdir(d, 0755) < 0)
				break;
		}
		for (unsigned i = 0; i < k; i++) {
			snprintf(d, sizeof(d), "%s/s%u", dir[W_STORM], i);
			rmdir(d);
		}
		n += k;
	}
	return n;
}

/* Fork workload w in its cgroup; it writes {w, what it ran} on fd. */
static pid_t spawn(int w, double until, int fd)
{
	pid_t p = fork();
	if (p)
		return p;
	/* a test killed (a timeout, the bench stopped) takes its workers */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
		_exit(2);
	if (cgt_move(dir[w], 0) < 0)
		_exit(2);
	uint64_t n[2] = { (uint64_t)w, 0 };
	n[1] = w == W_PROC  ? churn_procs(until)
	       : w == W_THR ? churn_threads(until)
	       : w == W_CG  ? churn_cgroups(until)
			    : storm_cgroups(until);
	_exit(write(fd, n, sizeof(n)) != sizeof(n));
}

/* Run the three workloads for secs; what each ran into ran[]. */
static int run_workloads(double secs, uint64_t ran[])
{
	int fd[2], fails = 0;
	if (pipe(fd) < 0)
		return 1;
	double until = now_s() + secs;
	for (int w = 0; w < W_N; w++)
		if (spawn(w, until, fd[1]) < 0)
			return 1;
	close(fd[1]);
	for (int w = 0; w < W_N; w++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			fails++;
	}
	uint64_t n[2];
	while (read(fd[0], n, sizeof(n)) == sizeof(n))
		if (n[0] < W_N)
			ran[n[0]] = n[1];
	close(fd[0]);
	if (fails)
		fprintf(stderr, "FAIL: %d workers failed\n", fails);
	return fails;
}

static int check(const struct cgs_rollup_totals *t, const uint64_t ran[],
		 const struct cgs_loss *loss)
{
	int fails = 0;
	uint64_t sum = cgt_kmiss_sum(t);
	if (t->records != t->via_kernel + t->kernel_unmatched) {
		fprintf(stderr, "FAIL: records %llu != kernel %llu + "
			"unmatched %llu\n", (unsigned long long)t->records,
			(unsigned long long)t->via_kernel,
			(unsigned long long)t->kernel_unmatched);
		fails++;
	}
	if (sum != t->kernel_unmatched || t->kmiss_other) {
		fprintf(stderr, "FAIL: reasons add up to %llu (other %llu), "
			"unmatched %llu\n", (unsigned long long)sum,
			(unsigned long long)t->kmiss_other,
			(unsigned long long)t->kernel_unmatched);
		fails++;
	}
	/* a worker's own exit is one more record in its cgroup; the
	 * cgroup churn's children land in their cgroups, or (their cgroup
	 * gone before its path was learnt) in the worker's, inferred */
	uint64_t got[W_N] = { in_cg[W_PROC], in_cg[W_THR],
			      in_cg[W_CG] + in_child, in_cg[W_STORM] };
	for (int w = 0; w < W_N; w++) {
		uint64_t want = w == W_STORM ? 1 : ran[w] + 1;
		bool ok = loss->dropped ? got[w] <= want &&
						  got[w] + loss->dropped >= want
					: got[w] == want;
		if (!ok) {
			fprintf(stderr, "FAIL: %s: %llu records, ran %llu + 1 "
				"(netlink dropped %llu)\n", wname[w],
				(unsigned long long)got[w],
				(unsigned long long)ran[w],
				(unsigned long long)loss->dropped);
			fails++;
		}
	}
	return fails;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	double secs = argc > 1 ? atof(argv[1]) : 20;
	const char *pre = getenv("CGT_STRESS_PREFIX");
	cgt_require_cgroup2();
	char top[128], topdir[4608];
	snprintf(top, sizeof(top), "/%.64s-%d", pre ? pre : "cgs-stress",
		 (int)getpid());
	if (cgt_mkdir(top, topdir, sizeof(topdir)) < 0)
		return 1;
	for (int w = 0; w < W_N; w++) {
		snprintf(rel[w], sizeof(rel[w]), "%s/%s", top, wname[w]);
		if (cgt_mkdir(rel[w], dir[w], sizeof(dir[w])) < 0)
			return 1;
	}
	cg_rel_len = strlen(rel[W_CG]);
	struct cgt_pipeline pl;
	int rc = cgt_pipeline_open(&pl, 32u << 20, CGS_ATTRIBUTION_KERNEL, 0,
				   0);
	if (rc)
		return rc;
	pl.on_task = on_task;
	if (cgt_pipeline_run(&pl))
		return 1;
	/* a baseline: exits between registering and attaching the program
	 * have records but no entries (no_entry); left out */
	cgt_sleep_ms(300);
	struct cgs_rollup_totals t0 = { .sz = sizeof(t0) };
	cgs_rollup_get_totals(pl.r, &t0);
	memset(in_cg, 0, sizeof(in_cg));
	in_child = 0;
	uint64_t ran[W_N] = { 0 };
	double t1 = now_s();
	int fails = run_workloads(secs, ran);
	double t2 = now_s();
	struct cgs_loss loss;
	if (cgt_listener_drain(pl.l, 1500, &loss))
		return 1;
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	cgs_rollup_get_totals(pl.r, &t);
	cgt_kmiss_sub(&t, &t0);
	printf("stress %.1f s: ran %llu processes, %llu threads, %llu "
	       "cgroups with a child, %llu without; records %llu (%.0f/s), kernel %llu, unmatched %llu, "
	       "inferred %llu, netlink dropped %llu, kernel lost %llu, "
	       "cgroup events lost %llu, walks %llu (last %llu ms); records "
	       "in proc %llu, thread %llu, cgroup %llu + children %llu\n",
	       t2 - t1, (unsigned long long)ran[W_PROC],
	       (unsigned long long)ran[W_THR], (unsigned long long)ran[W_CG],
	       (unsigned long long)ran[W_STORM],
	       (unsigned long long)t.records, t.records / (t2 - t1),
	       (unsigned long long)t.via_kernel,
	       (unsigned long long)t.kernel_unmatched,
	       (unsigned long long)t.inferred,
	       (unsigned long long)loss.dropped,
	       (unsigned long long)t.kernel_lost,
	       (unsigned long long)(t.kernel_cg_lost - t0.kernel_cg_lost),
	       (unsigned long long)t.kernel_walks,
	       (unsigned long long)t.kernel_walk_ms,
	       (unsigned long long)in_cg[W_PROC],
	       (unsigned long long)in_cg[W_THR],
	       (unsigned long long)in_cg[W_CG], (unsigned long long)in_child);
	printf("reasons: ");
	cgt_kmiss_print(stdout, &t);
	fails += check(&t, ran, &loss);
	cgt_pipeline_close(&pl);
	if (!fails)
		printf("PASS\n");
	return fails ? 1 : 0;
}
