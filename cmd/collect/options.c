/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgstats.h"
#include "options.h"

/* --help: one screen (issue 38); --help-all: every option (usage below) */
static const char usage_short[] =
"Usage: " PROG " [OPTIONS]\n"
"Per-cgroup totals of exited tasks (taskstats) every --interval, until\n"
"SIGINT/SIGTERM. Needs root or CAP_NET_ADMIN, except with --replay.\n"
"\n"
"Common options:\n"
"  -f, --format table|jsonl|csv  snapshots as a table (default on a\n"
"                                terminal), JSON lines (default otherwise)\n"
"                                or CSV\n"
"  -o, --output FILE             write to FILE instead of stdout\n"
"  -i, --interval SECONDS        between snapshots (default 5)\n"
"  -d, --duration SECONDS        stop after this long (a final snapshot is\n"
"                                always written)\n"
"  -e, --events                  also one line per exit record\n"
"      --top N                   table: rows shown (default 20, 0: all)\n"
"      --wide                    table: every column (default: the columns\n"
"                                that fit the terminal, $COLUMNS or 120)\n"
"      --comms N                 top N commands per cgroup (default 0: off)\n"
"      --exes N                  top N executables per cgroup (default 0: off)\n"
"      --stream changes|full     changes (default): a line holds the cgroups\n"
"                                changed since the last one (full lines at\n"
"                                the start and every 60); full: all, always\n"
"  -l, --listen ADDR:PORT        serve Prometheus text at /metrics\n"
"      --textfile PATH           write the Prometheus text to PATH\n"
"      --record FILE             write the raw exit records to a capture\n"
"      --replay FILE             read a capture instead of listening\n"
"      --attribution auto|kernel|exact|fast\n"
"                                how an exit finds its cgroup (default auto:\n"
"                                the kernel's, by BPF, where it loads)\n"
"      --cgroup GLOB             only cgroups whose path matches GLOB\n"
"  -u, --user NAME               drop to NAME once registered\n"
"      --check                   try what the run needs, one line per item;\n"
"                                collect nothing\n"
"  -q, --quiet                   errors only (-v, --verbose: more messages)\n"
"  -h, --help                    this summary\n"
"      --help-all                every option: collection, export,\n"
"                                workloads, cgroups shown, logging\n"
"  -V, --version                 version\n"
"\n"
"Exit status: 0 after a clean stop, 1 on a runtime error, 2 for an invalid\n"
"option, 3 when writing an output failed.\n"
"Every option: " PROG " --help-all. The full reference: the manual\n"
"page taskstat-collect(8) (man taskstat-collect), docs/collector.md.\n";

