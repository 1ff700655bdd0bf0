/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/common.h"
#include "util/cpulist.h"

static void seterr(char *err, size_t errlen, const char *fmt, long a)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, a);
}

static int parse_num(const char **p, long *out)
{
	const char *s = *p;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno || v < 0)
		return -ERANGE;
	*p = end;
	*out = v;
	return 0;
}

/* One cpu number of the list that starts at s, with the error message. */
static int parse_cpu(const char **p, const char *s, long *out, char *err,
		     size_t errlen)
{
	int r = parse_num(p, out);
	if (r == -ERANGE || (r == 0 && *out >= CGSI_MAX_CPUS)) {
		seterr(err, errlen, "cpu number out of range%.0ld", 0);
		return -ERANGE;
	}
	if (r)
		seterr(err, errlen, "expected a cpu number at offset %ld",
		       (long)(*p - s));
	return r;
}

int cgsi_cpulist_parse(const char *s, unsigned char *set, char *err,
		       size_t errlen)
{
	memset(set, 0, CGSI_MAX_CPUS);
	if (!s) {
		seterr(err, errlen, "empty cpu list%.0ld", 0);
		return -EINVAL;
	}
	const char *p = s;
	int count = 0;
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (!*p) {
		seterr(err, errlen, "empty cpu list%.0ld", 0);
		return -EINVAL;
	}
	for (;;) {
		long a, b;
		int r = parse_cpu(&p, s, &a, err, errlen);
		if (r)
			return r;
		b = a;
		if (*p == '-') {
			p++;
			r = parse_cpu(&p, s, &b, err, errlen);
			if (r)
				return r;
			if (b < a) {
				seterr(err, errlen,
				       "descending range ending at cpu %ld", b);
				return -EINVAL;
			}
		}
		for (long c = a; c <= b; c++)
			if (!set[c]) {
				set[c] = 1;
				count++;
			}
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (*p == '\0')
			break;
		if (*p != ',') {
			seterr(err, errlen, "unexpected character at offset %ld",
			       (long)(p - s));
			return -EINVAL;
		}
		p++;
	}
	return count;
}

int cgsi_possible_set(unsigned char *set)
{
	char buf[4096];
	int r = cgsi_read_file("/sys/devices/system/cpu/possible", buf,
			       sizeof(buf));
	if (r < 0)
		return r;
	r = cgsi_cpulist_parse(buf, set, NULL, 0);
	return r < 0 ? -EIO : r;
}

int cgsi_cpulist_format(const unsigned char *set, int n, char *buf,
			size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int c = 0; c < n;) {
		if (!set[c]) {
			c++;
			continue;
		}
		int e = c;
		while (e + 1 < n && set[e + 1])
			e++;
		int w = e == c ? snprintf(buf + off, len - off, "%s%d",
					  off ? "," : "", c)
			       : snprintf(buf + off, len - off, "%s%d-%d",
					  off ? "," : "", c, e);
		if (w < 0 || (size_t)w >= len - off)
			return -ENOSPC;
		off += (size_t)w;
		c = e + 1;
	}
	return (int)off;
}

unsigned cgsi_default_shards(unsigned ncpus)
{
	if (ncpus <= CGSI_DEFAULT_MAX_SHARDS)
		return ncpus;
	unsigned per = (ncpus + CGSI_DEFAULT_MAX_SHARDS - 1) /
		       CGSI_DEFAULT_MAX_SHARDS;
	return (ncpus + per - 1) / per;
}

void cgsi_cpus_split(const unsigned char *set, unsigned nshards, int *owner)
{
	unsigned ncpus = 0;
	for (int c = 0; c < CGSI_MAX_CPUS; c++)
		ncpus += set[c] != 0;
	unsigned shard = 0, got = 0;
	for (int c = 0; c < CGSI_MAX_CPUS; c++) {
		owner[c] = -1;
		if (!set[c] || !nshards)
			continue;
		unsigned take = ncpus / nshards + (shard < ncpus % nshards);
		owner[c] = (int)shard;
		if (++got == take && shard + 1 < nshards) {
			shard++;
			got = 0;
		}
	}
}

int cgs_possible_cpus(void)
{
	unsigned char *set = malloc(CGSI_MAX_CPUS);
	if (!set)
		return -ENOMEM;
	int n = cgsi_possible_set(set);
	free(set);
	return n;
}

int cgs_cpulist_validate(const char *list, char *errbuf,
			 size_t errlen)
{
	unsigned char *want = malloc(CGSI_MAX_CPUS);
	unsigned char *poss = malloc(CGSI_MAX_CPUS);
	int r;
	if (!want || !poss) {
		r = -ENOMEM;
		goto out;
	}
	r = cgsi_cpulist_parse(list, want, errbuf, errlen);
	if (r < 0)
		goto out;
	int np = cgsi_possible_set(poss);
	if (np < 0) {
		r = np;
		seterr(errbuf, errlen, "cannot read possible cpus%.0ld", 0);
		goto out;
	}
	for (int c = 0; c < CGSI_MAX_CPUS; c++)
		if (want[c] && !poss[c]) {
			seterr(errbuf, errlen,
			       "cpu %ld is not a possible cpu on this host", c);
			r = -ERANGE;
			goto out;
		}
out:
	free(want);
	free(poss);
	return r;
}
