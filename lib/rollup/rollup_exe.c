/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The executables of exit records (cgs_rollup_get_exe(), issue 39): the
 * rollup's map of attribute/exe.h. */
#include <errno.h>

#include "rollup/rollup_int.h"

int cgs_rollup_get_exe(char *buf, size_t len, unsigned *flags,
		       const struct cgs_rollup *r, uint64_t dev,
		       uint64_t inode)
{
	if (flags)
		*flags = 0;
	if (!r || !buf || !len)
		return -EINVAL;
	buf[0] = '\0';
	if (!r->exe)
		return -EOPNOTSUPP;
	return cgsi_exe_get(r->exe, dev, inode, buf, len, flags);
}

int cgs_rollup_scan_exe(const struct cgs_rollup *r)
{
	if (!r)
		return -EINVAL;
	if (!r->exe)
		return -EOPNOTSUPP;
	size_t n = cgsi_exe_scan(r->exe);
	return n > INT_MAX ? INT_MAX : (int)n;
}

int cgs_rollup_get_exe_counts(struct cgs_exe_counts *out,
			      const struct cgs_rollup *r)
{
	if (!r || !out || out->sz < sizeof(out->sz))
		return -EINVAL;
	if (!r->exe)
		return -EOPNOTSUPP;
	struct cgs_exe_counts c = { .sz = sizeof(c) };
	cgsi_exe_counts(r->exe, &c);
	return cgsi_out_copy(out, &c, sizeof(c));
}
