/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of taskstat-collect's pure parts: escaping, option parsing,
 * the capture format (round trip and every corruption the reader must
 * name), the cgroup filters and the Prometheus series limit (on a rollup
 * fed synthetic records over a fake /proc). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "buf.h"
#include "capture.h"
#include "escape.h"
#include "filter.h"
#include "http_gzip.h"
#include "memtrim.h"
#include "options.h"
#include "ratelimit.h"
#include "stream.h"
#include "output.h"
#include "prom_family.h"
#include "support/add.h"
#include "support/fakeproc.h"

/* One buffer for the checks below: each result is compared before the
 * next call overwrites it. */
static struct buf out;

/* s escaped by fn; *lossy (if not NULL): fn's result, true where it had
 * to replace bytes. */
static const char *esc(bool (*fn)(struct buf *, const char *, size_t),
		       const char *s, size_t n, bool *lossy)
{
	buf_reset(&out);
	bool l = fn(&out, s, n);
	if (lossy)
		*lossy = l;
	return out.p;
}

static const char *json(const char *s, size_t n, bool *lossy)
{
	return esc(esc_json, s, n, lossy);
}

static const char *fixed(uint64_t v, unsigned digits)
{
	buf_reset(&out);
	buf_fixed(&out, v, digits);
	return out.p;
}

