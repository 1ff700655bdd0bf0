/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Command line of taskstat-query: syntax only, nothing is asked of the
 * kernel here. Value parsers and the getopt loop: cmd/optparse.c. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "optparse.h"
#include "query.h"

static const char usage[] =
"Usage: " TSQ_PROG " [OPTION]... PID\n"
"       " TSQ_PROG " [OPTION]... --tgid TGID\n"
"       " TSQ_PROG " [OPTION]... --cgroup DIR\n"
"Ask the kernel (taskstats) for the accounting of a live thread, a live\n"
"thread group or the task states of a cgroup v1 directory.\n"
"\n"
"  PID                        a thread id (a process's main thread: its pid)\n"
"  -t, --tgid TGID            a thread group, summed over its threads\n"
"  -T, --threads              with --tgid: also each thread of the group\n"
"  -c, --cgroup DIR           task state counts of a cgroup v1 directory\n"
"  -w, --watch SECONDS        query every SECONDS (> 0) and print what\n"
"                             changed: delays as % of the wall time\n"
"  -n, --count N              with --watch: stop after N intervals\n"
"  -j, --json                 one JSON object per line: per query, or per\n"
"                             interval with --watch; the collector's\n"
"                             field names and units (utime_s, delay_cpu_s)\n"
"      --json-names 1.2       with --json: the names of 1.2 instead\n"
"                             (utime_us, a delays object; until 1.4)\n"
"  -h, --help                 this text\n"
"  -V, --version              version of the command and of libcgstats\n"
"\n"
"Pid and thread group queries need CAP_NET_ADMIN; --cgroup needs none.\n"
"Exit status: 0 ok, 1 error, 2 invalid command line, 3 no such pid or\n"
"thread group, 4 not supported here (a cgroup2 directory, no taskstats).\n";

static const struct option longopts[] = {
	{ "tgid", required_argument, NULL, 't' },
	{ "threads", no_argument, NULL, 'T' },
	{ "cgroup", required_argument, NULL, 'c' },
	{ "watch", required_argument, NULL, 'w' },
	{ "count", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ "json-names", required_argument, NULL, 256 },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};


/* A pid or tgid: 1..2^31-1 (pid_t); pid_max is far below. */
static int set_id(const char *opt, const char *arg, struct tsq_opts *o,
		  enum tsq_target t)
{
	unsigned long long v;

	if (o->target)
		return tsc_usage_error(opt, "one of PID, --tgid and --cgroup "
				       "only");
	int r = tsc_opt_uint(opt, arg, 1, 0x7fffffff, &v);
	if (r)
		return r;
	o->target = t;
	o->id = (uint32_t)v;
	return 0;
}

static int set_option(int c, const char *arg, void *ctx)
{
	struct tsq_opts *o = ctx;
	unsigned long long v;
	int r;

	switch (c) {
	case 't':
		return set_id("--tgid", arg, o, TSQ_TGID);
	case 'T':
		o->threads = true;
		return 0;
	case 'c':
		if (o->target)
			return tsc_usage_error("--cgroup", "one of PID, --tgid "
					       "and --cgroup only");
		if (!*arg)
			return tsc_usage_error("--cgroup", "empty directory");
		o->target = TSQ_CGROUP;
		o->cgroup = arg;
		return 0;
	case 'w':
		return tsc_opt_seconds("--watch", arg, 1000000, UINT64_MAX,
				       "0.001 to 1e9 seconds", &o->watch_ns);
	case 'n':
		r = tsc_opt_uint("--count", arg, 1, ~0ull, &v);
		if (r)
			return r;
		o->count = v;
		return 0;
	case 'j':
		o->json = true;
		return 0;
	case 256: /* --json-names */
		if (strcmp(arg, "1.2") && strcmp(arg, "1.3"))
			return tsc_usage_error("--json-names", "'%s': 1.2 (the "
					       "names before 1.3) or 1.3", arg);
		tsq_json_names_12 = !strcmp(arg, "1.2");
		o->json_names = true;
		return 0;
	}
	return tsc_usage_error("?", "unhandled option"); /* not reached */
}

static int check_combination(const struct tsq_opts *o)
{
	if (!o->target)
		return tsc_usage_error("PID", "missing: give a PID, --tgid "
				       "TGID or --cgroup DIR (see --help)");
	if (o->threads && o->target != TSQ_TGID)
		return tsc_usage_error("--threads", "needs --tgid");
	if (o->threads && o->watch_ns)
		return tsc_usage_error("--threads", "cannot be combined with "
				       "--watch");
	if (o->json_names && !o->json)
		return tsc_usage_error("--json-names", "needs --json");
	if (o->count && !o->watch_ns)
		return tsc_usage_error("--count", "needs --watch");
	return 0;
}

int tsq_parse_options(int argc, char **argv, struct tsq_opts *o)
{
	int r;

	memset(o, 0, sizeof(*o));
	tsc_prog = TSQ_PROG;
	r = tsc_getopt_run(argc, argv, ":t:Tc:w:n:jhV", longopts, usage,
			   TSQ_PROG, set_option, o);
	if (r)
		return r;
	if (optind < argc) {
		r = set_id("PID", argv[optind], o, TSQ_PID);
		if (r)
			return r;
		if (optind + 1 < argc)
			return tsc_usage_error(argv[optind + 1], "unexpected "
					       "argument (one PID only)");
	}
	return check_combination(o);
}