static const char usage[] =
"Usage: " PROG " [OPTIONS]\n"
"Collect taskstats exit records per cgroup until SIGINT/SIGTERM.\n"
"Needs root or CAP_NET_ADMIN, except with --replay.\n"
"\n"
"Output:\n"
"  -f, --format table|jsonl|csv  snapshot format (default: table on a\n"
"                                terminal, jsonl otherwise; json is\n"
"                                jsonl)\n"
"  -o, --output FILE             write to FILE instead of stdout\n"
"  -i, --interval SECONDS        between snapshots (default 5, fractions ok)\n"
"  -d, --duration SECONDS        stop after this long (default: run until\n"
"                                SIGINT/SIGTERM); a final snapshot is\n"
"                                always written\n"
"  -e, --events                  also write one line per exit record\n"
"      --top N                   table format: rows shown (default 20, 0 all)\n"
"      --wide                    table format: every column (default: the\n"
"                                columns that fit the terminal, else\n"
"                                $COLUMNS, else 120, by priority; long\n"
"                                paths shortened with '...')\n"
"      --comms N                 top N process commands per cgroup, by CPU\n"
"                                and by exits, with the rest as (other)\n"
"                                (JSON and table; default 0: off)\n"
"      --exes N                  top N executables (paths) per cgroup, by\n"
"                                CPU, exits and crashes, the rest as (other)\n"
"                                (JSON and CSV; default 0: off)\n"
"      --no-histograms           don't keep lifetime, CPU and CPU-delay\n"
"                                distributions per cgroup\n"
"      --no-delay-peaks          don't keep the longest delay per class\n"
"                                (delay_max_s, taskstat_delay_max_seconds)\n"
"      --stream changes|full     snapshot lines: changes (default) write\n"
"                                only the cgroups changed since the last\n"
"                                line, with full ones at the start, after\n"
"                                SIGHUP or SIGUSR2 and every --full-every;\n"
"                                full: every cgroup in every line\n"
"      --full-every N            changes: a full line every N (default 60,\n"
"                                0: only at the start, SIGHUP, SIGUSR2)\n"
"\n"
"Collection:\n"
"      --cpus LIST               cpulist to listen on (default: all\n"
"                                possible CPUs)\n"
"      --shards N                listener sockets (default: one per CPU up\n"
"                                to 16)\n"
"      --rcvbuf BYTES            receive buffer per socket (default 16 MiB)\n"
"      --no-tgid                 ignore per-thread-group aggregate records\n"
"      --no-fork-events          don't track forks with the proc connector\n"
"                                (exits whose parent is gone too then land\n"
"                                in the (unknown) cgroup)\n"
"      --attribution auto|kernel|exact|fast\n"
"                                kernel: the cgroup each task exited in,\n"
"                                from the kernel (BPF; needs CAP_BPF and\n"
"                                CAP_PERFMON, cgroup2, Linux >= 5.12 with\n"
"                                BTF): exact; exact: the /proc fallback,\n"
"                                read /proc/PID/cgroup for each new process\n"
"                                (what it infers from a parent is counted);\n"
"                                fast: the fallback taking a live fork\n"
"                                parent's cached cgroup (a child that moved\n"
"                                itself is counted in its parent's);\n"
"                                auto (default): kernel where it loads,\n"
"                                else exact\n"
"      --kernel-buffer BYTES     kernel source: ring bytes per shard, shared\n"
"                                by its CPUs (default 2 MiB)\n"
"      --depth N                 fold cgroups deeper than N into their\n"
"                                ancestor at depth N\n"
"      --hierarchy v2|CONTROLLER cgroup hierarchy that keys the rollup\n"
"                                (default: v2 if mounted, else the first\n"
"                                v1 controller found)\n"
"      --enable-delayacct        set kernel.task_delayacct to 1 at start,\n"
"                                while still privileged (only tasks\n"
"                                started after that carry delay counts)\n"
"\n"
"Export:\n"
"  -l, --listen ADDR:PORT        serve Prometheus text at /metrics\n"
"      --web-config FILE         HTTPS, mTLS and basic authentication for\n"
"                                --listen (Prometheus web config YAML);\n"
"                                reloaded on SIGHUP or when it changes\n"
"      --textfile PATH           write the same text atomically to PATH\n"
"      --prom-comms              export the --comms commands as series with\n"
"                                a comm label (mind the cardinality)\n"
"      --prom-exes               export the --exes executables as series\n"
"                                with an exe label (the same caution)\n"
"      --prom-workload-labels    add the labels unit, slice, container_id,\n"
"                                pod_uid and qos_class (from each cgroup's\n"
"                                path) to every per-cgroup series\n"
"      --prom-level lean|full    per-cgroup series: lean (default, about\n"
"                                20 per cgroup with exits of its own) or\n"
"                                full (129 with distributions, 41 without)\n"
"      --prom-parents            lean: export ancestors without exits of\n"
"                                their own too (full always does)\n"
"      --prom-max-series N       per-cgroup series at most (default 100000,\n"
"                                0: no limit); past it the cgroups with the\n"
"                                fewest task exits are left out, counted in\n"
"                                taskstat_collector_cgroups_not_exported\n"
"      --retire-after SECONDS    with --listen: a removed cgroup waits this\n"
"                                long at most for a scrape (or /snapshot) to\n"
"                                fetch its final counts, then is forgotten\n"
"                                all the same (default 300, 0: no wait),\n"
"                                counted in\n"
"                                taskstat_collector_retired_unserved_total\n"
"      --retire-max N            with --listen: at most N removed cgroups\n"
"                                wait so (default 10000); beyond, those\n"
"                                removed first go, counted in\n"
"                                taskstat_collector_retired_forced_total too\n"
"      --record FILE             write the raw exit records to a capture\n"
"      --force                   let --record replace an existing capture\n"
"      --replay FILE             read a capture instead of listening\n"
"\n"
"Workloads (names from the node's runtime state, restarts folded):\n"
"      --no-identity             name no container or pod from the\n"
"                                runtimes' files (systemd units only)\n"
"      --no-workloads            no workload view (no taskstat_workload_*\n"
"                                series, no names on JSON rows)\n"
"      --containerd-state DIR    containerd's state (default /run/containerd)\n"
"      --crio-storage DIR        CRI-O's (default /run/containers/storage)\n"
"      --docker-root DIR         Docker's (default /var/lib/docker)\n"
"      --kubelet-logs DIR        the kubelet's pods/ and containers/ log\n"
"                                folders (default /var/log)\n"
"      --workload-retire SECONDS a workload's series go this long after its\n"
"                                last cgroup (default 900)\n"
"\n"
"Cgroups shown (every per-cgroup output; totals count all):\n"
"      --cgroup GLOB             only cgroups whose path matches GLOB\n"
"                                (fnmatch(3); '*' also matches '/');\n"
"                                repeatable: any of them\n"
"      --exclude-cgroup GLOB     not cgroups whose path matches GLOB;\n"
"                                repeatable\n"
"\n"
"  -u, --user NAME               drop to NAME and all capabilities once\n"
"                                the listeners are registered\n"
"      --check                   validate the options and --web-config, try\n"
"                                what the run needs (listener, attribution\n"
"                                source, outputs, socket), print one line\n"
"                                per item; exit 0 if all are ok, else 1\n"
"  -q, --quiet                   print errors only (--log-level error)\n"
"  -v, --verbose                 one level more than so far (repeatable;\n"
"                                from the default: debug)\n"
"      --log-level error|warning|info|debug\n"
"                                messages printed (default info); on the\n"
"                                journal (JOURNAL_STREAM) with priority\n"
"                                prefixes\n"
"  -h, --help                    a one-screen summary\n"
"      --help-all                this text\n"
"  -V, --version                 version\n"
"\n"
"SIGHUP reopens --output and --record (log rotation) and reloads\n"
"--web-config.\n"
"Exit status: 0 after a clean stop, 1 on a runtime error, 2 for an invalid\n"
"option, 3 when writing an output failed. See taskstat-collect(8).\n";

