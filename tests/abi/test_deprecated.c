/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names and behaviours 1.3 replaced (<cgstats/deprecated.h>, NEWS.md
 * "1.3.0 API"): each old name is still exported at its old symbol
 * version, is the same function as its new name where only the name
 * changed, and keeps its old arguments and return values where they
 * changed, so that a program linked against 1.0, 1.1 or 1.2 runs on and
 * one written against them still compiles.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define CGS_NO_DEPRECATION_WARNINGS
#include "cgstats.h"

/* the old name at its old version is the new name's code */
static void same(const char *new_name, const char *old_name,
		 const char *old_version)
{
	void *n = dlvsym(RTLD_DEFAULT, new_name, "CGSTATS_1.3");
	void *o = dlvsym(RTLD_DEFAULT, old_name, old_version);
	if (!n || !o || n != o)
		fail_msg("%s@CGSTATS_1.3 %p, %s@%s %p", new_name, n, old_name,
			 old_version, o);
}

static void test_identity_src(void **state)
{
	(void)state;
	same("cgs_identity_src_free", "cgs_identity_free", "CGSTATS_1.2");
	same("cgs_identity_src_resolve", "cgs_identity_resolve",
	     "CGSTATS_1.2");
	same("cgs_identity_src_get_counts", "cgs_identity_get_counts",
	     "CGSTATS_1.2");
	/* 1.2's constructor: options first */
	CGS_OPTS(cgs_identity_opts, o, .containerd_state = "/nonexistent");
	struct cgs_identity_src *s = NULL;
	assert_int_equal(cgs_identity_new(&o, &s), 0);
	assert_non_null(s);
	CGS_OPTS(cgs_identity, id);
	assert_int_equal(cgs_identity_resolve(s, "/system.slice/a.service",
					      &id), 0);
	CGS_OPTS(cgs_identity_counts, c);
	assert_int_equal(cgs_identity_get_counts(s, &c), 0);
	assert_int_equal(c.lookups, 1);
	cgs_identity_free(s);
	assert_int_equal(cgs_identity_new(NULL, NULL), -EINVAL);
}

/* cgs_workloads_new: one name, two versions; 1.2's takes options first */
static void test_workloads_new(void **state)
{
	(void)state;
	typedef int (*old_fn)(const struct cgs_workloads_opts *,
			      struct cgs_workloads **);
	old_fn old = (old_fn)dlvsym(RTLD_DEFAULT, "cgs_workloads_new",
				    "CGSTATS_1.2");
	assert_non_null(old);
	assert_ptr_not_equal((void *)old,
			     dlvsym(RTLD_DEFAULT, "cgs_workloads_new",
				    "CGSTATS_1.3"));
	CGS_OPTS(cgs_workloads_opts, wo, .max_workloads = 4);
	struct cgs_workloads *w = NULL;
	assert_int_equal(old(&wo, &w), 0);
	assert_non_null(w);
	assert_int_equal(cgs_workloads_count(w), 0);
	cgs_workloads_free(w);
	w = NULL;
	assert_int_equal(old(NULL, &w), 0);
	assert_non_null(w);
	cgs_workloads_free(w);
	assert_int_equal(old(NULL, NULL), -EINVAL);
	/* the 1.3 order; a call of the 1.2 order built against 1.3 writes
	 * nothing: the "options" it passes (a NULL view pointer) are refused
	 * before *out is touched */
	w = NULL;
	assert_int_equal(cgs_workloads_new(&w, &wo), 0);
	assert_non_null(w);
	cgs_workloads_free(w);
	struct cgs_workloads *none = NULL;
	CGS_OPTS(cgs_workloads_opts, victim);
	assert_int_equal(cgs_workloads_new((struct cgs_workloads **)&victim,
					   (const void *)&none),
			 -EINVAL);
	assert_int_equal(victim.sz, sizeof(victim));
}

/* getters: one verb, cgs_<object>_get_<what>() */
static void test_getters(void **state)
{
	(void)state;
	same("cgs_listener_get_loss", "cgs_listener_loss", "CGSTATS_1.0");
	same("cgs_snapshot_get_cgroup", "cgs_snapshot_get", "CGSTATS_1.0");
	same("cgs_snapshot_get_totals", "cgs_snapshot_totals", "CGSTATS_1.0");
	same("cgs_snapshot_get_signals", "cgs_snapshot_signals",
	     "CGSTATS_1.1");
	same("cgs_snapshot_get_hist", "cgs_snapshot_hist", "CGSTATS_1.1");
	same("cgs_snapshot_get_comm", "cgs_snapshot_comm", "CGSTATS_1.1");
	/* the old names answer as before: a bad index or a NULL object */
	assert_null(cgs_snapshot_get(NULL, 0));
	assert_null(cgs_snapshot_totals(NULL));
	assert_null(cgs_snapshot_comm(NULL, 0, CGS_COMMS_BY_CPU, 0));
	CGS_OPTS(cgs_signal_counts, sc);
	assert_int_equal(cgs_snapshot_signals(NULL, 0, CGS_SET_SELF, &sc),
			 -EINVAL);
	CGS_OPTS(cgs_hist, h);
	assert_int_equal(cgs_snapshot_hist(NULL, 0, CGS_SET_SELF,
					   CGS_HIST_CPU, &h), -EINVAL);
	CGS_OPTS(cgs_loss, lo);
	assert_int_equal(cgs_listener_loss(NULL, 0, &lo), -EINVAL);
}

/* the library's own error codes: 1.3's cgs_strerror() is exact, 1.0's
 * (what programs linked against 1.0 .. 1.2 call) keeps its texts */
static void test_errors(void **state)
{
	(void)state;
	const char *(*old)(int) = (const char *(*)(int))dlvsym(
		RTLD_DEFAULT, "cgs_strerror", "CGSTATS_1.0");
	assert_non_null(old);
	assert_string_equal(old(-EOPNOTSUPP), cgs_strerror(-CGS_ERR_CGROUP2));
	assert_string_equal(old(-EXDEV), cgs_strerror(-CGS_ERR_PIDNS));
	assert_string_equal(old(-EPERM), cgs_strerror(-CGS_ERR_PERM));
	assert_string_equal(old(-ENOENT), strerror(ENOENT));
	assert_string_equal(cgs_strerror(-EOPNOTSUPP), strerror(EOPNOTSUPP));
	assert_non_null(strstr(cgs_strerror(-CGS_ERR_NO_KSRC),
			       "kernel attribution source"));
	/* 1.0's cgs_query_open() and cgs_query_cgroupstats() are there */
	assert_non_null(dlvsym(RTLD_DEFAULT, "cgs_query_open", "CGSTATS_1.0"));
	assert_non_null(dlvsym(RTLD_DEFAULT, "cgs_query_open", "CGSTATS_1.3"));
	assert_non_null(dlvsym(RTLD_DEFAULT, "cgs_query_cgroupstats",
			       "CGSTATS_1.0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_src),
		cmocka_unit_test(test_workloads_new),
		cmocka_unit_test(test_getters),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