static void t_json_escape(void **st)
{
	bool lossy;
	(void)st;
	assert_string_equal(json("abc", 3, &lossy), "\"abc\"");
	assert_false(lossy);
	assert_string_equal(json("a\"b\\c", 5, NULL), "\"a\\\"b\\\\c\"");
	assert_string_equal(json("\n\t\r\b\f", 5, NULL),
			    "\"\\n\\t\\r\\b\\f\"");
	assert_string_equal(json("\x01\x1f\x7f", 3, NULL),
			    "\"\\u0001\\u001f\\u007f\"");
	/* valid UTF-8 passes through */
	assert_string_equal(json("h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10,
				 &lossy), "\"h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	assert_false(lossy);
	/* invalid: stray continuation, truncated, overlong, surrogate,
	 * > U+10FFFF, 0xff */
	assert_string_equal(json("\x80", 1, &lossy), "\"\\ufffd\"");
	assert_true(lossy);
	assert_string_equal(json("a\xc3", 2, NULL), "\"a\\ufffd\"");
	assert_string_equal(json("\xc0\xaf", 2, NULL), "\"\\ufffd\\ufffd\"");
	assert_string_equal(json("\xe0\x80\xaf", 3, NULL),
			    "\"\\ufffd\\ufffd\\ufffd\"");
	assert_string_equal(json("\xed\xa0\x80", 3, NULL),
			    "\"\\ufffd\\ufffd\\ufffd\"");
	assert_string_equal(json("\xf4\x90\x80\x80", 4, NULL),
			    "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	assert_string_equal(json("\xff" "x", 2, NULL), "\"\\ufffdx\"");
	assert_string_equal(json("", 0, NULL), "\"\"");
}

/* Every byte string escapes to pure printable ASCII JSON. */
static void t_json_all_bytes(void **st)
{
	char in[512];
	struct buf b;
	(void)st;
	buf_init(&b);
	srand(42);
	for (int iter = 0; iter < 2000; iter++) {
		size_t n = (size_t)(rand() % 64);
		for (size_t i = 0; i < n; i++)
			in[i] = (char)(rand() % 255 + 1);
		buf_reset(&b);
		esc_json(&b, in, n);
		for (size_t i = 0; i < b.len; i++) {
			unsigned char c = (unsigned char)b.p[i];
			assert_true(c >= 0x20);
			assert_true(c != 0x7f);
			/* non-ASCII output is valid UTF-8 */
			if (c >= 0x80) {
				size_t l = utf8_seq_len((unsigned char *)b.p + i,
						       b.len - i);
				assert_true(l > 1);
				i += l - 1;
			}
		}
		/* only escaped quotes inside */
		assert_int_equal(b.p[0], '"');
		assert_int_equal(b.p[b.len - 1], '"');
	}
	buf_free(&b);
}

static void t_csv_escape(void **st)
{
	bool lossy;
	(void)st;
	assert_string_equal(esc(esc_csv, "plain", 5, NULL), "plain");
	assert_string_equal(esc(esc_csv, "a,b", 3, NULL), "\"a,b\"");
	assert_string_equal(esc(esc_csv, "say \"hi\"", 8, NULL),
			    "\"say \"\"hi\"\"\"");
	assert_string_equal(esc(esc_csv, "l1\nl2\r", 6, NULL),
			    "\"l1\nl2\r\"");
	assert_string_equal(esc(esc_csv, " x", 2, NULL), "\" x\"");
	/* the reversible escape: invalid UTF-8 as \xNN, the backslash as \\ */
	assert_string_equal(esc(esc_csv, "\xff", 1, &lossy), "\\xff");
	assert_true(lossy);
	assert_string_equal(esc(esc_csv, "a\\x2d", 5, &lossy), "a\\\\x2d");
	assert_false(lossy);
	assert_string_equal(esc(esc_csv, "\xc3\xa9\xc3,", 4, &lossy),
			    "\"\xc3\xa9\\xc3,\"");
	assert_true(lossy);
}

static void t_prom_escape(void **st)
{
	bool lossy;
	(void)st;
	/* value a\\b"c<LF>d, written with the exposition escapes */
	assert_string_equal(esc(esc_prom_label, "a\\b\"c\nd", 7, NULL),
			    "a\\\\\\\\b\\\"c\\nd");
	/* value x\xc3 */
	assert_string_equal(esc(esc_prom_label, "x\xc3", 2, &lossy),
			    "x\\\\xc3");
	assert_true(lossy);
	assert_string_equal(esc(esc_text, "/a\x1b[31m", 7, NULL),
			    "/a\\u001b[31m");
	assert_string_equal(esc(esc_text, "\\x2d\xfe", 5, &lossy),
			    "\\\\x2d\\xfe");
	assert_true(lossy);
}

static void t_fixed(void **st)
{
	(void)st;
	assert_string_equal(fixed(1500000, 6), "1.5");
	assert_string_equal(fixed(0, 9), "0.0");
	assert_string_equal(fixed(1000000001, 9), "1.000000001");
	assert_string_equal(fixed(UINT64_MAX, 6), "18446744073709.551615");
}

static int parse(struct tsc_opts *o, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	argv[argc++] = (char *)"taskstat-collect";
	va_start(ap, o);
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w");
	int r = tsc_parse_options(argc, argv, o);
	fclose(stderr);
	stderr = saved;
	return r;
}

static void t_options(void **st)
{
	struct tsc_opts o;
	(void)st;
	assert_int_equal(parse(&o, NULL), 0);
	assert_int_equal(o.interval_ns, 5000000000ull);
	assert_int_equal(o.format, TSC_FMT_AUTO);
	assert_int_equal(parse(&o, "--interval", "0.5", "--duration", "2",
			       "-f", "csv", "--events", "--cpus", "0",
			       "--shards", "1", "--no-tgid", "--depth", "3",
			       "--hierarchy", "cpu", "--listen", ":9101",
			       "--user", "nobody", NULL), 0);
	assert_int_equal(o.interval_ns, 500000000ull);
	assert_int_equal(o.duration_ns, 2000000000ull);
	assert_int_equal(o.format, TSC_FMT_CSV);
	assert_true(o.events && o.no_tgid);
	assert_int_equal(o.shards, 1);
	assert_int_equal(o.depth, 3);
	assert_string_equal(o.listen_host, "");
	assert_string_equal(o.listen_port, "9101");
	tsc_opts_free(&o);
	assert_int_equal(parse(&o, "--listen", "[::1]:80", NULL), 0);
	assert_string_equal(o.listen_host, "::1");
	tsc_opts_free(&o);

	static const char *const bad[][2] = {
		{ "--interval", "-1" }, { "--interval", "abc" },
		{ "--interval", "0" }, { "--interval", "nan" },
		{ "--interval", "inf" }, { "--interval", "1e20" },
		{ "--interval", " 1" }, { "--interval", "0x10" },
		{ "--duration", "0" }, { "--duration", "-3" },
		{ "--format", "xml" }, { "--shards", "0" },
		{ "--shards", "-1" }, { "--depth", "1.5" },
		{ "--listen", "9101" }, { "--listen", "::1:9101" },
		{ "--listen", "host:70000" }, { "--hierarchy", "a/b" },
		{ "--top", "x" }, { "--cpus", "" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(&o, bad[i][0], bad[i][1], NULL);
		if (r != TSC_EXIT_USAGE)
			fail_msg("%s %s accepted", bad[i][0], bad[i][1]);
		tsc_opts_free(&o);
	}
	assert_int_equal(parse(&o, "--bogus", NULL), TSC_EXIT_USAGE);
	assert_int_equal(parse(&o, "stray", NULL), TSC_EXIT_USAGE);
	assert_int_equal(parse(&o, "--interval", NULL), TSC_EXIT_USAGE);
	assert_int_equal(parse(&o, "--replay", "x", "--record", "y", NULL),
			 TSC_EXIT_USAGE);
	assert_int_equal(parse(&o, "--replay", "x", "--user", "nobody", NULL),
			 TSC_EXIT_USAGE);
}

/* A capture in memory: header, two exits, counters. */
static size_t make_capture(struct buf *b, size_t *rec2_off)
{
	static const unsigned char raw1[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const unsigned char raw2[] = { 9, 9, 9 };
	struct cap_counters c = { 77, 1, 2, 3, 4, 5 };
	buf_init(b);
	cap_encode_header(b, 123456789ull, 2, "host=test\nhierarchy=v2\n");
	assert_int_equal(cap_encode_exit(b, 1000, 1, raw1, sizeof(raw1),
					 "/a/b", ""), 0);
	*rec2_off = b->len;
	assert_int_equal(cap_encode_exit(b, 2000, 0, raw2, sizeof(raw2),
					 "/c", "/c"), 0);
	cap_encode_counters(b, &c);
	return b->len;
}

static int open_mem(struct cap_reader **r, const void *p, size_t n,
		    char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)p, n, "rb");
	assert_non_null(f);
	return cap_open_stream(r, f, err, errlen);
}

static void t_capture_roundtrip(void **st)
{
	struct buf b;
	struct cap_reader *r;
	struct cap_exit ex;
	struct cap_counters c;
	char err[256];
	size_t off2;
	(void)st;

	size_t n = make_capture(&b, &off2);
	assert_int_equal(open_mem(&r, b.p, n, err, sizeof(err)), 0);
	assert_int_equal(cap_created_ns(r), 123456789ull);
	/* the header's shards (u32 at 24; no reader wants it back) */
	assert_memory_equal((const unsigned char *)b.p + 24, "\2\0\0\0", 4);
	assert_string_equal(cap_hostinfo(r), "host=test\nhierarchy=v2\n");
	assert_int_equal(cap_next(r, &ex, &c, err, sizeof(err)), CAP_REC_EXIT);
	assert_int_equal(ex.recv_ns, 1000);
	assert_int_equal(ex.shard, 1);
	assert_int_equal(ex.raw_len, 8);
	assert_memory_equal(ex.raw, "\1\2\3\4\5\6\7\10", 8);
	assert_string_equal(ex.task_path, "/a/b");
	assert_string_equal(ex.group_path, "");
	assert_int_equal(cap_next(r, &ex, &c, err, sizeof(err)), CAP_REC_EXIT);
	assert_string_equal(ex.task_path, "/c");
	assert_string_equal(ex.group_path, "/c");
	assert_int_equal(cap_next(r, &ex, &c, err, sizeof(err)),
			 CAP_REC_COUNTERS);
	assert_int_equal(c.time_ns, 77);
	assert_int_equal(c.dropped, 1);
	assert_int_equal(c.truncated, 5);
	assert_int_equal(cap_next(r, &ex, &c, err, sizeof(err)), 0);
	assert_int_equal(cap_records(r), 3);
	cap_close(r);
	buf_free(&b);
}

static void expect_open_err(const void *p, size_t n, int code,
			    const char *needle)
{
	struct cap_reader *r;
	char err[256] = "";
	assert_int_equal(open_mem(&r, p, n, err, sizeof(err)), code);
	assert_null(r);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
}

static void expect_next_err(const void *p, size_t n, const char *needle)
{
	struct cap_reader *r;
	struct cap_exit ex;
	struct cap_counters c;
	char err[256] = "";
	int rc;
	assert_int_equal(open_mem(&r, p, n, err, sizeof(err)), 0);
	while ((rc = cap_next(r, &ex, &c, err, sizeof(err))) > 0)
		;
	assert_true(rc < 0);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
	cap_close(r);
}

static void t_capture_corrupt(void **st)
{
	struct buf b;
	size_t off2;
	(void)st;
	size_t n = make_capture(&b, &off2);
	char *m = malloc(n);

	/* header problems */
	expect_open_err(b.p, 5, -EBADMSG, "bad magic");
	expect_open_err(b.p, 20, -EBADMSG, "truncated header");
	memcpy(m, b.p, n);
	m[8] = 2; /* version 2 */
	expect_open_err(m, n, -EPROTO, "version 2 is not supported");
	memcpy(m, b.p, n);
	m[CAP_HDR_FIXED + 2] ^= 1; /* host info byte */
	expect_open_err(m, n, -EBADMSG, "checksum");
	memcpy(m, b.p, n);
	m[0] = 'X';
	expect_open_err(m, n, -EBADMSG, "bad magic");

	/* record problems: every truncation point is reported */
	size_t hlen = CAP_HDR_FIXED + strlen("host=test\nhierarchy=v2\n");
	for (size_t cut = hlen + 1; cut < n; cut++) {
		if (cut == off2)
			continue; /* a clean record boundary */
		struct cap_reader *r;
		struct cap_exit ex;
		struct cap_counters c;
		char err[256];
		int rc;
		assert_int_equal(open_mem(&r, b.p, cut, err, sizeof(err)), 0);
		while ((rc = cap_next(r, &ex, &c, err, sizeof(err))) > 0)
			;
		if (cut != n - CAP_REC_HDR - 48 && rc != -EBADMSG)
			fail_msg("truncation at %zu not reported", cut);
		if (rc < 0 && !strstr(err, "truncated"))
			fail_msg("cut %zu: '%s'", cut, err);
		cap_close(r);
	}
	memcpy(m, b.p, n);
	m[off2 + CAP_REC_HDR + 30] ^= 0x40; /* body byte of record 2 */
	expect_next_err(m, n, "record 2 at offset");
	expect_next_err(m, n, "checksum mismatch");
	memcpy(m, b.p, n);
	m[off2] = 'Z'; /* marker */
	expect_next_err(m, n, "bad record marker");
	memcpy(m, b.p, n);
	m[off2 + 11] = 0x7f; /* body length huge */
	expect_next_err(m, n, "out of range");
	free(m);
	buf_free(&b);
}

static void t_capture_limits(void **st)
{
	struct buf b;
	(void)st;
	buf_init(&b);
	char *big = malloc(CAP_PATH_MAX + 2);
	memset(big, 'a', CAP_PATH_MAX + 1);
	big[0] = '/';
	big[CAP_PATH_MAX + 1] = '\0';
	assert_int_equal(cap_encode_exit(&b, 1, 0, "x", 1, big, NULL), -E2BIG);
	assert_int_equal(b.len, 0);
	free(big);
	buf_free(&b);
}

/* ---- --cgroup / --exclude-cgroup ---- */

static void t_filter_match(void **st)
{
	struct tsc_opts o;
	(void)st;

	assert_int_equal(tsc_glob_check("/a/*"), 0);
	assert_int_equal(tsc_glob_check("*.scope"), 0);
	assert_int_equal(tsc_glob_check("(unknown)"), 0);
	assert_int_equal(tsc_glob_check(""), -EINVAL);
	assert_int_equal(tsc_glob_check("system.slice/*"), -EDOM);
	assert_int_equal(tsc_glob_check("\\x"), -EDOM);

	/* no filter: everything, and no view is made */
	assert_int_equal(parse(&o, NULL), 0);
	assert_false(tsc_filter_on(&o));
	assert_true(tsc_cgroup_shown(&o, "/anything"));
	tsc_opts_free(&o);

	/* '*' matches '/': a subtree; any --cgroup, no --exclude-cgroup */
	assert_int_equal(parse(&o, "--cgroup", "/a/*", "--cgroup", "/b",
			       "--exclude-cgroup", "/a/*/*",
			       "--exclude-cgroup", "*.scope", NULL), 0);
	assert_true(tsc_filter_on(&o));
	assert_int_equal(o.ncgroup_globs, 2);
	assert_int_equal(o.nexclude_globs, 2);
	assert_true(tsc_cgroup_shown(&o, "/a/x"));
	assert_true(tsc_cgroup_shown(&o, "/b"));
	assert_false(tsc_cgroup_shown(&o, "/a"));      /* "/a/" needs more */
	assert_false(tsc_cgroup_shown(&o, "/a/x/y"));  /* excluded */
	assert_false(tsc_cgroup_shown(&o, "/a/run.scope"));
	assert_false(tsc_cgroup_shown(&o, "/b/c"));
	assert_false(tsc_cgroup_shown(&o, "/"));
	assert_false(tsc_cgroup_shown(&o, CGS_UNKNOWN_CGROUP));
	tsc_opts_free(&o);

	/* exclude only; brackets; a backslash quotes (systemd's \x2d) */
	assert_int_equal(parse(&o, "--exclude-cgroup", "/system.slice/*",
			       "--exclude-cgroup", "/user-[0-9]*",
			       "--exclude-cgroup", "/s/a\\\\x2db", NULL), 0);
	assert_true(tsc_cgroup_shown(&o, "/"));
	assert_true(tsc_cgroup_shown(&o, "/system.slice"));
	assert_false(tsc_cgroup_shown(&o, "/system.slice/a/b.service"));
	assert_false(tsc_cgroup_shown(&o, "/user-1000/x"));
	assert_true(tsc_cgroup_shown(&o, "/user-x"));
	assert_false(tsc_cgroup_shown(&o, "/s/a\\x2db"));
	assert_true(tsc_cgroup_shown(&o, "/s/ax2db"));
	assert_true(tsc_cgroup_shown(&o, CGS_UNKNOWN_CGROUP));
	tsc_opts_free(&o);

	/* the option's errors, and --prom-max-series */
	assert_int_equal(parse(&o, "--cgroup", "", NULL), TSC_EXIT_USAGE);
	tsc_opts_free(&o);
	assert_int_equal(parse(&o, "--exclude-cgroup", "a/*", NULL),
			 TSC_EXIT_USAGE);
	tsc_opts_free(&o);
	assert_int_equal(parse(&o, NULL), 0);
	assert_int_equal(o.prom_max_series, TSC_PROM_MAX_SERIES);
	tsc_opts_free(&o);
	assert_int_equal(parse(&o, "--prom-max-series", "0", "--textfile",
			       "/tmp/x.prom", NULL), 0);
	assert_int_equal(o.prom_max_series, 0);
	tsc_opts_free(&o);
	assert_int_equal(parse(&o, "--prom-max-series", "10", NULL),
			 TSC_EXIT_USAGE); /* no Prometheus output */
	tsc_opts_free(&o);
	assert_int_equal(parse(&o, "--prom-max-series", "-1", "--listen",
			       ":0", NULL), TSC_EXIT_USAGE);
	tsc_opts_free(&o);
}

/* --retire-after and --retire-max: defaults, values, and where they have
 * no meaning */
static void t_retire_options(void **st)
{
	struct tsc_opts o;
	(void)st;
	assert_int_equal(parse(&o, NULL), 0);
	assert_int_equal(o.retire_after_ns, 300000000000ull);
	assert_int_equal(o.retire_max, 10000);
	tsc_opts_free(&o);
	assert_int_equal(parse(&o, "--listen", ":0", "--retire-after", "2.5",
			       "--retire-max", "7", NULL), 0);
	assert_int_equal(o.retire_after_ns, 2500000000ull);
	assert_int_equal(o.retire_max, 7);
	tsc_opts_free(&o);
	assert_int_equal(parse(&o, "--listen", ":0", "--retire-after", "0",
			       "--retire-after", "86400", NULL), 0);
	assert_int_equal(o.retire_after_ns, 86400000000000ull);
	tsc_opts_free(&o);
	static const char *const bad[][2] = {
		{ "--retire-after", "86400.5" }, { "--retire-after", "-1" },
		{ "--retire-after", "5m" }, { "--retire-max", "0" },
		{ "--retire-max", "100000001" }, { "--retire-max", "x" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&o, "--listen", ":0", bad[i][0],
				       bad[i][1], NULL), TSC_EXIT_USAGE);
		tsc_opts_free(&o);
	}
	/* without --listen nothing waits for a consumer; a replay retires
	 * nothing */
	assert_int_equal(parse(&o, "--retire-max", "5", "--textfile", "/x",
			       NULL), TSC_EXIT_USAGE);
	tsc_opts_free(&o);
	assert_int_equal(parse(&o, "--retire-after", "5", "--listen", ":0",
			       "--replay", "x", NULL), TSC_EXIT_USAGE);
	tsc_opts_free(&o);
}

