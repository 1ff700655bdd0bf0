/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CGS_UTIL_CPULIST_H
#define CGS_UTIL_CPULIST_H

#include <stddef.h>

/* CPU sets are plain byte arrays (one byte per CPU): they are built on the
 * slow path only, and this keeps the code obvious. */
#define CGSI_MAX_CPUS 8192

/*
 * Parse a cpulist into set[0..CGSI_MAX_CPUS). Returns the number of CPUs
 * set, or -EINVAL/-ERANGE with a reason in err.
 */
int cgsi_cpulist_parse(const char *s, unsigned char *set, char *err,
		       size_t errlen);

/* Possible CPUs of this host into set; returns count or -errno. */
int cgsi_possible_set(unsigned char *set);

/* Format CPUs set in [0, n) as a cpulist; returns length or -ENOSPC. */
int cgsi_cpulist_format(const unsigned char *set, int n, char *buf,
			size_t len);

#endif