enum {
	OPT_TOP = 256, OPT_TEXTFILE, OPT_RECORD, OPT_REPLAY, OPT_COMMS,
	OPT_NO_HISTOGRAMS, OPT_PROM_COMMS, OPT_PROM_WORKLOAD_LABELS, OPT_WEB_CONFIG,
	OPT_NO_DELAY_PEAKS,
};
enum { OPT_FORCE = 1024 }; /* issue 13 */
enum { OPT_CGROUP = 1088, OPT_EXCLUDE_CGROUP, OPT_PROM_MAX_SERIES };
enum { OPT_RETIRE_AFTER = 1152, OPT_RETIRE_MAX }; /* issue 28 */
enum { OPT_LOG_LEVEL = 1216, OPT_CHECK }; /* issue 25, h-ops */
enum { OPT_PROM_LEVEL = 1280, OPT_PROM_PARENTS }; /* issue 22 */
enum { OPT_STREAM = 1600, OPT_FULL_EVERY }; /* issue 22 item 4 */
enum { OPT_WIDE = 1664, OPT_HELP_ALL }; /* issue 38 */
enum { OPT_EXES = 1920, OPT_PROM_EXES }; /* issue 39, top executables */
/* 1344: the workload view's (options.h) */

static const struct option longopts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "interval", required_argument, NULL, 'i' },
	{ "duration", required_argument, NULL, 'd' },
	{ "events", no_argument, NULL, 'e' },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "wide", no_argument, NULL, OPT_WIDE },
	{ "comms", required_argument, NULL, OPT_COMMS },
	{ "no-histograms", no_argument, NULL, OPT_NO_HISTOGRAMS },
	{ "no-delay-peaks", no_argument, NULL, OPT_NO_DELAY_PEAKS },
	{ "stream", required_argument, NULL, OPT_STREAM },
	{ "full-every", required_argument, NULL, OPT_FULL_EVERY },
	{ "prom-comms", no_argument, NULL, OPT_PROM_COMMS },
	{ "exes", required_argument, NULL, OPT_EXES },
	{ "prom-exes", no_argument, NULL, OPT_PROM_EXES },
	TSC_COLLECTION_OPTIONS(TSC_LONGOPT)
	{ "listen", required_argument, NULL, 'l' },
	{ "textfile", required_argument, NULL, OPT_TEXTFILE },
	{ "web-config", required_argument, NULL, OPT_WEB_CONFIG },
	{ "prom-workload-labels", no_argument, NULL,
	  OPT_PROM_WORKLOAD_LABELS },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "exclude-cgroup", required_argument, NULL, OPT_EXCLUDE_CGROUP },
	{ "prom-max-series", required_argument, NULL, OPT_PROM_MAX_SERIES },
	{ "prom-level", required_argument, NULL, OPT_PROM_LEVEL },
	{ "prom-parents", no_argument, NULL, OPT_PROM_PARENTS },
	{ "retire-after", required_argument, NULL, OPT_RETIRE_AFTER },
	{ "retire-max", required_argument, NULL, OPT_RETIRE_MAX },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "user", required_argument, NULL, 'u' },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "no-identity", no_argument, NULL, TSC_OPT_NO_IDENTITY },
	{ "no-workloads", no_argument, NULL, TSC_OPT_NO_WORKLOADS },
	{ "containerd-state", required_argument, NULL,
	  TSC_OPT_CONTAINERD_STATE },
	{ "crio-storage", required_argument, NULL, TSC_OPT_CRIO_STORAGE },
	{ "docker-root", required_argument, NULL, TSC_OPT_DOCKER_ROOT },
	{ "kubelet-logs", required_argument, NULL, TSC_OPT_KUBELET_LOGS },
	{ "workload-retire", required_argument, NULL,
	  TSC_OPT_WORKLOAD_RETIRE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "help", no_argument, NULL, 'h' },
	{ "help-all", no_argument, NULL, OPT_HELP_ALL },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* The shared value parsers (optparse.c), by their names here. */
