/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --cgroup and --exclude-cgroup (see filter.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>

#include "filter.h"

bool tsc_filter_on(const struct tsc_opts *o)
{
	return o->ncgroup_globs || o->nexclude_globs;
}

static bool any_match(const char *const *globs, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], path, 0) == 0)
			return true;
	return false;
}

bool tsc_cgroup_shown(const struct tsc_opts *o, const char *path)
{
	if (o->ncgroup_globs &&
	    !any_match(o->cgroup_globs, o->ncgroup_globs, path))
		return false;
	return !any_match(o->exclude_globs, o->nexclude_globs, path);
}

int tsc_view_make(const struct tsc_opts *o, const struct cgs_snapshot *s,
		  struct tsc_view *v)
{
	size_t n = cgs_snapshot_count(s);

	v->idx = NULL;
	v->n = n;
	v->filtered = 0;
	if (!tsc_filter_on(o))
		return 0;
	v->idx = malloc((n ? n : 1) * sizeof(*v->idx));
	if (!v->idx)
		return -ENOMEM;
	v->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (tsc_cgroup_shown(o, cgs_snapshot_get_cgroup(s, i)->path))
			v->idx[v->n++] = i;
		else
			v->filtered++;
	}
	return 0;
}

void tsc_view_free(struct tsc_view *v)
{
	free(v->idx);
	v->idx = NULL;
	v->n = 0;
	v->filtered = 0;
}
