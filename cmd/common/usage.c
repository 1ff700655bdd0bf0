/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one way an invalid command line is reported, whether getopt, a value
 * parser (options.c) or a check against the system (setup.c) rejects it:
 * a line naming the option, before anything is registered, exit status 2.
 */
#include <stdarg.h>
#include <stdio.h>

#include "usage.h"

const char *tsc_prog = PROG;

int tsc_usage_error(const char *opt, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tsc_err("%s: %s\n", opt, msg);
	return TSC_EXIT_USAGE;
}
