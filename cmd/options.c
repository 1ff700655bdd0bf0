/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgstats.h"
#include "options.h"

#define PROG "taskstat-collect"

static const char usage[] =
"Usage: " PROG " [OPTIONS]\n"
"Collect taskstats exit records per cgroup until SIGINT/SIGTERM.\n"
"Needs root or CAP_NET_ADMIN, except with --replay.\n"
"\n"
"Output:\n"
"  -f, --format table|jsonl|csv  snapshot format (default: table on a\n"
"                                terminal, jsonl otherwise)\n"
"  -o, --output FILE             write to FILE instead of stdout\n"
"  -i, --interval SECONDS        between snapshots (default 5, fractions ok)\n"
"  -d, --duration SECONDS        stop after this long (default: run until\n"
"                                SIGINT/SIGTERM); a final snapshot is\n"
"                                always written\n"
"  -e, --events                  also write one line per exit record\n"
"      --top N                   table format: rows shown (default 20, 0 all)\n"
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
"\n"
"Export:\n"
"  -l, --listen ADDR:PORT        serve Prometheus text at /metrics\n"
"      --textfile PATH           write the same text atomically to PATH\n"
"      --record FILE             write the raw exit records to a capture\n"
"      --replay FILE             read a capture instead of listening\n"
"\n"
"  -u, --user NAME               drop to NAME and all capabilities once\n"
"                                the listeners are registered\n"
"  -h, --help                    this text\n"
"  -V, --version                 version\n"
"\n"
"Exit status: 0 after a clean stop, 1 on a runtime error, 2 for an invalid\n"
"option. See taskstat-collect(8).\n";

enum {
	OPT_TOP = 256, OPT_CPUS, OPT_SHARDS, OPT_RCVBUF, OPT_NO_TGID, OPT_DEPTH,
	OPT_HIERARCHY, OPT_TEXTFILE, OPT_RECORD, OPT_REPLAY, OPT_NO_FORK_EVENTS,
	OPT_ATTRIBUTION, OPT_KERNEL_BUFFER,
};

static const struct option longopts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "interval", required_argument, NULL, 'i' },
	{ "duration", required_argument, NULL, 'd' },
	{ "events", no_argument, NULL, 'e' },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "shards", required_argument, NULL, OPT_SHARDS },
	{ "rcvbuf", required_argument, NULL, OPT_RCVBUF },
	{ "no-tgid", no_argument, NULL, OPT_NO_TGID },
	{ "no-fork-events", no_argument, NULL, OPT_NO_FORK_EVENTS },
	{ "attribution", required_argument, NULL, OPT_ATTRIBUTION },
	{ "kernel-buffer", required_argument, NULL, OPT_KERNEL_BUFFER },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "hierarchy", required_argument, NULL, OPT_HIERARCHY },
	{ "listen", required_argument, NULL, 'l' },
	{ "textfile", required_argument, NULL, OPT_TEXTFILE },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "user", required_argument, NULL, 'u' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

const char *tsc_format_name(enum tsc_format f)
{
	switch (f) {
	case TSC_FMT_TABLE: return "table";
	case TSC_FMT_JSONL: return "jsonl";
	case TSC_FMT_CSV: return "csv";
	default: return "auto";
	}
}

int tsc_parse_seconds(const char *s, uint64_t *ns)
{
	char *end;

	/* strtod would take "inf", "nan", hex floats and leading blanks. */
	if (!*s || !strchr("0123456789.", s[0]))
		return -EINVAL;
	for (const char *p = s; *p; p++)
		if (!strchr("0123456789.eE+-", *p))
			return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v) || v < 0)
		return -EINVAL;
	if (v > 1e9) /* about 31 years: also keeps *ns in range */
		return -ERANGE;
	*ns = (uint64_t)llround(v * 1e9);
	return 0;
}

