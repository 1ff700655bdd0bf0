/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The collectd plugin's pure parts: cgroup path <-> plugin_instance
 * (integrations/collectd/name.h) and the cgroup selection (select.h).
 * Every name is checked against collectd's rules (fits DATA_MAX_NAME_LEN,
 * no '/'), and every name that is not hashed maps back to its path.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cgstats.h>

#include "name.h"
#include "select.h"
#include "support/skip.h"

/* Map path, check what collectd needs of a name, map it back when it is
 * not hashed; returns the name (static) and the mapping's return. */
static const char *roundtrip(const char *path, int *ret)
{
	static char name[TSCD_NAME_MAX];
	char back[8192];

	memset(name, 'X', sizeof(name));
	int r = tscd_instance_name(path, name, sizeof(name));
	assert_true(r > 0 || r == -EDOM);
	size_t n = strlen(name);
	assert_true(n > 0 && n <= TSCD_NAME_MAX - 1);
	assert_null(strchr(name, '/'));
	for (const char *p = name; *p; p++) /* printable ASCII only */
		assert_true(*p > ' ' && *p < 0x7f);
	if (r > 0) {
		assert_int_equal((size_t)r, n);
		assert_null(strchr(name, '~'));
		int b = tscd_instance_path(name, back, sizeof(back));
		assert_int_equal(b, (int)strlen(path));
		assert_string_equal(back, path);
	} else {
		assert_non_null(strchr(name, '~'));
		assert_int_equal(tscd_instance_path(name, back, sizeof(back)),
				 -EDOM);
	}
	*ret = r;
	return name;
}

static void expect_name(const char *path, const char *want)
{
	int r;
	assert_string_equal(roundtrip(path, &r), want);
	assert_true(r > 0);
}

static void test_examples(void **state)
{
	expect_name("/", "_");
	expect_name("/system.slice", "_system.slice");
	expect_name("/system.slice/cron.service", "_system.slice_cron.service");
	expect_name("/user.slice/user-1000.slice", "_user.slice_user-1000.slice");
	expect_name("/a_b", "_a%5Fb");
	expect_name("/a%b~c", "_a%25b%7Ec");
	expect_name("/sys-fs-fuse\\x2dx.mount", "_sys-fs-fuse%5Cx2dx.mount");
	expect_name("/with space", "_with%20space");
	expect_name(CGS_UNKNOWN_CGROUP, "unknown");
	/* a cgroup named like the unknown bucket stays apart from it */
	expect_name("/unknown", "_unknown");
	expect_name("/(unknown)", "_%28unknown%29");
}

/* '_' and '/' are not confused: "/a_b" and "/a/b" differ. */
static void test_no_ambiguity(void **state)
{
	static const char *paths[] = { "/a_b", "/a/b", "/a%5Fb", "/a%2Fb",
				       "/a-b", "/a.b", "/a~b", "/" };
	char names[8][TSCD_NAME_MAX];
	for (size_t i = 0; i < 8; i++) {
		int r;
		strcpy(names[i], roundtrip(paths[i], &r));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(names[i], names[j]);
	}
}

/* Every byte but NUL, alone and as a path of all of them. */
static void test_hostile_bytes(void **state)
{
	char path[4] = "/";
	int r;
	for (int c = 1; c < 256; c++) {
		path[1] = (char)c;
		path[2] = '\0';
		const char *n = roundtrip(path, &r);
		assert_true(r > 0);
		assert_true(strlen(n) == 2 || strlen(n) == 4);
	}
	char all[300] = "/";
	for (int c = 1, k = 1; c < 256; c++)
		if (c != '/')
			all[k++] = (char)c;
	roundtrip(all, &r);
	assert_int_equal(r, -EDOM); /* 254 bytes, most escaped */
	roundtrip("/\xff\xfe/\x1b[31m/\n\r\t", &r);
	assert_true(r > 0);
}

/* Longest names that still fit, the first that do not, and the cut never
 * splits an escape. */
