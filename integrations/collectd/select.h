/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which cgroups the plugin reports: a list of fnmatch(3) globs on the
 * cgroup path (after folding), matched with no flags, so that '*' also
 * matches '/'. No glob: every cgroup. With globs, the cgroups matching one
 * of them, or with `invert` (collectd's IgnoreSelected true) those that
 * match none.
 */
#ifndef TSCD_SELECT_H
#define TSCD_SELECT_H

#include <stdbool.h>
#include <stddef.h>

struct tscd_select {
	char **globs;
	size_t n;
	bool invert;
};

/**
 * tscd_select_add() - Add a glob.
 * @s: The selection.
 * @glob: The pattern; copied.
 *
 * Return: 0; -EINVAL for a NULL or empty @glob; -ENOMEM.
 */
int tscd_select_add(struct tscd_select *s, const char *glob);

/**
 * tscd_select_match() - Whether a cgroup is reported.
 * @s: The selection.
 * @path: The cgroup path, e.g. "/system.slice/cron.service" or
 *	CGS_UNKNOWN_CGROUP.
 *
 * Return: True when the cgroup is reported.
 */
bool tscd_select_match(const struct tscd_select *s, const char *path);

/**
 * tscd_select_clear() - Free the globs and empty the selection.
 * @s: The selection.
 */
void tscd_select_clear(struct tscd_select *s);

#endif
