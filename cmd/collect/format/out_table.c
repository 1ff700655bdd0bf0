/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Human-readable table: top cgroups by task exits, aligned columns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "output.h"

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

/* Seconds with 3 decimals, right-aligned in w columns. */
static void secs(struct buf *b, uint64_t us, int w)
{
	buf_printf(b, " %*llu.%03llu", w - 4,
		   (unsigned long long)(us / 1000000u),
		   (unsigned long long)(us % 1000000u / 1000u));
}

/* A duration in 8 columns: "870us", "12.5ms", "3.20s", "2.5h". */
static void dur(struct buf *b, uint64_t ns)
{
	char t[32];
	double v = (double)ns;
	if (ns < 1000000)
		snprintf(t, sizeof(t), "%.0fus", v / 1e3);
	else if (ns < 1000000000)
		snprintf(t, sizeof(t), "%.1fms", v / 1e6);
	else if (ns < 3600ull * 1000000000)
		snprintf(t, sizeof(t), "%.2fs", v / 1e9);
	else
		snprintf(t, sizeof(t), "%.1fh", v / 3.6e12);
	buf_printf(b, " %8s", t);
}

/* p50/p99 estimates of the cgroup's own distributions ("-": empty). */
static void quantiles(struct buf *b, const struct cgs_snapshot *s, size_t i)
{
	static const struct { enum cgs_hist_kind k; double q; } cols[] = {
		{ CGS_HIST_LIFETIME, 0.5 }, { CGS_HIST_LIFETIME, 0.99 },
		{ CGS_HIST_CPU, 0.99 }, { CGS_HIST_CPU_DELAY, 0.99 },
	};
	for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
		CGS_OPTS(cgs_hist, h);
		if (cgs_snapshot_get_hist(s, i, CGS_SET_SELF, cols[c].k, &h) < 0 ||
		    !h.count)
			buf_printf(b, " %8s", "-");
		else
			dur(b, cgs_hist_quantile(&h, cols[c].q));
	}
}

#define WL_W 24 /* WORKLOAD column */

/*
 * The WORKLOAD column: the names the workload view found for a container
 * or pod ("<namespace>/<pod>/<container>", "<namespace>/<pod>"), else what
 * cgs_workload_from_path() says, shortest first choice: a container
 * ("<runtime>:<12 hex>", "id:<12 hex>" when the runtime is unknown), a pod
 * ("pod:<first 8 of the UID>"), the unit, the slice, or "-". Longer names
 * are cut to the column with "...".
 */
static void workload(struct buf *b, const struct snap_info *in,
		     const char *path)
{
	CGS_OPTS(cgs_workload, w);
	struct cgs_workload_view v = { .sz = sizeof(v) };
	char s[3 * CGS_ID_NAME_LEN + 32];

	if (in->workloads && cgs_workloads_find(in->workloads, path, &v) == 0 &&
	    (v.kind == CGS_WLK_CONTAINER || v.kind == CGS_WLK_POD))
		snprintf(s, sizeof(s), "%s/%s%s%s", v.k8s_namespace, v.pod,
			 *v.container ? "/" : "", v.container);
	else if (v.kind == CGS_WLK_DOCKER && *v.container)
		snprintf(s, sizeof(s), "%s%s%s", v.k8s_namespace,
			 *v.k8s_namespace ? "/" : "", v.container);
	else if (cgs_workload_from_path(path, &w) <= 0)
		snprintf(s, sizeof(s), "-");
	else if (w.container[0])
		snprintf(s, sizeof(s), "%s:%.12s",
			 w.runtime[0] ? w.runtime : "id", w.container);
	else if (w.pod_uid[0])
		snprintf(s, sizeof(s), "pod:%.8s", w.pod_uid);
	else
		snprintf(s, sizeof(s), "%s", w.unit[0] ? w.unit
				     : w.slice[0] ? w.slice : w.qos_class);
	if (strlen(s) > WL_W)
		memcpy(s + WL_W - 3, "...", 4);
	buf_printf(b, "%-*s  ", WL_W, s);
}

/* Under a cgroup's row: its top commands, "name value" largest first. */
static void comm_lines(struct buf *b, const struct cgs_snapshot *s, size_t i)
{
	for (int r = 0; r < 2; r++) {
		size_t n = cgs_snapshot_comm_count(s, i, (enum cgs_comm_rank)r);
		if (!n)
			continue;
		buf_puts(b, r == CGS_COMMS_BY_CPU ? "          cpu:  "
						  : "          exits:");
		for (size_t j = 0; j < n; j++) {
			const struct cgs_comm *c =
				cgs_snapshot_get_comm(s, i, (enum cgs_comm_rank)r, j);
			buf_puts(b, j ? ", " : " ");
			if (c->other)
				buf_puts(b, "(other)");
			else
				esc_text(b, c->comm, strlen(c->comm));
			if (r == CGS_COMMS_BY_CPU)
				buf_printf(b, " %llu.%03llus",
					   (unsigned long long)(c->value / 1000000u),
					   (unsigned long long)(c->value % 1000000u /
								1000u));
			else
				buf_printf(b, " %llu", (unsigned long long)c->value);
			if (c->error)
				buf_puts(b, "+");
		}
		buf_putc(b, '\n');
	}
}