/* ---- filters and the series limit on a snapshot ---- */

static struct fakeproc F;

/* A rollup with exits: tasks[i] tasks into paths[i], one killed by
 * SIGKILL in each (a signal series), histograms on. */
static const char *const cg_paths[] = { "/a/x", "/a/y", "/b", "/c", "/a/x/z" };
static const unsigned cg_tasks[] = { 5, 3, 1, 10, 2 };
#define NCG (sizeof(cg_paths) / sizeof(cg_paths[0]))

static struct cgs_snapshot *test_snapshot(struct cgs_rollup **r)
{
	struct cgs_snapshot *s = NULL;
	uint64_t seed = 1;

	*r = fp_rollup(&F, 1, CGS_ROLLUP_HISTOGRAMS);
	for (size_t i = 0; i < NCG; i++) {
		fp_mkdir(&F, cg_paths[i]);
		for (unsigned t = 0; t < cg_tasks[i]; t++) {
			struct cgs_record rec = fp_record(CGS_KIND_PROCESS,
							  100 + (uint32_t)seed,
							  100 + (uint32_t)seed,
							  1, seed);
			rec.exit_status = t == 0 ? 9 : 0;
			seed++;
			assert_int_equal(cgt_add_path(*r, 0, &rec,
								 cg_paths[i]),
					 0);
		}
	}
	assert_int_equal(cgs_rollup_snapshot(*r, NULL, &s), 0);
	return s;
}

