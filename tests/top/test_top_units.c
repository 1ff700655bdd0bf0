/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of taskstat-top's pure parts: human units, the snapshot
 * line parser, rates and subtree sums between two frames, the tree and
 * flat orders, folding and depth, the layout by width, the options. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "top.h"

static const char *human(double v, enum top_unit u)
{
	static char b[32];
	top_human(b, sizeof(b), v, u);
	return b;
}

static void t_human(void **state)
{
	(void)state;
	assert_string_equal(human(0, TU_COUNT), "0");
	assert_string_equal(human(0.5, TU_COUNT), "0.5");
	assert_string_equal(human(12.3, TU_COUNT), "12");
	assert_string_equal(human(1234, TU_COUNT), "1.2k");
	assert_string_equal(human(1.5e6, TU_COUNT), "1.5M");
	assert_string_equal(human(870e-6, TU_SECONDS), "870 us");
	assert_string_equal(human(0.0123, TU_SECONDS), "12 ms");
	assert_string_equal(human(1.23, TU_SECONDS), "1.2 s");
	assert_string_equal(human(512, TU_BYTES), "512 B");
	assert_string_equal(human(3.4 * 1048576, TU_BYTES), "3.4 MiB");
	assert_string_equal(human(1.2 * 1073741824.0, TU_BYTES), "1.2 GiB");
	assert_string_equal(human(-1, TU_BYTES), "0");
	/* every value fits the 8 columns of a cell */
	for (double v = 1e-9; v < 1e18; v *= 3.7)
		for (int u = TU_COUNT; u <= TU_BYTES; u++)
			assert_true(strlen(human(v, (enum top_unit)u)) <= 8);
}

/* A rollup line as the collector writes it (the members top reads). */
static char *line(double time, uint64_t seq, const char *cgroups)
{
	static char b[4096];
	snprintf(b, sizeof(b), "{\"type\":\"rollup\",\"time\":%.3f,"
		 "\"seq\":%llu,\"interval_s\":1.0,\"hierarchy\":\"v2\","
		 "\"records\":10,\"dropped\":1,\"unattributed\":2,"
		 "\"malformed\":0,\"attribution_source\":\"kernel\","
		 "\"oom_source\":\"kernel\",\"delayacct\":true,"
		 "\"cgroups\":[%s]}\n", time, (unsigned long long)seq, cgroups);
	return b;
}

#define CG(path, depth, tasks, cpu_s, fail) \
	"{\"cgroup\":\"" path "\",\"depth\":" #depth ",\"removed\":false," \
	"\"tasks\":" #tasks ",\"processes\":" #tasks ",\"utime_s\":" #cpu_s \
	",\"stime_s\":0.0,\"delay_cpu_s\":0.5,\"read_bytes\":4096," \
	"\"outcomes\":{\"clean\":0,\"exit_nonzero\":" #fail ",\"signaled\":1," \
	"\"core_dumped\":0,\"oom_kills\":null,\"signals\":{}}}"

static void t_frame(void **state)
{
	struct top_frame f;
	char err[128];
	(void)state;
	const char *l = line(100.5, 7, CG("/", 0, 3, 1.5, 2) ","
			     CG("/a", 1, 4, 0.25, 0));
	assert_int_equal(top_frame_parse(l, strlen(l), &f, err, sizeof(err)),
			 0);
	assert_int_equal(f.seq, 7);
	assert_true(f.time == 100.5);
	assert_int_equal(f.dropped, 1);
	assert_int_equal(f.unattributed, 2);
	assert_string_equal(f.attribution, "kernel");
	assert_true(f.oom_counted);
	assert_int_equal(f.delayacct, 1);
	assert_int_equal(f.n, 2);
	assert_string_equal(f.cg[1].path, "/a");
	assert_int_equal(f.cg[1].depth, 1);
	assert_true(f.cg[0].cum[M_EXITS] == 3);
	assert_true(f.cg[0].cum[M_CPU] == 1.5);
	assert_true(f.cg[0].cum[M_FAIL] == 3); /* nonzero 2 + signaled 1 */
	assert_true(f.cg[0].cum[M_OOM] == 0);  /* null: not counted */
	assert_true(f.cg[0].cum[M_READ] == 4096);
	top_frame_free(&f);

	static const char *const bad[] = {
		"", "[]", "{\"type\":\"exit\"}", "{\"type\":\"rollup\"}",
		"{\"type\":\"rollup\",\"cgroups\":[{}]}",
		"{\"type\":\"rollup\",\"cgroups\":[]} {}",
		"{\"type\":\"rollup\",\"cgroups\":[",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(top_frame_parse(bad[i], strlen(bad[i]), &f,
						 err, sizeof(err)), -EBADMSG);
		assert_true(err[0] != '\0');
		assert_null(f.cg);
	}
}

