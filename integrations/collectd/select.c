/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which cgroups are reported (see select.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "select.h"

int tscd_select_add(struct tscd_select *s, const char *glob)
{
	if (!s || !glob || !glob[0])
		return -EINVAL;
	char **v = realloc(s->globs, (s->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->globs = v;
	v[s->n] = strdup(glob);
	if (!v[s->n])
		return -ENOMEM;
	s->n++;
	return 0;
}

bool tscd_select_match(const struct tscd_select *s, const char *path)
{
	if (!s->n)
		return true;
	for (size_t i = 0; i < s->n; i++)
		if (fnmatch(s->globs[i], path, 0) == 0)
			return !s->invert;
	return s->invert;
}

void tscd_select_clear(struct tscd_select *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->globs[i]);
	free(s->globs);
	s->globs = NULL;
	s->n = 0;
}
