/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro_attr: per-record cost of the hot path at cgroup depth 0, 3, 30.
 *
 * A real process (a paused child) is moved into a chain of `depth` nested
 * cgroup2 directories; synthetic v16 thread-exit messages of that process
 * are then fed to the library, as the collector does per received exit:
 *
 *   pipeline  cgs_decode_msg (596-byte PID message) + cgs_rollup_add
 *   account   cgs_rollup_add on an already decoded record
 *             (attribution through the per-process cache + rollup)
 *   path      cgs_rollup_add with the path given (no attribution)
 *   exited    cgs_rollup_add of process exits (AGROUP) whose process is
 *             already reaped while its parent (the paused child) lives: a
 *             new tgid every record, so nothing is cached and attribution
 *             goes through /proc (the fork-and-exit churn case). Use fewer
 *             iterations (-i) for it: it does syscalls per record.
 *
 * usage: micro_attr [-i ITERS] [-r REPS] [-d 0,3,30] [-c pipeline,account,path]
 * Prints one JSON line per (case, depth); attribution counters included so a
 * run that fell back to /proc reads or the unknown bucket is visible.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgstats.h"
#include "micro_common.h"

#define NMSG 64 /* distinct thread ids, as consecutive exits would have */

static long iters = 1000000;
static int reps = 7;

static int run_case(const char *kase, const struct cgsb_cgchain *c)
{
	static uint8_t msgs[NMSG][CGSB_MSG_MAX];
	static size_t lens[NMSG];
	static struct cgs_record recs[NMSG];
	struct cgs_rollup_opts ro = { .sz = sizeof(ro), .shards = 1,
				      .hierarchy = "v2" };
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	CGS_OPTS(cgs_decode_stats, ds);
	CGS_OPTS(cgs_record, task);
	CGS_OPTS(cgs_record, group);
	double ns[64];
	char extra[4608];
	int err, mode;

	if (!strcmp(kase, "pipeline"))
		mode = 0;
	else if (!strcmp(kase, "account"))
		mode = 1;
	else if (!strcmp(kase, "path"))
		mode = 2;
	else if (!strcmp(kase, "exited"))
		mode = 3;
	else
		return -EINVAL;

	for (int i = 0; i < NMSG; i++) {
		struct cgsb_msg_spec s = {
			.version = 16, .with_tgid = false,
			.pid = (uint32_t)c->child + 1 + (uint32_t)i,
			.tgid = (uint32_t)c->child, .ppid = (uint32_t)getpid(),
			.flag = mode == 3 ? CGS_AC_AGROUP : 0,
			.btime_s = c->child_btime_s,
		};
		lens[i] = cgsb_build_msg(msgs[i], sizeof(msgs[i]), &s);
		recs[i].sz = sizeof(recs[i]);
		err = cgs_decode_msg(msgs[i], lens[i], 0, &recs[i], &group,
				     &ds);
		if (err < 0 || !(err & 1)) {
			fprintf(stderr, "micro_attr: decode: %d\n", err);
			return err < 0 ? err : -EBADMSG;
		}
	}

	for (int r = 0; r < reps && r < 64; r++) {
		struct cgs_rollup *ru = NULL;
		double t0, t1;

		err = cgs_rollup_new(&ru, &ro);
		if (err < 0) {
			fprintf(stderr, "micro_attr: rollup_new: %s\n",
				cgs_strerror(err));
			return err;
		}
		/* Warm the cache (first record reads /proc) outside timing. */
		cgs_rollup_add(ru, 0, &recs[0], NULL, NULL);
		CGS_OPTS(cgs_add_opts, given, .path = c->cg_path);
		t0 = cgsb_now();
		for (long i = 0; i < iters; i++) {
			unsigned k = (unsigned)i & (NMSG - 1);

			switch (mode) {
			case 0: /* as the listener decodes: into its own
				 * records, again and again */
				cgs_decode_msg(msgs[k], lens[k],
					       CGS_DECODE_REUSE, &task, &group,
					       &ds);
				cgs_rollup_add(ru, 0, &task, NULL, NULL);
				break;
			case 1:
				cgs_rollup_add(ru, 0, &recs[k], NULL, NULL);
				break;
			case 3:
				/* pids above any pid_max: never alive */
				recs[k].pid = recs[k].tgid =
					4194304u + 1 + (uint32_t)(i % 4000000);
				recs[k].ppid = (uint32_t)c->child;
				cgs_rollup_add(ru, 0, &recs[k], NULL, NULL);
				break;
			default:
				cgs_rollup_add(ru, 0, &recs[k], &given, NULL);
			}
		}
		t1 = cgsb_now();
		ns[r] = (t1 - t0) * 1e9 / (double)iters;
		cgs_rollup_get_totals(ru, &t);
		cgs_rollup_free(ru);
	}
	snprintf(extra, sizeof(extra),
		 "\"cgroup\":\"%s\",\"records\":%llu,\"unattributed\":%llu,"
		 "\"via_cache\":%llu,\"via_proc\":%llu,\"via_parent\":%llu,"
		 "\"proc_reads\":%llu",
		 c->cg_path, (unsigned long long)t.records,
		 (unsigned long long)t.unattributed,
		 (unsigned long long)t.via_cache,
		 (unsigned long long)t.via_proc,
		 (unsigned long long)t.via_parent,
		 (unsigned long long)t.proc_reads);
	cgsb_report("attr", kase, (long)c->depth, ns, reps < 64 ? reps : 64,
		    iters, extra);
	return 0;
}

int main(int argc, char **argv)
{
	char depths[128] = "0,3,30", cases[128] = "pipeline,account,path";
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "i:r:d:c:")) != -1) {
		switch (opt) {
		case 'i': iters = atol(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 'd': snprintf(depths, sizeof(depths), "%s", optarg); break;
		case 'c': snprintf(cases, sizeof(cases), "%s", optarg); break;
		default:
			fprintf(stderr, "usage: micro_attr [-i ITERS] [-r REPS] "
					"[-d DEPTHS] [-c CASES]\n");
			return 2;
		}
	}
	if (iters < 1 || reps < 1)
		return 2;

	for (char *ds = depths, *dtok; (dtok = strsep(&ds, ","));) {
		struct cgsb_cgchain c;
		int err = cgsb_cgchain_make(&c, "attr", (unsigned)atoi(dtok));

		if (err < 0) {
			fprintf(stderr, "micro_attr: cgroup chain depth %s: %s\n",
				dtok, strerror(-err));
			cgsb_cgchain_destroy(&c);
			return 1;
		}
		char cs[128];

		snprintf(cs, sizeof(cs), "%s", cases);
		for (char *p = cs, *ctok; (ctok = strsep(&p, ","));)
			if (run_case(ctok, &c) < 0)
				rc = 1;
		cgsb_cgchain_destroy(&c);
	}
	return rc;
}