static void push(struct top_view *v, double time, const char *cgroups)
{
	struct top_frame f;
	char err[128];
	const char *l = line(time, (uint64_t)time, cgroups);
	assert_int_equal(top_frame_parse(l, strlen(l), &f, err, sizeof(err)),
			 0);
	assert_int_equal(top_view_push(v, &f), 0);
}

static const char *vis(const struct top_view *v, size_t k)
{
	return k < v->nvis ? v->rows[v->vis[k]].path : NULL;
}

/* A row with delay peaks (delay_max_s as the collector writes it) */
#define CGPK(path, depth, peaks) \
	"{\"cgroup\":\"" path "\",\"depth\":" #depth ",\"removed\":false," \
	"\"tasks\":1,\"processes\":1,\"outcomes\":{}" peaks "}"

/* MAXWAIT: the largest class of the row's delay_max_s, 0 without it; a
 * subtree's is its largest row's, not a sum; never a rate. */
static void t_maxwait(void **state)
{
	struct top_view v;
	(void)state;
	top_view_init(&v);
	push(&v, 10, CGPK("/", 0, "") "," CGPK("/a", 1,
		 ",\"delay_max_s\":{\"cpu\":0.002,\"blkio\":0.030}") ","
		 CGPK("/a/x", 2, ",\"delay_max_s\":{\"cpu\":0.020}") ","
		 CGPK("/b", 1, ",\"delay_max_s\":{\"cpu\":0.001}"));
	assert_true(v.rows[0].self[M_MAXWAIT] == 0);
	assert_true(v.rows[1].self[M_MAXWAIT] == 0.030);
	assert_true(v.rows[2].self[M_MAXWAIT] == 0.020);
	assert_true(v.rows[1].sub[M_MAXWAIT] == 0.030);
	assert_true(v.rows[0].sub[M_MAXWAIT] == 0.030);
	assert_true(v.rows[3].sub[M_MAXWAIT] == 0.001);
	push(&v, 11, CGPK("/", 0, "") "," CGPK("/a", 1,
		 ",\"delay_max_s\":{\"cpu\":0.002,\"blkio\":0.030}"));
	assert_true(v.rows[1].self[M_MAXWAIT] == 0.030); /* not a rate */
	assert_int_equal(top_sort_by_name("maxwait"), M_MAXWAIT);
	top_view_free(&v);
}