static void test_info(struct snap_info *in, const struct cgs_snapshot *s)
{
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	memset(in, 0, sizeof(*in));
	in->seq = 1;
	in->records = t->records;
	in->unattributed = t->unattributed;
	in->histograms = t->histograms;
	in->oom_source = "kernel";
	for (int k = 0; k < 3; k++)
		in->output_errors[k] = -1;
}

static size_t find_cg(const struct cgs_snapshot *s, const char *path)
{
	for (size_t i = 0; i < cgs_snapshot_count(s); i++)
		if (!strcmp(cgs_snapshot_get_cgroup(s, i)->path, path))
			return i;
	fail_msg("no cgroup %s", path);
	return 0;
}

/* Per-cgroup series lines of a Prometheus text naming cgroup path. */
static size_t series_of(const char *text, const char *path)
{
	char needle[128];
	size_t n = 0;
	snprintf(needle, sizeof(needle), "{cgroup=\"%s\"", path);
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		const char *hit = memmem(l, len, needle, strlen(needle));
		if (*l != '#' && hit)
			n++;
	}
	return n;
}

/* A collector-level gauge's value in a Prometheus text. */
static unsigned long long gauge(const char *text, const char *name)
{
	char needle[128];
	snprintf(needle, sizeof(needle), "\ntaskstat_%s ", name);
	const char *p = strstr(text, needle);
	if (!p)
		fail_msg("no %s", name);
	return strtoull(p + strlen(needle), NULL, 10);
}

