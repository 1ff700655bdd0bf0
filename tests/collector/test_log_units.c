// SPDX-License-Identifier: LGPL-2.1-or-later
/* log.c and the log options (issue 25): -q, -v, --log-level parse into
 * the right level; a message is filtered by level; the "<N>" prefix is on
 * every line exactly when JOURNAL_STREAM names stderr. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "options.h"

static int level_of(int argc, char **argv)
{
	struct tsc_opts o;
	int r = tsc_parse_options(argc, argv, &o);
	int l = r ? -1 : o.log_level;
	tsc_opts_free(&o);
	return l;
}

static void t_log_options(void **state)
{
	(void)state;
	char *a0[] = { "x", NULL };
	char *a1[] = { "x", "-q", NULL };
	char *a2[] = { "x", "-v", NULL };
	char *a3[] = { "x", "-q", "-v", NULL };
	char *a4[] = { "x", "-q", "-vv", NULL };
	char *a5[] = { "x", "--log-level", "warning", NULL };
	char *a6[] = { "x", "-v", "--log-level", "error", NULL };
	char *a7[] = { "x", "-vvv", NULL };
	assert_int_equal(level_of(1, a0), TSC_LOG_INFO);
	assert_int_equal(level_of(2, a1), TSC_LOG_ERROR);
	assert_int_equal(level_of(2, a2), TSC_LOG_DEBUG);
	assert_int_equal(level_of(3, a3), TSC_LOG_WARNING);
	assert_int_equal(level_of(3, a4), TSC_LOG_INFO);
	assert_int_equal(level_of(3, a5), TSC_LOG_WARNING);
	assert_int_equal(level_of(4, a6), TSC_LOG_ERROR);
	assert_int_equal(level_of(2, a7), TSC_LOG_DEBUG);
	assert_int_equal(tsc_log_level_parse("debug"), TSC_LOG_DEBUG);
	assert_int_equal(tsc_log_level_parse("warn"), -1);
	assert_string_equal(tsc_log_level_name(TSC_LOG_WARNING), "warning");
}

static void t_log_lines(void **state)
{
	char path[] = "/tmp/tsc-log-unit-XXXXXX", buf[256], env[64];
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	struct stat st;
	size_t n;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, STDERR_FILENO);
	assert_int_equal(fstat(fd, &st), 0);

	unsetenv("JOURNAL_STREAM");
	tsc_log_redetect();
	tsc_log_max = TSC_LOG_INFO;
	n = tsc_log_line(TSC_LOG_INFO, buf, sizeof(buf), "a\nb\n", 4);
	buf[n] = '\0';
	assert_string_equal(buf, "taskstat-collect: a\ntaskstat-collect: b\n");
	assert_int_equal(tsc_log_line(TSC_LOG_DEBUG, buf, sizeof(buf), "x", 1),
			 0);
	assert_false(tsc_log_journal());

	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", env, 1);
	tsc_log_redetect();
	assert_false(tsc_log_journal());

	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	tsc_log_redetect();
	assert_true(tsc_log_journal());
	n = tsc_log_line(TSC_LOG_WARNING, buf, sizeof(buf), "a\nb", 3);
	buf[n] = '\0';
	assert_string_equal(buf, "<4>taskstat-collect: a\n"
			    "<4>taskstat-collect: b\n");
	tsc_log(TSC_LOG_ERROR, "e %d\n", 1);
	tsc_log(TSC_LOG_DEBUG, "not shown\n");
	tsc_log_max = TSC_LOG_DEBUG;
	tsc_log(TSC_LOG_DEBUG, "d\n");
	tsc_log_max = TSC_LOG_INFO;

	dup2(saved, STDERR_FILENO);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	tsc_log_redetect();
	char got[128] = "";
	ssize_t k = pread(fd, got, sizeof(got) - 1, 0);
	assert_true(k > 0);
	got[k] = '\0';
	assert_string_equal(got, "<3>taskstat-collect: e 1\n"
			    "<7>taskstat-collect: d\n");
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_log_options),
		cmocka_unit_test(t_log_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