#define set_uint tsc_opt_uint
#define set_seconds tsc_opt_seconds
#define set_name tsc_opt_name

void tsc_opts_free(struct tsc_opts *o)
{
	free(o->listen_host);
	o->listen_host = NULL;
	free(o->cgroup_globs);
	o->cgroup_globs = NULL;
	o->ncgroup_globs = 0;
	free(o->exclude_globs);
	o->exclude_globs = NULL;
	o->nexclude_globs = 0;
}

int tsc_glob_check(const char *glob)
{
	if (!*glob)
		return -EINVAL;
	switch (glob[0]) {
	case '/': case '(': /* literal starts of a path */
	case '*': case '?': case '[': case '\\': /* may match them */
		break;
	default:
		return -EDOM;
	}
	if (glob[0] == '\\' && glob[1] != '/' && glob[1] != '(')
		return -EDOM;
	return 0;
}

/* --cgroup or --exclude-cgroup: one more pattern in *v. */
static int add_glob(const char *opt, const char *arg, const char ***v,
		    size_t *n)
{
	int r = tsc_glob_check(arg);

	if (r == -EINVAL)
		return tsc_usage_error(opt, "empty pattern");
	if (r < 0)
		return tsc_usage_error(opt, "'%s' never matches: cgroup paths "
				       "start with '/' (or are %s)", arg,
				       CGS_UNKNOWN_CGROUP);
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return tsc_usage_error(opt, "%s", strerror(ENOMEM));
	nv[(*n)++] = arg;
	*v = nv;
	return 0;
}

static int set_format(const char *arg, enum tsc_format *f)
{
	if (!strcmp(arg, "table"))
		*f = TSC_FMT_TABLE;
	else if (!strcmp(arg, "jsonl") || !strcmp(arg, "json"))
		*f = TSC_FMT_JSONL;
	else if (!strcmp(arg, "csv"))
		*f = TSC_FMT_CSV;
	else
		return tsc_usage_error("--format", "unknown format '%s' "
				       "(table, jsonl or csv)", arg);
	return 0;
}

static int set_attribution(const char *arg, struct tsc_opts *o)
{
	if (!strcmp(arg, "auto"))
		o->attribution = TSC_ATTR_AUTO;
	else if (!strcmp(arg, "kernel"))
		o->attribution = TSC_ATTR_KERNEL;
	else if (!strcmp(arg, "exact"))
		o->attribution = TSC_ATTR_EXACT;
	else if (!strcmp(arg, "fast"))
		o->attribution = TSC_ATTR_FAST;
	else
		return tsc_usage_error("--attribution", "unknown mode '%s' "
				       "(auto, kernel, exact or fast)", arg);
	o->fast_attribution = o->attribution == TSC_ATTR_FAST;
	o->attribution_set = true;
	return 0;
}