static void t_filter_outputs(void **st)
{
	struct cgs_rollup *r;
	struct cgs_snapshot *s = test_snapshot(&r);
	struct snap_info in;
	struct tsc_opts o;
	struct tsc_view v;
	struct buf b;
	(void)st;

	buf_init(&b);
	test_info(&in, s);
	assert_int_equal(parse(&o, "--cgroup", "/a/*", "--exclude-cgroup",
			       "/a/*/*", NULL), 0);
	assert_int_equal(tsc_view_make(&o, s, &v), 0);
	in.shown = v.idx;
	in.nshown = v.n;
	in.cgroups_filtered = v.filtered;
	assert_int_equal(v.n, 2); /* /a/x, /a/y: not /, /a, /a/x/z, /b ... */
	assert_int_equal(v.n + v.filtered, cgs_snapshot_count(s));

	/* JSON: the array holds the two, the totals everything; without
	 * truncated messages and version-0 records no key says them */
	out_jsonl_ops.snapshot(&b, &in, s);
	buf_putc(&b, '\0');
	assert_null(strstr(b.p, "\"truncated\""));
	assert_null(strstr(b.p, "\"version0_records\""));
	buf_reset(&b);
	in.truncated = 3;
	in.version0 = 2;
	out_jsonl_ops.snapshot(&b, &in, s);
	in.truncated = in.version0 = 0;
	buf_putc(&b, '\0');
	assert_non_null(strstr(b.p, "\"enobufs\":0,\"truncated\":3,"
			       "\"version0_records\":2,"));
	assert_non_null(strstr(b.p, "\"cgroup\":\"/a/x\""));
	assert_non_null(strstr(b.p, "\"cgroup\":\"/a/y\""));
	assert_null(strstr(b.p, "\"cgroup\":\"/b\""));
	assert_null(strstr(b.p, "\"cgroup\":\"/a/x/z\""));
	assert_null(strstr(b.p, "\"cgroup\":\"/\""));
	char want[64];
	snprintf(want, sizeof(want), "\"records\":%u,", 21u);
	assert_non_null(strstr(b.p, want));
	snprintf(want, sizeof(want), "\"cgroups_filtered\":%zu,", v.filtered);
	assert_non_null(strstr(b.p, want));

	/* CSV: two cgroup rows, the count in the totals row's column before
	 * the four names (namespace, pod, container_name, image) and the 24
	 * delay peak columns */
	buf_reset(&b);
	out_csv_ops.snapshot(&b, &in, s);
	buf_putc(&b, '\0');
	size_t rows = 0;
	for (const char *p = b.p; (p = strstr(p, "\ncgroup,")); p++)
		rows++;
	assert_int_equal(rows, 2);
	snprintf(want, sizeof(want), ",%zu%.28s\r\n", v.filtered,
		 ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,");
	const char *eol = strstr(b.p, "\r\n");
	assert_true(eol && !strncmp(eol - strlen(want) + 2, want,
				    strlen(want)));
	/* the header, totals, cgroup and exit rows: all as wide (no name
	 * here holds a comma or a quote) */
	struct buf h;
	buf_init(&h);
	out_csv_ops.prologue(&h, false, 0);
	buf_add(&h, b.p, strlen(b.p));
	struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 7, 7, 1, 7);
	out_csv_ops.event(&h, &rec, "/a/x", "proc", 1, 0, NULL, NULL);
	/* an exit with its names (cgs_identity_src_peek()): the last columns */
	struct cgs_identity id = { .sz = sizeof(id), .k8s_namespace = "prod",
				   .pod = "shop", .container = "web",
				   .image = "reg/shop:1" };
	out_csv_ops.event(&h, &rec, "/a/x", "kernel", 1, 0, &id, NULL);
	buf_putc(&h, '\0');
	assert_non_null(strstr(h.p, ",prod,shop,web,reg/shop:1,"));
	size_t width = 0, lines = 0;
	for (const char *l = h.p; *l; lines++) {
		const char *e = strstr(l, "\r\n");
		assert_non_null(e);
		size_t commas = 0;
		for (const char *p = l; p < e; p++)
			commas += *p == ',';
		if (!width)
			width = commas;
		if (commas != width)
			fail_msg("CSV line %zu: %zu commas, header %zu", lines,
				 commas, width);
		l = e + 2;
	}
	assert_int_equal(lines, 1 + 1 + 2 + 2);
	assert_non_null(strstr(h.p, ",cgroups_filtered,namespace,pod,"
			       "container_name,image,delay_cpu_max_s,"));
	assert_non_null(strstr(h.p, ",delay_irq_max_delta_s\r\n"));
	/* the names on a JSON and a table event; a sandbox has no
	 * container name */
	buf_reset(&h);
	out_jsonl_ops.event(&h, &rec, "/a/x", "kernel", 1, 0, &id, NULL);
	out_table_ops.event(&h, &rec, "/a/x", "kernel", 1, 0, &id, NULL);
	id.sandbox = 1;
	out_jsonl_ops.event(&h, &rec, "/a/x", "kernel", 1, 0, &id, NULL);
	out_jsonl_ops.event(&h, &rec, "/a/x", "kernel", 1, 0, NULL, NULL);
	/* the executable, when the map knew it: after comm */
	out_jsonl_ops.event(&h, &rec, "/a/x", "kernel", 1, 0, NULL,
			    "/usr/bin/sha256sum (deleted)");
	buf_putc(&h, '\0');
	assert_non_null(strstr(h.p, "\"exe\":\"/usr/bin/sha256sum (deleted)\","
			       "\"cgroup\""));
	const char *j1 = h.p, *t1 = strchr(j1, '\n') + 1;
	const char *j2 = strchr(t1, '\n') + 1, *j3 = strchr(j2, '\n') + 1;
	assert_non_null(strstr(j1, "\"source\":\"kernel\",\"namespace\":"
			       "\"prod\",\"pod\":\"shop\",\"container_name\":"
			       "\"web\",\"image\":\"reg/shop:1\","));
	const char *tail = " workload prod/shop/web\n";
	assert_true(strstr(t1, tail) == j2 - strlen(tail));
	assert_true(strstr(j2, "container_name") > j3 ||
		    !strstr(j2, "container_name"));
	assert_true(strstr(j2, "\"pod\":\"shop\"") < j3);
	assert_null(strstr(j3, "namespace"));
	buf_free(&h);

	/* table: rows of the two only */
	buf_reset(&b);
	in.top = 0;
	out_table_ops.snapshot(&b, &in, s);
	buf_putc(&b, '\0');
	assert_non_null(strstr(b.p, " /a/x\n"));
	assert_non_null(strstr(b.p, " /a/y\n"));
	assert_null(strstr(b.p, " /b\n"));
	assert_non_null(strstr(b.p, "filtered out"));

	/* Prometheus: series of the two, the count, every total */
	buf_reset(&b);
	in.prom_max_series = 0;
	assert_int_equal(out_prom(&b, &in, s), 0);
	buf_putc(&b, '\0');
	assert_true(series_of(b.p, "/a/x") > 0);
	assert_true(series_of(b.p, "/a/y") > 0);
	assert_int_equal(series_of(b.p, "/b"), 0);
	assert_int_equal(series_of(b.p, "/a/x/z"), 0);
	assert_int_equal(gauge(b.p, "collector_cgroups_filtered"), v.filtered);
	assert_int_equal(gauge(b.p, "collector_cgroups"), cgs_snapshot_count(s));
	assert_int_equal(gauge(b.p, "collector_records_total"), 21);

	tsc_view_free(&v);
	tsc_opts_free(&o);
	buf_free(&b);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

static void t_prom_max_series(void **st)
{
	struct cgs_rollup *r;
	struct cgs_snapshot *s = test_snapshot(&r);
	size_t n = cgs_snapshot_count(s);
	struct snap_info in;
	struct buf b;
	(void)st;

	buf_init(&b);
	test_info(&in, s);

	/* prom_cgroup_series() says what out_prom() writes, per cgroup */
	assert_int_equal(out_prom(&b, &in, s), 0);
	buf_putc(&b, '\0');
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		const char *p = cgs_snapshot_get_cgroup(s, i)->path;
		size_t k = prom_cgroup_series(&in, s, i);
		if (series_of(b.p, p) != k)
			fail_msg("%s: %zu series written, %zu counted", p,
				 series_of(b.p, p), k);
		total += k;
	}
	/* with histograms: 4 x (buckets + 2) of them, more than 100 */
	assert_true(prom_cgroup_series(&in, s, find_cg(s, "/c")) > 100);
	assert_int_equal(gauge(b.p, "collector_cgroups_not_exported"), 0);

	/* a limit that fits /c (10 exits) and /a/x (5) but not /a/y (3):
	 * those two stay, in path order, every other one is cut */
	size_t c = prom_cgroup_series(&in, s, find_cg(s, "/c"));
	size_t ax = prom_cgroup_series(&in, s, find_cg(s, "/a/x"));
	size_t ay = prom_cgroup_series(&in, s, find_cg(s, "/a/y"));
	in.prom_max_series = c + ax + ay - 1;
	buf_reset(&b);
	assert_int_equal(out_prom(&b, &in, s), n - 2);
	buf_putc(&b, '\0');
	assert_int_equal(series_of(b.p, "/c"), c);
	assert_int_equal(series_of(b.p, "/a/x"), ax);
	for (size_t i = 0; i < n; i++) {
		const char *p = cgs_snapshot_get_cgroup(s, i)->path;
		if (strcmp(p, "/c") && strcmp(p, "/a/x"))
			assert_int_equal(series_of(b.p, p), 0);
	}
	assert_true(strstr(b.p, "cgroup=\"/a/x\"") <
		    strstr(b.p, "cgroup=\"/c\""));
	assert_int_equal(gauge(b.p, "collector_cgroups_not_exported"), n - 2);
	assert_int_equal(gauge(b.p, "collector_series_not_exported"),
			 total - c - ax);
	assert_int_equal(gauge(b.p, "collector_prom_max_series"),
			 in.prom_max_series);
	/* the collector's own series stay, the totals count everything */
	assert_int_equal(gauge(b.p, "collector_records_total"), 21);
	assert_non_null(strstr(b.p, "\nprocess_start_time_seconds "));

	/* exactly the sum: nothing cut; one less than the largest: all */
	in.prom_max_series = total;
	buf_reset(&b);
	assert_int_equal(out_prom(&b, &in, s), 0);
	in.prom_max_series = c - 1;
	buf_reset(&b);
	assert_int_equal(out_prom(&b, &in, s), n);
	buf_putc(&b, '\0');
	assert_null(strstr(b.p, "{cgroup=\""));
	assert_int_equal(gauge(b.p, "collector_series_not_exported"), total);

	/* the limit counts the cgroups shown only: filters first */
	size_t only[] = { find_cg(s, "/b") };
	in.shown = only;
	in.nshown = 1;
	in.cgroups_filtered = n - 1;
	in.prom_max_series = prom_cgroup_series(&in, s, only[0]);
	buf_reset(&b);
	assert_int_equal(out_prom(&b, &in, s), 0);
	buf_putc(&b, '\0');
	assert_true(series_of(b.p, "/b") > 0);
	assert_int_equal(series_of(b.p, "/c"), 0);

	buf_free(&b);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* The sum of the values of metric's series of cgroup path. */
static uint64_t sum_of(const char *text, const char *metric, const char *path)
{
	char needle[160];
	uint64_t v = 0;
	int n = snprintf(needle, sizeof(needle), "\n%s{cgroup=\"%s\"", metric,
			 path);
	for (const char *l = strstr(text, needle); l;
	     l = strstr(l + 1, needle))
		v += strtoull(strchr(l + n, ' ') + 1, NULL, 10);
	return v;
}

/* --prom-level lean: only cgroups with exits of their own, counted as
 * written, exclusive outcomes; --prom-parents adds the ancestors */
static void t_prom_lean(void **st)
{
	struct cgs_rollup *r;
	struct cgs_snapshot *s = test_snapshot(&r);
	size_t n = cgs_snapshot_count(s), exported = 0, total = 0;
	struct snap_info in;
	struct buf b;
	(void)st;

	buf_init(&b);
	test_info(&in, s);
	in.prom_lean = true;
	assert_int_equal(out_prom(&b, &in, s), 0);
	buf_putc(&b, '\0');
	for (size_t i = 0; i < n; i++) {
		const struct cgs_cgroup_stats *g = cgs_snapshot_get_cgroup(s, i);
		size_t k = series_of(b.p, g->path);
		if (!g->self->tasks) {
			if (k)
				fail_msg("%s: no exits, %zu series", g->path, k);
			continue;
		}
		if (k != prom_cgroup_series(&in, s, i))
			fail_msg("%s: %zu series written, %zu counted",
				 g->path, k, prom_cgroup_series(&in, s, i));
		assert_int_equal(sum_of(b.p, "taskstat_process_exits_total",
					g->path), g->self->processes);
		exported++;
		total += k;
	}
	assert_int_equal(exported, NCG);
	assert_true(total <= 30 * exported);
	assert_int_equal(series_of(b.p, "/a"), 0);
	assert_non_null(strstr(b.p, "{cgroup=\"/c\",outcome=\"oom_killed\"} 0\n"));
	assert_non_null(strstr(b.p, "{cgroup=\"/c\",outcome=\"signaled\"} 1\n"));
	assert_null(strstr(b.p, "taskstat_process_outcomes_total"));
	assert_null(strstr(b.p, "taskstat_delays_total"));
	assert_null(strstr(b.p, "taskstat_task_lifetime_seconds"));
	assert_non_null(strstr(b.p, "taskstat_process_lifetime_seconds_bucket"
				    "{cgroup=\"/c\",le=\"+Inf\"} 10\n"));
	in.prom_parents = true;
	buf_reset(&b);
	assert_int_equal(out_prom(&b, &in, s), 0);
	buf_putc(&b, '\0');
	assert_true(series_of(b.p, "/a") > 0);
	assert_int_equal(series_of(b.p, "/a"),
			 prom_cgroup_series(&in, s, find_cg(s, "/a")));

	buf_free(&b);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* --stream changes (stream.c): which lines are full, and what a
 * change-only line holds, on snapshots of one rollup. */
static int plan(struct tsc_stream *st, struct snap_info *in,
				 const struct cgs_snapshot *s, uint64_t errs)
{
	test_info(in, s);
	tsc_stream_plan(st, in, s, errs);
	return in->stream;
}

static void t_stream_plan(void **st0)
{
	struct cgs_rollup *r;
	struct cgs_snapshot *s = test_snapshot(&r), *s2;
	struct tsc_stream st = { .on = true, .every = 4, .full_due = true };
	struct snap_info in;
	(void)st0;

	/* the first line: full, every cgroup */
	assert_int_equal(plan(&st, &in, s, 0), TSC_STREAM_FULL);
	assert_null(in.shown);
	/* nothing since: the cgroups that had exits in or below them go
	 * back to deltas of 0, so they are in the next line (replacing
	 * their rows), then in none */
	size_t moved = 0;
	for (size_t i = 0; i < cgs_snapshot_count(s); i++)
		moved += cgs_snapshot_get_cgroup(s, i)->subtree_delta->tasks > 0;
	assert_true(moved >= NCG);
	cgs_snapshot_free(s);
	assert_int_equal(cgs_rollup_snapshot(r, NULL, &s), 0);
	assert_int_equal(plan(&st, &in, s, 0), TSC_STREAM_CHANGES);
	assert_int_equal(in.nshown, moved);
	assert_int_equal(in.ndrop, moved);
	for (size_t k = 0; k < in.nshown; k++)
		assert_int_equal(cgs_snapshot_get_cgroup(s, in.shown[k])
					 ->subtree->tasks > 0, 1);
	assert_int_equal(cgs_rollup_snapshot(r, NULL, &s2), 0);
	assert_int_equal(plan(&st, &in, s2, 0), TSC_STREAM_CHANGES);
	assert_int_equal(in.nshown, 0);
	assert_int_equal(in.ndrop, 0);
	cgs_snapshot_free(s);
	/* a failed write of the output since the last line: the reader
	 * missed a line, so this one is full; the next is not */
	assert_int_equal(plan(&st, &in, s2, 1), TSC_STREAM_FULL);
	assert_int_equal(plan(&st, &in, s2, 1), TSC_STREAM_CHANGES);
	assert_int_equal(in.nshown, 0);
	/* one exit in /b: its row and the root's (its subtree), each in
	 * its place, replacing its old one */
	struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 900, 900, 1, 77);
	assert_int_equal(cgt_add_path(r, 0, &rec, "/b"), 0);
	assert_int_equal(cgs_rollup_snapshot(r, NULL, &s), 0);
	assert_int_equal(plan(&st, &in, s, 1), TSC_STREAM_CHANGES);
	assert_int_equal(in.nshown, 2);
	assert_int_equal(in.ndrop, 2);
	const char *const moved_now[] = { "/", "/b" };
	for (size_t k = 0; k < 2; k++) {
		size_t at = find_cg(s, moved_now[k]);
		assert_string_equal(cgs_snapshot_get_cgroup(s, in.shown[k])->path,
				    moved_now[k]);
		assert_int_equal(in.at[k], at);
		assert_int_equal(in.drop[k], at);
	}
	/* and in the next line again (their deltas go back to 0) */
	assert_int_equal(plan(&st, &in, s, 1), TSC_STREAM_CHANGES);
	assert_int_equal(in.nshown, 2);
	/* --full-every 4: the fourth line since the last full one */
	assert_int_equal(plan(&st, &in, s, 1), TSC_STREAM_FULL);
	/* SIGUSR2 and a reopen ask for the next line full; a final line
	 * is full */
	tsc_stream_full_next(&st);
	assert_int_equal(plan(&st, &in, s, 1), TSC_STREAM_FULL);
	assert_int_equal(plan(&st, &in, s, 1), TSC_STREAM_CHANGES);
	test_info(&in, s);
	in.final = true;
	tsc_stream_plan(&st, &in, s, 1);
	assert_int_equal(in.stream, TSC_STREAM_FULL);
	/* --stream full: the planner leaves every line as it is */
	struct tsc_stream off = { .on = false };
	assert_int_equal(plan(&off, &in, s, 0), TSC_STREAM_NONE);
	assert_null(in.shown);

	tsc_stream_free(&st);
	tsc_stream_free(&off);
	cgs_snapshot_free(s);
	cgs_snapshot_free(s2);
	cgs_rollup_free(r);
}

/* A row as a reader holds it: the planner's view (key, removed) and
 * what it wrote (a version that moves whenever the row changed). */
struct mrow {
	uint64_t key;
	bool removed, dirty;
	unsigned version;
};

/* What a reader of the change-only line does (docs/streams.md): drop,
 * place the written rows at their positions, fill the rest with the rows
 * kept in their order. false if the line does not fit the state. */
static bool rebuild(struct mrow *state, size_t *n, const struct mrow *nw,
		    const struct tsc_stream *st, size_t m)
{
	struct mrow o[64];
	bool used[64] = { false }, dropped[64] = { false };
	size_t kept = 0;
	if (*n - st->ndrop + st->nsel != m)
		return false;
	for (size_t i = 0; i < st->ndrop; i++) {
		if (st->drop[i] >= *n || dropped[st->drop[i]] ||
		    (i && st->drop[i - 1] >= st->drop[i]))
			return false; /* out of range, twice or not ascending */
		dropped[st->drop[i]] = true;
	}
	for (size_t i = 0; i < st->nsel; i++) {
		if (st->at[i] >= m || used[st->at[i]] ||
		    st->sel[i] != st->at[i])
			return false;
		used[st->at[i]] = true;
		o[st->at[i]] = nw[st->at[i]]; /* the line's row */
	}
	for (size_t k = 0; k < m; k++) {
		if (used[k])
			continue;
		while (kept < *n && dropped[kept])
			kept++;
		o[k] = state[kept++];
	}
	memcpy(state, o, m * sizeof(*o));
	*n = m;
	return true;
}

/* The planner on random lines (rows reordered, removed, added, changed,
 * marked removed; a key repeated within a line, as two incarnations of a
 * path whose inode is not known yet): the state a reader rebuilds from
 * each change-only line is the line's full state. */
static void t_stream_rows_random(void **state0)
{
	struct tsc_stream st = { .on = true, .full_due = true };
	struct mrow state[64], prev[64], nw[64];
	size_t n = 0, pn = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned version = 0, changes = 0, dups = 0, dup_full = 0;
	uint64_t fresh = 0;
	(void)state0;
#define RND(k) ((seed = seed * 6364136223846793005ull + 1442695040888963407ull), \
		(unsigned)((seed >> 33) % (k)))
	for (unsigned line = 0; line < 20000; line++) {
		size_t m = 0;
		/* from the previous line's rows: most kept, some swapped */
		for (size_t i = 0; i < pn && m < 40; i++) {
			if (RND(10) == 0)
				continue; /* gone */
			nw[m] = prev[i];
			/* dirty: changed now; the row was dirty: changes back */
			bool dirty = RND(6) == 0;
			if (dirty || nw[m].dirty)
				nw[m].version = ++version;
			nw[m].dirty = dirty;
			if (RND(20) == 0) {
				nw[m].removed = !nw[m].removed;
				nw[m].version = ++version;
			}
			m++;
		}
		for (size_t i = 1; i < m; i++)
			if (RND(8) == 0) {
				struct mrow t = nw[i];
				nw[i] = nw[i - 1];
				nw[i - 1] = t;
			}
		for (unsigned a = RND(4); a > 0 && m < 48; a--) { /* new */
			size_t at = RND((unsigned)m + 1);
			memmove(&nw[at + 1], &nw[at], (m - at) * sizeof(*nw));
			/* a new cgroup, or now and then a second row of
			 * one already in the line */
			uint64_t key = m && RND(40) == 0 ? nw[RND((unsigned)m)].key
						       : ++fresh;
			nw[at] = (struct mrow){ .key = key,
						.removed = RND(3) == 0,
						.dirty = RND(2) == 0,
						.version = ++version };
			m++;
		}
		bool dup = false;
		for (size_t i = 0; i < m; i++)
			for (size_t j = 0; j < i; j++)
				dup = dup || nw[i].key == nw[j].key;
		dups += dup;
		struct tsc_srow *rows = tsc_stream_rows(&st, m);
		assert_non_null(rows);
		for (size_t k = 0; k < m; k++)
			rows[k] = (struct tsc_srow){ .key = nw[k].key,
						     .removed = nw[k].removed,
						     .dirty = nw[k].dirty };
		bool full = st.full_due || st.dup || RND(50) == 0;
		bool changes_line = tsc_stream_diff(&st, rows, m, full);
		dup_full += dup && !full && !changes_line;
		if (changes_line) {
			changes++;
			assert_true(rebuild(state, &n, nw, &st, m));
		} else {
			memcpy(state, nw, m * sizeof(*nw));
			n = m;
		}
		for (size_t k = 0; k < m; k++) {
			assert_int_equal(state[k].key, nw[k].key);
			assert_int_equal(state[k].version, nw[k].version);
		}
		memcpy(prev, nw, m * sizeof(*nw));
		pn = m;
	}
#undef RND
	print_message("%u change-only lines, %u with a key twice, %u made full\n", changes, dups, dup_full);
	assert_true(changes > 10000); /* most lines were change-only */
	assert_true(dups > 1000 && dup_full > 100);
	tsc_stream_free(&st);
}

