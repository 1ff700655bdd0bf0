/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Skips that show as skips. ctest reports a test as skipped only when it
 * exits 77 (SKIP_RETURN_CODE 77), and a skip nobody can explain is
 * indistinguishable from a broken test: every skip prints "SKIP: <why>".
 *
 * Whole binaries skip with cgt_skip_exit() or a cgt_require_*(); a cmocka
 * case skips with cgt_skip() and the binary runs its cases through
 * cgt_run(), which exits 77 when the cases it ran all skipped. CMake's
 * cgs_test(... CASES) makes one ctest per case, so each skip is seen.
 */
#ifndef CGS_TESTS_SKIP_H
#define CGS_TESTS_SKIP_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>

#define CGT_SKIP 77

/* Print "SKIP: <why>" and exit 77. */
_Noreturn void cgt_skip_exit(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Whether a listener's error r is what the environment forbids (no
 * taskstats, no CAP_NET_ADMIN, a foreign pid or network namespace): a skip,
 * not a failure. */
bool cgt_forbidden(int r);
/* Exit 77, saying why, when cgt_forbidden(r). */
void cgt_skip_if_forbidden(int r);
/* Exit 77 unless a listener can be opened (see cgt_forbidden); exit 1 if
 * opening fails for any other reason (that is a failure). */
void cgt_require_taskstats(void);

/* The cgroup2 mount point, or exit 77 saying there is none. */
const char *cgt_require_cgroup2(void);

/* Print "SKIP: <why>" and remember it for cgt_run(); the caller skips. */
void cgt_skip_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* In a cmocka case: skip it, saying why (cmocka's skip() longjmps out). */
#define cgt_skip(...)                                                         \
	do {                                                                  \
		cgt_skip_note(__VA_ARGS__);                                   \
		skip();                                                       \
	} while (0)

/*
 * Run the case named argv[1] (an unknown name is a failure), or every case
 * without it. Returns cmocka's result, or 77 when every case it ran
 * skipped.
 */
int cgt_run(int argc, char **argv, const struct CMUnitTest *tests, size_t n);
#define CGT_RUN(argc, argv, tests)                                            \
	cgt_run(argc, argv, tests, sizeof(tests) / sizeof((tests)[0]))

#endif
