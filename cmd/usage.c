/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one way an invalid command line is reported, whether getopt, a value
 * parser (options.c) or a check against the system (setup.c) rejects it:
 * a line naming the option, before anything is registered, exit status 2.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

#include "options.h"

int tsc_usage_verror(const char *prog, const char *opt, const char *fmt,
		     va_list ap)
{
	fprintf(stderr, "%s: %s: ", prog, opt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	return TSC_EXIT_USAGE;
}

int tsc_usage_error(const char *opt, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tsc_usage_verror(PROG, opt, fmt, ap);
	va_end(ap);
	return r;
}

static int usage_error(const char *prog, const char *opt, const char *fmt,
		       ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tsc_usage_verror(prog, opt, fmt, ap);
	va_end(ap);
	return r;
}

int tsc_getopt_error(const char *prog, int c, char **argv)
{
	if (c == ':')
		return usage_error(prog, argv[optind - 1], "missing value");
	if (optopt) {
		char shortopt[] = { '-', (char)optopt, '\0' };
		return usage_error(prog, shortopt, "unknown option (see "
				   "--help)");
	}
	return usage_error(prog, argv[optind - 1], "unknown option (see "
			   "--help)");
}
