/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rows from two frames: per-second rates of each cgroup (its counters now
 * minus a frame ago, over the time between them), subtree sums computed
 * here from the cgroups' own counters (the JSON line carries subtree sums
 * of only some of them), and the order shown: a tree whose siblings are
 * sorted by the chosen column, or a flat list sorted by it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

void top_view_init(struct top_view *v)
{
	memset(v, 0, sizeof(*v));
	v->tree = true;
	v->sort = M_EXITS;
}

void top_view_free(struct top_view *v)
{
	top_frame_free(&v->cur);
	top_frame_free(&v->prev);
	for (size_t i = 0; i < v->ncollapsed; i++)
		free(v->collapsed[i]);
	free(v->collapsed);
	free(v->sel);
	free(v->rows);
	free(v->vis);
	memset(v, 0, sizeof(*v));
}

static int cmp_cg(const void *a, const void *b)
{
	return strcmp(((const struct top_cg *)a)->path,
		      ((const struct top_cg *)b)->path);
}

/* Index of path in an array sorted by path, or -1. */
static long find(const struct top_cg *sorted, size_t n, const char *path)
{
	struct top_cg key = { .path = (char *)path };
	const struct top_cg *c = bsearch(&key, sorted, n, sizeof(*sorted),
					 cmp_cg);
	return c ? c - sorted : -1;
}

/* "/a/b" -> "/a", "/a" -> "/", "/" and "(unknown)" -> none. */
static bool parent_path(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');
	if (path[0] != '/' || !path[1] || !slash)
		return false;
	size_t len = slash == path ? 1 : (size_t)(slash - path);
	if (len >= n)
		return false;
	memcpy(out, path, len);
	out[len] = '\0';
	return true;
}

static int build_rows(struct top_view *v)
{
	const struct top_frame *f = &v->cur;
	struct top_cg *prev = NULL, *sorted = NULL;
	int r = -ENOMEM;

	free(v->rows);
	free(v->vis);
	v->rows = calloc(f->n ? f->n : 1, sizeof(*v->rows));
	v->vis = calloc(f->n ? f->n : 1, sizeof(*v->vis));
	v->n = v->nvis = 0;
	/* lookups by path: the previous frame, and this one (parents) */
	prev = malloc((v->prev.n ? v->prev.n : 1) * sizeof(*prev));
	sorted = malloc((f->n ? f->n : 1) * sizeof(*sorted));
	if (!v->rows || !v->vis || !prev || !sorted)
		goto out;
	if (v->prev.n)
		memcpy(prev, v->prev.cg, v->prev.n * sizeof(*prev));
	qsort(prev, v->prev.n, sizeof(*prev), cmp_cg);
	for (size_t i = 0; i < f->n; i++) {
		sorted[i] = f->cg[i];
		/* the index travels in the depth field of the copy */
		sorted[i].depth = (unsigned)i;
	}
	qsort(sorted, f->n, sizeof(*sorted), cmp_cg);

	v->deepest = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct top_cg *c = &f->cg[i];
		struct top_row *row = &v->rows[i];
		row->path = c->path;
		row->workload = c->workload;
		row->depth = c->depth;
		if (c->depth > v->deepest)
			v->deepest = c->depth;
		const char *slash = strrchr(c->path, '/');
		row->name = slash && slash[1] ? slash + 1 : c->path;
		long p = v->have_prev ? find(prev, v->prev.n, c->path) : -1;
		for (int m = 0; m < M__COUNT; m++) {
			double d;
			if (!top_metrics[m].rate)
				d = c->cum[m];
			else if (!v->have_prev || v->dt <= 0)
				d = 0;
			else
				/* new since the previous frame: all of it */
				d = (c->cum[m] - (p >= 0 ? prev[p].cum[m] : 0))
				    / v->dt;
			row->self[m] = d < 0 ? 0 : d; /* a retired cgroup */
		}
		row->parent = -1;
		char pp[4096];
		/* the nearest ancestor the frame has (it has them all, unless
		 * a collector folded deeper cgroups away) */
		const char *cur = c->path;
		char buf[4096];
		while (parent_path(cur, pp, sizeof(pp))) {
			long k = find(sorted, f->n, pp);
			if (k >= 0) {
				row->parent = (int)sorted[k].depth;
				break;
			}
			memcpy(buf, pp, strlen(pp) + 1);
			cur = buf;
		}
	}
	/* subtree sums: children after parents in path order is not
	 * guaranteed for every byte, so add each row to all its ancestors */
	for (size_t i = 0; i < f->n; i++)
		memcpy(v->rows[i].sub, v->rows[i].self, sizeof(v->rows[i].sub));
	for (size_t i = 0; i < f->n; i++) {
		for (int p = v->rows[i].parent; p >= 0; p = v->rows[p].parent) {
			v->rows[p].children |= p == v->rows[i].parent;
			for (int m = 0; m < M__COUNT; m++) {
				double *s = &v->rows[p].sub[m];
				double x = v->rows[i].self[m];
				if (!top_metrics[m].peak)
					*s += x;
				else if (x > *s)
					*s = x;
			}
		}
	}
	v->n = f->n;
	r = 0;
out:
	free(prev);
	free(sorted);
	return r;
}