static void test_length_limits(void **state)
{
	char path[512], want[TSCD_NAME_MAX];
	int r;

	/* "/" + 126 kept bytes: 127 bytes, the most that fits */
	path[0] = '/';
	memset(path + 1, 'a', 126);
	path[127] = '\0';
	const char *n = roundtrip(path, &r);
	assert_true(r == 127);
	assert_int_equal(strlen(n), 127);
	/* one more: hashed, prefix + '~' + 16 hex digits = 127 bytes */
	path[127] = 'a';
	path[128] = '\0';
	n = roundtrip(path, &r);
	assert_int_equal(r, -EDOM);
	assert_int_equal(strlen(n), TSCD_NAME_PREFIX + 17);
	snprintf(want, sizeof(want), "_%.*s~%016llx", TSCD_NAME_PREFIX - 1,
		 path + 1, (unsigned long long)tscd_path_hash(path));
	assert_string_equal(n, want);
	/* escapes at the cut: "/" + 'a' * 108 + "_" * 10 -> the %5F that
	 * would straddle byte 110 is left out whole */
	memset(path + 1, 'a', 108);
	memset(path + 109, '_', 10);
	path[119] = '\0';
	n = roundtrip(path, &r);
	assert_int_equal(r, -EDOM);
	assert_int_equal(strchr(n, '~') - n, 109); /* '_' + 108, no "%5" */
	/* an escaped name of exactly 127 bytes is kept: "/" + 42 '_' */
	memset(path + 1, '_', 42);
	path[43] = '\0';
	n = roundtrip(path, &r);
	assert_int_equal(r, 127);
	path[43] = '_';
	path[44] = '\0';
	roundtrip(path, &r);
	assert_int_equal(r, -EDOM);
	/* long paths that differ only at the end get different names */
	char a[TSCD_NAME_MAX], b[TSCD_NAME_MAX];
	memset(path + 1, 'x', 300);
	path[301] = '\0';
	strcpy(a, roundtrip(path, &r));
	path[300] = 'y';
	strcpy(b, roundtrip(path, &r));
	assert_string_not_equal(a, b);
	assert_memory_equal(a, b, TSCD_NAME_PREFIX);
}

static void test_bad_arguments(void **state)
{
	char buf[TSCD_NAME_MAX], small[4];

	assert_int_equal(tscd_instance_name(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tscd_instance_name("/", NULL, sizeof(buf)), -EINVAL);
	assert_int_equal(tscd_instance_name("/", buf, TSCD_NAME_MAX - 1),
			 -EINVAL);
	assert_int_equal(tscd_instance_name("", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tscd_instance_name("a/b", buf, sizeof(buf)), -EINVAL);
	/* names no path maps to */
	static const char *bad[] = { "", "a", "_a/b", "_a b", "_%", "_%4",
				     "_%4G", "_%5f", "_%00", "_%2F", "_%41",
				     "_%2E", "_\xff" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(tscd_instance_path(bad[i], buf, sizeof(buf)),
				 -EINVAL);
	assert_int_equal(tscd_instance_path("_abcd", small, sizeof(small)),
			 -ENAMETOOLONG);
	assert_int_equal(tscd_instance_path("_abc", small, sizeof(small)),
			 -ENAMETOOLONG); /* "/abc" and its NUL need 5 */
	assert_int_equal(tscd_instance_path("_ab", small, sizeof(small)), 3);
	assert_string_equal(small, "/ab");
}

static void test_select(void **state)
{
	struct tscd_select s = { 0 };

	assert_true(tscd_select_match(&s, "/anything"));
	assert_int_equal(tscd_select_add(&s, ""), -EINVAL);
	assert_int_equal(tscd_select_add(&s, "/system.slice/*"), 0);
	assert_int_equal(tscd_select_add(&s, "/user.slice/user-[0-9]*.slice"),
			 0);
	assert_true(tscd_select_match(&s, "/system.slice/cron.service"));
	assert_true(tscd_select_match(&s, "/system.slice/a.service/b"));
	assert_true(tscd_select_match(&s, "/user.slice/user-1000.slice"));
	assert_false(tscd_select_match(&s, "/system.slice"));
	assert_false(tscd_select_match(&s, "/user.slice/user-x.slice"));
	assert_false(tscd_select_match(&s, CGS_UNKNOWN_CGROUP));
	s.invert = true; /* IgnoreSelected true */
	assert_false(tscd_select_match(&s, "/system.slice/cron.service"));
	assert_true(tscd_select_match(&s, "/system.slice"));
	assert_true(tscd_select_match(&s, CGS_UNKNOWN_CGROUP));
	tscd_select_clear(&s);
	assert_int_equal(s.n, 0);
	assert_true(tscd_select_match(&s, "/x"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_no_ambiguity),
		cmocka_unit_test(test_hostile_bytes),
		cmocka_unit_test(test_length_limits),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_select),
	};
	return CGT_RUN(argc, argv, tests);
}
