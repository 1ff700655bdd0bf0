/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Command line of taskstat-collect: syntax only (system checks live in
 * setup.c so that this file stays pure and unit-testable). */
#ifndef TSC_OPTIONS_H
#define TSC_OPTIONS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	bool enable_delayacct;  /* write kernel.task_delayacct=1 at start */
	unsigned comms;         /* --comms: commands shown per cgroup, 0: off */
	bool no_histograms;     /* --no-histograms */
	bool prom_comms;        /* --prom-comms */
	bool prom_workload_labels; /* unit, slice, ... on per-cgroup series */
	bool prom_full;         /* --prom-level full (default lean) */
	bool prom_parents;      /* --prom-parents */
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
};

/* Default --prom-max-series (see taskstat-collect(8) for why). */
#define TSC_PROM_MAX_SERIES 100000u

/* Default --retire-after (5 scrapes at a 60 s scrape interval, 20 at
 * 15 s), its largest value, and the default --retire-max (see
 * taskstat-collect(8) for what a waiting cgroup costs). */
#define TSC_RETIRE_AFTER_S 300u
#define TSC_RETIRE_AFTER_MAX_S 86400u
#define TSC_RETIRE_MAX 10000u

/* Largest --comms N; the library keeps TSC_COMMS_SUMMARY(N) counters. */
#define TSC_COMMS_MAX 1000u
#define TSC_COMMS_SUMMARY(n) ((n) * 4u < 64u ? 64u : (n) * 4u)

#define PROG "taskstat-collect"

#define TSC_EXIT_ERROR 1 /* a runtime error */
#define TSC_EXIT_USAGE 2 /* an invalid option, found before registering */
#define TSC_EXIT_OUTPUT 3 /* ran to the end, but writing an output failed */

/* Name tsc_usage_error() prints: PROG, or the command reusing tsc_core
 * (taskstat-top, taskstat-query), which sets it first. */
extern const char *tsc_prog;

/* A message on stderr after the running command's name (tsc_prog): what
 * the commands sharing tsc_core say (taskstat-top's standalone mode says
 * "taskstat-top: ..."). fmt is a string literal. */
#define tsc_err(fmt, ...)                                                     \
	fprintf(stderr, "%s: " fmt, tsc_prog, ##__VA_ARGS__)

/*
 * Print "PROG: <opt>: <message>" to stderr and return TSC_EXIT_USAGE. opt
 * is the option as the user wrote it ("--interval", "-x", a stray word).
 * Every rejected command line goes through here.
 */
int tsc_usage_error(const char *opt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define TSC_PARSE_DONE 1 /* --help or --version answered: exit 0 */

/*
 * Parse argv into *o. Returns 0 to go on, TSC_PARSE_DONE, or
 * TSC_EXIT_USAGE after tsc_usage_error().
 */
int tsc_parse_options(int argc, char **argv, struct tsc_opts *o);
void tsc_opts_free(struct tsc_opts *o);
/*
 * What every command of tsc_core answers the same way, for a getopt_long
 * result c (optstring starting with ':', -h, -V): --help prints usage_text,
 * --version "<name> <version> (libcgstats ...)", a missing value or an
 * unknown option goes through tsc_usage_error(). Returns TSC_PARSE_DONE,
 * TSC_EXIT_USAGE, or -1 for any other c.
 */
int tsc_option_common(int c, char **argv, const char *usage_text,
		      const char *name);

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

/* Strict parse of a non-negative decimal number of seconds ("0.5"). */
int tsc_parse_seconds(const char *s, uint64_t *ns);
/* Strict parse of an unsigned integer in [min, max]. */
int tsc_parse_uint(const char *s, unsigned long long min,
		   unsigned long long max, unsigned long long *out);
/* Split "HOST:PORT", "[V6]:PORT" or ":PORT"; port 0..65535. */
int tsc_parse_hostport(const char *s, char **host, char port[8]);


#endif
