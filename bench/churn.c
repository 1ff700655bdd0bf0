/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * churn: the exit-heavy workload the listener benchmarks are measured on.
 *
 *   churn threads [-n N] [-r R]   R rounds: create N threads, thread i sleeps
 *                                 (N-i)*2 us and exits; join all (the classic
 *                                 taskstats churn; defaults N=1000, R=10)
 *   churn procs [-n N] [-r R]     R rounds: fork N children that _exit(0) at
 *                                 once, then reap them all
 *
 * Options: -c CGROUP_PROCS_FILE (repeatable) moves this process into each
 * given cgroup.procs before the work starts, so a collector can attribute
 * the records to a dedicated cgroup; -w waits for a line on stdin before
 * starting (after printing {"ready":pid}), so the harness can set up around
 * a known pid.
 *
 * Prints one JSON object: rusage (SELF + CHILDREN), wall time, and what a
 * listener should receive for it: one task record per exiting thread or
 * child plus this process's own exit, and AGGR_TGID records for every
 * multi-threaded process (here: only this one, in threads mode).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHURN_COMM "cgs-churn" /* listeners filter on this comm */

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *sleeper(void *arg)
{
	long us = (long)(intptr_t)arg;
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return NULL;
}

static int run_threads(long n, long rounds)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;

	if (!t)
		return -ENOMEM;
	pthread_attr_init(&attr);
	/* Small stacks: the workload is about exits, not memory. */
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < n; i++) {
			int e = pthread_create(&t[i], &attr, sleeper,
					       (void *)(intptr_t)((n - i) * 2));
			if (e) {
				fprintf(stderr, "pthread_create: %s\n",
					strerror(e));
				return -e;
			}
		}
		for (long i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	}
	pthread_attr_destroy(&attr);
	free(t);
	return 0;
}

static int run_procs(long n, long rounds)
{
	for (long r = 0; r < rounds; r++) {
		long live = 0;

		for (long i = 0; i < n; i++) {
			pid_t p = fork();

			if (p == 0)
				_exit(0);
			if (p < 0) {
				perror("fork");
				break;
			}
			live++;
		}
		while (live > 0) {
			if (waitpid(-1, NULL, 0) > 0)
				live--;
			else if (errno != EINTR)
				break;
		}
		if (live)
			return -ECHILD;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: churn threads|procs [-n N] [-r ROUNDS] "
			"[-c CGROUP_PROCS]... [-w]\n");
	exit(2);
}

static int join_cgroup(const char *procs)
{
	FILE *f = fopen(procs, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fprintf(f, "%d\n", (int)getpid()) > 0;
	ok &= fclose(f) == 0;
	return ok ? 0 : -EIO;
}

int main(int argc, char **argv)
{
	long n = 1000, rounds = 10;
	int wait_start = 0, opt, err;
	const char *mode;
	struct rusage self, kids;
	double t0, t1;
	long tasks, tgids;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "n:r:c:w")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'r': rounds = atol(optarg); break;
		case 'c':
			err = join_cgroup(optarg);
			if (err) {
				fprintf(stderr, "churn: joining %s: %s\n",
					optarg, strerror(-err));
				return 1;
			}
			break;
		case 'w': wait_start = 1; break;
		default: usage();
		}
	}
	if (n < 1 || rounds < 1)
		usage();
	prctl(PR_SET_NAME, CHURN_COMM);
	if (wait_start) {
		char line[16];

		printf("{\"ready\":%d}\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}

	t0 = now_s();
	if (!strcmp(mode, "threads")) {
		err = run_threads(n, rounds);
		tasks = n * rounds + 1; /* threads + this process's exit */
		tgids = 1;              /* appended to the last thread's exit */
	} else if (!strcmp(mode, "procs")) {
		err = run_procs(n, rounds);
		tasks = n * rounds + 1; /* single-threaded: no TGID records */
		tgids = 0;
	} else {
		usage();
	}
	t1 = now_s();
	if (err)
		return 1;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);

	printf("{\"mode\":\"%s\",\"n\":%ld,\"rounds\":%ld,\"pid\":%d,"
	       "\"comm\":\"%s\",\"elapsed_s\":%.6f,\"user_s\":%.6f,"
	       "\"sys_s\":%.6f,\"self_user_s\":%.6f,\"self_sys_s\":%.6f,"
	       "\"expected_task_records\":%ld,"
	       "\"expected_tgid_records\":%ld}\n",
	       mode, n, rounds, (int)getpid(), CHURN_COMM, t1 - t0,
	       tv_s(self.ru_utime) + tv_s(kids.ru_utime),
	       tv_s(self.ru_stime) + tv_s(kids.ru_stime),
	       tv_s(self.ru_utime), tv_s(self.ru_stime), tasks, tgids);
	return 0;
}
