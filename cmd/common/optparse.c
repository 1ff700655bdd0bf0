/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The option parsing the commands share (see optparse.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgstats.h"
#include "optparse.h"

int tsc_parse_seconds(const char *s, uint64_t *ns)
{
	char *end;

	/* strtod would take "inf", "nan", hex floats and leading blanks. */
	if (!*s || !strchr("0123456789.", s[0]))
		return -EINVAL;
	for (const char *p = s; *p; p++)
		if (!strchr("0123456789.eE+-", *p))
			return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v) || v < 0)
		return -EINVAL;
	if (v > 1e9) /* about 31 years: also keeps *ns in range */
		return -ERANGE;
	*ns = (uint64_t)llround(v * 1e9);
	return 0;
}

int tsc_parse_uint(const char *s, unsigned long long min,
		   unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!*s || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int tsc_parse_hostport(const char *s, char **host, char port[8])
{
	const char *colon;
	const char *h = s;
	size_t hlen;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		h = s + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -EINVAL; /* bare IPv6 needs brackets */
		hlen = (size_t)(colon - s);
	}
	unsigned long long p;
	if (tsc_parse_uint(colon + 1, 0, 65535, &p) < 0)
		return -ERANGE;
	*host = strndup(h, hlen);
	if (!*host)
		return -ENOMEM;
	snprintf(port, 8, "%llu", p);
	return 0;
}

/* "-1", "-0.5": a number all the same, below every range (one message
 * for any value out of range, issue 38) */
static bool negative_number(const char *s)
{
	uint64_t ns;
	return s[0] == '-' && tsc_parse_seconds(s + 1, &ns) != -EINVAL;
}

int tsc_opt_uint(const char *opt, const char *arg, unsigned long long min,
		 unsigned long long max, unsigned long long *out)
{
	int r = tsc_parse_uint(arg, min, max, out);
	if (r == -EINVAL && negative_number(arg))
		r = -ERANGE;
	if (r == -EINVAL)
		return tsc_usage_error(opt, "'%s' is not a whole number", arg);
	if (r < 0)
		return tsc_usage_error(opt, "'%s' is out of range (%llu..%llu)",
				       arg, min, max);
	return 0;
}

int tsc_opt_seconds(const char *opt, const char *arg, uint64_t min_ns,
		    uint64_t max_ns, const char *range, uint64_t *ns)
{
	int r = tsc_parse_seconds(arg, ns);
	if (r == -EINVAL && negative_number(arg))
		r = -ERANGE;
	if (r == -EINVAL)
		return tsc_usage_error(opt, "'%s' is not a number of seconds",
				       arg);
	if (r < 0 || *ns < min_ns || *ns > max_ns)
		return tsc_usage_error(opt, "'%s' is out of range (%s)", arg,
				       range);
	return 0;
}

int tsc_opt_name(const char *opt, const char *arg, const char *what,
		 const char **out)
{
	if (!*arg)
		return tsc_usage_error(opt, "empty %s", what);
	*out = arg;
	return 0;
}

int tsc_option_common(int c, char **argv, const char *usage_text,
		      const char *name)
{
	switch (c) {
	case 'h':
		fputs(usage_text, stdout);
		return TSC_PARSE_DONE;
	case 'V':
		printf("%s %s (libcgstats %s)\n", name, TSC_VERSION,
		       cgs_version());
		return TSC_PARSE_DONE;
	case ':':
		return tsc_usage_error(argv[optind - 1], "missing value");
	case '?':
		if (optopt) {
			char shortopt[] = { '-', (char)optopt, '\0' };
			return tsc_usage_error(shortopt, "unknown option (see "
					       "--help)");
		}
		return tsc_usage_error(argv[optind - 1], "unknown option (see "
				       "--help)");
	}
	return -1;
}

int tsc_getopt_run(int argc, char **argv, const char *optstring,
		   const struct option *longopts, const char *usage_text,
		   const char *name, tsc_set_option_fn *set, void *ctx)
{
	int c, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		r = tsc_option_common(c, argv, usage_text, name);
		if (r < 0)
			r = set(c, optarg, ctx);
		if (r)
			return r;
	}
	return 0;
}

int tsc_no_operands(int argc, char **argv)
{
	if (optind < argc)
		return tsc_usage_error(argv[optind], "unexpected argument (see "
				       "--help)");
	return 0;
}
