/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared pieces of the microbenchmarks: clocks, medians, synthetic
 * taskstats messages and throw-away cgroup chains. */
#ifndef CGS_BENCH_MICRO_COMMON_H
#define CGS_BENCH_MICRO_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CGSB_MSG_MAX 2048
#define CGSB_MAX_DEPTH 64

double cgsb_now(void); /* CLOCK_MONOTONIC, seconds */
double cgsb_median(double *v, int n); /* sorts v */
double cgsb_min(const double *v, int n);
double cgsb_max(const double *v, int n);

struct cgsb_msg_spec {
	unsigned version;  /* 16 or 8 (payload 560 or 328 bytes) */
	bool with_tgid;    /* append an AGGR_TGID record (v16 only) */
	uint32_t pid, tgid, ppid;
	uint64_t btime_s;
	uint8_t flag;      /* CGS_AC_* */
};

/*
 * Build one TASKSTATS_CMD_NEW message as the kernel publishes it
 * (nlmsghdr + genlmsghdr + AGGR_PID{PID,STATS} [+ AGGR_TGID{TGID,STATS}]).
 * Returns its length: 1172 for v16 with TGID, 596 without, 364 for v8.
 */
size_t cgsb_build_msg(uint8_t *buf, size_t cap, const struct cgsb_msg_spec *s);

/*
 * A chain of `depth` nested cgroup2 directories under
 * <v2 mount>/cgs-bench-<tag>-<pid>, with a sleeping child process moved
 * into the deepest one (depth 0: the child is moved to the v2 root).
 * cg_path gets the cgroup path as /proc/<pid>/cgroup shows it.
 */
struct cgsb_cgchain {
	char base[4096];   /* top directory created, "" for depth 0 */
	char leaf[4096];   /* deepest directory */
	char cg_path[4096];
	unsigned depth;
	pid_t child;
	uint64_t child_btime_s;
};

int cgsb_cgchain_make(struct cgsb_cgchain *c, const char *tag, unsigned depth);
void cgsb_cgchain_destroy(struct cgsb_cgchain *c);

/* Where cgroup2 is mounted ("/sys/fs/cgroup/unified" here), or NULL. */
const char *cgsb_v2_mount(void);

/* Start time of a live process in seconds since the epoch, 0 if unknown. */
uint64_t cgsb_proc_btime(pid_t pid);

/* One result line: {"bench":..,"case":..,"param":..,"ns_per_record":..}. */
void cgsb_report(const char *bench, const char *kase, long param,
		 double *ns, int reps, long iters, const char *extra_json);

#endif