static int set_listen(const char *arg, struct tsc_opts *o)
{
	free(o->listen_host);
	o->listen_host = NULL;
	int r = tsc_parse_hostport(arg, &o->listen_host, o->listen_port);
	if (r == -ENOMEM)
		return tsc_usage_error("--listen", "%s", strerror(ENOMEM));
	if (r < 0)
		return tsc_usage_error("--listen", "'%s' is not ADDR:PORT "
				       "(e.g. :9101, 127.0.0.1:9101, "
				       "[::1]:9101)", arg);
	/* an address, not a name to look up: said as such (issue 38) */
	const char *h = o->listen_host;
	unsigned char a[sizeof(struct in6_addr)];
	if (arg[0] == '[' && inet_pton(AF_INET6, h, a) != 1)
		return tsc_usage_error("--listen", "'%s' is not an IPv6 "
				       "address", h);
	if (*h && !h[strspn(h, "0123456789.")] && inet_pton(AF_INET, h, a) != 1)
		return tsc_usage_error("--listen", "'%s' is not an IPv4 "
				       "address", h);
	o->listen = arg;
	return 0;
}

/* One option that getopt accepted: 0 or TSC_EXIT_USAGE. */
/* The Prometheus export's options (--listen and what goes with it). */
static int set_export_option(int c, const char *arg, struct tsc_opts *o)
{
	unsigned long long v;
	int r;

	switch (c) {
	case 'l':
		return set_listen(arg, o);
	case OPT_WEB_CONFIG:
		return set_name("--web-config", arg, "file name",
				&o->web_config);
	case OPT_TEXTFILE:
		return set_name("--textfile", arg, "path", &o->textfile);
	case OPT_PROM_WORKLOAD_LABELS:
		o->prom_workload_labels = true;
		return 0;
	case OPT_PROM_LEVEL:
		if (strcmp(arg, "lean") && strcmp(arg, "full"))
			return tsc_usage_error("--prom-level", "'%s': lean or "
					       "full", arg);
		o->prom_full = arg[0] == 'f';
		return 0;
	case OPT_PROM_PARENTS:
		o->prom_parents = true;
		return 0;
	case OPT_PROM_MAX_SERIES:
		r = set_uint("--prom-max-series", arg, 0, 1000000000, &v);
		if (!r) {
			o->prom_max_series = v;
			o->prom_max_series_set = true;
		}
		return r;
	case OPT_RETIRE_AFTER:
		o->retire_after_set = true;
		return set_seconds("--retire-after", arg, 0,
				   TSC_RETIRE_AFTER_MAX_S * 1000000000ull,
				   "0 to 86400 seconds", &o->retire_after_ns);
	case OPT_RETIRE_MAX:
		r = set_uint("--retire-max", arg, 1, 100000000, &v);
		if (!r) {
			o->retire_max = v;
			o->retire_max_set = true;
		}
		return r;
	}
	return 0;
}

/* --stream, --full-every (stream.h); --wide and --help-all (issue 38) */
static int set_stream(int c, const char *arg, struct tsc_opts *o)
{
	unsigned long long v;
	int r;

	if (c == OPT_WIDE) {
		o->wide = true;
		return 0;
	}
	if (c == OPT_HELP_ALL) {
		fputs(usage, stdout);
		return TSC_PARSE_DONE;
	}
	if (c == OPT_STREAM) {
		if (strcmp(arg, "changes") && strcmp(arg, "full"))
			return tsc_usage_error("--stream", "'%s': changes or "
					       "full", arg);
		o->stream_full = arg[0] == 'f';
		return 0;
	}
	r = set_uint("--full-every", arg, 0, 1000000000, &v);
	if (!r)
		o->full_every = (unsigned)v;
	return r;
}

/* The rankings: --comms N, --exes N and their --prom- exports. */
static int set_rank_option(int c, const char *arg, struct tsc_opts *o)
{
	unsigned long long v;
	bool exes = c == OPT_EXES;
	int r;

	if (c == OPT_PROM_COMMS || c == OPT_PROM_EXES) {
		*(c == OPT_PROM_EXES ? &o->prom_exes : &o->prom_comms) = true;
		return 0;
	}
	r = set_uint(exes ? "--exes" : "--comms", arg, 0, TSC_COMMS_MAX, &v);
	if (!r)
		*(exes ? &o->exes : &o->comms) = (unsigned)v;
	return r;
}

