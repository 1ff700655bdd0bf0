/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/cpus.h>: this host's CPUs and cpulists (what a listener's
 * cpus option takes). Part of <cgstats.h>.
 */
#ifndef CGSTATS_CPUS_H
#define CGSTATS_CPUS_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * cgs_cpulist_validate() - Check a cpulist against this host's CPUs.
 * @list: A cpulist such as "0-3,7"; NULL counts as empty.
 * @errbuf: Receives a one-line, NUL-terminated explanation on failure
 *	(not on -ENOMEM); may be NULL. Untouched on success.
 * @errlen: Size of @errbuf; 0 for none.
 *
 * Validates the syntax, then that every CPU listed is a possible CPU of
 * this host (/sys/devices/system/cpu/possible).
 *
 * Context: Any thread.
 * Return: The number of distinct CPUs listed (> 0); -EINVAL for a syntax
 * error (empty list, descending range, stray character); -ERANGE for a
 * CPU number of 8192 or more or a CPU that is not possible; -ENOMEM;
 * -errno or -EIO when the possible CPUs cannot be read or parsed.
 */
CGS_EXPORT int
cgs_cpulist_validate(const char *list, char *errbuf, size_t errlen);

/**
 * cgs_possible_cpus() - Number of possible CPUs of this host.
 *
 * Read from /sys/devices/system/cpu/possible.
 *
 * Context: Any thread.
 * Return: The number of possible CPUs; -errno when the file cannot be
 * read, -EIO when it cannot be parsed, -ENOMEM.
 */
CGS_EXPORT int cgs_possible_cpus(void);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_CPUS_H */
