// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * agent-defaults: the smallest agent, wired the way include/cgstats.h
 * documents it, with every default. It prints each cgroup's exit records
 * (self) every INTERVAL seconds, and once more after it stopped, until
 * SIGINT or SIGTERM, or for SECONDS.
 *
 *	agent-defaults [-c CPULIST] [-L] [-i INTERVAL] [-t SECONDS]
 *
 * -c only sets the listener's cpulist (the rollup keeps its defaults); -L
 * makes the rollup for the listener (cgs_rollup_opts.listener). Its
 * output is one "tasks<TAB>path" line per cgroup and an empty line per
 * snapshot, then "refused N" and "dropped N". tests/collector (agent_defaults)
 * runs it against a workload in its own cgroup.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cgstats.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void print(struct cgs_rollup *r)
{
	struct cgs_snapshot *s;
	if (cgs_rollup_snapshot(r, NULL, &s) < 0)
		return;
	for (size_t i = 0; i < cgs_snapshot_count(s); i++) {
		const struct cgs_cgroup_stats *g = cgs_snapshot_get_cgroup(s, i);
		printf("%llu\t%s\n", (unsigned long long)g->self->tasks,
		       g->path);
	}
	printf("\n");
	fflush(stdout);
	cgs_snapshot_free(s);
	/* removed cgroups, once in a snapshot, are forgotten */
	cgs_rollup_retire_removed(r);
}

int main(int argc, char **argv)
{
	CGS_OPTS(cgs_listener_opts, lo);
	unsigned interval = 2, seconds = 0;
	bool for_listener = false;
	int opt;
	while ((opt = getopt(argc, argv, "c:Li:t:")) != -1) {
		if (opt == 'c')
			lo.cpus = optarg;
		else if (opt == 'L')
			for_listener = true;
		else if (opt == 'i')
			interval = (unsigned)atoi(optarg);
		else if (opt == 't')
			seconds = (unsigned)atoi(optarg);
		else
			return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	struct cgs_listener *l;
	struct cgs_rollup *r;
	int rc = cgs_listener_open(&l, lo.cpus ? &lo : NULL);
	if (rc < 0) {
		fprintf(stderr, "cgs_listener_open: %s\n", strerror(-rc));
		return 1;
	}
	CGS_OPTS(cgs_rollup_opts, ro, .listener = l);
	/* the /proc fallback wants records while their parents live: a
	 * 1 ms batch wait; the kernel source the adaptive one (0) */
	CGS_OPTS(cgs_run_opts, run);
	if ((rc = cgs_rollup_new(&r, for_listener ? &ro : NULL)) == 0 &&
	    cgs_rollup_attribution(r) != CGS_ATTRIBUTION_KERNEL)
		run.batch_ms = 1;
	if (rc < 0 ||
	    (rc = cgs_listener_run(l, cgs_rollup_account_exit, r, &run)) < 0) {
		fprintf(stderr, "agent: %s\n", strerror(-rc));
		return 1;
	}
	fprintf(stderr, "ready: %u listener shards, source %s\n",
		cgs_listener_shards(l),
		cgs_rollup_attribution(r) == CGS_ATTRIBUTION_KERNEL ? "kernel"
								     : "proc");
	time_t end = seconds ? time(NULL) + seconds : 0;
	while (!stop && (!end || time(NULL) < end)) {
		for (unsigned t = 0; t < interval * 10 && !stop; t++)
			usleep(100000);
		print(r);
	}
	cgs_listener_stop(l); /* drains what is queued */
	print(r);

	CGS_OPTS(cgs_rollup_totals, t);
	CGS_OPTS(cgs_loss, loss);
	cgs_rollup_get_totals(r, &t);
	cgs_listener_get_loss(l, CGS_ALL_SHARDS, &loss);
	printf("refused %llu\ndropped %llu\ndiscarded %llu\n",
	       (unsigned long long)t.refused, (unsigned long long)loss.dropped,
	       (unsigned long long)loss.discarded);
	cgs_rollup_free(r);
	cgs_listener_close(l);
	return 0;
}
