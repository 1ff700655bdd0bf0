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

#define CHILDREN 5000

static char rel[256], dir[4400];
static struct cgs_rollup *rollup;
static atomic_uint_fast64_t seen, ok, children, errors;
static pthread_mutex_t wrong_lock = PTHREAD_MUTEX_INITIALIZER;
static char wrong[8][400];
static int nwrong;

static void account(const struct cgs_record *rec, unsigned shard)
{
	if (!rec || rec->kind == CGS_KIND_TGID ||
	    strncmp(rec->comm, "cgsfa", 5))
		return;
	const char *path = NULL;
	if (cgs_rollup_account(rollup, shard, rec, &path) < 0) {
		atomic_fetch_add(&errors, 1);
		return;
	}
	atomic_fetch_add(&seen, 1);
	if (!strcmp(rec->comm, "cgsfa-child"))
		atomic_fetch_add(&children, 1);
	if (path && !strcmp(path, rel)) {
		atomic_fetch_add(&ok, 1);
		return;
	}
	pthread_mutex_lock(&wrong_lock);
	if (nwrong < 8)
		snprintf(wrong[nwrong++], sizeof(wrong[0]),
			 "%s pid %u tgid %u ppid %u -> %s", rec->comm, rec->pid,
			 rec->tgid, rec->ppid, path ? path : "(null)");
	pthread_mutex_unlock(&wrong_lock);
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
	pid_t w = fork();
	if (w < 0) {
		perror("fork");
		return 1;
	}
	if (w == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(5);
		parent();
	}
	if (cgt_move(dir, w) < 0)
		return 1;
	close(go[0]);

	struct cgs_rollup_opts ro = {
		.sz = sizeof(ro),
		.shards = cgs_listener_shards(l),
		.flags = CGS_ROLLUP_TRACK_FORKS | CGS_ROLLUP_FAST_ATTRIBUTION,
		.attribution = CGS_ATTRIBUTION_PROC, /* the fallback's mode */
	};
	if ((rc = cgs_rollup_new(&rollup, &ro)) < 0) {
		fprintf(stderr, "rollup: %s\n", cgs_strerror(rc));
		return 1;
	}
	struct cgs_rollup_totals t0 = { .sz = sizeof(t0) };
	cgs_rollup_totals(rollup, &t0);
	if (!t0.fork_tracking) {
		fprintf(stderr, "FAIL: fork tracking unavailable as root "
			"(no proc connector?)\n");
		return 1;
	}
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
	cgt_sleep_ms(300);
	if ((rc = cgs_listener_stop(l)) < 0) {
		fprintf(stderr, "stop: %s\n", cgs_strerror(rc));
		return 1;
	}
	struct cgs_loss loss = { .sz = sizeof(loss) };
	cgs_listener_loss(l, CGS_ALL_SHARDS, &loss);
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	cgs_rollup_totals(rollup, &t);
	uint64_t n = atomic_load(&seen), good = atomic_load(&ok);
	uint64_t kids = atomic_load(&children);
	uint64_t want = CHILDREN + 2; /* children, the thread, the parent */
	double rate = n ? 100.0 * (double)good / (double)n : 0;
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
	for (int i = 0; i < nwrong; i++)
		printf("misattributed: %s\n", wrong[i]);
	int fail = 0;
	if (loss.dropped || atomic_load(&errors) || n < want * 99 / 100) {
		fprintf(stderr, "FAIL: records lost or refused\n");
		fail = 1;
	}
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