static void snapshot(struct buf *b, const struct snap_info *in,
		     const struct cgs_snapshot *s)
{
	const unsigned top = in->top;
	size_t n = cgs_snapshot_count(s), shown = 0, rows = 0;
	struct row *v = calloc(n ? n : 1, sizeof(*v));

	timestamp(b, in->time_ns);
	buf_printf(b, "%s  records %llu  dropped %llu  unattributed %llu  "
		   "malformed %llu  cgroups %zu",
		   in->final ? "  final" : "",
		   (unsigned long long)in->records,
		   (unsigned long long)in->dropped,
		   (unsigned long long)in->unattributed,
		   (unsigned long long)in->malformed, n);
	if (in->refused) /* never when the rollup is wired right */
		buf_printf(b, "  refused %llu",
			   (unsigned long long)in->refused);
	if (in->cgroups_filtered) /* --cgroup, --exclude-cgroup */
		buf_printf(b, " (%llu filtered out)",
			   (unsigned long long)in->cgroups_filtered);
	if (in->retired_unserved) /* --retire-after, --retire-max */
		buf_printf(b, " (%llu retired unserved)",
			   (unsigned long long)in->retired_unserved);
	buf_printf(b, "  hierarchy %s", in->hierarchy ? in->hierarchy : "?");
	if (in->attribution)
		buf_printf(b, "  attribution %s", in->attribution);
	if (in->kernel_unmatched || in->kernel_lost)
		buf_printf(b, " (not matched %llu, lost %llu)",
			   (unsigned long long)in->kernel_unmatched,
			   (unsigned long long)in->kernel_lost);
	if (in->inferred)
		buf_printf(b, "  inferred %llu",
			   (unsigned long long)in->inferred);
	if (in->delayacct == 0) /* only the exception, the line is long */
		buf_puts(b, "  delayacct off");
	if (in->stream == TSC_STREAM_FULL) /* --stream changes */
		buf_puts(b, "  (full)");
	else if (in->stream == TSC_STREAM_CHANGES)
		buf_printf(b, "  (changes only: %zu cgroups changed)",
			   snap_shown(in, s));
	buf_putc(b, '\n');
	if (!v) {
		buf_puts(b, "(out of memory)\n\n");
		return;
	}
	for (size_t k = 0, m = snap_shown(in, s); k < m; k++) {
		size_t i = snap_index(in, k);
		const struct cgs_cgroup_stats *g = cgs_snapshot_get_cgroup(s, i);
		if (g->subtree->tasks)
			v[rows++] = (struct row){ g, i };
	}
	qsort(v, rows, sizeof(*v), by_tasks);
	buf_printf(b, "%9s %7s %9s %9s %9s %10s %10s %7s %6s %4s", "TASKS",
		   "NEW", "PROCS", "TASKS+SUB", "PROCS+SUB", "USER_S", "SYS_S",
		   "NONZERO", "SIGNAL", "OOM");
	if (in->histograms)
		buf_printf(b, " %8s %8s %8s %8s", "LIFE_P50", "LIFE_P99",
			   "CPU_P99", "WAIT_P99");
	buf_printf(b, " %8s  %-*s  %s\n", "INFERRED", WL_W, "WORKLOAD",
		   "CGROUP");
	for (size_t i = 0; i < rows && (!top || shown < top); i++, shown++) {
		const struct cgs_cgroup_stats *g = v[i].g;
		buf_printf(b, "%9llu %7llu %9llu %9llu %9llu",
			   (unsigned long long)g->self->tasks,
			   (unsigned long long)g->self_delta->tasks,
			   (unsigned long long)g->self->processes,
			   (unsigned long long)g->subtree->tasks,
			   (unsigned long long)g->subtree->processes);
		secs(b, g->self->utime_us, 10);
		secs(b, g->self->stime_us, 10);
		buf_printf(b, " %7llu %6llu",
			   (unsigned long long)g->self->exit_nonzero,
			   (unsigned long long)g->self->exit_signaled);
		if (in->oom_source)
			buf_printf(b, " %4llu",
				   (unsigned long long)g->self->oom_kills);
		else
			buf_printf(b, " %4s", "-");
		if (in->histograms)
			quantiles(b, s, v[i].i);
		buf_printf(b, " %8llu  ", (unsigned long long)g->inferred);
		workload(b, in, g->path);
		esc_text(b, g->path, strlen(g->path));
		buf_putc(b, '\n');
		if (in->comms)
			comm_lines(b, s, v[i].i);
	}
	if (rows > shown)
		buf_printf(b, "(%zu more cgroups with exits; --top 0 shows "
			   "all)\n", rows - shown);
	buf_putc(b, '\n');
	free(v);
}

static void event(struct buf *b, const struct cgs_record *r,
		  const char *cgroup, const char *source, uint64_t recv_ns,
		  unsigned shard, const struct cgs_identity *id)
{
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
