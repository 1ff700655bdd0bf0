/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgs-top: a minimal monitoring agent on libcgstats. Every N seconds it
 * prints the cgroups whose exited tasks used the most CPU in that interval.
 *
 *   cgs-top [SECONDS [ROWS]]      (root or CAP_NET_ADMIN; Ctrl-C stops)
 *
 * Build: with the project (examples/CMakeLists.txt), or against the
 * installed library: make -C examples  (pkg-config libcgstats).
 *
 * scripts/abi-check builds it against the header of every release since
 * 1.0.0 and runs it against the library just built: so it calls the 1.0
 * names (later deprecated, kept: <cgstats/deprecated.h>).
 */
#define CGS_NO_DEPRECATION_WARNINGS
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cgstats.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Called on each listener shard's own thread: account into that shard. */
static int on_exit_event(const struct cgs_exit *ev, void *user)
{
	struct cgs_rollup *r = user;
	if (ev->task)
		cgs_rollup_account(r, ev->shard, ev->task, NULL);
	if (ev->group)
		cgs_rollup_account(r, ev->shard, ev->group, NULL);
	return 0;
}

static uint64_t cpu_us(const struct cgs_counters *c)
{
	return c->utime_us + c->stime_us;
}

static int by_cpu(const void *a, const void *b)
{
	const struct cgs_cgroup_stats *x = *(const struct cgs_cgroup_stats *const *)a;
	const struct cgs_cgroup_stats *y = *(const struct cgs_cgroup_stats *const *)b;
	uint64_t cx = cpu_us(x->self_delta), cy = cpu_us(y->self_delta);
	return cx == cy ? 0 : cx > cy ? -1 : 1;
}

static void report(struct cgs_rollup *r, struct cgs_listener *l, int rows)
{
	struct cgs_snapshot *s;
	CGS_OPTS(cgs_loss, loss);
	int err = cgs_rollup_snapshot(r, NULL, &s);
	if (err < 0) {
		fprintf(stderr, "snapshot: %s\n", cgs_strerror(err));
		return;
	}
	cgs_listener_loss(l, CGS_ALL_SHARDS, &loss);
	size_t n = cgs_snapshot_count(s);
	const struct cgs_cgroup_stats **v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		cgs_snapshot_free(s);
		return;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = cgs_snapshot_get(s, i);
	qsort(v, n, sizeof(*v), by_cpu);

	time_t now = time(NULL);
	char ts[32];
	strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
	const struct cgs_rollup_totals *t = cgs_snapshot_totals(s);
	printf("%s  exits %llu  dropped %llu  unattributed %llu\n", ts,
	       (unsigned long long)t->records,
	       (unsigned long long)loss.dropped,
	       (unsigned long long)t->unattributed);
	printf("%10s %8s  %s\n", "CPU_S", "EXITS", "CGROUP");
	for (size_t i = 0; i < n && (int)i < rows; i++) {
		uint64_t us = cpu_us(v[i]->self_delta);
		if (!us && !v[i]->self_delta->tasks)
			break;
		printf("%6llu.%03llu %8llu  %s\n",
		       (unsigned long long)(us / 1000000),
		       (unsigned long long)(us % 1000000 / 1000),
		       (unsigned long long)v[i]->self_delta->tasks, v[i]->path);
	}
	putchar('\n');
	fflush(stdout);
	free(v);
	cgs_snapshot_free(s);
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 5;
	int rows = argc > 2 ? atoi(argv[2]) : 10;
	struct cgs_listener *l = NULL;
	struct cgs_rollup *r = NULL;
	int err;

	if (secs <= 0 || rows <= 0) {
		fprintf(stderr, "usage: %s [SECONDS [ROWS]]\n", argv[0]);
		return 2;
	}
	err = cgs_listener_open(&l, NULL); /* all CPUs, default sharding */
	if (err < 0) {
		fprintf(stderr, "cgs-top: %s\n", cgs_strerror(err));
		return 1;
	}
	/* each CPU's kernel-side entries go to the shard reading its records */
	unsigned n = cgs_listener_shards(l);
	const char *cpus[n];
	for (unsigned i = 0; i < n; i++)
		cpus[i] = cgs_listener_shard_cpus(l, i);
	CGS_OPTS(cgs_rollup_opts, ro, .shards = n, .shard_cpus = cpus);
	err = cgs_rollup_new(&r, &ro);
	if (!err && cgs_rollup_attribution(r) != CGS_ATTRIBUTION_KERNEL)
		fprintf(stderr, "cgs-top: attribution from /proc: %s\n",
			cgs_rollup_kernel_error(r));
	if (!err)
		err = cgs_listener_selftest(l, 1000, on_exit_event, r);
	if (!err)
		err = cgs_listener_run(l, on_exit_event, r, NULL);
	if (err < 0) {
		fprintf(stderr, "cgs-top: %s\n", cgs_strerror(err));
		cgs_listener_close(l);
		cgs_rollup_free(r);
		return 1;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop) {
		struct timespec ts = { .tv_sec = secs };
		while (!stop && nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		if (!stop)
			report(r, l, rows);
	}
	cgs_listener_stop(l);
	report(r, l, rows);
	cgs_listener_close(l);
	cgs_rollup_free(r);
	return 0;
}
