/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Command line of taskstat-top: its own options and the collector's
 * options that apply to a view (same names, same checks: optparse.c's
 * value parsers, setup.c's system checks). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgstats.h"
#include "options.h"
#include "top.h"

static const char usage[] =
"Usage: " TOP_PROG " [OPTIONS]\n"
"Live view of task exits per cgroup: rates per interval, sorted, as a tree.\n"
"Runs its own listener (root or CAP_NET_ADMIN), or reads a running\n"
"taskstat-collect --listen with --connect.\n"
"\n"
"View:\n"
"  -i, --interval SECONDS        between refreshes (default 2; with\n"
"                                --connect the collector's interval)\n"
"  -d, --duration SECONDS        stop after this long\n"
"  -n, --iterations N            stop after N refreshes\n"
"  -b, --batch                   the plain table even on a terminal\n"
"  -s, --sort COLUMN             name, exits, procs, cpu, cpudly, iodly,\n"
"                                read, write, fail, oom or total (default\n"
"                                exits)\n"
"      --flat                    start in the flat list (default: tree)\n"
"      --max-depth N             tree: show cgroups down to depth N\n"
"      --match TEXT              only cgroups whose path contains TEXT\n"
"                                (and, in the tree, their ancestors)\n"
"  -c, --connect HOST:PORT       read GET /snapshot of a taskstat-collect\n"
"                                started with --listen HOST:PORT\n"
"\n"
"Collection (standalone; as in taskstat-collect(8)):\n"
"      --cpus LIST, --shards N, --rcvbuf BYTES, --no-tgid,\n"
"      --no-fork-events, --attribution auto|kernel|exact|fast,\n"
"      --kernel-buffer BYTES, --hierarchy v2|CONTROLLER, --depth N,\n"
"      --enable-delayacct\n"
"\n"
"Keys: q quit, h help, t tree/flat, < > sort column (or its letter: N E P\n"
"C Y B R W F O T), r reverse, - + Enter fold, d depth, p pause.\n"
"  -h, --help                    this text\n"
"  -V, --version                 version\n"
"\n"
"Exit status: 0 after q or a clean stop, 1 on a runtime error, 2 for an\n"
"invalid option. See taskstat-top(1).\n";

enum { OPT_FLAT = 256, OPT_MAX_DEPTH, OPT_MATCH };

static const struct option longopts[] = {
	{ "interval", required_argument, NULL, 'i' },
	{ "duration", required_argument, NULL, 'd' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "batch", no_argument, NULL, 'b' },
	{ "sort", required_argument, NULL, 's' },
	{ "flat", no_argument, NULL, OPT_FLAT },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "match", required_argument, NULL, OPT_MATCH },
	{ "connect", required_argument, NULL, 'c' },
	TSC_COLLECTION_OPTIONS(TSC_LONGOPT)
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* The collector's spelling of each collection option. */
#define SHARED(name, has_arg, code)                                          \
	{ code, "--" name, has_arg == required_argument },
static const struct {
	int code;
	const char *collect;
	bool arg;
} shared[] = { TSC_COLLECTION_OPTIONS(SHARED) };

int top_sort_by_name(const char *s)
{
	static const char *const names[M__COUNT] = {
		[M_EXITS] = "exits", [M_PROCS] = "procs", [M_CPU] = "cpu",
		[M_CPUDLY] = "cpudly", [M_IODLY] = "iodly", [M_READ] = "read",
		[M_WRITE] = "write", [M_FAIL] = "fail", [M_OOM] = "oom",
		[M_TOTAL] = "total", [M_MAXWAIT] = "maxwait",
	};
	if (!strcmp(s, "name"))
		return TOP_SORT_NAME;
	for (int m = 0; m < M__COUNT; m++)
		if (!strcmp(s, names[m]))
			return m;
	return -1;
}

void top_opts_free(struct top_opts *o)
{
	free(o->connect_host);
	o->connect_host = NULL;
	free(o->argv);
	o->argv = NULL;
	tsc_opts_free(&o->tsc);
}

/* Hand a collection option on to the collector's parser, as it spells
 * it. */
static void pass_on(int c, const char *arg, struct top_opts *o)
{
	for (size_t k = 0; k < sizeof(shared) / sizeof(shared[0]); k++) {
		if (shared[k].code != c)
			continue;
		o->argv[o->argc++] = (char *)shared[k].collect;
		if (shared[k].arg)
			o->argv[o->argc++] = (char *)arg;
		o->collection = shared[k].collect;
	}
}

static int set_option(int c, const char *arg, void *ctx)
{
	struct top_opts *o = ctx;
	unsigned long long v;
	int r;

	switch (c) {
	case 'd':
		return tsc_opt_seconds("--duration", arg, 1, UINT64_MAX,
				       "more than 0, up to 1e9 seconds",
				       &o->tsc.duration_ns);
	case 'n':
		r = tsc_opt_uint("--iterations", arg, 1, 1ull << 40, &v);
		if (!r)
			o->iterations = v;
		return r;
	case 'b':
		o->batch = true;
		return 0;
	case 's':
		o->sort = top_sort_by_name(arg);
		if (o->sort < 0)
			return tsc_usage_error("--sort", "unknown column '%s' "
					       "(see --help)", arg);
		return 0;
	case OPT_FLAT:
		o->flat = true;
		return 0;
	case OPT_MAX_DEPTH:
		r = tsc_opt_uint("--max-depth", arg, 1, 4096, &v);
		if (!r)
			o->max_depth = (unsigned)v;
		return r;
	case OPT_MATCH:
		o->match = arg;
		return 0;
	case 'c':
		o->connect = arg;
		r = tsc_parse_hostport(arg, &o->connect_host, o->connect_port);
		if (r < 0 || !strcmp(o->connect_port, "0"))
			return tsc_usage_error("--connect", "'%s' is not "
					       "HOST:PORT (e.g. 127.0.0.1:9101)",
					       arg);
		return 0;
	case 'i': /* checked by the collector's parser */
		o->argv[o->argc++] = (char *)"--interval";
		o->argv[o->argc++] = (char *)arg;
		return 0;
	}
	pass_on(c, arg, o);
	return 0;
}

int top_parse_options(int argc, char **argv, struct top_opts *o)
{
	int r;

	memset(o, 0, sizeof(*o));
	tsc_prog = TOP_PROG;
	o->sort = M_EXITS;
	/* what is shared goes to the collector's parser, as it spells it */
	o->argv = calloc((size_t)argc * 2 + 2, sizeof(*o->argv));
	if (!o->argv)
		return tsc_usage_error(argv[0], "out of memory");
	o->argv[o->argc++] = argv[0];
	r = tsc_getopt_run(argc, argv, ":i:d:n:bs:c:hV", longopts, usage,
			   TOP_PROG, set_option, o);
	if (!r)
		r = tsc_no_operands(argc, argv);
	if (r)
		return r;
	uint64_t duration = o->tsc.duration_ns;
	r = tsc_parse_options(o->argc, o->argv, &o->tsc);
	if (r)
		return r;
	o->tsc.duration_ns = duration;
	if (!o->tsc.interval_set)
		o->tsc.interval_ns = 2000000000ull;
	if (o->connect && o->collection)
		return tsc_usage_error(o->collection, "has no meaning with "
				       "--connect (the collector collects)");
	return 0;
}