static int set_option(int c, const char *arg, struct tsc_opts *o)
{
	unsigned long long v;
	int r;

	switch (c) {
	case 'f':
		return set_format(arg, &o->format);
	case 'o':
		return set_name("--output", arg, "file name", &o->output);
	case 'i':
		o->interval_set = true;
		return set_seconds("--interval", arg, 10000000ull, UINT64_MAX,
				   "0.01 to 1e9 seconds", &o->interval_ns);
	case 'd':
		return set_seconds("--duration", arg, 1, UINT64_MAX,
				   "more than 0, up to 1e9 seconds",
				   &o->duration_ns);
	case 'e':
		o->events = true;
		return 0;
	case OPT_TOP:
		r = set_uint("--top", arg, 0, 1000000, &v);
		if (!r)
			o->top = (unsigned)v;
		return r;
	case OPT_COMMS:
	case OPT_EXES:
	case OPT_PROM_COMMS:
	case OPT_PROM_EXES:
		return set_rank_option(c, arg, o);
	case OPT_NO_HISTOGRAMS:
		o->no_histograms = true;
		return 0;
	case OPT_NO_DELAY_PEAKS:
		o->no_delay_peaks = true;
		return 0;
	case OPT_STREAM:
	case OPT_FULL_EVERY:
	case OPT_WIDE:
	case OPT_HELP_ALL:
		return set_stream(c, arg, o);
	case TSC_OPT_CPUS:
		return set_name("--cpus", arg, "cpulist", &o->cpus);
	case TSC_OPT_SHARDS:
		r = set_uint("--shards", arg, 1, 1024, &v);
		if (!r)
			o->shards = (unsigned)v;
		return r;
	case TSC_OPT_RCVBUF:
		r = set_uint("--rcvbuf", arg, 65536, 1ull << 31, &v);
		if (!r)
			o->rcvbuf = (size_t)v;
		return r;
	case TSC_OPT_NO_TGID:
		o->no_tgid = true;
		return 0;
	case TSC_OPT_NO_FORK_EVENTS:
		o->no_fork_events = true;
		return 0;
	case TSC_OPT_ATTRIBUTION:
		return set_attribution(arg, o);
	case TSC_OPT_ENABLE_DELAYACCT:
		o->enable_delayacct = true;
		return 0;
	case TSC_OPT_KERNEL_BUFFER:
		r = set_uint("--kernel-buffer", arg, 4096, 1ull << 30, &v);
		if (!r)
			o->kernel_buffer = (size_t)v;
		return r;
	case TSC_OPT_DEPTH:
		r = set_uint("--depth", arg, 1, 4096, &v);
		if (!r)
			o->depth = (unsigned)v;
		return r;
	case TSC_OPT_HIERARCHY:
		if (!*arg || strchr(arg, '/') || strchr(arg, ':') ||
		    strchr(arg, ','))
			return tsc_usage_error("--hierarchy", "'%s' is not "
					       "'v2' or a controller name",
					       arg);
		o->hierarchy = arg;
		return 0;
	case OPT_RECORD:
		return set_name("--record", arg, "file name", &o->record);
	case OPT_FORCE:
		o->force = true;
		return 0;
	case OPT_CGROUP:
		return add_glob("--cgroup", arg, &o->cgroup_globs,
				&o->ncgroup_globs);
	case OPT_EXCLUDE_CGROUP:
		return add_glob("--exclude-cgroup", arg, &o->exclude_globs,
				&o->nexclude_globs);
	case OPT_REPLAY:
		return set_name("--replay", arg, "file name", &o->replay);
	case 'u':
		return set_name("--user", arg, "user name", &o->user);
	case OPT_CHECK:
		o->check = true;
		return 0;
	case 'q': /* the last of -q, -v and --log-level counts */
		o->log_level = TSC_LOG_ERROR;
		return 0;
	case 'v':
		o->log_level = o->log_level < TSC_LOG_WARNING ? TSC_LOG_WARNING
			       : o->log_level < TSC_LOG_INFO ? TSC_LOG_INFO
			       : TSC_LOG_DEBUG;
		return 0;
	case TSC_OPT_NO_IDENTITY ... TSC_OPT_WORKLOAD_RETIRE:
		return tsc_identity_option(c, arg, o);
	case OPT_LOG_LEVEL:
		o->log_level = tsc_log_level_parse(arg);
		return o->log_level < 0 ? tsc_usage_error("--log-level",
			"unknown level '%s' (error, warning, info or debug)",
			arg) : 0;
	}
	return set_export_option(c, arg, o);
}

