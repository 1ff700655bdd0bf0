/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro_features: what issue 11's per-cgroup features (exit outcomes,
 * histograms, top commands) cost per record on the collector's path:
 * decode + attribution by the kernel source + rollup, on real exits.
 *
 * N children (processes named after 8 commands, exiting with varied
 * codes, a few killed by a signal) exit while nothing is read; once the
 * kernel source has every entry, each shard is drained and every message
 * goes through cgsb_feed(): cgs_decode_msg() (CGS_DECODE_REUSE, as the
 * listener does) then cgs_rollup_add() of its records. So the
 * kernel-source join always finds its entry (no waiting), as in a
 * collector that keeps up.
 *
 *   -m off   no histograms, no command summaries (the outcomes are always on)
 *   -m on    CGS_ROLLUP_HISTOGRAMS and comms = 64 (the collector's --comms)
 *   -n N     children (default 2000)
 *   -t       the children are threads of one process, not processes
 *   -s       synthetic: no listener, no kernel source; N decoded records
 *            (8 commands, varied statuses, process kind unless -t) are
 *            accounted to a fixed cgroup path by cgsb_feed_path()
 *            (cgs_rollup_account_path: the rollup alone, deterministic:
 *            what the features add, whatever the attribution)
 *
 * Prints one JSON line: records fed, ns per record (one pass: noisy on a
 * shared host; run it several times), and the attribution counters (a
 * record the kernel source missed would take the /proc path: shown).
 * Instructions: run it under `valgrind --tool=callgrind
 * --toggle-collect=cgsb_feed` at two N and take the difference per record
 * (bench/run-micro.sh does). Needs root (taskstats, BPF).
 */
/* built against libcgstats 1.0 too (the baseline): the 1.0 calls, kept
 * in 1.3 as deprecated wrappers (<cgstats/deprecated.h>) */
#define CGS_NO_DEPRECATION_WARNINGS
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgstats.h"
#include "micro_common.h"

#define MAXSH 64

struct msg {
	size_t len;
	unsigned shard;
	unsigned char *p;
};

static struct msg *msgs;
static size_t nmsgs, capmsgs;

/* Ours: pids forked by the workload (procs) or its process (threads);
 * the rest of the host's exits are not fed (they would bring their own
 * cgroups' first-time costs into the figure). */
static unsigned char ours[1u << 22];

static int keep(const struct cgs_exit *ev, void *u)
{
	(void)u;
	if (!ev->task || ev->task->tgid >= sizeof(ours) || !ours[ev->task->tgid])
		return 0;
	if (nmsgs == capmsgs) {
		capmsgs = capmsgs ? capmsgs * 2 : 4096;
		msgs = realloc(msgs, capmsgs * sizeof(*msgs));
		if (!msgs)
			abort();
	}
	struct msg *m = &msgs[nmsgs++];
	m->len = ev->raw_len;
	m->shard = ev->shard;
	m->p = malloc(ev->raw_len);
	if (!m->p)
		abort();
	memcpy(m->p, ev->raw, ev->raw_len);
	return 0;
}

static struct cgs_record task, group;
static uint64_t fed;

static inline void feed(struct cgs_rollup *r, const struct msg *m)
{
	int k = cgs_decode_msg(m->p, m->len, CGS_DECODE_REUSE, &task, &group,
			       NULL);
	if (k <= 0)
		return;
	if (k & CGS_DECODED_TASK) {
		cgs_rollup_add(r, m->shard, &task, NULL, NULL);
		fed++;
	}
	if (k & CGS_DECODED_GROUP)
		cgs_rollup_add(r, m->shard, &group, NULL, NULL);
}

/* The measured path: decode + attribution + rollup of one message (not
 * static: callgrind toggles collection on its name). */
void cgsb_feed(struct cgs_rollup *r, const struct msg *m);
__attribute__((noinline)) void cgsb_feed(struct cgs_rollup *r,
					 const struct msg *m)
{
	feed(r, m);
}

/* The same, not measured: the warm-up's (cgroup ids resolved, nodes and
 * their summaries made). */
__attribute__((noinline)) static void warm_feed(struct cgs_rollup *r,
						const struct msg *m)
{
	feed(r, m);
}

/* Run the workload, wait for every entry, keep what was received. */
static int run_and_keep(struct cgs_listener *l, unsigned nsh, int n,
			bool threads);

static const char *const names[8] = { "cc1", "make", "sh", "sed",
				       "python3", "ld", "as", "git" };

/* The rollup alone (-s): no attribution. */
void cgsb_feed_path(struct cgs_rollup *r, const struct cgs_record *rec);
__attribute__((noinline)) void cgsb_feed_path(struct cgs_rollup *r,
					      const struct cgs_record *rec)
{
	static const struct cgs_add_opts o = {
		.sz = sizeof(o), .path = "/bench.slice/x.service" };
	cgs_rollup_add(r, 0, rec, &o, NULL);
	fed++;
}

static int synthetic(int n, bool on, bool threads)
{
	CGS_OPTS(cgs_rollup_opts, ro, .shards = 1,
		 .attribution = CGS_ATTRIBUTION_PROC);
#ifdef CGS_ROLLUP_HISTOGRAMS
	ro.flags = on ? CGS_ROLLUP_HISTOGRAMS : 0;
	ro.comms = on ? 64 : 0;
#endif
	struct cgs_rollup *r = NULL;
	int rc = cgs_rollup_new(&r, &ro);
	if (rc < 0) {
		fprintf(stderr, "rollup: %s\n", cgs_strerror(rc));
		return 1;
	}
	uint8_t msg[CGSB_MSG_MAX];
	struct cgsb_msg_spec sp = { .version = 16, .pid = 4000, .tgid = 4000,
				    .ppid = 1, .btime_s = 1700000000,
				    .flag = threads ? 0 : CGS_AC_AGROUP };
	size_t len = cgsb_build_msg(msg, sizeof(msg), &sp);
	CGS_OPTS(cgs_record, rec);
	if (cgs_decode_msg(msg, len, CGS_NO_TGID, &rec, NULL, NULL) <= 0) {
		fprintf(stderr, "decode failed\n");
		return 1;
	}
	struct cgs_record *v = calloc((size_t)n, sizeof(*v));
	if (!v)
		return 1;
	for (int i = 0; i < n; i++) {
		v[i] = rec;
		v[i].pid = 4000 + (uint32_t)i;
		v[i].tgid = threads ? 4000 : v[i].pid;
		snprintf(v[i].comm, sizeof(v[i].comm), "%s", names[i % 8]);
		v[i].exit_status = i % 50 == 7 ? 9 : i % 10 == 3 ? 2 << 8 : 0;
		v[i].etime_us = 1000u + (uint64_t)i * 37u;
		v[i].utime_us = (uint64_t)(i % 100) * 13u;
	}
	for (int i = 0; i < 64 && i < n; i++) /* warm: the node, its sets */
		cgs_rollup_add(r, 0, &v[i],
			       &(struct cgs_add_opts){ .sz = sizeof(struct cgs_add_opts),
						       .path = "/bench.slice/x.service" },
			       NULL);
	double t0 = cgsb_now();
	for (int i = 0; i < n; i++)
		cgs_rollup_add(r, 0, &v[i],
			       &(struct cgs_add_opts){ .sz = sizeof(struct cgs_add_opts),
						       .path = "/bench.slice/x.service" },
			       NULL);
	double t1 = cgsb_now();
	double ns[1] = { (t1 - t0) * 1e9 / (double)n };
	char extra[160];
	snprintf(extra, sizeof(extra), "\"mode\":\"%s\",\"workload\":\"%s\","
		 "\"records\":%llu", on ? "on" : "off",
		 threads ? "threads" : "procs", (unsigned long long)fed);
	cgsb_report("micro_features", "synthetic", n, ns, 1, n, extra);
	free(v);
	cgs_rollup_free(r);
	return 0;
}

static void *thread_exit(void *a)
{
	(void)a;
	return NULL;
}


static int workload(int n, bool threads)
{
	/* one CPU: every entry lands in one ring in exit order, so each
	 * record finds its entry at the ring's head (the common case of a
	 * collector that keeps up; spread over CPUs the join's path, and
	 * its cost, vary from run to run) */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	if (threads) {
		pid_t p = fork();
		if (p > 0 && (size_t)p < sizeof(ours))
			ours[p] = 1;
		if (p == 0) {
			prctl(PR_SET_NAME, "cgsb-threads");
			for (int i = 0; i < n; i++) {
				pthread_t t;
				if (pthread_create(&t, NULL, thread_exit, NULL))
					_exit(1);
				pthread_join(t, NULL);
			}
			_exit(0);
		}
		return p > 0 && waitpid(p, NULL, 0) == p ? 0 : -1;
	}
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			return -1;
		if ((size_t)p < sizeof(ours))
			ours[p] = 1;
		if (p == 0) {
			prctl(PR_SET_NAME, names[i % 8]);
			if (i % 50 == 7)
				raise(SIGKILL);
			_exit(i % 10 == 3 ? 2 : 0);
		}
		waitpid(p, NULL, 0);
	}
	return 0;
}

