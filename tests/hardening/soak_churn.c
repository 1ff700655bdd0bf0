/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Churn driver of the soak test: as many task exits per second as the
 * machine sustains, for a fixed time, counted exactly.
 *
 *   soak_churn SECONDS [SPAWNERS [THREADS_PER_FORK]]
 *
 * Forks SPAWNERS processes (default: one per online CPU); each loops until
 * the deadline creating and joining THREADS_PER_FORK threads (default 4),
 * then forking a child that exits at once and reaping it. At the end it
 * prints one JSON line with what it caused:
 *   tasks      task exit records the kernel sends: every thread, every
 *              forked child, every spawner and this process itself
 *   processes  process exits among them (children, spawners, this one)
 * Exit status 0, or 1 if anything failed (then the counts are void).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct counts {
	_Atomic uint64_t threads, forks, failures;
};

static void *noop(void *arg)
{
	return arg;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spawner(struct counts *c, double deadline, unsigned tpf)
{
	uint64_t threads = 0, forks = 0, failures = 0;

	while (now_s() < deadline) {
		for (unsigned i = 0; i < tpf; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, noop, NULL) ||
			    pthread_join(t, NULL)) {
				failures++;
				continue;
			}
			threads++;
		}
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0) {
			failures++;
			continue;
		}
		forks++;
	}
	atomic_fetch_add(&c->threads, threads);
	atomic_fetch_add(&c->forks, forks);
	atomic_fetch_add(&c->failures, failures);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SECONDS [SPAWNERS [THREADS_PER_FORK]]\n",
			argv[0]);
		return 2;
	}
	double secs = atof(argv[1]);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nsp = argc > 2 ? (unsigned)atoi(argv[2])
				: (unsigned)(ncpu > 0 ? ncpu : 1);
	unsigned tpf = argc > 3 ? (unsigned)atoi(argv[3]) : 4;
	struct counts *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED || secs <= 0 || !nsp) {
		perror("soak_churn");
		return 1;
	}
	double t0 = now_s(), deadline = t0 + secs;
	unsigned started = 0;
	int failed = 0;

	for (unsigned i = 0; i < nsp; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			spawner(c, deadline, tpf);
			_exit(0);
		}
		if (pid < 0)
			failed = 1;
		else
			started++;
	}
	for (unsigned i = 0; i < started; i++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			failed = 1;
	}
	double el = now_s() - t0;
	uint64_t th = atomic_load(&c->threads), fk = atomic_load(&c->forks);
	uint64_t tasks = th + fk + started + 1, procs = fk + started + 1;

	printf("{\"seconds\":%.3f,\"spawners\":%u,\"threads_per_fork\":%u,"
	       "\"threads\":%llu,\"forks\":%llu,\"failures\":%llu,"
	       "\"tasks\":%llu,\"processes\":%llu,\"tasks_per_s\":%.0f}\n",
	       el, started, tpf, (unsigned long long)th,
	       (unsigned long long)fk,
	       (unsigned long long)atomic_load(&c->failures),
	       (unsigned long long)tasks, (unsigned long long)procs,
	       (double)tasks / el);
	fflush(stdout);
	return failed || atomic_load(&c->failures) ? 1 : 0;
}
