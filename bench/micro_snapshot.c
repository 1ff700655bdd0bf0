/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro_snapshot: cost of cgs_rollup_snapshot (+ free) with 1,000 and
 * 10,000 cgroups, each with a few exits accounted, in a two-level tree
 * (/cgs-snap/gNN/cNNNNN: 100 cgroups per group), as a collector's periodic
 * snapshot sees it. Between snapshots one more record lands in every
 * cgroup, so the delta path is exercised.
 *
 * usage: micro_snapshot [-n 1000,10000] [-r REPS]
 * Prints one JSON line per size: ms per snapshot (in "ns_per_record": ns
 * per cgroup) and the snapshot's cgroup count.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgstats.h"
#include "micro_common.h"

static int reps = 7;

static int run_size(long n)
{
	struct cgs_rollup_opts ro = { .sz = sizeof(ro), .shards = 1,
				      .hierarchy = "v2" };
	struct cgs_snapshot_opts so = { .sz = sizeof(so) };
	struct cgsb_msg_spec spec = { .version = 16, .pid = 4242,
				      .tgid = 4241, .ppid = 1,
				      .btime_s = 1700000000 };
	uint8_t msg[CGSB_MSG_MAX];
	struct cgs_record rec, group;
	struct cgs_rollup *ru = NULL;
	char (*paths)[64];
	double ns[64], ms[64], acc_ns;
	size_t len, count = 0;
	char extra[256];
	int err;

	len = cgsb_build_msg(msg, sizeof(msg), &spec);
	err = cgs_decode_msg(msg, len, 0, &rec, &group, NULL);
	if (err < 0)
		return err;
	paths = calloc((size_t)n, sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	for (long i = 0; i < n; i++)
		snprintf(paths[i], sizeof(paths[i]), "/cgs-snap/g%02ld/c%05ld",
			 i / 100, i);
	err = cgs_rollup_new(&ru, &ro);
	if (err < 0) {
		free(paths);
		return err;
	}
	double t0 = cgsb_now();
	for (int k = 0; k < 3; k++)
		for (long i = 0; i < n; i++)
			cgs_rollup_account_path(ru, 0, &rec, paths[i]);
	acc_ns = (cgsb_now() - t0) * 1e9 / (double)(3 * n);

	if (reps > 64)
		reps = 64;
	for (int r = 0; r < reps; r++) {
		struct cgs_snapshot *s = NULL;
		double t1, t2;

		for (long i = 0; i < n; i++)
			cgs_rollup_account_path(ru, 0, &rec, paths[i]);
		t1 = cgsb_now();
		err = cgs_rollup_snapshot(ru, &so, &s);
		if (err >= 0)
			count = cgs_snapshot_count(s);
		cgs_snapshot_free(s);
		t2 = cgsb_now();
		if (err < 0) {
			fprintf(stderr, "micro_snapshot: %s\n",
				cgs_strerror(err));
			break;
		}
		ms[r] = (t2 - t1) * 1e3;
		ns[r] = (t2 - t1) * 1e9 / (double)n;
	}
	cgs_rollup_free(ru);
	free(paths);
	if (err < 0)
		return err;
	snprintf(extra, sizeof(extra),
		 "\"ms_per_snapshot\":%.3f,\"ms_min\":%.3f,\"ms_max\":%.3f,"
		 "\"snapshot_entries\":%zu,\"account_path_ns\":%.1f",
		 cgsb_median(ms, reps), cgsb_min(ms, reps), cgsb_max(ms, reps),
		 count, acc_ns);
	cgsb_report("snapshot", "snapshot", n, ns, reps, n, extra);
	return 0;
}

int main(int argc, char **argv)
{
	char sizes[128] = "1000,10000";
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		switch (opt) {
		case 'n': snprintf(sizes, sizeof(sizes), "%s", optarg); break;
		case 'r': reps = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: micro_snapshot [-n SIZES] "
					"[-r REPS]\n");
			return 2;
		}
	}
	if (reps < 1)
		return 2;
	for (char *p = sizes, *tok; (tok = strsep(&p, ","));)
		if (run_size(atol(tok)) < 0)
			rc = 1;
	return rc;
}