/* memtrim: after a burst, not during it, and not more often than
 * MEMTRIM_EVERY_NS. */
static void t_memtrim(void **state)
{
	struct memtrim t = {0};
	uint64_t s = 1000000000ull, now = 100 * s;

	(void)state;
	for (unsigned n = 1; n <= 384; n++)
		memtrim_seen(&t, n);
	assert_false(memtrim_due(&t, 300, now)); /* still above half */
	assert_false(memtrim_due(&t, 193, now));
	assert_true(memtrim_due(&t, 192, now));
	assert_int_equal(t.trims, 1);
	assert_false(memtrim_due(&t, 2, now)); /* the peak starts at 192 */
	memtrim_seen(&t, 384);
	assert_false(memtrim_due(&t, 2, now + 1)); /* too soon: still due */
	assert_true(memtrim_due(&t, 2, now + MEMTRIM_EVERY_NS));
	assert_int_equal(t.trims, 2);
	assert_false(memtrim_due(&t, 2, now + 10 * s)); /* nothing since */
	/* a few connections come and go: never worth a trim */
	memtrim_seen(&t, 2 + MEMTRIM_DROP - 1);
	assert_false(memtrim_due(&t, 2, now + 20 * s));
	memtrim_seen(&t, 2 + MEMTRIM_DROP);
	assert_true(memtrim_due(&t, 2, now + 20 * s));
}

