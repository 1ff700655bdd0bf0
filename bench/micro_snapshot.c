/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro_snapshot: cost of cgs_rollup_snapshot (+ free) with 1,000 and
 * 10,000 cgroups, each with a few exits accounted, in a two-level tree
 * (/cgs-snap/gNN/cNNNNN: 100 cgroups per group), as a collector's periodic
 * snapshot sees it. Between snapshots one more record lands in every
 * cgroup, so the delta path is exercised.
 *
 * The cgroup directories are really created under the cgroup2 mount (and
 * removed at the end), since the snapshot looks at each directory to flag
 * removed cgroups; -M uses paths that do not exist instead.
 *
 * usage: micro_snapshot [-n 1000,10000[,100000]] [-r REPS] [-M] [-H]
 *                       [-a PERCENT] [-C COMMS] [-E EXES] [-W]
 * -H: with CGS_ROLLUP_HISTOGRAMS (the collector's default); -a: the share
 * of cgroups with a record between two snapshots (default 100: all; a
 * host's cgroups are mostly idle); -C, -E: cgs_rollup_opts.comms and
 * .exes (the collector's --comms N / --exes N give max(4N, 64)), every
 * snapshot listing all the summaries hold; the records then cycle over
 * three executables (and commands) per cgroup. -W: each cgroup a unit
 * (cNNNNN.service), every snapshot folded into a workload view
 * ("wl_cpu_ms": cgs_workloads_update()'s thread CPU, median;
 * "wl_bytes_per_cgroup": the view's heap after its first update).
 * "snapshot_heap_per_cgroup": heap in use that the first snapshot adds
 * (what it holds while kept).
 * Prints one JSON line per size: ms per snapshot (in "ns_per_record": ns
 * per cgroup; wall time, and the thread's CPU time in "cpu_ms"), the
 * snapshot's cgroup count, and memory per cgroup: the rollup's (heap in
 * use, mallinfo2) and a snapshot's (resident pages it added, the first
 * one, with nothing freed before it to reuse).
 */
#include <malloc.h>
#include <time.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgstats.h"
#include "micro_common.h"

static int reps = 7, real_dirs = 1, hist, active = 100;
static unsigned comms, exes; /* -C, -E */
static int wl; /* -W */

/* The records' executable (and command) cycle over three. */
static void next_exe(struct cgs_record *rec)
{
	rec->exe_dev = 0x803;
	rec->exe_inode = 1000 + (rec->exe_inode + 1) % 3;
	rec->comm[0] = (char)('a' + rec->exe_inode % 3);
}

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double heap_bytes(void)
{
	struct mallinfo2 m = mallinfo2();
	return (double)(m.uordblks + m.hblkhd);
}

static double rss_bytes(void)
{
	long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (double)res * (double)sysconf(_SC_PAGESIZE);
}

/* mkdir (make) or rmdir (!make) the tree of n cgroups under the v2 mount. */
static int tree(const char *top, long n, bool make)
{
	const char *mnt = cgsb_v2_mount();
	char dir[PATH_MAX];

	if (!mnt)
		return -ENOENT;
	if (make) {
		snprintf(dir, sizeof(dir), "%s%s", mnt, top);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	for (long g = 0; g <= (n - 1) / 100; g++) {
		snprintf(dir, sizeof(dir), "%s%s/g%02ld", mnt, top, g);
		if (make && mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		for (long i = g * 100; i < n && i < (g + 1) * 100; i++) {
			snprintf(dir, sizeof(dir), "%s%s/g%02ld/c%05ld%s", mnt,
				 top, g, i, wl ? ".service" : "");
			if (make && mkdir(dir, 0755) < 0 && errno != EEXIST)
				return -errno;
			if (!make)
				rmdir(dir);
		}
		if (!make) {
			snprintf(dir, sizeof(dir), "%s%s/g%02ld", mnt, top, g);
			rmdir(dir);
		}
	}
	if (!make) {
		snprintf(dir, sizeof(dir), "%s%s", mnt, top);
		rmdir(dir);
	}
	return 0;
}

static int run_size(long n)
{
	struct cgs_rollup_opts ro = { .sz = sizeof(ro), .shards = 1,
				      .hierarchy = "v2", .comms = comms,
				      .exes = exes };
	struct cgs_snapshot_opts so = { .sz = sizeof(so) };
	struct cgsb_msg_spec spec = { .version = 16, .pid = 4242,
				      .tgid = 4241, .ppid = 1,
				      .btime_s = 1700000000 };
	uint8_t msg[CGSB_MSG_MAX];
	CGS_OPTS(cgs_record, rec);
	CGS_OPTS(cgs_record, group);
	struct cgs_rollup *ru = NULL;
	char (*paths)[96], top[32];
	double ns[64], ms[64], cpu[64], wcpu[64] = { 0 }, acc_ns, heap0;
	double rollup_b = 0, snap_b = 0, wl_b = 0, snap_h = 0;
	struct cgs_workloads *view = NULL;
	size_t len, count = 0;
	char extra[640];
	int err;

	len = cgsb_build_msg(msg, sizeof(msg), &spec);
	err = cgs_decode_msg(msg, len, 0, &rec, &group, NULL);
	if (err < 0)
		return err;
	paths = calloc((size_t)n, sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	snprintf(top, sizeof(top), "/cgs-snap-%d", (int)getpid());
	for (long i = 0; i < n; i++)
		snprintf(paths[i], sizeof(paths[i]), "%s/g%02ld/c%05ld%s", top,
			 i / 100, i, wl ? ".service" : "");
	if (real_dirs) {
		err = tree(top, n, true);
		if (err < 0) {
			fprintf(stderr, "micro_snapshot: mkdir: %s\n",
				strerror(-err));
			tree(top, n, false);
			free(paths);
			return err;
		}
	}
	if (hist)
		ro.flags |= CGS_ROLLUP_HISTOGRAMS;
	heap0 = heap_bytes();
	err = cgs_rollup_new(&ru, &ro);
	if (err < 0) {
		if (real_dirs)
			tree(top, n, false);
		free(paths);
		return err;
	}
	double t0 = cgsb_now();
	CGS_OPTS(cgs_add_opts, given);
	for (int k = 0; k < 3; k++)
		for (long i = 0; i < n; i++) {
			given.path = paths[i];
			next_exe(&rec);
			cgs_rollup_add(ru, 0, &rec, &given, NULL);
		}
	acc_ns = (cgsb_now() - t0) * 1e9 / (double)(3 * n);
	rollup_b = (heap_bytes() - heap0) / (double)n;
	if (wl && cgs_workloads_new(&view, NULL) < 0)
		view = NULL;

	if (reps > 64)
		reps = 64;
	for (int r = 0; r < reps; r++) {
		struct cgs_snapshot *s = NULL;
		double t1, t2;

		double c1, rss1 = rss_bytes(), h1 = heap_bytes();
		for (long i = 0; i < n; i++)
			if (i % 100 < active) {
				given.path = paths[i];
				next_exe(&rec);
				cgs_rollup_add(ru, 0, &rec, &given, NULL);
			}
		t1 = cgsb_now();
		c1 = cpu_now();
		err = cgs_rollup_snapshot(ru, &so, &s);
		if (err >= 0)
			count = cgs_snapshot_count(s);
		if (r == 0) {
			snap_b = (rss_bytes() - rss1) / (double)n;
			snap_h = (heap_bytes() - h1) / (double)n;
		}
		if (view && err >= 0) {
			double h = heap_bytes(), c = cpu_now();
			cgs_workloads_update(view, s, (uint64_t)r);
			wcpu[r] = (cpu_now() - c) * 1e3;
			if (r == 0)
				wl_b = (heap_bytes() - h) / (double)n;
		}
		cgs_snapshot_free(s);
		t2 = cgsb_now();
		cpu[r] = (cpu_now() - c1) * 1e3 - wcpu[r];
		if (err < 0) {
			fprintf(stderr, "micro_snapshot: %s\n",
				cgs_strerror(err));
			break;
		}
		ms[r] = (t2 - t1) * 1e3;
		ns[r] = (t2 - t1) * 1e9 / (double)n;
	}
	cgs_workloads_free(view);
	cgs_rollup_free(ru);
	free(paths);
	if (real_dirs)
		tree(top, n, false);
	if (err < 0)
		return err;
	snprintf(extra, sizeof(extra),
		 "\"ms_per_snapshot\":%.3f,\"ms_min\":%.3f,\"ms_max\":%.3f,"
		 "\"snapshot_entries\":%zu,\"account_path_ns\":%.1f,"
		 "\"real_dirs\":%s,\"histograms\":%s,\"active_pct\":%d,"
		 "\"cpu_ms\":%.3f,\"cpu_ms_min\":%.3f,"
		 "\"rollup_bytes_per_cgroup\":%.0f,"
		 "\"snapshot_bytes_per_cgroup\":%.0f,"
		 "\"comms\":%u,\"exes\":%u,\"wl_cpu_ms\":%.3f,"
		 "\"wl_bytes_per_cgroup\":%.0f,"
		 "\"snapshot_heap_per_cgroup\":%.0f",
		 cgsb_median(ms, reps), cgsb_min(ms, reps), cgsb_max(ms, reps),
		 count, acc_ns, real_dirs ? "true" : "false",
		 hist ? "true" : "false", active, cgsb_median(cpu, reps),
		 cgsb_min(cpu, reps), rollup_b, snap_b, comms, exes,
		 cgsb_median(wcpu, reps), wl_b, snap_h);
	cgsb_report("snapshot", "snapshot", n, ns, reps, n, extra);
	return 0;
}

int main(int argc, char **argv)
{
	char sizes[128] = "1000,10000";
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "n:r:MHa:C:E:W")) != -1) {
		switch (opt) {
		case 'n': snprintf(sizes, sizeof(sizes), "%s", optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 'M': real_dirs = 0; break;
		case 'H': hist = 1; break;
		case 'a': active = atoi(optarg); break;
		case 'C': comms = (unsigned)atoi(optarg); break;
		case 'E': exes = (unsigned)atoi(optarg); break;
		case 'W': wl = 1; break;
		default:
			fprintf(stderr, "usage: micro_snapshot [-n SIZES] "
					"[-r REPS] [-M] [-H] [-a PERCENT] "
					"[-C COMMS] [-E EXES] [-W]\n");
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
