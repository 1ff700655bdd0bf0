/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgs_rollup_add(), the one accounting call (1.3), with a fake /proc: a
 * record attributed or given its path, what its result says, the sz rules
 * of its options and result, and the three calls it replaced
 * (<cgstats/deprecated.h>) giving what it gives.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cgstats.h"
#include "support/fakeproc.h"
#include "support/snap.h"

static uint64_t refused(struct cgs_rollup *r)
{
	CGS_OPTS(cgs_rollup_totals, t);
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	return t.refused;
}

static void test_attributed(void **state)
{
	struct fakeproc *f = *state;
	fp_set(f, 100, "/a/b");
	struct cgs_rollup *r = fp_rollup(f, 1, 0);
	struct cgs_record rec = fp_record(CGS_KIND_THREAD, 101, 100, 1, 1);
	CGS_OPTS(cgs_add_result, res);
	assert_int_equal(cgs_rollup_add(r, 0, &rec, NULL, &res), 0);
	assert_int_equal(res.sz, sizeof(res));
	assert_string_equal(res.path, "/a/b");
	assert_int_equal(res.source, CGS_SOURCE_PROC);
	assert_string_equal(cgs_source_name(res.source), "proc");
	/* no result wanted */
	assert_int_equal(cgs_rollup_add(r, 0, &rec, NULL, NULL), 0);
	/* a refused record: counted, no path */
	assert_int_equal(cgs_rollup_add(r, 1, &rec, NULL, &res), -EINVAL);
	assert_null(res.path);
	assert_int_equal(res.source, CGS_SOURCE_NONE);
	assert_int_equal(refused(r), 1);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	const struct cgs_cgroup_stats *c = cgt_cgroup_at(s, "/a/b", CGT_ANY);
	assert_non_null(c);
	assert_int_equal(c->self->tasks, 2);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

static void test_given(void **state)
{
	struct fakeproc *f = *state;
	struct cgs_rollup *r = fp_rollup(f, 1, CGS_NO_TGID);
	struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 7, 7, 1, 2);
	CGS_OPTS(cgs_add_opts, o, .path = "/x/y");
	CGS_OPTS(cgs_add_result, res);
	assert_int_equal(cgs_rollup_add(r, 0, &rec, &o, &res), 0);
	assert_string_equal(res.path, "/x/y");
	assert_int_equal(res.source, CGS_SOURCE_GIVEN);
	assert_string_equal(cgs_source_name(CGS_SOURCE_GIVEN), "given");
	o.path = CGS_UNKNOWN_CGROUP;
	assert_int_equal(cgs_rollup_add(r, 0, &rec, &o, &res), 0);
	assert_string_equal(res.path, CGS_UNKNOWN_CGROUP);
	/* a TGID record ignored (CGS_NO_TGID): no path, no source */
	struct cgs_record g = fp_record(CGS_KIND_TGID, 0, 7, 1, 2);
	assert_int_equal(cgs_rollup_add(r, 0, &g, &o, &res), 0);
	assert_null(res.path);
	assert_int_equal(res.source, CGS_SOURCE_NONE);
	o.path = "relative";
	assert_int_equal(cgs_rollup_add(r, 0, &rec, &o, NULL), -EINVAL);
	assert_int_equal(refused(r), 1);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	const struct cgs_cgroup_stats *c = cgt_cgroup_at(s, "/x/y", CGT_ANY);
	assert_non_null(c);
	assert_int_equal(c->self->processes, 1);
	assert_int_equal(c->inferred, 0);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

/* Options and result as an older or newer caller has them. */
static void test_sizes(void **state)
{
	struct fakeproc *f = *state;
	struct cgs_rollup *r = fp_rollup(f, 1, 0);
	struct cgs_record rec = fp_record(CGS_KIND_PROCESS, 7, 7, 1, 2);
	struct {
		struct cgs_add_opts o;
		uint64_t more;
	} big = { .o = { .sz = sizeof(big), .path = "/n" }, .more = 0 };
	assert_int_equal(cgs_rollup_add(r, 0, &rec, &big.o, NULL), 0);
	big.more = 1; /* something this library does not know */
	assert_int_equal(cgs_rollup_add(r, 0, &rec, &big.o, NULL), -E2BIG);
	CGS_OPTS(cgs_add_opts, zero, .path = "/n");
	zero.sz = 0;
	assert_int_equal(cgs_rollup_add(r, 0, &rec, &zero, NULL), -EINVAL);
	/* an older result: its path only, nothing beyond */
	struct {
		struct cgs_add_result res;
		unsigned char guard[16];
	} old;
	memset(&old, 0xa7, sizeof(old));
	old.res.sz = offsetof(struct cgs_add_result, source);
	CGS_OPTS(cgs_add_opts, o, .path = "/o");
	assert_int_equal(cgs_rollup_add(r, 0, &rec, &o, &old.res), 0);
	assert_int_equal(old.res.sz, offsetof(struct cgs_add_result, source));
	assert_string_equal(old.res.path, "/o");
	assert_int_equal(((unsigned char *)&old.res.source)[0], 0xa7);
	/* a newer one: ours written, sz says so, the rest untouched */
	struct {
		struct cgs_add_result res;
		uint64_t more;
	} newer = { .res = { .sz = sizeof(newer) }, .more = 42 };
	assert_int_equal(cgs_rollup_add(r, 0, &rec, NULL, &newer.res), 0);
	assert_int_equal(newer.res.sz, sizeof(struct cgs_add_result));
	assert_int_equal(newer.more, 42);
	struct cgs_add_result none = { .sz = 0 };
	assert_int_equal(cgs_rollup_add(r, 0, &rec, NULL, &none), -EINVAL);
	cgs_rollup_free(r);
}

/* The replaced calls answer as cgs_rollup_add() does. */
static void test_old_calls(void **state)
{
	struct fakeproc *f = *state;
	fp_set(f, 100, "/a/b");
	struct cgs_rollup *r = fp_rollup(f, 1, 0);
	struct cgs_record rec = fp_record(CGS_KIND_THREAD, 101, 100, 1, 1);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	const char *p = NULL;
	enum cgs_source src = CGS_SOURCE_NONE;
	assert_int_equal(cgs_rollup_account(r, 0, &rec, &p), 0);
	assert_string_equal(p, "/a/b");
	assert_int_equal(cgs_rollup_account_src(r, 0, &rec, &p, &src), 0);
	assert_int_equal(src, CGS_SOURCE_PROC);
	assert_int_equal(cgs_rollup_account_path(r, 0, &rec, "/c"), 0);
	assert_int_equal(cgs_rollup_account_path(r, 0, &rec, NULL), -EINVAL);
	assert_int_equal(cgs_rollup_account_path(r, 0, &rec, "c"), -EINVAL);
	assert_int_equal(cgs_rollup_account(r, 9, &rec, &p), -EINVAL);
#pragma GCC diagnostic pop
	assert_int_equal(refused(r), 3);
	struct cgs_snapshot *s = cgt_snap(r, 0, false, 0);
	assert_int_equal(cgt_cgroup_at(s, "/a/b", CGT_ANY)->self->tasks, 2);
	assert_int_equal(cgt_cgroup_at(s, "/c", CGT_ANY)->self->tasks, 1);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

int main(void)
{
	static struct fakeproc f1, f2, f3, f4;
	const struct CMUnitTest tests[] = {
		fp_unit_test(test_attributed, &f1),
		fp_unit_test(test_given, &f2),
		fp_unit_test(test_sizes, &f3),
		fp_unit_test(test_old_calls, &f4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