/* ratelimit: a burst, then RATELIMIT_PER_S a second; what was refused
 * summed up at most every RATELIMIT_SUMMARY_NS. */
static void t_ratelimit(void **state)
{
	struct ratelimit rl = {0};
	uint64_t s = 1000000000ull, now = 100 * s, n = 0;
	unsigned ok = 0;

	(void)state;
	for (unsigned i = 0; i < 1000; i++) /* 1,000 at once */
		ok += ratelimit_allow(&rl, now);
	assert_int_equal(ok, RATELIMIT_BURST);
	assert_int_equal(rl.refused, 1000 - RATELIMIT_BURST);
	assert_false(ratelimit_summary(&rl, now, &n)); /* not yet */
	/* 3,600 a second for 20 s: RATELIMIT_PER_S a second get through */
	ok = 0;
	unsigned summaries = 0;
	uint64_t summed = 0;
	for (unsigned i = 1; i <= 20 * 3600; i++) {
		uint64_t t = now + i * (s / 3600);
		ok += ratelimit_allow(&rl, t);
		if (ratelimit_summary(&rl, t, &n)) {
			summaries++;
			summed += n;
		}
	}
	assert_in_range(ok, 20 * RATELIMIT_PER_S - 1, 20 * RATELIMIT_PER_S);
	/* one interval after the first refusal, then every interval; the
	 * one at exactly 20 s is still to come */
	assert_int_equal(summaries, 20 * s / RATELIMIT_SUMMARY_NS - 1);
	assert_int_equal(rl.refused, 1000 - RATELIMIT_BURST + 20 * 3600 - ok);
	/* the summaries plus what is still pending: every refusal */
	assert_int_equal(summed + rl.pending, rl.refused);
	now += 20 * s;
	/* quiet: the last summary when due, then none; the bucket refills
	 * to RATELIMIT_BURST, not more */
	assert_true(ratelimit_summary(&rl, now + RATELIMIT_SUMMARY_NS, &n));
	assert_false(ratelimit_summary(&rl, now + 2 * RATELIMIT_SUMMARY_NS,
				       &n));
	now += 3600 * s;
	ok = 0;
	for (unsigned i = 0; i < 100; i++)
		ok += ratelimit_allow(&rl, now);
	assert_int_equal(ok, RATELIMIT_BURST);
}