static void t_view(void **state)
{
	struct top_view v;
	(void)state;
	top_view_init(&v);
	push(&v, 10, CG("/", 0, 0, 0, 0) "," CG("/a", 1, 10, 1, 0) ","
		 CG("/a/x", 2, 100, 1, 0) "," CG("/b", 1, 0, 0, 0) ","
		 CG("(unknown)", 0, 5, 0, 0));
	assert_false(v.have_prev);
	assert_true(v.rows[1].self[M_EXITS] == 0); /* no rate yet */
	assert_true(v.rows[2].self[M_TOTAL] == 100); /* the total is */
	/* 2 s later: /a +10 exits +1 s CPU, /a/x +40 exits, /b +20 exits
	 * +6 s CPU, and a new /b/y with 4 exits */
	push(&v, 12, CG("/", 0, 0, 0, 0) "," CG("/a", 1, 20, 2, 0) ","
		 CG("/a/x", 2, 140, 1, 0) "," CG("/b", 1, 20, 6, 0) ","
		 CG("/b/y", 2, 4, 0, 0) "," CG("(unknown)", 0, 5, 0, 0));
	assert_true(v.have_prev);
	assert_true(v.dt == 2);
	assert_true(v.rows[1].self[M_EXITS] == 5);
	assert_true(v.rows[1].sub[M_EXITS] == 25);  /* 5 + 20 of /a/x */
	assert_true(v.rows[4].self[M_EXITS] == 2);  /* new: all of it */
	assert_true(v.rows[0].sub[M_EXITS] == 37);  /* 5+20+10+2 */
	assert_true(v.rows[3].sub[M_CPU] == 3);
	assert_int_equal(v.rows[2].parent, 1);
	assert_int_equal(v.rows[5].parent, -1);
	assert_true(v.rows[1].children && !v.rows[2].children);

	/* tree by exits: /, /a (25) before /b (12), then (unknown) */
	assert_int_equal(v.nvis, 6);
	assert_string_equal(vis(&v, 0), "/");
	assert_string_equal(vis(&v, 1), "/a");
	assert_string_equal(vis(&v, 2), "/a/x");
	assert_string_equal(vis(&v, 3), "/b");
	assert_string_equal(vis(&v, 5), "(unknown)");
	/* by CPU: /b (3/s) before /a (0.5/s) */
	v.sort = M_CPU;
	top_view_order(&v);
	assert_string_equal(vis(&v, 1), "/b");
	assert_string_equal(vis(&v, 3), "/a");
	/* flat by exits: the own counts, over every cgroup */
	v.tree = false;
	v.sort = M_EXITS;
	top_view_order(&v);
	assert_string_equal(vis(&v, 0), "/a/x");
	assert_string_equal(vis(&v, 1), "/b");
	assert_string_equal(vis(&v, 2), "/a");
	v.reverse = true;
	top_view_order(&v);
	assert_string_equal(vis(&v, v.nvis - 1), "/a/x");
	v.reverse = false;
	v.tree = true;
	top_view_order(&v);

	/* fold the selected /a: /a/x goes; the selection survives a new
	 * frame and a new order */
	top_view_move(&v, 1);
	assert_string_equal(vis(&v, v.cursor), "/a");
	top_view_fold(&v, 1);
	assert_int_equal(v.nvis, 5);
	assert_true(top_view_is_collapsed(&v, "/a"));
	push(&v, 14, CG("/", 0, 0, 0, 0) "," CG("/a", 1, 20, 2, 0) ","
		 CG("/a/x", 2, 140, 1, 0) "," CG("/b", 1, 100, 6, 0));
	assert_int_equal(v.nvis, 3);
	assert_string_equal(vis(&v, v.cursor), "/a");
	top_view_fold(&v, -1);
	assert_int_equal(v.nvis, 4);
	/* folding a leaf does nothing */
	top_view_move(&v, 1);
	top_view_fold(&v, 1);
	assert_int_equal(v.ncollapsed, 0);

	/* depth: 1, 2 (the deepest), all */
	top_view_next_depth(&v);
	assert_int_equal(v.max_depth, 1);
	assert_int_equal(v.nvis, 3);
	top_view_next_depth(&v);
	assert_int_equal(v.max_depth, 2);
	top_view_next_depth(&v);
	assert_int_equal(v.max_depth, 0);
	assert_int_equal(v.nvis, 4);

	/* --match: the matching rows and, in the tree, their ancestors */
	v.match = "x";
	top_view_order(&v);
	assert_int_equal(v.nvis, 3);
	assert_string_equal(vis(&v, 2), "/a/x");
	v.tree = false;
	top_view_order(&v);
	assert_int_equal(v.nvis, 1);
	top_view_free(&v);
}

