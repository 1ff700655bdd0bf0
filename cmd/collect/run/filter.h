/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which cgroups the outputs show: --cgroup and --exclude-cgroup, fnmatch(3)
 * globs on the cgroup path as the snapshot names it (after --depth
 * folding; "/", "/a/b" or "(unknown)"), without FNM_PATHNAME: '*' and '?'
 * match '/' too, so that one pattern takes a whole subtree ("/a/" then a
 * star: every cgroup below /a; with --exclude-cgroup "/a/", star, "/",
 * star: only its children). A backslash quotes the next character. A
 * cgroup is shown when it matches one of the
 * --cgroup patterns (or none is given) and none of the --exclude-cgroup
 * ones. Pure: no I/O.
 */
#ifndef TSC_FILTER_H
#define TSC_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "cgstats.h"
#include "options.h"

/**
 * tsc_filter_on() - Whether any cgroup filter is given.
 * @o: The options.
 *
 * Return: true with a --cgroup or --exclude-cgroup.
 */
bool tsc_filter_on(const struct tsc_opts *o);

/**
 * tsc_cgroup_shown() - Whether the outputs show a cgroup.
 * @o: The options (their --cgroup and --exclude-cgroup patterns).
 * @path: The cgroup's path.
 *
 * Return: true when @path matches a --cgroup pattern (or there is none)
 * and no --exclude-cgroup pattern.
 */
bool tsc_cgroup_shown(const struct tsc_opts *o, const char *path);

/* The cgroups of a snapshot the outputs show. */
struct tsc_view {
	size_t *idx;     /* indices into the snapshot, in its (path) order */
	size_t n;
	size_t filtered; /* cgroups left out */
};

/**
 * tsc_view_make() - Apply the filters to a snapshot.
 * @o: The options.
 * @s: The snapshot.
 * @v: Receives the cgroups shown; v->idx is NULL (all shown, none
 *	filtered) without filters. Free with tsc_view_free().
 *
 * Return: 0 or -ENOMEM (then *v shows every cgroup: better too much
 * than a silent gap; the caller says so).
 */
int tsc_view_make(const struct tsc_opts *o, const struct cgs_snapshot *s,
		  struct tsc_view *v);
void tsc_view_free(struct tsc_view *v);

#endif
