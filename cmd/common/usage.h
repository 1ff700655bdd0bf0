/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How every command of cmd/ (taskstat-collect, taskstat-top,
 * taskstat-query) names itself in a message and ends on an invalid
 * command line (usage.c). Part of the command-utility library tsc_util.
 */
#ifndef TSC_USAGE_H
#define TSC_USAGE_H

#include <stdio.h>

#include "log.h"

#define PROG "taskstat-collect"

#define TSC_EXIT_ERROR 1 /* a runtime error */
#define TSC_EXIT_USAGE 2 /* an invalid option, found before registering */
#define TSC_EXIT_OUTPUT 3 /* ran to the end, but writing an output failed */

/* Name tsc_usage_error() prints: PROG, or the command reusing tsc_core
 * (taskstat-top, taskstat-query), which sets it first. */
extern const char *tsc_prog;

/* An error on stderr after the running command's name (tsc_prog): what
 * the commands sharing tsc_util say (taskstat-top's standalone mode says
 * "taskstat-top: ..."); log.h has the other levels and the journal's
 * priority prefixes. fmt is a string literal. */
#define tsc_err(fmt, ...) tsc_log(TSC_LOG_ERROR, fmt, ##__VA_ARGS__)

/*
 * Print "PROG: <opt>: <message>" to stderr and return TSC_EXIT_USAGE. opt
 * is the option as the user wrote it ("--interval", "-x", a stray word).
 * Every rejected command line goes through here.
 */
int tsc_usage_error(const char *opt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
