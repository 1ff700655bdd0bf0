/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transient cgroups (a systemd scope per cron job, `docker run --rm`) with
 * the kernel source: 300 times, a cgroup is created, a child is born in it
 * by clone3(CLONE_INTO_CGROUP), exits, is reaped, and the cgroup is
 * removed, all before a single record is read. The library never saw the
 * directories (created after its walk, gone before their records): their
 * paths come from the kernel's cgroup_mkdir events. Every record must land
 * under its own cgroup's path, and each such cgroup must be shown removed.
 * Before them, a storm of V1_STORM cgroups made and removed in a cgroup v1
 * hierarchy (a hybrid host: systemd makes a unit's cgroup in each
 * controller's), more events than the kernel source's event ring holds:
 * they must not push the cgroup2 events out (filtered in the kernel).
 * Then a storm of V2_STORM cgroup2 cgroups, also with no record read in
 * between: the ring must be read while it lasts (the kernel source's
 * reader thread, woken by the BPF program when the ring fills; it starts
 * with the first record looked up, so one is read first, as a running
 * collector has), else the transient cgroups' events would find it full.
 *
 * Skips (77) without taskstats, CAP_NET_ADMIN, cgroup2, clone3, or where
 * the kernel source cannot load, saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/cgtest.h"
#include "support/pipeline.h"
#include "support/skip.h"

#define N 300
#define V1_STORM 4000 /* x 2 events; the ring holds ~3,900 */
#define V2_STORM 6000

static struct cgs_rollup *rollup;
static char base[256];
static uint64_t ours, ours_right;
static pid_t kids[N];

static int on_ev(const struct cgs_exit *ev, void *u)
{
	(void)u;
	const char *path = NULL;
	if (!ev->task ||
	    cgt_add(rollup, ev->shard, ev->task, &path, NULL) < 0)
		return 0;
	if (ev->group)
		cgs_rollup_add(rollup, ev->shard, ev->group, NULL, NULL);
	for (int i = 0; i < N; i++) {
		if (ev->task->pid != (uint32_t)kids[i])
			continue;
		char want[320];
		snprintf(want, sizeof(want), "%s/t%03d", base, i);
		ours++;
		ours_right += path && !strcmp(path, want);
		if (!path || strcmp(path, want))
			fprintf(stderr, "pid %d: %s, want %s\n", kids[i],
				path ? path : "(null)", want);
	}
	return 0;
}

/* Make and remove n cgroups under top (no record read meanwhile). */
static int storm(const char *what, const char *top, int n)
{
	for (int i = 0; i < n; i++) {
		char d[4700];
		snprintf(d, sizeof(d), "%s/s%04d", top, i);
		if (mkdir(d, 0755) < 0 || rmdir(d) < 0) {
			fprintf(stderr, "%s storm %s: %s\n", what, d,
				strerror(errno));
			return -1;
		}
	}
	printf("%s storm: %d cgroups made and removed under %s\n", what, n,
	       top);
	return 0;
}

/* Read what the listener has, in rounds 20 ms apart, until a round after
 * the first `min_rounds` brings nothing (or, with stop_at_first, until
 * one brings something). */
static void drain(struct cgs_listener *l, unsigned nsh, int min_rounds,
		  bool stop_at_first)
{
	for (int round = 0; round < 50; round++) {
		int got = 0;
		for (unsigned s = 0; s < nsh; s++) {
			int n = cgs_listener_drain(l, s, on_ev, NULL);
			got += n > 0 ? n : 0;
		}
		if (stop_at_first ? got > 0 : !got && round >= min_rounds)
			break;
		usleep(20000);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	cgt_require_cgroup2();
	struct cgt_pipeline pl;
	int rc = cgt_pipeline_open(&pl, 64u << 20, CGS_ATTRIBUTION_KERNEL, 0, 0);
	if (rc)
		return rc;
	struct cgs_listener *l = pl.l;
	rollup = pl.r;
	unsigned nsh = cgs_listener_shards(l);
	char dir[4608];
	snprintf(base, sizeof(base), "/cgs-transient-%d", (int)getpid());
	if (cgt_mkdir(base, dir, sizeof(dir)) < 0)
		return 1;
	const char *v1 = cgt_cgroup1_mount("cpu");
	if (v1) {
		char top[4608];
		if (cgt_mkdir_at(v1, base, top, sizeof(top)) < 0 ||
		    storm("v1", top, V1_STORM) < 0)
			return 1;
	} else {
		printf("no cgroup v1 cpu hierarchy: no v1 storm\n");
	}
	pid_t first = fork();
	if (first == 0)
		_exit(0);
	waitpid(first, NULL, 0);
	drain(l, nsh, 0, true);
	if (storm("cgroup2", dir, V2_STORM) < 0)
		return 1;
	for (int i = 0; i < N; i++) {
		char d[4700];
		snprintf(d, sizeof(d), "%s/t%03d", dir, i);
		if ((rc = cgt_exit_in_new(d, &kids[i])) != 0) {
			cgt_pipeline_close(&pl);
			return rc;
		}
		/* removable once its only task is reaped */
		for (int k = 0; rmdir(d) < 0 && errno == EBUSY && k < 100; k++)
			usleep(1000);
	}
	/* now read them all: every directory is gone */
	drain(l, nsh, 3, false);
	struct cgs_snapshot *s = NULL;
	if (cgs_rollup_snapshot(rollup, NULL, &s) < 0)
		return 1;
	int removed = 0;
	for (size_t i = 0; i < cgs_snapshot_count(s); i++) {
		const struct cgs_cgroup_stats *c = cgs_snapshot_get_cgroup(s, i);
		if (!strncmp(c->path, base, strlen(base)) &&
		    c->path[strlen(base)] == '/' && c->removed &&
		    c->self->tasks == 1)
			removed++;
	}
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	printf("transient cgroups: %llu of %d children seen, %llu under their "
	       "own (removed) cgroup's path, %d rows shown removed with 1 "
	       "exit; via kernel %llu of %llu records, unresolved ids %llu\n",
	       (unsigned long long)ours, N, (unsigned long long)ours_right,
	       removed, (unsigned long long)t->via_kernel,
	       (unsigned long long)t->records,
	       (unsigned long long)t->kernel_unresolved);
	int fail = ours != N || ours_right != N || removed != N ||
		   t->kernel_unresolved;
	cgs_snapshot_free(s);
	cgt_pipeline_close(&pl);
	if (fail) {
		fprintf(stderr, "FAIL\n");
		return 1;
	}
	printf("OK\n");
	return 0;
}