static void t_render(void **state)
{
	struct top_view v;
	struct top_line *l;
	struct top_status st = { .source = "live", .interval_s = 2 };
	(void)state;
	top_view_init(&v);
	push(&v, 10, CG("/", 0, 0, 0, 0) "," CG("/a", 1, 1, 0, 0));
	push(&v, 11, CG("/", 0, 0, 0, 0) "," CG("/a", 1, 3, 0.002, 0));
	size_t n = top_render(&v, &st, 80, 24, &l);
	assert_int_equal(n, TOP_HEAD_LINES + 2);
	for (size_t i = 0; i < n; i++)
		assert_true(strlen(l[i].text) <= 80);
	const char *head = l[TOP_HEAD_LINES - 1].text;
	assert_non_null(strstr(head, "EXITS/s*"));
	assert_non_null(strstr(head, "CPU/s"));
	assert_null(strstr(head, "PROCS/s")); /* not at 80 columns */
	assert_int_equal(l[TOP_HEAD_LINES].attr, TA_SEL);
	assert_non_null(strstr(l[TOP_HEAD_LINES + 1].text, "  a "));
	assert_non_null(strstr(l[TOP_HEAD_LINES + 1].text, "2 ms"));
	free(l);
	n = top_render(&v, &st, 200, 5, &l); /* 5 lines: one row */
	assert_int_equal(n, 5);
	assert_non_null(strstr(l[TOP_HEAD_LINES - 1].text, "PROCS/s"));
	assert_non_null(strstr(l[TOP_HEAD_LINES - 1].text, "OOM/s"));
	free(l);
	st.help = true;
	n = top_render(&v, &st, 80, 24, &l);
	assert_non_null(strstr(l[TOP_HEAD_LINES - 1].text, "Keys"));
	free(l);
	top_view_free(&v);
}

/* A JSON row with the runtimes' names (issue 24): a WORKLOAD column, last,
 * "-" for rows without; none at all when no row has one. */
#define CGW(path, depth, ns, pod, ctr) \
	"{\"cgroup\":\"" path "\",\"depth\":" #depth ",\"tasks\":1," \
	"\"namespace\":\"" ns "\",\"pod\":\"" pod "\"" ctr "}"
static void t_workload(void **state)
{
	struct top_view v;
	struct top_line *l;
	struct top_status st = { .source = "live", .interval_s = 2 };
	(void)state;
	top_view_init(&v);
	push(&v, 10, CG("/", 0, 0, 0, 0) "," CGW("/k/c1", 1, "prod", "shop",
		 ",\"container_name\":\"web\"") "," CGW("/k/p", 1, "prod",
		 "shop", ""));
	v.tree = false;
	top_view_order(&v);
	size_t n = top_render(&v, &st, 0, 0, &l); /* plain: every column */
	assert_non_null(strstr(l[TOP_HEAD_LINES - 1].text, "  WORKLOAD"));
	int named = 0, dash = 0;
	for (size_t i = TOP_HEAD_LINES; i < n; i++) {
		const char *t = l[i].text;
		if (strstr(t, "/k/c1"))
			named += strstr(t, "  prod/shop/web") != NULL;
		else if (strstr(t, "/k/p"))
			named += strstr(t, "  prod/shop") != NULL;
		else
			dash += strlen(t) > 3 && !strcmp(t + strlen(t) - 3,
							  "  -");
	}
	assert_int_equal(named, 2);
	assert_int_equal(dash, 1);
	free(l);
	n = top_render(&v, &st, 60, 24, &l); /* clipped to the width */
	for (size_t i = TOP_HEAD_LINES - 1; i < n; i++)
		assert_true(strlen(l[i].text) <= 60);
	free(l);
	push(&v, 11, CG("/", 0, 0, 0, 0));
	n = top_render(&v, &st, 0, 0, &l);
	assert_null(strstr(l[TOP_HEAD_LINES - 1].text, "WORKLOAD"));
	free(l);
	top_view_free(&v);
}

/* The help screen fits 80x24 (issue 38): every page within 24 lines of
 * 80 columns, a footer when there is more, and every line of it over the
 * pages (the last column's too); one page on a tall terminal. */
static void t_help(void **state)
{
	struct top_view v;
	struct top_line *l;
	struct top_status st = { .source = "live", .interval_s = 2 };
	(void)state;
	top_view_init(&v);
	push(&v, 10, CG("/", 0, 0, 0, 0));
	unsigned pages = top_help_pages(24);
	assert_true(pages >= 2);
	bool last_metric = false, keys = false;
	for (st.help = 1; st.help <= pages; st.help++) {
		size_t n = top_render(&v, &st, 80, 24, &l);
		assert_true(n <= 24);
		for (size_t i = 0; i < n; i++) {
			if (strlen(l[i].text) > 80)
				fail_msg("%zu columns: %s", strlen(l[i].text),
					 l[i].text);
			keys |= strstr(l[i].text, "tree view") != NULL;
			last_metric |= strstr(l[i].text,
					      top_metrics[M__COUNT - 1].help)
				       != NULL;
		}
		assert_non_null(strstr(l[n - 1].text, st.help < pages ?
				       "next page" : "back to the rows"));
		free(l);
	}
	assert_true(keys && last_metric);
	assert_int_equal(top_help_pages(60), 1);
	assert_int_equal(top_help_pages(0), 1);
	top_view_free(&v);
}

