/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Command line of taskstat-collect: syntax only (system checks live in
 * setup.c so that this file stays pure and unit-testable). */
#ifndef TSC_OPTIONS_H
#define TSC_OPTIONS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "optparse.h"
#include "usage.h"
#include "log.h"

enum tsc_format { TSC_FMT_AUTO = 0, TSC_FMT_TABLE, TSC_FMT_JSONL, TSC_FMT_CSV };

/* --attribution: auto = the kernel source where it loads, else exact */
enum tsc_attr { TSC_ATTR_AUTO = 0, TSC_ATTR_KERNEL, TSC_ATTR_EXACT,
		TSC_ATTR_FAST };

struct tsc_opts {
	enum tsc_format format; /* AUTO until resolved in setup */
	const char *output;     /* NULL: stdout */
	uint64_t interval_ns;   /* between snapshots */
	bool interval_set;      /* given on the command line */
	uint64_t duration_ns;   /* 0: run until a signal */
	bool events;
	const char *cpus;       /* NULL: all possible */
	unsigned shards;        /* 0: library default */
	size_t rcvbuf;          /* 0: library default */
	bool no_tgid;
	bool no_fork_events;    /* don't track forks (proc connector) */
	bool fast_attribution;  /* --attribution fast */
	enum tsc_attr attribution; /* --attribution */
	bool attribution_set;
	size_t kernel_buffer;   /* --kernel-buffer; 0: library default */
	unsigned depth;         /* 0: no folding */
	const char *hierarchy;  /* NULL: library default */
	const char *listen;     /* as given */
	char *listen_host;      /* owned; NULL or "" means any address */
	char listen_port[8];
	const char *web_config; /* --web-config FILE */
	const char *textfile;
	const char *record;
	const char *replay;
	const char *user;
	unsigned top;           /* table rows; 0: all */
	bool wide;              /* --wide: the table's every column */
	bool enable_delayacct;  /* write kernel.task_delayacct=1 at start */
	unsigned comms;         /* --comms: commands shown per cgroup, 0: off */
	bool no_histograms;     /* --no-histograms */
	bool no_delay_peaks;    /* --no-delay-peaks */
	bool prom_comms;        /* --prom-comms */
	unsigned exes;          /* --exes: executables shown per cgroup, 0: off */
	bool prom_exes;         /* --prom-exes */
	bool prom_workload_labels; /* unit, slice, ... on per-cgroup series */
	bool prom_full;         /* --prom-level full (default lean) */
	bool prom_parents;      /* --prom-parents */
	bool stream_full;       /* --stream full (default changes) */
	unsigned full_every;    /* --full-every N, 0: never */
	bool force;             /* --force: --record may replace a capture */
	/* --cgroup / --exclude-cgroup GLOB, each repeatable: fnmatch(3)
	 * patterns on the cgroup path (argv strings; the arrays are owned) */
	const char **cgroup_globs;
	size_t ncgroup_globs;
	const char **exclude_globs;
	size_t nexclude_globs;
	/* --prom-max-series: per-cgroup Prometheus series at most; 0: no
	 * limit */
	uint64_t prom_max_series;
	bool prom_max_series_set;
	/* --retire-after, --retire-max (with --listen): how long, and how
	 * many, removed cgroups wait for a consumer to fetch their final
	 * counts before they are retired all the same */
	uint64_t retire_after_ns;
	bool retire_after_set;
	uint64_t retire_max;
	bool retire_max_set;
	int log_level;          /* -q, -v, --log-level: enum tsc_log_level */
	/* the workload view (opt_identity.c): names from the runtimes' state,
	 * restarts folded; roots NULL: the library's defaults */
	struct tsc_ident_opts {
		bool off;            /* --no-identity: units only */
		bool no_workloads;   /* --no-workloads: no view at all */
		const char *containerd, *crio, *docker, *kubelet_logs;
		uint64_t retire_ns;  /* --workload-retire; 0: 900 s */
	} ident;
	bool check;             /* --check: try the setup, collect nothing */
};

