/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the three commands' option parsers share (optparse.c, in the
 * command-utility library tsc_util): the strict value parsers, their
 * usage errors naming the option, and the getopt_long loop with --help,
 * --version, a missing value and an unknown option answered one way.
 */
#ifndef TSC_OPTPARSE_H
#define TSC_OPTPARSE_H

#include <stdint.h>

#include "usage.h"

struct option;

#define TSC_PARSE_DONE 1 /* --help or --version answered: exit 0 */

/* Strict parse of a non-negative decimal number of seconds ("0.5"). */
int tsc_parse_seconds(const char *s, uint64_t *ns);
/* Strict parse of an unsigned integer in [min, max]. */
int tsc_parse_uint(const char *s, unsigned long long min,
		   unsigned long long max, unsigned long long *out);
/* Split "HOST:PORT", "[V6]:PORT" or ":PORT"; port 0..65535. */
int tsc_parse_hostport(const char *s, char **host, char port[8]);

/*
 * The value of option opt (as the user wrote it) as an integer in
 * [min, max]: 0, or TSC_EXIT_USAGE after "'ARG' is not a non-negative
 * integer" or "'ARG' is out of range (MIN..MAX)".
 */
int tsc_opt_uint(const char *opt, const char *arg, unsigned long long min,
		 unsigned long long max, unsigned long long *out);
/*
 * Seconds, min_ns to max_ns (range says so in the message): 0, or
 * TSC_EXIT_USAGE after "'ARG' is not a non-negative number of seconds"
 * or "'ARG' is out of range (RANGE)".
 */
int tsc_opt_seconds(const char *opt, const char *arg, uint64_t min_ns,
		    uint64_t max_ns, const char *range, uint64_t *ns);
/* A path or name that must not be empty ("empty WHAT"). */
int tsc_opt_name(const char *opt, const char *arg, const char *what,
		 const char **out);

/*
 * What every command answers the same way, for a getopt_long result c
 * (optstring starting with ':', -h, -V): --help prints usage_text,
 * --version "<name> <version> (libcgstats ...)", a missing value or an
 * unknown option goes through tsc_usage_error(). Returns TSC_PARSE_DONE,
 * TSC_EXIT_USAGE, or -1 for any other c.
 */
int tsc_option_common(int c, char **argv, const char *usage_text,
		      const char *name);

/* One option getopt_long accepted (arg: optarg): 0 or an exit status. */
typedef int tsc_set_option_fn(int c, const char *arg, void *ctx);

/*
 * The getopt_long loop of a command from argv[1] (optind = 1, opterr =
 * 0; optstring starts with ':' and has h and V): tsc_option_common(),
 * then set(c, optarg, ctx) for the command's own options, to the first
 * non-zero result. Returns 0 with optind at the first operand, or what
 * stopped it (TSC_PARSE_DONE, TSC_EXIT_USAGE).
 */
int tsc_getopt_run(int argc, char **argv, const char *optstring,
		   const struct option *longopts, const char *usage_text,
		   const char *name, tsc_set_option_fn *set, void *ctx);

/* A command that takes no operand: 0, or "ARG: unexpected argument (see
 * --help)" for the first one (argv[optind]). */
int tsc_no_operands(int argc, char **argv);

#endif