int tsc_parse_uint(const char *s, unsigned long long min,
		   unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!*s || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int tsc_parse_hostport(const char *s, char **host, char port[8])
{
	const char *colon;
	const char *h = s;
	size_t hlen;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		h = s + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -EINVAL; /* bare IPv6 needs brackets */
		hlen = (size_t)(colon - s);
	}
	unsigned long long p;
	if (tsc_parse_uint(colon + 1, 0, 65535, &p) < 0)
		return -ERANGE;
	*host = strndup(h, hlen);
	if (!*host)
		return -ENOMEM;
	snprintf(port, 8, "%llu", p);
	return 0;
}

static int bad(const char *opt, const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": --%s: ", opt);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return TSC_EXIT_USAGE;
}

static int set_uint(const char *opt, const char *arg, unsigned long long min,
		    unsigned long long max, unsigned long long *out)
{
	int r = tsc_parse_uint(arg, min, max, out);
	if (r == -EINVAL)
		return bad(opt, "'%s' is not a non-negative integer", arg);
	if (r < 0) {
		fprintf(stderr, PROG ": --%s: '%s' is out of range (%llu..%llu)\n",
			opt, arg, min, max);
		return TSC_EXIT_USAGE;
	}
	return 0;
}

void tsc_opts_free(struct tsc_opts *o)
{
	free(o->listen_host);
	o->listen_host = NULL;
}

