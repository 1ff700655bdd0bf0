/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fast attribution (CGS_ROLLUP_FAST_ATTRIBUTION) against the real kernel:
 * in a fresh cgroup2 cgroup (<mnt>/cgs-fast-<pid>) a parent, resolved once
 * through the exit of one of its threads, forks CHILDREN children that
 * exit at once and are reaped at once (process churn). A real listener
 * feeds a rollup with fork tracking and fast attribution. Asserts >= 99.9 %
 * of the children's exits in the cgroup, most of them through the fork
 * parent (via_fork_parent) and far fewer /proc reads than children. Only
 * records whose comm starts with "cgsfa" are accounted. Skips (77) only
 * without taskstats, CAP_NET_ADMIN or cgroup2.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/cgtest.h"
#include "support/clock.h"
#include "support/pipeline.h"
#include "support/skip.h"
#include "support/tally.h"

#define CHILDREN 5000

static char rel[256], dir[4400];
static struct cgs_rollup *rollup;
static struct cgt_tally tally = CGT_TALLY_INIT;
static atomic_uint_fast64_t children;

static void account(const struct cgs_record *rec, unsigned shard)
{
	if (!rec || rec->kind == CGS_KIND_TGID ||
	    strncmp(rec->comm, "cgsfa", 5))
		return;
	if (cgt_tally_account(&tally, rollup, shard, rec, rel) == 0 &&
	    !strcmp(rec->comm, "cgsfa-child"))
		atomic_fetch_add(&children, 1);
}

static int on_exit_event(const struct cgs_exit *ev, void *user)
{
	(void)user;
	account(ev->task, ev->shard);
	return 0;
}

static void name(const char *n)
{
	prctl(PR_SET_NAME, n, 0, 0, 0);
}

static void *short_thread(void *arg)
{
	name("cgsfa-thread");
	return arg;
}

/* The parent: one thread exit (resolves it through /proc), then churn. */
static void parent(void)
{
	name("cgsfa-parent");
	pthread_t th;
	if (pthread_create(&th, NULL, short_thread, NULL))
		_exit(4);
	pthread_join(th, NULL);
	cgt_sleep_ms(100); /* the collector has resolved us by now */
	for (int i = 0; i < CHILDREN; i++) {
		pid_t p = fork();
		if (p < 0)
			_exit(3);
		if (p == 0) {
			name("cgsfa-child");
			_exit(0);
		}
		while (waitpid(p, NULL, 0) < 0)
			if (errno != EINTR)
				_exit(3);
	}
	_exit(0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	cgt_require_cgroup2();
	struct cgs_listener *l = NULL;
	int rc = cgt_listener_open(&l, 64u << 20);
	if (rc)
		return rc;
	snprintf(rel, sizeof(rel), "/cgs-fast-%d", (int)getpid());
	if (cgt_mkdir(rel, dir, sizeof(dir)) < 0)
		return 1;

	/* the parent: forked while we are single-threaded, waits for go */
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0) {
		perror("pipe");
		return 1;
	}
	pid_t w = cgt_fork_held(go, dir, parent);
	if (w < 0)
		return 1;
	close(go[0]);

	if (cgt_forks_rollup_open(&rollup, l, CGS_ROLLUP_FAST_ATTRIBUTION,
				  NULL))
		return 1;
	if ((rc = cgs_listener_run(l, on_exit_event, NULL, NULL)) < 0) {
		fprintf(stderr, "run: %s\n", cgs_strerror(rc));
		return 1;
	}
	if (write(go[1], "g", 1) != 1) {
		perror("go");
		return 1;
	}
	close(go[1]);
	int status = 0;
	while (waitpid(w, &status, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			return 1;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "parent failed (status %#x)\n", status);
		return 1;
	}
	struct cgs_loss loss;
	if (cgt_listener_drain(l, 300, &loss))
		return 1;
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	cgs_rollup_get_totals(rollup, &t);
	uint64_t n = atomic_load(&tally.seen), good = atomic_load(&tally.ok);
	uint64_t kids = atomic_load(&children);
	uint64_t want = CHILDREN + 2; /* children, the thread, the parent */
	double rate = cgt_tally_rate(&tally);
	printf("records %llu of %llu expected (children %llu), in %s: %llu "
	       "(%.3f %%)\n",
	       (unsigned long long)n, (unsigned long long)want,
	       (unsigned long long)kids, rel, (unsigned long long)good, rate);
	printf("via fork_parent %llu cache %llu proc %llu parent %llu "
	       "ancestor %llu; proc reads %llu; fork events %llu drops %llu; "
	       "taskstats drops %llu\n",
	       (unsigned long long)t.via_fork_parent,
	       (unsigned long long)t.via_cache, (unsigned long long)t.via_proc,
	       (unsigned long long)t.via_parent,
	       (unsigned long long)t.via_ancestor,
	       (unsigned long long)t.proc_reads,
	       (unsigned long long)t.fork_events,
	       (unsigned long long)t.fork_drops,
	       (unsigned long long)loss.dropped);
	int fail = cgt_tally_report(&tally, loss.dropped, want);
	if (rate < 99.9) {
		fprintf(stderr, "FAIL: attribution %.3f %% < 99.9 %%\n", rate);
		fail = 1;
	}
	/* most children through their parent: nothing else is accounted by
	 * this rollup, so its /proc reads are ours (the parent's, once per
	 * shard per second; children whose fork event was not trusted) */
	if (t.via_fork_parent < kids * 9 / 10 ||
	    t.proc_reads > kids / 10) {
		fprintf(stderr, "FAIL: via_fork_parent %llu of %llu children, "
			"%llu /proc reads\n",
			(unsigned long long)t.via_fork_parent,
			(unsigned long long)kids,
			(unsigned long long)t.proc_reads);
		fail = 1;
	}
	if (t.fork_drops) {
		fprintf(stderr, "FAIL: %llu fork events lost\n",
			(unsigned long long)t.fork_drops);
		fail = 1;
	}
	cgs_listener_close(l);
	cgs_rollup_free(rollup);
	printf("%s\n", fail ? "FAILED" : "OK");
	return fail;
}