/* A name cut to its column says so (issue 38): a path keeps its end after
 * "...", a tree name its start before it. */
#define LONG_NAME "a-very-long-cgroup-name-for-the-narrow-column-0123456789"
static void t_name_cut(void **state)
{
	struct top_view v;
	struct top_line *l;
	struct top_status st = { .source = "live", .interval_s = 2 };
	(void)state;
	top_view_init(&v);
	push(&v, 10, CG("/", 0, 0, 0, 0) "," CG("/" LONG_NAME, 1, 1, 0, 0));
	push(&v, 11, CG("/", 0, 0, 0, 0) "," CG("/" LONG_NAME, 1, 3, 0, 0));
	for (int tree = 0; tree < 2; tree++) {
		v.tree = tree;
		top_view_order(&v);
		size_t n = top_render(&v, &st, 80, 24, &l);
		int cut = 0;
		for (size_t i = TOP_HEAD_LINES; i < n; i++) {
			assert_true(strlen(l[i].text) <= 80);
			assert_null(strstr(l[i].text, LONG_NAME));
			cut += strstr(l[i].text, tree ? "a-very-long-" :
				      "...") != NULL &&
			       strstr(l[i].text, tree ? "..." : "0123456789")
			       != NULL;
		}
		assert_int_equal(cut, 1);
		free(l);
	}
	top_view_free(&v);
}

static int parse(struct top_opts *o, ...)
{
	char *argv[16] = { "taskstat-top" };
	int argc = 1;
	va_list ap;
	va_start(ap, o);
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	int r = top_parse_options(argc, argv, o);
	return r;
}

static void t_options(void **state)
{
	struct top_opts o;
	(void)state;
	assert_int_equal(parse(&o, NULL), 0);
	assert_int_equal(o.tsc.interval_ns, 2000000000ull);
	assert_int_equal(o.sort, M_EXITS);
	top_opts_free(&o);
	assert_int_equal(parse(&o, "-i", "0.5", "--cpus", "0", "-s", "cpu",
			       "--flat", "-n", "3", NULL), 0);
	assert_int_equal(o.tsc.interval_ns, 500000000ull);
	assert_string_equal(o.tsc.cpus, "0");
	assert_int_equal(o.sort, M_CPU);
	assert_true(o.flat);
	assert_int_equal(o.iterations, 3);
	top_opts_free(&o);
	assert_int_equal(parse(&o, "--connect", "127.0.0.1:9101", NULL), 0);
	assert_string_equal(o.connect_host, "127.0.0.1");
	assert_string_equal(o.connect_port, "9101");
	top_opts_free(&o);
	assert_int_equal(parse(&o, "--connect", "nope", NULL), TSC_EXIT_USAGE);
	top_opts_free(&o);
	assert_int_equal(parse(&o, "--connect", ":1", "--shards", "2", NULL),
			 TSC_EXIT_USAGE);
	top_opts_free(&o);
	assert_int_equal(parse(&o, "--shards", "0", NULL), TSC_EXIT_USAGE);
	top_opts_free(&o);
	assert_int_equal(parse(&o, "--sort", "x", NULL), TSC_EXIT_USAGE);
	top_opts_free(&o);
	assert_int_equal(parse(&o, "--format", "csv", NULL), TSC_EXIT_USAGE);
	top_opts_free(&o);
	assert_int_equal(parse(&o, "-d", "0", NULL), TSC_EXIT_USAGE);
	top_opts_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_human),
		cmocka_unit_test(t_frame),
		cmocka_unit_test(t_view),
		cmocka_unit_test(t_maxwait),
		cmocka_unit_test(t_render),
		cmocka_unit_test(t_workload),
		cmocka_unit_test(t_help),
		cmocka_unit_test(t_name_cut),
		cmocka_unit_test(t_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
