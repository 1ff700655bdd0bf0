/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Removal checks with the kernel source once the stat() round robin has
 * slowed down (CGSI_CHECK_SLOW: after a round of snapshots with no cgroup
 * event missed, a node is stat()ed once every 512 snapshots or so). N
 * cgroups, each with one exit, are seen by 40 snapshots; then half of
 * them are removed, and one of those made again under the same path with
 * an exit of its own. The very next snapshot must show each removed one
 * removed (the rmdir events, not the stat()s: at this rate they reach a
 * cgroup or two a snapshot), the others live, and the path made again
 * twice: the removed incarnation and a live one.
 *
 * Skips (77) without taskstats, CAP_NET_ADMIN, cgroup2, clone3, or where
 * the kernel source cannot load, saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/cgtest.h"
#include "support/pipeline.h"
#include "support/skip.h"

#define N 64
#define WARM 40 /* snapshots: more than a round at the full rate (33) */

static char base[256];

/* mkdir <dir>/c<i> and one child born and reaped there. 0, 77 without
 * clone3, 1 on error. */
static int cgroup_with_exit(const char *dir, int i)
{
	char d[4700];
	snprintf(d, sizeof(d), "%s/c%02d", dir, i);
	return cgt_exit_in_new(d, NULL);
}

static int rm_cgroup(const char *dir, int i)
{
	char d[4700];
	snprintf(d, sizeof(d), "%s/c%02d", dir, i);
	for (int k = 0; rmdir(d) < 0; k++) {
		if (errno != EBUSY || k == 100) {
			fprintf(stderr, "rmdir %s: %s\n", d, strerror(errno));
			return 1;
		}
		usleep(1000);
	}
	return 0;
}

/* The rows of <base>/c<i>: live and removed ones with one exit each. */
static void rows_of(const struct cgs_snapshot *s, int i, int *live,
		    int *removed)
{
	char want[320];
	snprintf(want, sizeof(want), "%s/c%02d", base, i);
	*live = *removed = 0;
	for (size_t k = 0; k < cgs_snapshot_count(s); k++) {
		const struct cgs_cgroup_stats *c = cgs_snapshot_get_cgroup(s, k);
		if (strcmp(c->path, want) || c->self->tasks != 1)
			continue;
		if (c->removed)
			(*removed)++;
		else
			(*live)++;
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	cgt_require_cgroup2();
	struct cgt_pipeline pl;
	int rc = cgt_pipeline_open(&pl, 16u << 20, CGS_ATTRIBUTION_KERNEL, 0,
				   0);
	if (rc)
		return rc;
	char dir[4608];
	snprintf(base, sizeof(base), "/cgs-removed-%d", (int)getpid());
	if (cgt_mkdir(base, dir, sizeof(dir)) < 0)
		return 1;
	for (int i = 0; i < N; i++)
		if ((rc = cgroup_with_exit(dir, i)) != 0)
			goto out;
	rc = 1;
	if (cgt_pipeline_pump(&pl, 300) < 0)
		goto out;
	struct cgs_snapshot *s = NULL;
	for (int k = 0; k < WARM; k++) {
		cgs_snapshot_free(s);
		if (cgs_rollup_snapshot(pl.r, NULL, &s) < 0)
			goto out;
	}
	int live, removed, bad = 0;
	for (int i = 0; i < N; i++) {
		rows_of(s, i, &live, &removed);
		bad += live != 1 || removed;
	}
	cgs_snapshot_free(s);
	s = NULL;
	if (bad) {
		fprintf(stderr, "FAIL: %d of %d cgroups not shown live with "
			"their exit after %d snapshots\n", bad, N, WARM);
		goto out;
	}
	/* the odd ones go; c01 comes back with an exit of its own */
	for (int i = 1; i < N; i += 2)
		if (rm_cgroup(dir, i))
			goto out;
	if (cgroup_with_exit(dir, 1) || cgt_pipeline_pump(&pl, 300) < 0 ||
	    cgs_rollup_snapshot(pl.r, NULL, &s) < 0)
		goto out;
	int shown_removed = 0, again = 0;
	for (int i = 0; i < N; i++) {
		rows_of(s, i, &live, &removed);
		int want_live = i % 2 == 0 || i == 1, want_removed = i % 2;
		shown_removed += removed;
		again += i == 1 && live == 1 && removed == 1;
		if (live != want_live || removed != want_removed) {
			fprintf(stderr, "c%02d: %d live, %d removed rows; "
				"want %d, %d\n", i, live, removed, want_live,
				want_removed);
			bad++;
		}
	}
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	printf("after %d snapshots: %d of %d removed cgroups shown removed "
	       "at the next one, the path made again live beside its removed "
	       "incarnation: %s; via kernel %llu of %llu records\n", WARM,
	       shown_removed, N / 2, again ? "yes" : "no",
	       (unsigned long long)t->via_kernel,
	       (unsigned long long)t->records);
	cgs_snapshot_free(s);
	rc = bad ? 1 : 0;
	printf(rc ? "FAIL\n" : "OK\n");
out:
	cgt_pipeline_close(&pl);
	for (int i = 0; i < N; i++) { /* what is left of them */
		char d[4700];
		snprintf(d, sizeof(d), "%s/c%02d", dir, i);
		rmdir(d);
	}
	return rc;
}
