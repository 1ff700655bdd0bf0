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

/*
 * The listener's default shard count for ncpus CPUs: one per CPU up to
 * CGSI_DEFAULT_MAX_SHARDS, then the CPUs split evenly over at most that
 * many. A rollup created without a shard count uses the same rule, so
 * that the two defaults agree.
 */
#define CGSI_DEFAULT_MAX_SHARDS 16
unsigned cgsi_default_shards(unsigned ncpus);

/*
 * Split the CPUs of set into nshards contiguous groups as even as possible
 * (the first ncpus % nshards groups get one more): owner[c] is the group
 * of CPU c, -1 for a CPU not in set. owner has CGSI_MAX_CPUS entries.
 * The listener's shards and the kernel source's default ring readers are
 * both cut by this.
 */
void cgsi_cpus_split(const unsigned char *set, unsigned nshards, int *owner);

#endif