int tsc_parse_options(int argc, char **argv, struct tsc_opts *o)
{
	unsigned long long v;
	int c, r;

	memset(o, 0, sizeof(*o));
	o->interval_ns = 5000000000ull;
	o->top = 20;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:i:d:el:u:hV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "table"))
				o->format = TSC_FMT_TABLE;
			else if (!strcmp(optarg, "jsonl") ||
				 !strcmp(optarg, "json"))
				o->format = TSC_FMT_JSONL;
			else if (!strcmp(optarg, "csv"))
				o->format = TSC_FMT_CSV;
			else
				return bad("format", "unknown format '%s' "
					   "(table, jsonl or csv)", optarg);
			break;
		case 'o':
			if (!*optarg)
				return bad("output", "empty file name%s", "");
			o->output = optarg;
			break;
		case 'i':
			o->interval_set = true;
			r = tsc_parse_seconds(optarg, &o->interval_ns);
			if (r == -EINVAL)
				return bad("interval", "'%s' is not a "
					   "non-negative number of seconds",
					   optarg);
			if (r < 0 || o->interval_ns < 10000000ull)
				return bad("interval", "'%s' is out of range "
					   "(0.01 to 1e9 seconds)", optarg);
			break;
		case 'd':
			r = tsc_parse_seconds(optarg, &o->duration_ns);
			if (r == -EINVAL)
				return bad("duration", "'%s' is not a "
					   "non-negative number of seconds",
					   optarg);
			if (r < 0 || o->duration_ns == 0)
				return bad("duration", "'%s' is out of range "
					   "(more than 0, up to 1e9 seconds)",
					   optarg);
			break;
		case 'e':
			o->events = true;
			break;
		case OPT_TOP:
			if ((r = set_uint("top", optarg, 0, 1000000, &v)))
				return r;
			o->top = (unsigned)v;
			break;
		case OPT_CPUS:
			if (!*optarg)
				return bad("cpus", "empty cpulist%s", "");
			o->cpus = optarg;
			break;
		case OPT_SHARDS:
			if ((r = set_uint("shards", optarg, 1, 1024, &v)))
				return r;
			o->shards = (unsigned)v;
			break;
		case OPT_RCVBUF:
			if ((r = set_uint("rcvbuf", optarg, 65536, 1ull << 31,
					  &v)))
				return r;
			o->rcvbuf = (size_t)v;
			break;
		case OPT_NO_TGID:
			o->no_tgid = true;
			break;
		case OPT_NO_FORK_EVENTS:
			o->no_fork_events = true;
			break;
		case OPT_ATTRIBUTION:
			if (!strcmp(optarg, "auto"))
				o->attribution = TSC_ATTR_AUTO;
			else if (!strcmp(optarg, "kernel"))
				o->attribution = TSC_ATTR_KERNEL;
			else if (!strcmp(optarg, "exact"))
				o->attribution = TSC_ATTR_EXACT;
			else if (!strcmp(optarg, "fast"))
				o->attribution = TSC_ATTR_FAST;
			else
				return bad("attribution", "unknown mode '%s' "
					   "(auto, kernel, exact or fast)",
					   optarg);
			o->fast_attribution = o->attribution == TSC_ATTR_FAST;
			o->attribution_set = true;
			break;
		case OPT_KERNEL_BUFFER:
			if ((r = set_uint("kernel-buffer", optarg, 4096,
					  1ull << 30, &v)))
				return r;
			o->kernel_buffer = (size_t)v;
			break;
		case OPT_DEPTH:
			if ((r = set_uint("depth", optarg, 1, 4096, &v)))
				return r;
			o->depth = (unsigned)v;
			break;
		case OPT_HIERARCHY:
			if (!*optarg || strchr(optarg, '/') ||
			    strchr(optarg, ':') || strchr(optarg, ','))
				return bad("hierarchy", "'%s' is not 'v2' or a "
					   "controller name", optarg);
			o->hierarchy = optarg;
			break;
		case 'l':
			free(o->listen_host);
			o->listen_host = NULL;
			r = tsc_parse_hostport(optarg, &o->listen_host,
					       o->listen_port);
			if (r == -ENOMEM)
				return bad("listen", "%s", strerror(ENOMEM));
			if (r < 0)
				return bad("listen", "'%s' is not ADDR:PORT "
					   "(e.g. :9101, 127.0.0.1:9101, "
					   "[::1]:9101)", optarg);
			o->listen = optarg;
			break;
		case OPT_TEXTFILE:
			if (!*optarg)
				return bad("textfile", "empty path%s", "");
			o->textfile = optarg;
			break;
		case OPT_RECORD:
			if (!*optarg)
				return bad("record", "empty file name%s", "");
			o->record = optarg;
			break;
		case OPT_REPLAY:
			if (!*optarg)
				return bad("replay", "empty file name%s", "");
			o->replay = optarg;
			break;
		case 'u':
			if (!*optarg)
				return bad("user", "empty user name%s", "");
			o->user = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 'V':
			printf(PROG " %s (libcgstats %s)\n", TSC_VERSION,
			       cgs_version());
			return 1;
		case ':':
			fprintf(stderr, PROG ": %s: missing value\n",
				argv[optind - 1]);
			return TSC_EXIT_USAGE;
		default:
			if (optopt)
				fprintf(stderr, PROG ": -%c: unknown option "
					"(see --help)\n", optopt);
			else
				fprintf(stderr, PROG ": %s: unknown option "
					"(see --help)\n", argv[optind - 1]);
			return TSC_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": %s: unexpected argument (see --help)\n",
			argv[optind]);
		return TSC_EXIT_USAGE;
	}
	if (o->replay) {
		if (o->record)
			return bad("record", "cannot be combined with "
				   "--replay%s", "");
		if (o->cpus || o->shards || o->rcvbuf || o->no_fork_events)
			return bad(o->cpus ? "cpus" : o->shards ? "shards" :
				   o->rcvbuf ? "rcvbuf" : "no-fork-events",
				   "has no meaning with --replay%s", "");
		if (o->user)
			return bad("user", "has no meaning with --replay "
				   "(no privileges are needed)%s", "");
		if (o->attribution_set)
			return bad("attribution", "has no meaning with "
				   "--replay (records carry their cgroup)%s",
				   "");
		if (o->kernel_buffer)
			return bad("kernel-buffer", "has no meaning with "
				   "--replay%s", "");
	}
	if (o->kernel_buffer && (o->attribution == TSC_ATTR_EXACT ||
				 o->attribution == TSC_ATTR_FAST))
		return bad("kernel-buffer", "has no meaning with "
			   "--attribution %s (no kernel source)",
			   o->attribution == TSC_ATTR_FAST ? "fast" : "exact");
	if (o->fast_attribution && o->no_fork_events)
		return bad("attribution", "'fast' needs fork events (cannot "
			   "be combined with --no-fork-events)%s", "");
	if (o->record && o->replay == NULL && o->output &&
	    !strcmp(o->record, o->output))
		return bad("record", "same file as --output%s", "");
	return 0;
}
