/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro_shards: does the per-record work scale with receive shards?
 * Each thread plays one listener shard: it decodes synthetic v16 thread-exit
 * messages and accounts them into its own shard of one rollup (attribution
 * included: the records belong to a real process in a depth-3 cgroup), the
 * way cgs_listener_run's threads feed a collector. 1 thread on a 1-shard
 * rollup vs 2 threads on a 2-shard rollup, the same records per thread,
 * interleaved over REPS rounds; throughput = all records / wall time.
 * On a shared machine the second thread may not get a core of its own, so
 * each thread's CPU time is measured too: 2 x (CPU ns/record with one
 * thread) / (CPU ns/record with two) is the speedup two free cores would
 * give, and it exposes contention (shared cache lines, locks that spin)
 * even when the wall clock can't.
 *
 * usage: micro_shards [-i RECORDS_PER_THREAD] [-r REPS] [-c pipeline|path]
 *                     [-P (don't pin threads to CPUs)]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgstats.h"
#include "micro_common.h"

#define NMSG 64

static long iters = 2000000;
static int reps = 7, pin = 1, use_path;
static uint8_t msgs[NMSG][CGSB_MSG_MAX];
static size_t lens[NMSG];
static const char *cg_path;

struct worker {
	pthread_t th;
	struct cgs_rollup *ru;
	unsigned shard;
	pthread_barrier_t *start;
	double t_end;
	double cpu_s; /* thread CPU time of the timed loop */
} __attribute__((aligned(64)));

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	CGS_OPTS(cgs_decode_stats, ds);
	CGS_OPTS(cgs_record, task);
	CGS_OPTS(cgs_record, group);
	CGS_OPTS(cgs_add_opts, given, .path = cg_path);

	if (pin) {
		cpu_set_t set;
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		CPU_ZERO(&set);
		CPU_SET((int)(w->shard % (unsigned)(ncpu > 0 ? ncpu : 1)),
			&set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	/* First record reads /proc: keep it out of the timed part. */
	cgs_decode_msg(msgs[0], lens[0], 0, &task, &group, &ds);
	cgs_rollup_add(w->ru, w->shard, &task, NULL, NULL);
	pthread_barrier_wait(w->start);
	double c0 = thread_cpu_s();
	for (long i = 0; i < iters; i++) {
		unsigned k = (unsigned)i & (NMSG - 1);

		cgs_decode_msg(msgs[k], lens[k], 0, &task, &group, &ds);
		if (use_path)
			cgs_rollup_add(w->ru, w->shard, &task, &given, NULL);
		else
			cgs_rollup_add(w->ru, w->shard, &task, NULL, NULL);
	}
	w->t_end = cgsb_now();
	w->cpu_s = thread_cpu_s() - c0;
	return NULL;
}

/* Records per second with n threads on an n-shard rollup; *cpu_ns gets the
 * CPU ns per record summed over the threads. */
static double run(unsigned n, struct cgs_rollup_totals *t, double *cpu_ns)
{
	struct cgs_rollup_opts ro = { .sz = sizeof(ro), .shards = n,
				      .hierarchy = "v2" };
	struct worker w[2];
	pthread_barrier_t start;
	struct cgs_rollup *ru = NULL;
	double t0, t1 = 0, cpu = 0;

	if (cgs_rollup_new(&ru, &ro) < 0)
		return -1;
	pthread_barrier_init(&start, NULL, n + 1);
	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct worker){ .ru = ru, .shard = i, .start = &start };
		pthread_create(&w[i].th, NULL, work, &w[i]);
	}
	pthread_barrier_wait(&start);
	t0 = cgsb_now();
	for (unsigned i = 0; i < n; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].t_end > t1)
			t1 = w[i].t_end;
		cpu += w[i].cpu_s;
	}
	*cpu_ns = cpu * 1e9 / ((double)iters * n);
	pthread_barrier_destroy(&start);
	t->sz = sizeof(*t);
	cgs_rollup_get_totals(ru, t);
	cgs_rollup_free(ru);
	return (double)iters * n / (t1 - t0);
}

int main(int argc, char **argv)
{
	CGS_OPTS(cgs_rollup_totals, t1);
	CGS_OPTS(cgs_rollup_totals, t2);
	double r1[64], r2[64], ns1[64], ns2[64], c1[64], c2[64], m1, m2;
	double cm1, cm2;
	struct cgsb_cgchain c;
	char extra[512];
	int opt, err;

	while ((opt = getopt(argc, argv, "i:r:c:P")) != -1) {
		switch (opt) {
		case 'i': iters = atol(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 'c': use_path = !strcmp(optarg, "path"); break;
		case 'P': pin = 0; break;
		default:
			fprintf(stderr, "usage: micro_shards [-i N] [-r REPS] "
					"[-c pipeline|path] [-P]\n");
			return 2;
		}
	}
	if (iters < 1 || reps < 1)
		return 2;
	if (reps > 64)
		reps = 64;
	err = cgsb_cgchain_make(&c, "shards", 3);
	if (err < 0) {
		fprintf(stderr, "micro_shards: cgroup chain: %s\n",
			strerror(-err));
		cgsb_cgchain_destroy(&c);
		return 1;
	}
	cg_path = c.cg_path;
	for (int i = 0; i < NMSG; i++) {
		struct cgsb_msg_spec s = {
			.version = 16, .pid = (uint32_t)c.child + 1 + (uint32_t)i,
			.tgid = (uint32_t)c.child, .ppid = (uint32_t)getpid(),
			.btime_s = c.child_btime_s,
		};
		lens[i] = cgsb_build_msg(msgs[i], sizeof(msgs[i]), &s);
	}
	/* Interleave 1 and 2 so drifting background load hits both. */
	for (int r = 0; r < reps; r++) {
		r1[r] = run(1, &t1, &c1[r]);
		r2[r] = run(2, &t2, &c2[r]);
		ns1[r] = 1e9 / r1[r];
		ns2[r] = 1e9 / r2[r];
	}
	cgsb_cgchain_destroy(&c);
	m1 = cgsb_median(r1, reps);
	m2 = cgsb_median(r2, reps);
	cm1 = cgsb_median(c1, reps);
	cm2 = cgsb_median(c2, reps);
	snprintf(extra, sizeof(extra),
		 "\"records_per_s\":%.0f,\"cpu_ns_per_record\":%.2f,"
		 "\"unattributed\":%llu,"
		 "\"via_cache\":%llu,\"via_proc\":%llu,\"pinned\":%s",
		 m1, cm1, (unsigned long long)t1.unattributed,
		 (unsigned long long)t1.via_cache,
		 (unsigned long long)t1.via_proc, pin ? "true" : "false");
	cgsb_report("shards", use_path ? "path" : "pipeline", 1, ns1, reps,
		    iters, extra);
	snprintf(extra, sizeof(extra),
		 "\"records_per_s\":%.0f,\"speedup\":%.3f,"
		 "\"cpu_ns_per_record\":%.2f,\"cpu_speedup\":%.3f,"
		 "\"unattributed\":%llu,"
		 "\"via_cache\":%llu,\"via_proc\":%llu,\"pinned\":%s",
		 m2, m2 / m1, cm2, 2 * cm1 / cm2, (unsigned long long)t2.unattributed,
		 (unsigned long long)t2.via_cache,
		 (unsigned long long)t2.via_proc, pin ? "true" : "false");
	cgsb_report("shards", use_path ? "path" : "pipeline", 2, ns2, reps,
		    iters, extra);
	return 0;
}
