/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/<pid>/stat, the three fields the /proc fallback needs to know
 * whether the process holding a pid now is the one a record is of (see
 * fallback.c pid_reused()). The command (field 2) is in parentheses and
 * may hold spaces and parentheses itself, so the fields are counted from
 * the last ')'.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attribute/proc_stat.h"
#include "util/common.h"

/* The unsigned decimal at *p (advanced past it and one space). */
static int field_u64(const char **p, const char *end, uint64_t *v)
{
	const char *q = *p;
	uint64_t x = 0;
	if (q >= end || *q < '0' || *q > '9')
		return -EBADMSG;
	for (; q < end && *q >= '0' && *q <= '9'; q++)
		x = x * 10 + (uint64_t)(*q - '0');
	if (q < end && *q == ' ')
		q++;
	*p = q;
	*v = x;
	return 0;
}

/* Skip n space-separated fields (signed numbers among them). */
static int skip_fields(const char **p, const char *end, unsigned n)
{
	for (; n; n--) {
		const char *sp = memchr(*p, ' ', (size_t)(end - *p));
		if (!sp)
			return -EBADMSG;
		*p = sp + 1;
	}
	return 0;
}

int cgsi_proc_stat_parse(const char *text, size_t len,
			 struct cgsi_proc_stat *st)
{
	const char *end = text + len, *p = NULL;
	for (const char *q = text; q < end; q++)
		if (*q == ')')
			p = q;
	if (!p || end - p < 4 || p[1] != ' ')
		return -EBADMSG;
	p += 2;
	st->state = *p;
	p += 2; /* "S " */
	uint64_t flags;
	/* ppid pgrp session tty_nr tpgid, then flags (field 9) */
	if (p >= end || skip_fields(&p, end, 5) < 0 ||
	    field_u64(&p, end, &flags) < 0)
		return -EBADMSG;
	/* minflt cminflt majflt cmajflt utime stime cutime cstime priority
	 * nice num_threads itrealvalue, then starttime (field 22) */
	if (skip_fields(&p, end, 12) < 0 ||
	    field_u64(&p, end, &st->start_ticks) < 0)
		return -EBADMSG;
	st->flags = (uint32_t)flags;
	return 0;
}

int cgsi_proc_stat_read(const char *proc_root, uint32_t pid, char *scratch,
			size_t len, struct cgsi_proc_stat *st)
{
	char fn[512];
	int n = snprintf(fn, sizeof(fn), "%s/%u/stat", proc_root, pid);
	if (n < 0 || (size_t)n >= sizeof(fn))
		return -ENAMETOOLONG;
	int got = cgsi_read_file(fn, scratch, len);
	if (got < 0)
		return got == -ESRCH ? -ENOENT : got;
	return cgsi_proc_stat_parse(scratch, (size_t)got, st);
}
