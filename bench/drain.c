/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * drain: the floor any taskstats consumer pays. Opens a libcgstats listener
 * with its defaults, proves the path with the self-test, then runs the
 * receive threads with a callback that only counts. On SIGTERM/SIGINT it
 * stops (draining what is queued), and prints one JSON object with the
 * counts, the exact kernel drop counter and its own CPU time.
 *
 * Records whose comm equals --comm (default "cgs-churn", what bench/churn
 * names itself) are counted apart, so the harness can compare them with the
 * workload's expectation while the rest of the host keeps exiting too.
 *
 * usage: drain [--comm NAME] [--batch-ms MS] [--shards N] [--rcvbuf BYTES]
 *              [--no-tgid] [--pin]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cgstats.h"

#define MAX_SHARDS 64

/* One cache line per shard: receive threads never write shared lines. */
struct shard_count {
	uint64_t events, tasks, groups, match_tasks, match_groups;
} __attribute__((aligned(64)));

static struct shard_count counts[MAX_SHARDS];
static const char *match_comm = "cgs-churn";

static int on_exit_event(const struct cgs_exit *ev, void *user)
{
	struct shard_count *c = &counts[ev->shard % MAX_SHARDS];
	bool match;

	c->events++;
	if (!ev->task)
		return 0;
	c->tasks++;
	match = !strcmp(ev->task->comm, match_comm);
	c->match_tasks += match;
	if (ev->group) {
		c->groups++;
		/* The TGID aggregate has no comm: match it through the task
		 * record it came with. */
		c->match_groups += match;
	}
	return 0;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: drain [--comm NAME] [--batch-ms MS] "
			"[--shards N] [--rcvbuf BYTES] [--no-tgid] [--pin]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "comm", required_argument, NULL, 'c' },
		{ "batch-ms", required_argument, NULL, 'b' },
		{ "shards", required_argument, NULL, 's' },
		{ "rcvbuf", required_argument, NULL, 'r' },
		{ "no-tgid", no_argument, NULL, 'T' },
		{ "pin", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct cgs_listener_opts lo = { .sz = sizeof(lo) };
	struct cgs_run_opts ro = { .sz = sizeof(ro) }; /* library defaults */
	struct cgs_loss loss = { .sz = sizeof(loss) };
	struct shard_count sum = { 0 };
	struct cgs_listener *l = NULL;
	struct rusage ru;
	sigset_t set;
	int opt, err, sig;

	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (opt) {
		case 'c': match_comm = optarg; break;
		case 'b':
			ro.batch_ms = (unsigned)atoi(optarg);
			if (!ro.batch_ms)
				ro.batch_ms = CGS_RUN_NO_BATCH;
			break;
		case 's': lo.shards = (unsigned)atoi(optarg); break;
		case 'r': lo.rcvbuf = strtoull(optarg, NULL, 0); break;
		case 'T': lo.flags |= CGS_NO_TGID; break;
		case 'p': ro.pin = true; break;
		default: usage();
		}
	}

	/* Block before any thread exists so every receive thread inherits
	 * the mask and the signals come to sigwait below. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	err = cgs_listener_open(&l, &lo);
	if (err < 0) {
		fprintf(stderr, "drain: open: %s\n", cgs_strerror(err));
		return 1;
	}
	err = cgs_listener_selftest(l, 2000, on_exit_event, NULL);
	if (err < 0) {
		fprintf(stderr, "drain: selftest: %s\n", cgs_strerror(err));
		cgs_listener_close(l);
		return 1;
	}
	err = cgs_listener_run(l, on_exit_event, NULL, &ro);
	if (err < 0) {
		fprintf(stderr, "drain: run: %s\n", cgs_strerror(err));
		cgs_listener_close(l);
		return 1;
	}
	fprintf(stderr, "drain: ready shards=%u\n", cgs_listener_shards(l));

	sigwait(&set, &sig);
	cgs_listener_stop(l);
	err = cgs_listener_get_loss(l, CGS_ALL_SHARDS, &loss);
	for (unsigned i = 0; i < MAX_SHARDS; i++) {
		sum.events += counts[i].events;
		sum.tasks += counts[i].tasks;
		sum.groups += counts[i].groups;
		sum.match_tasks += counts[i].match_tasks;
		sum.match_groups += counts[i].match_groups;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"shards\":%u,\"events\":%llu,\"task_records\":%llu,"
	       "\"tgid_records\":%llu,\"match_task_records\":%llu,"
	       "\"match_tgid_records\":%llu,\"dropped\":%llu,\"enobufs\":%llu,"
	       "\"seq_gaps\":%llu,\"truncated\":%llu,\"malformed\":%llu,"
	       "\"loss_err\":%d,\"user_s\":%.6f,\"sys_s\":%.6f}\n",
	       cgs_listener_shards(l), (unsigned long long)sum.events,
	       (unsigned long long)sum.tasks, (unsigned long long)sum.groups,
	       (unsigned long long)sum.match_tasks,
	       (unsigned long long)sum.match_groups,
	       (unsigned long long)loss.dropped,
	       (unsigned long long)loss.enobufs,
	       (unsigned long long)loss.seq_gaps,
	       (unsigned long long)loss.truncated,
	       (unsigned long long)loss.malformed, err,
	       tv_s(ru.ru_utime), tv_s(ru.ru_stime));
	fflush(stdout);
	cgs_listener_close(l);
	return 0;
}
