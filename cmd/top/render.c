/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The screen as text lines for a width: two status lines, the key line,
 * the column header, then the rows from the cursor's page. Columns are
 * added by priority while the cgroup name keeps room (80 columns: six
 * metrics); a width of 0 means every column (the plain table).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "termwidth.h"
#include "top.h"

#define COL_W 9      /* a metric: 8 columns and a space */
#define NAME_MIN 22  /* the name keeps at least this many */

static void line(struct top_line *l, enum top_attr a, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void line(struct top_line *l, enum top_attr a, const char *fmt, ...)
{
	va_list ap;
	l->attr = a;
	va_start(ap, fmt);
	vsnprintf(l->text, sizeof(l->text), fmt, ap);
	va_end(ap);
}

/* Which metrics fit in width (all with 0), by priority. */
static void choose(unsigned width, bool oom, bool on[M__COUNT])
{
	unsigned used = NAME_MIN;
	for (unsigned prio = 0; prio < M__COUNT; prio++)
		for (int m = 0; m < M__COUNT; m++) {
			if (top_metrics[m].prio != prio)
				continue;
			on[m] = false;
			if (m == M_OOM && !oom)
				continue;
			if (width && used + COL_W > width)
				continue;
			on[m] = true;
			used += COL_W;
		}
}

static const char *sort_name(int sort)
{
	return sort == TOP_SORT_NAME ? "NAME" : top_metrics[sort].head;
}

static void status(const struct top_view *v, const struct top_status *st,
		   struct top_line *l)
{
	const struct top_frame *f = &v->cur;
	char when[16] = "";
	time_t t = (time_t)f->time;
	struct tm tm;

	if (t && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	line(&l[0], TA_TITLE, TOP_PROG " %s  %s  every %.1f s  attribution "
	     "%s  hierarchy %s%s", when, st->source, st->interval_s,
	     *f->attribution ? f->attribution : "?",
	     *f->hierarchy ? f->hierarchy : "?",
	     st->paused ? "  [PAUSED]" : "");
	if (st->error)
		line(&l[1], TA_WARN, "%s", st->error);
	else
		line(&l[1], f->dropped || f->unattributed ? TA_WARN : TA_NORMAL,
		     "records %llu  dropped %llu  unattributed %llu  "
		     "malformed %llu  cgroups %zu%s%s",
		     (unsigned long long)f->records,
		     (unsigned long long)f->dropped,
		     (unsigned long long)f->unattributed,
		     (unsigned long long)f->malformed, f->n,
		     f->delayacct == 0 ? "  delayacct off" : "",
		     v->have_prev ? "" : "  (rates after the next snapshot)");
	char depth[16];
	if (v->max_depth)
		snprintf(depth, sizeof(depth), "%u", v->max_depth);
	else
		snprintf(depth, sizeof(depth), "all");
	line(&l[2], TA_NORMAL, "q quit h help t %s </> sort:%s%s +/- fold "
	     "d depth:%s p pause", v->tree ? "tree" : "flat",
	     sort_name(v->sort), v->reverse ? "^" : "", depth);
}

static const char *const help_text[] = {
	"Keys",
	"  q          quit (the terminal is restored)",
	"  h ?        this help; space, PgDn: next page; other keys return",
	"  t          tree view (subtree sums) / flat list (own counts)",
	"  < >        sort by the previous / next column",
	"  r          reverse the order",
	"  up down    select a row (also j k, PgUp PgDn, Home End)",
	"  - + Enter  tree: collapse, expand, toggle the selected row",
	"  d          tree: deepest level shown (all, 1, 2, ...)",
	"  p          pause (accounting goes on)",
	"  A name cut to its column ends in '...' (a path: starts with it)",
	"Sort by a column (shown in brackets):",
	"  [N] NAME      the cgroup path; WORKLOAD, last: the runtimes'",
	"                namespace/pod/container",
};
#define HELP_FIXED (sizeof(help_text) / sizeof(help_text[0]))
#define HELP_LINES (HELP_FIXED + M__COUNT)

/* Help lines per page below the status lines: all when they fit, else
 * one line less for the page footer. */
static size_t help_per_page(unsigned height)
{
	size_t room = height > 4 ? height - 3 : 1;
	return !height || room >= HELP_LINES ? HELP_LINES
					     : room > 1 ? room - 1 : 1;
}

unsigned top_help_pages(unsigned height)
{
	size_t per = help_per_page(height);
	return (unsigned)((HELP_LINES + per - 1) / per);
}

/* Page `page` (1, 2, ...) of the help, in at most max lines. */
static size_t help(struct top_line *l, size_t max, unsigned page,
		   unsigned height)
{
	size_t per = help_per_page(height), n = 0;
	unsigned pages = top_help_pages(height);
	if (page > pages)
		page = pages;
	for (size_t i = (page - 1) * per; i < HELP_LINES && n < per &&
	     n < max; i++) {
		if (i < HELP_FIXED)
			line(&l[n++], i ? TA_NORMAL : TA_HEAD, "%s",
			     help_text[i]);
		else
			line(&l[n++], TA_NORMAL, "  [%c] %-9s %s",
			     top_metrics[i - HELP_FIXED].key,
			     top_metrics[i - HELP_FIXED].head,
			     top_metrics[i - HELP_FIXED].help);
	}
	if (pages > 1 && n < max)
		line(&l[n++], TA_HEAD, "-- help %u/%u: space or PgDn %s, "
		     "other keys return --", page, pages,
		     page < pages ? "next page" : "back to the rows");
	return n;
}

/* At l->text + pos: lead, then s in at most cols columns, shortened
 * visibly (tsc_put_fit(): its end kept for a path, tail). */
static void fit_at(struct top_line *l, size_t pos, const char *lead,
		   const char *s, size_t cols, bool tail)
{
	struct buf b;
	buf_init(&b);
	buf_puts(&b, lead);
	tsc_put_fit(&b, s, strlen(s), cols, tail);
	if (!b.oom && pos < sizeof(l->text))
		snprintf(l->text + pos, sizeof(l->text) - pos, "%.*s",
			 (int)b.len, b.p);
	buf_free(&b);
}

/* The WORKLOAD column, last (issue 24): shown when a visible row has
 * one, clipped to the width. */
static bool any_workload(const struct top_view *v)
{
	for (size_t k = 0; k < v->nvis; k++)
		if (v->rows[v->vis[k]].workload)
			return true;
	return false;
}

static void workload_cell(struct top_line *l, int pos, unsigned width,
			  const char *w)
{
	size_t cap = sizeof(l->text) - 1;
	if (width && width < cap)
		cap = width;
	if (pos < 0 || (size_t)pos + 2 >= cap)
		return;
	fit_at(l, (size_t)pos, "  ", w, cap - (size_t)pos - 2, false);
}

/* The name cell: tree indentation and fold mark, or the path. */
static void name_cell(const struct top_view *v, const struct top_row *r,
		      char *out, size_t n)
{
	if (!v->tree) {
		snprintf(out, n, "%s", r->path);
		return;
	}
	unsigned ind = r->depth * 2 < 40 ? r->depth * 2 : 40;
	const char *mark = !r->children ? " " :
			   top_view_is_collapsed(v, r->path) ||
			   (v->max_depth && r->depth >= v->max_depth) ? "+" : "-";
	snprintf(out, n, "%*s%s %s", ind, "", mark,
		 r->path[0] == '/' && !r->path[1] ? "/" : r->name);
}

size_t top_render(const struct top_view *v, const struct top_status *st,
		  unsigned width, unsigned height, struct top_line **out)
{
	size_t cap = (height ? height : v->nvis + TOP_HEAD_LINES + 20) + 1;
	struct top_line *l = calloc(cap, sizeof(*l));
	bool on[M__COUNT];
	size_t n = 0;
	char cell[512];

	*out = l;
	if (!l)
		return 0;
	if (width > sizeof(l->text) - 1)
		width = sizeof(l->text) - 1;
	status(v, st, l);
	for (n = 0; width && n < 3; n++) /* cut visibly, not by the screen */
		if (strlen(l[n].text) > width) {
			char t[sizeof(l->text)];
			memcpy(t, l[n].text, sizeof(t));
			fit_at(&l[n], 0, "", t, width, false);
		}
	n = 3;
	if (height && n >= height)
		return height;
	if (st->help)
		return n + help(l + n, cap - 1 - n, st->help, height);

	choose(width, v->cur.oom_counted, on);
	unsigned metrics = 0;
	for (int m = 0; m < M__COUNT; m++)
		metrics += on[m];
	/* as wide as the widest name, within what the metrics leave */
	int name_w = NAME_MIN;
	for (size_t k = 0; k < v->nvis; k++) {
		name_cell(v, &v->rows[v->vis[k]], cell, sizeof(cell));
		if ((int)strlen(cell) + 3 > name_w) /* the cursor mark too */
			name_w = (int)strlen(cell) + 3;
	}
	if (name_w > 300)
		name_w = 300;
	if (width && name_w > (int)width - (int)(metrics * COL_W))
		name_w = (int)width - (int)(metrics * COL_W);

	/* header: the sort column marked */
	int pos = snprintf(l[n].text, sizeof(l[n].text), " %-*.*s",
			   name_w - 1, name_w - 2, v->sort == TOP_SORT_NAME ?
			   (v->tree ? "CGROUP*" : "PATH*") :
			   (v->tree ? "CGROUP (subtree)" : "PATH (own)"));
	for (int m = 0; m < M__COUNT; m++)
		if (on[m] && pos < (int)sizeof(l[n].text))
			pos += snprintf(l[n].text + pos, sizeof(l[n].text) -
					(size_t)pos, "%*s%s",
					COL_W - (m == v->sort), top_metrics[m].head,
					m == v->sort ? "*" : "");
	bool wl = any_workload(v);
	if (wl)
		workload_cell(&l[n], pos, width, "WORKLOAD");
	l[n++].attr = TA_HEAD;

	size_t rows = height ? height - n : v->nvis;
	size_t first = 0;
	if (height && v->cursor >= rows)
		first = v->cursor - rows + 1;
	for (size_t k = first; k < v->nvis && k - first < rows; k++) {
		const struct top_row *r = &v->rows[v->vis[k]];
		bool sel = height && k == v->cursor;
		name_cell(v, r, cell, sizeof(cell));
		/* the cursor mark, seen without attributes too; a name cut
		 * to the column says so */
		fit_at(&l[n], 0, sel ? ">" : " ", cell, (size_t)name_w - 2,
		       !v->tree);
		size_t len = strlen(l[n].text);
		for (size_t c = tsc_text_cols(l[n].text, len);
		     c < (size_t)name_w && len + 1 < sizeof(l[n].text); c++)
			l[n].text[len++] = ' ';
		l[n].text[len] = '\0';
		pos = (int)len;
		for (int m = 0; m < M__COUNT; m++) {
			char h[32];
			if (!on[m] || pos >= (int)sizeof(l[n].text))
				continue;
			top_human(h, sizeof(h), top_row_value(v, r, m),
				  top_metrics[m].unit);
			pos += snprintf(l[n].text + pos, sizeof(l[n].text) -
					(size_t)pos, "%*s", COL_W, h);
		}
		if (wl)
			workload_cell(&l[n], pos, width,
				      r->workload ? r->workload : "-");
		l[n++].attr = sel ? TA_SEL : TA_NORMAL;
	}
	return n;
}