/* Options that are each fine but not together. */
static int check_combination(const struct tsc_opts *o)
{
	if (o->replay) {
		if (o->record)
			return tsc_usage_error("--record", "cannot be combined "
					       "with --replay");
		if (o->cpus || o->shards || o->rcvbuf || o->no_fork_events)
			return tsc_usage_error(o->cpus ? "--cpus" :
					       o->shards ? "--shards" :
					       o->rcvbuf ? "--rcvbuf" :
					       "--no-fork-events",
					       "has no meaning with --replay");
		if (o->user)
			return tsc_usage_error("--user", "has no meaning with "
					       "--replay (no privileges are "
					       "needed)");
		if (o->attribution_set)
			return tsc_usage_error("--attribution", "has no "
					       "meaning with --replay (records "
					       "carry their cgroup)");
		if (o->kernel_buffer)
			return tsc_usage_error("--kernel-buffer", "has no "
					       "meaning with --replay");
		if (o->enable_delayacct)
			return tsc_usage_error("--enable-delayacct", "has no "
					       "meaning with --replay (the "
					       "records were taken elsewhere)");
	}
	if (o->wide && o->format != TSC_FMT_AUTO && o->format != TSC_FMT_TABLE)
		return tsc_usage_error("--wide", "has no meaning without the "
				       "table format");
	if (o->prom_comms && !o->comms)
		return tsc_usage_error("--prom-comms", "needs --comms N (N > 0)");
	if (o->prom_exes && !o->exes)
		return tsc_usage_error("--prom-exes", "needs --exes N (N > 0)");
	if (o->kernel_buffer && (o->attribution == TSC_ATTR_EXACT ||
				 o->attribution == TSC_ATTR_FAST))
		return tsc_usage_error("--kernel-buffer", "has no meaning with "
				       "--attribution %s (no kernel source)",
				       o->attribution == TSC_ATTR_FAST ?
				       "fast" : "exact");
	if (o->web_config && !o->listen)
		return tsc_usage_error("--web-config", "has no meaning "
				       "without --listen");
	if (o->prom_workload_labels && !o->listen && !o->textfile)
		return tsc_usage_error("--prom-workload-labels", "has no "
				       "meaning without --listen or "
				       "--textfile");
	if ((o->prom_full || o->prom_parents) && !o->listen && !o->textfile)
		return tsc_usage_error(o->prom_full ? "--prom-level" :
				       "--prom-parents", "has no meaning "
				       "without --listen or --textfile");
	if (o->prom_max_series_set && !o->listen && !o->textfile)
		return tsc_usage_error("--prom-max-series", "has no meaning "
				       "without --listen or --textfile");
	if (o->retire_after_set || o->retire_max_set) {
		const char *opt = o->retire_after_set ? "--retire-after"
						      : "--retire-max";
		if (o->replay)
			return tsc_usage_error(opt, "has no meaning with "
					       "--replay (a replay retires no "
					       "cgroup)");
		if (!o->listen)
			return tsc_usage_error(opt, "has no meaning without "
					       "--listen (nothing else waits "
					       "for a consumer)");
	}
	if (o->fast_attribution && o->no_fork_events)
		return tsc_usage_error("--attribution", "'fast' needs fork "
				       "events (cannot be combined with "
				       "--no-fork-events)");
	if (o->record && o->replay == NULL && o->output &&
	    !strcmp(o->record, o->output))
		return tsc_usage_error("--record", "same file as --output");
	return 0;
}

static int set_option_fn(int c, const char *arg, void *o)
{
	return set_option(c, arg, o);
}

int tsc_parse_options(int argc, char **argv, struct tsc_opts *o)
{
	int r;

	memset(o, 0, sizeof(*o));
	o->interval_ns = 5000000000ull;
	o->top = 20;
	o->full_every = TSC_FULL_EVERY;
	o->prom_max_series = TSC_PROM_MAX_SERIES;
	o->retire_after_ns = TSC_RETIRE_AFTER_S * 1000000000ull;
	o->retire_max = TSC_RETIRE_MAX;
	o->log_level = TSC_LOG_INFO;
	r = tsc_getopt_run(argc, argv, ":f:o:i:d:el:u:qvhV", longopts,
			   usage_short, PROG, set_option_fn, o);
	if (!r)
		r = tsc_no_operands(argc, argv);
	return r ? r : check_combination(o);
}
