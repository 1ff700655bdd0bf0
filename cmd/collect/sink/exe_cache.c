/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* (dev, inode) -> executable path: the library's resolver (exe_cache.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exe_cache.h"

struct exe_cache {
	const struct cgs_rollup *r;
};

struct exe_cache *exe_cache_new(const struct cgs_rollup *r)
{
	struct exe_cache *c = calloc(1, sizeof(*c));
	if (c)
		c->r = r;
	return c;
}

void exe_cache_free(struct exe_cache *c)
{
	free(c);
}

size_t exe_cache_scan(struct exe_cache *c)
{
	int n = cgs_rollup_scan_exe(c->r);
	return n > 0 ? (size_t)n : 0;
}

bool exe_cache_get(struct exe_cache *c, uint64_t dev, uint64_t ino,
		   char *out, size_t n)
{
	unsigned f = 0;
	int len = cgs_rollup_get_exe(out, n, &f, c->r, dev, ino);
	if (len < 0)
		return false;
	const char *tag = f & CGS_EXE_REPLACED ? " (replaced)" :
			  f & CGS_EXE_DELETED ? " (deleted)" : "";
	size_t at = (size_t)len < n ? (size_t)len : n - 1;
	if (tag[0])
		snprintf(out + at, n - at, "%s", tag);
	return true;
}

void exe_cache_counts(struct exe_cache *c, struct exe_counts *out)
{
	struct cgs_exe_counts k = { .sz = sizeof(k) };
	memset(out, 0, sizeof(*out));
	if (cgs_rollup_get_exe_counts(&k, c->r) < 0)
		return;
	*out = (struct exe_counts){ .known = k.known, .unknown = k.unknown,
		.entries = k.entries, .full = k.evicted, .bytes = k.bytes,
		.deleted = k.deleted, .replaced = k.replaced, .exec = k.exec,
		.lost = k.lost, .exec_on = k.exec_on };
}