/* The workload view's options (opt_identity.c). */
enum {
	TSC_OPT_NO_IDENTITY = 1344, TSC_OPT_NO_WORKLOADS,
	TSC_OPT_CONTAINERD_STATE, TSC_OPT_CRIO_STORAGE, TSC_OPT_DOCKER_ROOT,
	TSC_OPT_KUBELET_LOGS, TSC_OPT_WORKLOAD_RETIRE,
};
/* One of them: 0 or TSC_EXIT_USAGE; -1 for another option. */
int tsc_identity_option(int c, const char *arg, struct tsc_opts *o);

/* Default --prom-max-series (see taskstat-collect(8) for why). */
#define TSC_PROM_MAX_SERIES 100000u

/* Default --retire-after (5 scrapes at a 60 s scrape interval, 20 at
 * 15 s), its largest value, and the default --retire-max (see
 * taskstat-collect(8) for what a waiting cgroup costs). */
#define TSC_RETIRE_AFTER_S 300u
#define TSC_RETIRE_AFTER_MAX_S 86400u
#define TSC_RETIRE_MAX 10000u
#define TSC_FULL_EVERY 60u /* --full-every default */

/* Largest --comms N; the library keeps TSC_COMMS_SUMMARY(N) counters. */
#define TSC_COMMS_MAX 1000u
#define TSC_COMMS_SUMMARY(n) ((n) * 4u < 64u ? 64u : (n) * 4u)

/*
 * Parse argv into *o. Returns 0 to go on, TSC_PARSE_DONE, or
 * TSC_EXIT_USAGE after tsc_usage_error().
 */
int tsc_parse_options(int argc, char **argv, struct tsc_opts *o);
void tsc_opts_free(struct tsc_opts *o);
/*
 * The collection options, one list for every command that collects
 * (taskstat-collect, and taskstat-top standalone, which hands them on to
 * tsc_parse_options() as given). TSC_COLLECTION_OPTIONS(X) expands
 * X(name, has_arg, code) for each, in the collector's --help order;
 * TSC_LONGOPT makes a struct option of one (<getopt.h> where used). The
 * codes are getopt_long's return values, clear of each command's own.
 */
enum {
	TSC_OPT_CPUS = 768, TSC_OPT_SHARDS, TSC_OPT_RCVBUF, TSC_OPT_NO_TGID,
	TSC_OPT_NO_FORK_EVENTS, TSC_OPT_ATTRIBUTION, TSC_OPT_KERNEL_BUFFER,
	TSC_OPT_DEPTH, TSC_OPT_HIERARCHY, TSC_OPT_ENABLE_DELAYACCT,
};
#define TSC_COLLECTION_OPTIONS(X)                                           \
	X("cpus", required_argument, TSC_OPT_CPUS)                           \
	X("shards", required_argument, TSC_OPT_SHARDS)                       \
	X("rcvbuf", required_argument, TSC_OPT_RCVBUF)                       \
	X("no-tgid", no_argument, TSC_OPT_NO_TGID)                           \
	X("no-fork-events", no_argument, TSC_OPT_NO_FORK_EVENTS)             \
	X("attribution", required_argument, TSC_OPT_ATTRIBUTION)             \
	X("kernel-buffer", required_argument, TSC_OPT_KERNEL_BUFFER)         \
	X("depth", required_argument, TSC_OPT_DEPTH)                         \
	X("hierarchy", required_argument, TSC_OPT_HIERARCHY)                 \
	X("enable-delayacct", no_argument, TSC_OPT_ENABLE_DELAYACCT)
#define TSC_LONGOPT(name, has_arg, code) { name, has_arg, NULL, code },

/*
 * Whether a --cgroup or --exclude-cgroup pattern can match a cgroup path:
 * 0; -EINVAL for an empty pattern; -EDOM for one that starts with a
 * character no cgroup path starts with (a path starts with '/', the
 * unknown bucket with '('), e.g. "system.slice/...".
 */
int tsc_glob_check(const char *glob);

#endif
