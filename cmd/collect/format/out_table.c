/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Human-readable table: top cgroups by task exits, aligned columns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "output.h"
#include "stream.h"
#include "termwidth.h"

static void timestamp(struct buf *b, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	char s[32];
	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%SZ", &tm);
	buf_puts(b, s);
}

/* A row: the cgroup and its index in the snapshot (for the accessors). */
struct row {
	const struct cgs_cgroup_stats *g;
	size_t i;
};

static int by_tasks(const void *a, const void *b)
{
	const struct cgs_cgroup_stats *x = ((const struct row *)a)->g;
	const struct cgs_cgroup_stats *y = ((const struct row *)b)->g;
	if (x->self->tasks != y->self->tasks)
		return x->self->tasks > y->self->tasks ? -1 : 1;
	if (x->subtree->tasks != y->subtree->tasks)
		return x->subtree->tasks > y->subtree->tasks ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* A duration: "870us", "12.5ms", "3.20s", "2.5h". */
static void dur(char *t, size_t n, uint64_t ns)
{
	double v = (double)ns;
	if (ns < 1000000)
		snprintf(t, n, "%.0fus", v / 1e3);
	else if (ns < 1000000000)
		snprintf(t, n, "%.1fms", v / 1e6);
	else if (ns < 3600ull * 1000000000)
		snprintf(t, n, "%.2fs", v / 1e9);
	else
		snprintf(t, n, "%.1fh", v / 3.6e12);
}

#define WL_W 24 /* WORKLOAD column */
/* the path keeps a quarter of the width at least, 20 columns or more */
#define PATH_MIN(w) ((w) / 4 > 20 ? (w) / 4 : 20)

/*
 * The columns, in their order on a line; the cgroup path comes last, after
 * two blanks. With a width (in->width) they are taken by priority (0
 * first) while the path keeps PATH_MIN() columns; --wide takes them all (the
 * layout before issue 38, byte for byte). Numbers are right-aligned after
 * one blank (the first without), WORKLOAD left-aligned after two.
 */
enum { T_TASKS, T_NEW, T_PROCS, T_TSUB, T_PSUB, T_USER, T_SYS, T_NONZERO,
       T_SIGNAL, T_OOM, T_L50, T_L99, T_CPU99, T_WAIT99, T_INFERRED,
       T_WORKLOAD, T__N };
static const struct tcol {
	const char *head;
	unsigned char w, prio;
} tcols[T__N] = {
	[T_TASKS] = { "TASKS", 9, 0 },       [T_NEW] = { "NEW", 7, 1 },
	[T_PROCS] = { "PROCS", 9, 8 },       [T_TSUB] = { "TASKS+SUB", 9, 6 },
	[T_PSUB] = { "PROCS+SUB", 9, 13 },   [T_USER] = { "USER_S", 10, 2 },
	[T_SYS] = { "SYS_S", 10, 3 },        [T_NONZERO] = { "NONZERO", 7, 7 },
	[T_SIGNAL] = { "SIGNAL", 6, 4 },     [T_OOM] = { "OOM", 4, 9 },
	[T_L50] = { "LIFE_P50", 8, 14 },     [T_L99] = { "LIFE_P99", 8, 12 },
	[T_CPU99] = { "CPU_P99", 8, 11 },    [T_WAIT99] = { "WAIT_P99", 8, 10 },
	[T_INFERRED] = { "INFERRED", 8, 15 },
	[T_WORKLOAD] = { "WORKLOAD", WL_W, 5 },
};

static bool hist_col(int c)
{
	return c >= T_L50 && c <= T_WAIT99;
}

/* Columns the cell takes on a line, its blanks before it included (wl:
 * the WORKLOAD column's width). */
static unsigned col_cost(int c, unsigned wl)
{
	return c == T_WORKLOAD ? wl + 2 : tcols[c].w + (c != T_TASKS ? 1u : 0u);
}

/* Which columns a line of in->width shows (all: --wide); wl: the width of
 * the WORKLOAD column, 0 when no row shown has a workload name. Returns
 * the columns they take. */
static unsigned choose(const struct snap_info *in, unsigned wl,
		       bool on[T__N])
{
	unsigned used = 0;
	for (int c = 0; c < T__N; c++) {
		on[c] = !in->width;
		if (on[c] && hist_col(c) && !in->histograms)
			on[c] = false;
	}
	if (!in->width) {
		for (int c = 0; c < T__N; c++)
			used += on[c] ? col_cost(c, WL_W) : 0;
		return used;
	}
	used = 2 + PATH_MIN(in->width);
	for (unsigned prio = 0; prio < T__N; prio++)
		for (int c = 0; c < T__N; c++) {
			if (tcols[c].prio != prio ||
			    (hist_col(c) && !in->histograms) ||
			    (c == T_OOM && !in->oom_source) ||
			    (c == T_WORKLOAD && !wl))
				continue;
			if (c != T_TASKS && used + col_cost(c, wl) > in->width)
				continue;
			on[c] = true;
			used += col_cost(c, wl);
		}
	return used - 2 - PATH_MIN(in->width);
}

/* The text of column c of the row (snapshot index i). */
static void cell(char *t, size_t n, int c, const struct snap_info *in,
		 const struct cgs_snapshot *s, const struct cgs_cgroup_stats *g,
		 size_t i)
{
	static const struct { enum cgs_hist_kind k; double q; } q[] = {
		[T_L50 - T_L50] = { CGS_HIST_LIFETIME, 0.5 },
		[T_L99 - T_L50] = { CGS_HIST_LIFETIME, 0.99 },
		[T_CPU99 - T_L50] = { CGS_HIST_CPU, 0.99 },
		[T_WAIT99 - T_L50] = { CGS_HIST_CPU_DELAY, 0.99 },
	};
	uint64_t v = 0;

	switch (c) {
	case T_TASKS: v = g->self->tasks; break;
	case T_NEW: v = g->self_delta->tasks; break;
	case T_PROCS: v = g->self->processes; break;
	case T_TSUB: v = g->subtree->tasks; break;
	case T_PSUB: v = g->subtree->processes; break;
	case T_NONZERO: v = g->self->exit_nonzero; break;
	case T_SIGNAL: v = g->self->exit_signaled; break;
	case T_INFERRED: v = g->inferred; break;
	case T_OOM:
		if (!in->oom_source) {
			snprintf(t, n, "-");
			return;
		}
		v = g->self->oom_kills;
		break;
	case T_USER: case T_SYS:
		v = c == T_USER ? g->self->utime_us : g->self->stime_us;
		snprintf(t, n, "%llu.%03llu", (unsigned long long)(v / 1000000u),
			 (unsigned long long)(v % 1000000u / 1000u));
		return;
	default: { /* the own distributions' quantiles, "-": empty */
		CGS_OPTS(cgs_hist, h);
		if (cgs_snapshot_get_hist(s, i, CGS_SET_SELF, q[c - T_L50].k,
				      &h) < 0 || !h.count)
			snprintf(t, n, "-");
		else
			dur(t, n, cgs_hist_quantile(&h, q[c - T_L50].q));
		return;
	}
	}
	snprintf(t, n, "%llu", (unsigned long long)v);
}

/*
 * The WORKLOAD column: the names the workload view found for a container
 * or pod ("<namespace>/<pod>/<container>", "<namespace>/<pod>"), else what
 * cgs_workload_from_path() says, shortest first choice: a container
 * ("<runtime>:<12 hex>", "id:<12 hex>" when the runtime is unknown), a pod
 * ("pod:<first 8 of the UID>"), the unit, the slice, or "-". Longer names
 * are cut to the column with "...".
 */
static void workload(char *s, size_t n, const struct snap_info *in,
		     const char *path)
{
	CGS_OPTS(cgs_workload, w);
	struct cgs_workload_view v = { .sz = sizeof(v) };

	if (in->workloads && cgs_workloads_find(in->workloads, path, &v) == 0 &&
	    (v.kind == CGS_WLK_CONTAINER || v.kind == CGS_WLK_POD))
		snprintf(s, n, "%s/%s%s%s", v.k8s_namespace, v.pod,
			 *v.container ? "/" : "", v.container);
	else if (v.kind == CGS_WLK_DOCKER && *v.container)
		snprintf(s, n, "%s%s%s", v.k8s_namespace,
			 *v.k8s_namespace ? "/" : "", v.container);
	else if (cgs_workload_from_path(path, &w) <= 0)
		snprintf(s, n, "-");
	else if (w.container[0])
		snprintf(s, n, "%s:%.12s",
			 w.runtime[0] ? w.runtime : "id", w.container);
	else if (w.pod_uid[0])
		snprintf(s, n, "pod:%.8s", w.pod_uid);
	else
		snprintf(s, n, "%s", w.unit[0] ? w.unit
				     : w.slice[0] ? w.slice : w.qos_class);
	if (strlen(s) > WL_W)
		memcpy(s + WL_W - 3, "...", 4);
}

/* One more item of a comm line: on a new line, indented, when a width is
 * set and it would not fit. */
static void comm_item(struct buf *b, const struct snap_info *in,
		      struct buf *t, size_t *col, bool first)
{
	size_t cols = tsc_text_cols(t->p, t->len);
	if (!first && in->width && *col + 2 + cols > in->width) {
		buf_puts(b, ",\n                ");
		*col = 16;
	} else {
		buf_puts(b, first ? " " : ", ");
		*col += first ? 1 : 2;
	}
	buf_add(b, t->p, t->len);
	*col += cols;
}

/* Under a cgroup's row: its top commands, "name value" largest first. */
static void comm_lines(struct buf *b, const struct snap_info *in,
		       const struct cgs_snapshot *s, size_t i)
{
	struct buf t;
	buf_init(&t);
	for (int r = 0; r < 2; r++) {
		size_t n = cgs_snapshot_comm_count(s, i, (enum cgs_comm_rank)r);
		size_t col = 16;
		if (!n)
			continue;
		buf_puts(b, r == CGS_COMMS_BY_CPU ? "          cpu:  "
						  : "          exits:");
		for (size_t j = 0; j < n; j++) {
			const struct cgs_comm *c =
				cgs_snapshot_get_comm(s, i, (enum cgs_comm_rank)r, j);
			buf_reset(&t);
			if (c->other)
				buf_puts(&t, "(other)");
			else
				esc_text(&t, c->comm, strlen(c->comm));
			if (r == CGS_COMMS_BY_CPU)
				buf_printf(&t, " %llu.%03llus",
					   (unsigned long long)(c->value / 1000000u),
					   (unsigned long long)(c->value % 1000000u /
								1000u));
			else
				buf_printf(&t, " %llu", (unsigned long long)c->value);
			if (c->error)
				buf_puts(&t, "+");
			comm_item(b, in, &t, &col, !j);
		}
		buf_putc(b, '\n');
	}
	buf_free(&t);
}
/*
 * The snapshot's first line, h (its items after two blanks): as it is
 * with no width, else broken between items into lines of the width, the
 * next ones indented by two.
 */
static void head_wrapped(struct buf *b, const struct buf *h, unsigned width)
{
	const char *p = h->p, *end = h->p + h->len;
	size_t col = 0;

	if (!width || tsc_text_cols(h->p, h->len) <= width) {
		buf_add(b, h->p, h->len);
		return;
	}
	while (p < end) {
		const char *q = strstr(p, "  ");
		size_t n = q ? (size_t)(q - p) : (size_t)(end - p);
		size_t cols = tsc_text_cols(p, n);
		if (col && col + 2 + cols > width) {
			buf_puts(b, "\n  ");
			col = 2;
		} else if (col) {
			buf_puts(b, "  ");
			col += 2;
		}
		buf_add(b, p, n);
		col += cols;
		p += n;
		while (p < end && *p == ' ') /* the blanks between items */
			p++;
	}
}

static void head_line(struct buf *b, const struct snap_info *in,
		      const struct cgs_snapshot *s)
{
	struct buf h;

	buf_init(&h);
	timestamp(&h, in->time_ns);
	buf_printf(&h, "%s  records %llu  dropped %llu  unattributed %llu  "
		   "malformed %llu  cgroups %zu",
		   in->final ? "  final" : "",
		   (unsigned long long)in->records,
		   (unsigned long long)in->dropped,
		   (unsigned long long)in->unattributed,
		   (unsigned long long)in->malformed, cgs_snapshot_count(s));
	if (in->refused) /* never when the rollup is wired right */
		buf_printf(&h, "  refused %llu",
			   (unsigned long long)in->refused);
	if (in->cgroups_filtered) /* --cgroup, --exclude-cgroup */
		buf_printf(&h, " (%llu filtered out)",
			   (unsigned long long)in->cgroups_filtered);
	if (in->retired_unserved) /* --retire-after, --retire-max */
		buf_printf(&h, " (%llu retired unserved)",
			   (unsigned long long)in->retired_unserved);
	buf_printf(&h, "  hierarchy %s", in->hierarchy ? in->hierarchy : "?");
	if (in->attribution)
		buf_printf(&h, "  attribution %s", in->attribution);
	if (in->kernel_unmatched || in->kernel_lost)
		buf_printf(&h, " (not matched %llu, lost %llu)",
			   (unsigned long long)in->kernel_unmatched,
			   (unsigned long long)in->kernel_lost);
	if (in->inferred)
		buf_printf(&h, "  inferred %llu",
			   (unsigned long long)in->inferred);
	if (in->delayacct == 0) /* only the exception, the line is long */
		buf_puts(&h, "  delayacct off");
	if (in->stream == TSC_STREAM_FULL) /* --stream changes */
		buf_puts(&h, "  (full)");
	else if (in->stream == TSC_STREAM_CHANGES)
		buf_printf(&h, "  (changes only: %zu cgroup%s changed)",
			   snap_shown(in, s), snap_shown(in, s) == 1 ? "" : "s");
	head_wrapped(b, &h, in->width);
	buf_putc(b, '\n');
	buf_free(&h);
}

/* One row: the chosen columns, then the path (shortened to the columns
 * left with a width). */
static void row_line(struct buf *b, const struct snap_info *in,
		     const struct cgs_snapshot *s, const struct row *r,
		     const bool on[T__N], unsigned used, unsigned wl,
		     struct buf *t)
{
	char v[3 * CGS_ID_NAME_LEN + 32];

	for (int c = 0; c < T__N; c++) {
		if (!on[c])
			continue;
		if (c == T_WORKLOAD) {
			workload(v, sizeof(v), in, r->g->path);
			buf_printf(b, "  %-*s", (int)wl, v);
			continue;
		}
		cell(v, sizeof(v), c, in, s, r->g, r->i);
		buf_printf(b, c == T_TASKS ? "%*s" : " %*s", tcols[c].w, v);
	}
	buf_puts(b, "  ");
	buf_reset(t);
	esc_text(t, r->g->path, strlen(r->g->path));
	if (in->width)
		tsc_put_fit(b, t->p, t->len, in->width - used - 2, true);
	else
		buf_add(b, t->p, t->len);
	buf_putc(b, '\n');
}

/* The WORKLOAD column's width: WL_W with no width (--wide), else as wide
 * as the longest name of the rows shown (at least its header), 0 when no
 * row has one. */
static unsigned workload_width(const struct snap_info *in,
			       const struct row *v, size_t n)
{
	char w[3 * CGS_ID_NAME_LEN + 32];
	size_t wl = 0;
	if (!in->width)
		return WL_W;
	for (size_t k = 0; k < n; k++) {
		workload(w, sizeof(w), in, v[k].g->path);
		if (strcmp(w, "-") && strlen(w) > wl)
			wl = strlen(w);
	}
	return !wl ? 0 : wl < sizeof("WORKLOAD") - 1 ? sizeof("WORKLOAD") - 1
						     : (unsigned)wl;
}

/*
 * The rows: cgroups with exits in their subtree, most task exits first
 * (--top of them). A change-only line lists those whose own counters
 * moved and says how many others changed (exits below them only, deltas
 * back to 0, new without exits).
 */
static void snapshot(struct buf *b, const struct snap_info *in,
		     const struct cgs_snapshot *s)
{
	const unsigned top = in->top;
	size_t n = cgs_snapshot_count(s), shown = 0, rows = 0, other = 0;
	struct row *v = calloc(n ? n : 1, sizeof(*v));
	bool on[T__N];
	struct buf t;

	head_line(b, in, s);
	if (!v) {
		buf_puts(b, "(out of memory)\n\n");
		return;
	}
	for (size_t k = 0, m = snap_shown(in, s); k < m; k++) {
		size_t i = snap_index(in, k);
		const struct cgs_cgroup_stats *g = cgs_snapshot_get_cgroup(s, i);
		if (in->stream == TSC_STREAM_CHANGES &&
		    !tsc_stream_row_moved(g))
			other++;
		else if (g->subtree->tasks)
			v[rows++] = (struct row){ g, i };
	}
	qsort(v, rows, sizeof(*v), by_tasks);
	size_t nrows = top && rows > top ? top : rows;
	unsigned wl = workload_width(in, v, nrows);
	unsigned used = choose(in, wl, on);
	for (int c = 0; c < T__N; c++)
		if (on[c] && c == T_WORKLOAD)
			buf_printf(b, "  %-*s", (int)wl, tcols[c].head);
		else if (on[c])
			buf_printf(b, c == T_TASKS ? "%*s" : " %*s", tcols[c].w,
				   tcols[c].head);
	buf_puts(b, "  CGROUP\n");
	buf_init(&t);
	for (size_t i = 0; i < rows && (!top || shown < top); i++, shown++) {
		row_line(b, in, s, &v[i], on, used, wl, &t);
		if (in->comms)
			comm_lines(b, in, s, v[i].i);
	}
	buf_free(&t);
	if (rows > shown)
		buf_printf(b, "(%zu more cgroups with exits; --top 0 shows "
			   "all)\n", rows - shown);
	if (other)
		buf_printf(b, "(%zu other cgroup%s changed, not by exits of "
			   "%s own)\n", other, other == 1 ? "" : "s",
			   other == 1 ? "its" : "their");
	buf_putc(b, '\n');
	free(v);
}

static void event(struct buf *b, const struct cgs_record *r,
		  const char *cgroup, const char *source, uint64_t recv_ns,
		  unsigned shard, const struct cgs_identity *id, const char *exe)
{
	(void)exe; /* the table has no room for it */
	int code = exit_code_of(r->exit_status);
	timestamp(b, recv_ns);
	buf_printf(b, " exit %-7s pid %u tgid %u ppid %u comm ",
		   kind_name(r->kind), r->pid, r->tgid, r->ppid);
	esc_json(b, r->comm, strlen(r->comm));
	if (code >= 0)
		buf_printf(b, " status %d", code);
	else
		buf_printf(b, " signal %d", exit_signal_of(r->exit_status));
	buf_printf(b, " user %llu.%06llus sys %llu.%06llus cgroup ",
		   (unsigned long long)(r->utime_us / 1000000u),
		   (unsigned long long)(r->utime_us % 1000000u),
		   (unsigned long long)(r->stime_us / 1000000u),
		   (unsigned long long)(r->stime_us % 1000000u));
	const char *cg = cgroup ? cgroup : CGS_UNKNOWN_CGROUP;
	esc_text(b, cg, strlen(cg));
	buf_printf(b, " source %s", source ? source : "none");
	if (id && id->k8s_namespace[0]) { /* as the WORKLOAD column */
		buf_puts(b, " workload ");
		esc_text(b, id->k8s_namespace, strlen(id->k8s_namespace));
		buf_putc(b, '/');
		esc_text(b, id->pod, strlen(id->pod));
		if (id->container[0] && !id->sandbox) {
			buf_putc(b, '/');
			esc_text(b, id->container, strlen(id->container));
		}
	}
	buf_putc(b, '\n');
	(void)shard;
}

const struct out_ops out_table_ops = {
	.snapshot = snapshot,
	.event = event,
};
