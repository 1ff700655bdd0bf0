/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What one Prometheus text costs with many cgroups, with and without
 * --prom-max-series: N cgroups (one exit each, distributions on) in a
 * rollup, one snapshot, then out_prom() at each limit given: seconds,
 * bytes and cgroups cut.
 *
 *	prom_series [-n CGROUPS] [-l LIMIT,...]   (defaults 100000, 0,100000)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long n = 100000;
	const char *limits = "0,100000";
	struct cgs_rollup *r = NULL;
	struct cgs_snapshot *s = NULL;
	int c;

	while ((c = getopt(argc, argv, "n:l:")) != -1) {
		if (c == 'n')
			n = strtoul(optarg, NULL, 10);
		else if (c == 'l')
			limits = optarg;
		else
			return 2;
	}
	CGS_OPTS(cgs_rollup_opts, o, .flags = CGS_ROLLUP_HISTOGRAMS,
		 .attribution = CGS_ATTRIBUTION_PROC);
	if (cgs_rollup_new(&r, &o) < 0) {
		fprintf(stderr, "prom_series: no rollup (cgroup mount?)\n");
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		char path[64];
		CGS_OPTS(cgs_record, rec, .kind = CGS_KIND_PROCESS,
			 .pid = (uint32_t)(1000 + i), .tgid = (uint32_t)(1000 + i),
			 .etime_us = 1000 + i, .utime_us = i % 5000);
		snprintf(path, sizeof(path), "/bench%lu.slice/c%lu.scope",
			 i % 100, i);
		CGS_OPTS(cgs_add_opts, given, .path = path);
		if (cgs_rollup_add(r, 0, &rec, &given, NULL) < 0)
			return 1;
	}
	if (cgs_rollup_snapshot(r, NULL, &s) < 0)
		return 1;

	struct snap_info in;
	memset(&in, 0, sizeof(in));
	in.histograms = true;
	in.oom_source = "kernel";
	for (int k = 0; k < 3; k++)
		in.output_errors[k] = -1;
	for (const char *p = limits; *p;) {
		char *end;
		struct buf b;
		in.prom_max_series = strtoull(p, &end, 10);
		buf_init(&b);
		double t0 = now();
		size_t cut = out_prom(&b, &in, s);
		double dt = now() - t0;
		printf("cgroups %zu  --prom-max-series %llu: %.3f s, %.1f MB, "
		       "%zu cgroups cut\n", cgs_snapshot_count(s),
		       (unsigned long long)in.prom_max_series, dt,
		       (double)b.len / 1e6, cut);
		buf_free(&b);
		p = *end == ',' ? end + 1 : end;
	}
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
	return 0;
}