/* Accept-Encoding: gzip only when asked with q > 0 (issue 22 point 5) */
static void t_http_gzip(void **state)
{
	(void)state;
	assert_false(http_wants_gzip(NULL));
	assert_false(http_wants_gzip(""));
	assert_true(http_wants_gzip("gzip"));
	assert_true(http_wants_gzip("deflate, GZIP;q=0.5"));
	assert_true(http_wants_gzip("x-gzip"));
	assert_false(http_wants_gzip("gzip;q=0"));
	assert_false(http_wants_gzip("gzip; q=0.000, *"));
	assert_true(http_wants_gzip("*"));
	assert_false(http_wants_gzip("*;q=0"));
	assert_false(http_wants_gzip("br, zstd, identity"));
	assert_false(http_wants_gzip("gzip;q=2"));
	assert_false(http_wants_gzip("gzipx"));
	const char msg[] = "taskstat_exits_total{cgroup=\"/\"} 1\n";
	size_t n;
	char *z = http_gzip(msg, sizeof(msg) - 1, &n);
	assert_non_null(z);
	assert_true(n > 18);
	assert_int_equal((unsigned char)z[0], 0x1f);
	assert_int_equal((unsigned char)z[1], 0x8b);
	free(z);
}

/* Lines of a Prometheus text that start with prefix (series, no comments). */
static size_t lines_with(const char *text, const char *prefix)
{
	size_t n = 0, k = strlen(prefix);
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		n += !strncmp(l, prefix, k);
	return n;
}

/* The workload families are the table's: prom_workload_series() counts
 * what prom_workload_families() writes, out_prom() writes none of them. */
static void t_prom_workload_series(void **st)
{
	static const char *const units[] = { "/system.slice/grafh-a.service",
		"/system.slice/grafh-b.service", "/user.slice/grafh-c.scope" };
	struct cgs_rollup *r = fp_rollup(&F, 1, 0);
	struct cgs_snapshot *s = NULL;
	struct cgs_workloads *wl = NULL;
	struct snap_info in;
	struct buf b;
	(void)st;

	CGS_OPTS(cgs_workloads_opts, wo, .hold_ms = 1);
	assert_int_equal(cgs_workloads_new(&wl, &wo), 0);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < 3; i++) {
			fp_mkdir(&F, units[i]);
			for (uint32_t t = 0; t <= i; t++) {
				uint32_t pid = 200 + (uint32_t)(round * 10 + i * 3 + t);
				struct cgs_record rec = fp_record(CGS_KIND_PROCESS,
								  pid, pid, 1, pid);
				rec.exit_status = t ? 11 : 0; /* SIGSEGV */
				assert_int_equal(cgt_add_path(
						 r, 0, &rec, units[i]), 0);
			}
		}
		cgs_snapshot_free(s);
		assert_int_equal(cgs_rollup_snapshot(r, NULL, &s), 0);
		assert_int_equal(cgs_workloads_update(wl, s, 1000u * (round + 1)), 0);
		cgs_workloads_served(wl); /* counts shown from the second round:
					    * 2 SIGSEGV of grafh-c in each */
	}
	test_info(&in, s);
	buf_init(&b);
	out_prom(&b, &in, s);
	buf_putc(&b, '\0');
	assert_int_equal(lines_with(b.p, "taskstat_workload_"), 0);

	assert_int_equal(prom_workload_series(&in), 0); /* no view: none */
	in.workloads = wl;
	assert_true(cgs_workloads_count(wl) >= 3);
	buf_reset(&b);
	assert_int_equal(prom_workload_families(&b, &in),
			 cgs_workloads_count(wl));
	buf_putc(&b, '\0');
	size_t n = lines_with(b.p, "taskstat_workload_");
	assert_int_equal(prom_workload_series(&in), n);
	/* 11 per workload, plus the signal SIGSEGV of grafh-b and grafh-c,
	 * plus the run-queue delay of those that waited */
	assert_true(n >= 11 * cgs_workloads_count(wl) + 2);
	assert_true(n <= 12 * cgs_workloads_count(wl) + 2);
	assert_non_null(strstr(b.p, "taskstat_workload_crashes_total{kind=\"unit\","
				    "unit=\"grafh-c.scope\"} 4\n"));
	/* 8, and the delay peaks' (written with no series: these records
	 * carry none) */
	assert_int_equal(lines_with(b.p, "# TYPE taskstat_workload_"), 9);

	buf_free(&b);
	cgs_workloads_free(wl);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_json_escape),
		cmocka_unit_test(t_json_all_bytes),
		cmocka_unit_test(t_csv_escape),
		cmocka_unit_test(t_prom_escape),
		cmocka_unit_test(t_fixed),
		cmocka_unit_test(t_options),
		cmocka_unit_test(t_retire_options),
		cmocka_unit_test(t_capture_roundtrip),
		cmocka_unit_test(t_capture_corrupt),
		cmocka_unit_test(t_capture_limits),
		cmocka_unit_test(t_filter_match),
		fp_unit_test(t_filter_outputs, &F),
		fp_unit_test(t_prom_max_series, &F),
		fp_unit_test(t_prom_lean, &F),
		fp_unit_test(t_prom_workload_series, &F),
		fp_unit_test(t_stream_plan, &F),
		cmocka_unit_test(t_stream_rows_random),
		cmocka_unit_test(t_memtrim),
		cmocka_unit_test(t_ratelimit),
		cmocka_unit_test(t_http_gzip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