int top_view_push(struct top_view *v, struct top_frame *f)
{
	top_frame_free(&v->prev);
	v->have_prev = v->cur.cg != NULL;
	v->prev = v->cur;
	v->cur = *f;
	memset(f, 0, sizeof(*f));
	v->dt = v->have_prev ? v->cur.time - v->prev.time : 0;
	int r = build_rows(v);
	if (r < 0)
		return r;
	top_view_order(v);
	return 0;
}

double top_row_value(const struct top_view *v, const struct top_row *r,
		     enum top_metric m)
{
	return v->tree ? r->sub[m] : r->self[m];
}

bool top_view_is_collapsed(const struct top_view *v, const char *path)
{
	for (size_t i = 0; i < v->ncollapsed; i++)
		if (!strcmp(v->collapsed[i], path))
			return true;
	return false;
}

/* Shown by --match: the path contains it, or (tree) a descendant's does. */
static bool matches(const struct top_view *v, size_t i)
{
	if (!v->match || !*v->match)
		return true;
	if (strstr(v->rows[i].path, v->match))
		return true;
	if (!v->tree)
		return false;
	for (size_t j = 0; j < v->n; j++)
		for (int p = v->rows[j].parent; p >= 0; p = v->rows[p].parent)
			if ((size_t)p == i && strstr(v->rows[j].path, v->match))
				return true;
	return false;
}

/* qsort has no context argument: the view being sorted. */
static const struct top_view *sorting;

static int cmp_rows(const void *a, const void *b)
{
	const struct top_view *v = sorting;
	const struct top_row *x = &v->rows[*(const size_t *)a];
	const struct top_row *y = &v->rows[*(const size_t *)b];
	int c = 0;

	if (v->sort != TOP_SORT_NAME) {
		double p = top_row_value(v, x, v->sort);
		double q = top_row_value(v, y, v->sort);
		c = p > q ? -1 : p < q ? 1 : 0;
	}
	if (!c)
		c = strcmp(v->tree ? x->name : x->path,
			   v->tree ? y->name : y->path);
	if (!c)
		c = strcmp(x->path, y->path);
	return v->reverse ? -c : c;
}

/* Depth-first: a row, then its children in sort order. */
static void walk(struct top_view *v, int parent, const bool *shown)
{
	size_t n = 0, *kids = malloc((v->n ? v->n : 1) * sizeof(*kids));
	if (!kids)
		return;
	for (size_t i = 0; i < v->n; i++)
		if (v->rows[i].parent == parent && shown[i])
			kids[n++] = i;
	sorting = v;
	qsort(kids, n, sizeof(*kids), cmp_rows);
	for (size_t k = 0; k < n; k++) {
		const struct top_row *r = &v->rows[kids[k]];
		v->vis[v->nvis++] = kids[k];
		if (!top_view_is_collapsed(v, r->path) &&
		    (!v->max_depth || r->depth < v->max_depth))
			walk(v, (int)kids[k], shown);
	}
	free(kids);
}

void top_view_order(struct top_view *v)
{
	bool *shown = calloc(v->n ? v->n : 1, sizeof(*shown));

	v->nvis = 0;
	if (!shown)
		return;
	for (size_t i = 0; i < v->n; i++)
		shown[i] = matches(v, i);
	if (v->tree) {
		walk(v, -1, shown);
	} else {
		for (size_t i = 0; i < v->n; i++)
			if (shown[i])
				v->vis[v->nvis++] = i;
		sorting = v;
		qsort(v->vis, v->nvis, sizeof(*v->vis), cmp_rows);
	}
	free(shown);
	/* the cursor follows the selected cgroup */
	v->cursor = 0;
	for (size_t k = 0; v->sel && k < v->nvis; k++)
		if (!strcmp(v->rows[v->vis[k]].path, v->sel)) {
			v->cursor = k;
			break;
		}
}

static void select_cursor(struct top_view *v)
{
	if (!v->nvis)
		return;
	char *p = strdup(v->rows[v->vis[v->cursor]].path);
	if (p) {
		free(v->sel);
		v->sel = p;
	}
}

void top_view_move(struct top_view *v, long by)
{
	if (!v->nvis)
		return;
	long c = (long)v->cursor + by;
	if (c < 0)
		c = 0;
	if (c >= (long)v->nvis)
		c = (long)v->nvis - 1;
	v->cursor = (size_t)c;
	select_cursor(v);
}

void top_view_fold(struct top_view *v, int how)
{
	if (!v->tree || !v->nvis)
		return;
	const struct top_row *r = &v->rows[v->vis[v->cursor]];
	bool is = top_view_is_collapsed(v, r->path);
	bool want = how < 0 ? !is : how > 0;
	select_cursor(v);
	if (want == is || (want && !r->children))
		return;
	if (want) {
		char **n = realloc(v->collapsed,
				   (v->ncollapsed + 1) * sizeof(*n));
		if (!n)
			return;
		v->collapsed = n;
		n[v->ncollapsed] = strdup(r->path);
		if (n[v->ncollapsed])
			v->ncollapsed++;
	} else {
		for (size_t i = 0; i < v->ncollapsed; i++)
			if (!strcmp(v->collapsed[i], r->path)) {
				free(v->collapsed[i]);
				v->collapsed[i] = v->collapsed[--v->ncollapsed];
				break;
			}
	}
	top_view_order(v);
}

void top_view_next_depth(struct top_view *v)
{
	if (!v->max_depth)
		v->max_depth = 1;
	else if (v->max_depth >= v->deepest)
		v->max_depth = 0;
	else
		v->max_depth++;
	top_view_order(v);
}