static int run_and_keep(struct cgs_listener *l, unsigned nsh, int n,
			bool threads)
{
	for (size_t i = 0; i < nmsgs; i++)
		free(msgs[i].p);
	nmsgs = 0;
	if (workload(n, threads) < 0) {
		fprintf(stderr, "workload failed\n");
		return -1;
	}
	usleep(300000); /* every entry published */
	for (unsigned s = 0; s < nsh; s++)
		while (cgs_listener_drain(l, s, keep, NULL) > 0)
			;
	return 0;
}

int main(int argc, char **argv)
{
	int n = 2000, opt;
	bool on = false, threads = false, synth = false;
	while ((opt = getopt(argc, argv, "m:n:ts")) != -1) {
		switch (opt) {
		case 'm': on = !strcmp(optarg, "on"); break;
		case 'n': n = atoi(optarg); break;
		case 't': threads = true; break;
		case 's': synth = true; break;
		default:
			fprintf(stderr, "usage: %s [-m off|on] [-n N] [-t] [-s]\n", argv[0]);
			return 2;
		}
	}
#ifndef CGS_ROLLUP_HISTOGRAMS
	if (on) {
		fprintf(stderr, "-m on: this libcgstats has no such features\n");
		return 2;
	}
#endif
	if (synth)
		return synthetic(n, on, threads);
	CGS_OPTS(cgs_listener_opts, lo, .rcvbuf = 64u << 20);
	struct cgs_listener *l = NULL;
	int rc = cgs_listener_open(&l, &lo);
	if (rc < 0) {
		fprintf(stderr, "listener: %s\n", cgs_strerror(rc));
		return 1;
	}
	unsigned nsh = cgs_listener_shards(l);
	const char *cpus[MAXSH];
	for (unsigned i = 0; i < nsh && i < MAXSH; i++)
		cpus[i] = cgs_listener_shard_cpus(l, i);
	CGS_OPTS(cgs_rollup_opts, ro, .shards = nsh, .shard_cpus = cpus,
		 .attribution = CGS_ATTRIBUTION_KERNEL);
#ifdef CGS_ROLLUP_HISTOGRAMS
	ro.flags = on ? CGS_ROLLUP_HISTOGRAMS : 0;
	ro.comms = on ? 64 : 0;
#else /* built against libcgstats 1.0 (the baseline): nothing to turn on */
	if (on) {
		fprintf(stderr, "-m on: this libcgstats has no such features\n");
		return 2;
	}
#endif
	struct cgs_rollup *r = NULL;
	char why[320] = "";
	ro.errbuf = why;
	ro.errbuf_len = sizeof(why);
	if ((rc = cgs_rollup_new(&r, &ro)) < 0) {
		fprintf(stderr, "rollup: %s %s\n", cgs_strerror(rc), why);
		return 1;
	}
	task.sz = group.sz = sizeof(task);
	/* warm-up: the same workload once, fed outside the measurement */
	if (run_and_keep(l, nsh, 200, threads) < 0)
		return 1;
	for (size_t i = 0; i < nmsgs; i++)
		warm_feed(r, &msgs[i]);
	fed = 0;
	if (run_and_keep(l, nsh, n, threads) < 0)
		return 1;
	double t0 = cgsb_now();
	for (size_t i = 0; i < nmsgs; i++)
		cgsb_feed(r, &msgs[i]);
	double t1 = cgsb_now();
	CGS_OPTS(cgs_rollup_totals, t);
	cgs_rollup_get_totals(r, &t);
	double ns[1] = { (t1 - t0) * 1e9 / (double)(fed ? fed : 1) };
	char extra[512];
	snprintf(extra, sizeof(extra),
		 "\"mode\":\"%s\",\"workload\":\"%s\",\"messages\":%zu,"
		 "\"records\":%llu,\"via_kernel\":%llu,\"kernel_unmatched\":%llu,"
		 "\"kernel_waits\":%llu,\"shards\":%u",
		 on ? "on" : "off", threads ? "threads" : "procs", nmsgs,
		 (unsigned long long)fed, (unsigned long long)t.via_kernel,
		 (unsigned long long)t.kernel_unmatched,
		 (unsigned long long)t.kernel_waits, nsh);
	cgsb_report("micro_features", "kernel", n, ns, 1, (long)fed, extra);
	cgs_rollup_free(r);
	cgs_listener_close(l);
	return 0;
}
