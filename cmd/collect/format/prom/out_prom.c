/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Prometheus text format 0.0.4. Per-cgroup series carry the cgroup's own
 * ("self") values only, so that sum() over cgroups is the host total
 * (unless --cgroup, --exclude-cgroup or --prom-max-series left some out,
 * as collector_cgroups_filtered and _not_exported say); subtree sums are
 * for the JSON/CSV outputs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "output.h"

#include "prom_family.h"
#include "selfmetric.h"

#define P PROM_PREFIX
#define head prom_head

static void wl_label(struct buf *b, const char *k, const char *v)
{
	if (!*v)
		return;
	buf_printf(b, ",%s=\"", k);
	esc_prom_label(b, v, strlen(v));
	buf_putc(b, '"');
}

/* The labels of the exported cgroups: cgroup, then the workload labels
 * (WL_ALL), or (WL_LEAN) only a unit that is not a container's. */
enum { WL_NONE, WL_ALL, WL_LEAN };

static bool cglabels_make(struct cglabels *L, const struct cgs_snapshot *s,
			  const size_t *idx, size_t n, int workload)
{
	buf_init(&L->text);
	L->off = calloc(n + 1, sizeof(*L->off));
	if (!L->off)
		return false;
	for (size_t i = 0; i < n; i++) {
		const char *path = cgs_snapshot_get_cgroup(s, idx[i])->path;
		L->off[i] = L->text.len;
		buf_puts(&L->text, "{cgroup=\"");
		esc_prom_label(&L->text, path, strlen(path));
		buf_putc(&L->text, '"');
		CGS_OPTS(cgs_workload, w);
		if (workload == WL_LEAN &&
		    cgs_workload_from_path(path, &w) > 0 && !*w.container_id)
			wl_label(&L->text, "unit", w.unit);
		if (workload == WL_ALL &&
		    cgs_workload_from_path(path, &w) > 0) {
			wl_label(&L->text, "unit", w.unit);
			wl_label(&L->text, "slice", w.slice);
			wl_label(&L->text, "container_id", w.container_id);
			wl_label(&L->text, "pod_uid", w.pod_uid);
			wl_label(&L->text, "qos_class", w.qos_class);
		}
	}
	L->off[n] = L->text.len;
	return !L->text.oom;
}

static void cglabels_free(struct cglabels *L)
{
	buf_free(&L->text);
	free(L->off);
}

static void collector(struct buf *b, const char *name, const char *type,
		      const char *help, uint64_t v)
{
	head(b, name, type, help);
	buf_printf(b, P "%s ", name);
	buf_u64(b, v);
	buf_putc(b, '\n');
}

/* The kernel source's own state, only while it attributes (replay and
 * the /proc source: none of these). Cost: 19 series (23 with
 * kernel.bpf_stats_enabled), ~3.5 KiB a scrape with HELP, none per
 * cgroup. */
static void kernel_self(struct buf *b, const struct snap_info *in)
{
	const struct cgs_rollup_totals *t = &in->ktot;
	head(b, "collector_kernel_unmatched_reason_total", "counter",
	     "Records without a kernel answer by why (one reason a record: "
	     "they add up to collector_kernel_unmatched_total).");
	for (unsigned i = 0; i < TSC_KMISS_N; i++) {
		buf_printf(b, P "collector_kernel_unmatched_reason_total"
			   "{reason=\"%s\"} ", tsc_kmiss[i].name);
		buf_u64(b, tsc_kmiss_get(t, i));
		buf_putc(b, '\n');
	}
	tsc_sm_prom(b, TSC_SMG_KERNEL, in, NULL);
	if (!t->kernel_bpf_stats)
		return;
	head(b, "collector_kernel_bpf_run_seconds_total", "counter",
	     "Run time of the BPF programs while kernel.bpf_stats_enabled "
	     "is 1: exit (sched_process_exit), cgroup (mkdir/rmdir events).");
	buf_puts(b, P "collector_kernel_bpf_run_seconds_total"
		 "{program=\"exit\"} ");
	buf_fixed(b, t->kernel_bpf_exit_ns, 9);
	buf_puts(b, "\n" P "collector_kernel_bpf_run_seconds_total"
		 "{program=\"cgroup\"} ");
	buf_fixed(b, t->kernel_bpf_cgroup_ns, 9);
	buf_putc(b, '\n');
	head(b, "collector_kernel_bpf_runs_total", "counter",
	     "Runs of the BPF programs while kernel.bpf_stats_enabled is 1: "
	     "exit, cgroup.");
	buf_puts(b, P "collector_kernel_bpf_runs_total{program=\"exit\"} ");
	buf_u64(b, t->kernel_bpf_exit_runs);
	buf_puts(b, "\n" P "collector_kernel_bpf_runs_total"
		 "{program=\"cgroup\"} ");
	buf_u64(b, t->kernel_bpf_cgroup_runs);
	buf_putc(b, '\n');
}

/* The collector's own health across restarts and full disks. */
static void out_prom_process(struct buf *b, const struct snap_info *in)
{
	static const char *const outs[] = { "output", "record", "textfile" };

	/* as the Prometheus client libraries name it: resets of the
	 * counters above are told from it after a restart */
	buf_puts(b, "# HELP process_start_time_seconds Start time of the "
		 "process since the epoch in seconds.\n"
		 "# TYPE process_start_time_seconds gauge\n"
		 "process_start_time_seconds ");
	buf_fixed(b, in->start_ns, 9);
	buf_putc(b, '\n');
	prom_process_metrics(b);
	prom_build_info(b);
	head(b, "collector_output_errors_total", "counter",
	     "Failed writes to an output (what they held is lost; the next "
	     "write retries from the last complete one).");
	for (size_t k = 0; k < sizeof(outs) / sizeof(outs[0]); k++) {
		if (in->output_errors[k] < 0)
			continue;
		buf_printf(b, P "collector_output_errors_total{output=\"%s\"} ",
			   outs[k]);
		buf_u64(b, (uint64_t)in->output_errors[k]);
		buf_putc(b, '\n');
	}
}

/* What the family table writes per cgroup, so the two cannot drift. */
size_t prom_cgroup_series(const struct snap_info *in,
			  const struct cgs_snapshot *s, size_t i)
{
	size_t nf, n = 0;
	const struct prom_family *f = prom_families(&nf);
	for (size_t k = 0; f && k < nf; k++)
		if (prom_family_in(&f[k], PROM_SCOPE_CGROUP, in))
			n += f[k].series(&f[k], in, s, i);
	return n;
}

/* The most series prom_cgroup_series() can say, 0 when there is no bound
 * (--prom-comms: rankings of any length). */
static size_t series_bound(const struct snap_info *in)
{
	size_t nf, n = 0;
	const struct prom_family *f = prom_families(&nf);
	for (size_t k = 0; f && k < nf; k++) {
		if (!prom_family_in(&f[k], PROM_SCOPE_CGROUP, in))
			continue;
		if (!f[k].max_series)
			return 0;
		n += f[k].max_series;
	}
	return n;
}

struct cand {
	uint64_t tasks;
	size_t i;      /* snapshot index */
	size_t series;
};

static int by_tasks_desc(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->tasks != y->tasks)
		return x->tasks < y->tasks ? 1 : -1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int by_index(const void *a, const void *b)
{
	const size_t *x = a, *y = b;
	return *x < *y ? -1 : *x > *y;
}

/* Lean without --prom-parents: only cgroups with exits of their own (an
 * ancestor without has only zeros: leaving it out loses nothing). */
static bool prom_exported(const struct snap_info *in,
			  const struct cgs_snapshot *s, size_t i)
{
	const struct cgs_counters *c = cgs_snapshot_get_cgroup(s, i)->self;
	return !in->prom_lean || in->prom_parents || c->tasks ||
	       c->oom_kills;
}

/*
 * The cgroups whose series are written (in *keep, snapshot order) within
 * in->prom_max_series: all shown when they fit; else by self task exits,
 * most first (ties: path order), up to the first that does not fit. What
 * is left out goes to *cut and *cut_series. -ENOMEM or 0.
 */
int prom_keep(const struct snap_info *in, const struct cgs_snapshot *s,
	      size_t **keep, size_t *nkeep, size_t *cut, uint64_t *cut_series)
{
	size_t m = s ? snap_shown(in, s) : 0;
	size_t *k = malloc((m ? m : 1) * sizeof(*k));
	struct cand *v = NULL;
	uint64_t total = 0, used = 0;
	size_t nk = 0;

	*cut = 0;
	*cut_series = 0;
	if (!k)
		return -ENOMEM;
	size_t shown = m;
	m = 0;
	for (size_t j = 0; j < shown; j++)
		if (prom_exported(in, s, snap_index(in, j)))
			k[m++] = snap_index(in, j);
	*keep = k;
	*nkeep = m;
	if (!in->prom_max_series || !m)
		return 0;
	/* most hosts: all fit even at the most a cgroup can have */
	size_t bound = series_bound(in);
	if (bound && m <= in->prom_max_series / bound)
		return 0;
	v = malloc(m * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t j = 0; j < m; j++) {
		v[j].i = k[j];
		v[j].tasks = cgs_snapshot_get_cgroup(s, k[j])->self->tasks;
		v[j].series = prom_cgroup_series(in, s, k[j]);
		total += v[j].series;
	}
	if (total > in->prom_max_series) {
		qsort(v, m, sizeof(*v), by_tasks_desc);
		while (nk < m && used + v[nk].series <= in->prom_max_series) {
			used += v[nk].series;
			k[nk] = v[nk].i;
			nk++;
		}
		qsort(k, nk, sizeof(*k), by_index);
		*nkeep = nk;
		*cut = m - nk;
		*cut_series = total - used;
	}
	free(v);
	return 0;
}

/* The collector's records and how they found their cgroup. */
static void out_prom_attribution(struct buf *b, const struct snap_info *in)
{
	tsc_sm_prom(b, TSC_SMG_RECORDS, in, NULL);
	tsc_sm_prom(b, TSC_SMG_VIA, in, NULL);
	if (in->attribution) {
		head(b, "collector_attribution_source", "gauge",
		     "1 for the attribution source in use: kernel (exit-time "
		     "cgroup from BPF) or proc (the /proc fallback).");
		buf_printf(b, P "collector_attribution_source{source=\"%s\"} "
			   "1\n", in->attribution);
	}
	tsc_sm_prom(b, TSC_SMG_ATTRIBUTION, in, NULL);
	if (in->kernel_on)
		kernel_self(b, in);
	tsc_sm_prom(b, TSC_SMG_FORKS, in, NULL);
	if (in->delayacct >= 0)
		collector(b, "collector_delayacct_enabled", "gauge",
			  "1 if kernel.task_delayacct is on (delays are "
			  "counted only for tasks started while it is).",
			  (uint64_t)in->delayacct);
	head(b, "collector_oom_source", "gauge",
	     "1 for how OOM kills are counted: kernel (exact, at exit), cgroup "
	     "(each cgroup's own counter), none (not counted).");
	buf_printf(b, P "collector_oom_source{source=\"%s\"} 1\n",
		   in->oom_source ? in->oom_source : "none");
}

/* Its size, its limits and its inputs. */
static void out_prom_health(struct buf *b, const struct snap_info *in,
			    const struct cgs_snapshot *s, size_t cut,
			    uint64_t cut_series)
{
	tsc_sm_prom(b, TSC_SMG_HEALTH, in, s);
	collector(b, "collector_cgroups_not_exported", "gauge",
		  "Cgroups shown elsewhere whose series were left out here by "
		  "--prom-max-series (those with the fewest task exits).",
		  cut);
	collector(b, "collector_series_not_exported", "gauge",
		  "Per-cgroup series left out by --prom-max-series.",
		  cut_series);
	head(b, "collector_receive_buffer_bytes", "gauge",
	     "Receive buffer the kernel granted each listener socket.");
	for (unsigned i = 0; in->rcvbuf && i < in->shards; i++) {
		buf_printf(b, P "collector_receive_buffer_bytes{shard=\"%u\"",
			   i);
		if (in->shard_cpus && in->shard_cpus[i]) {
			buf_puts(b, ",cpus=\"");
			esc_prom_label(b, in->shard_cpus[i],
				       strlen(in->shard_cpus[i]));
			buf_putc(b, '"');
		}
		buf_puts(b, "} ");
		buf_u64(b, in->rcvbuf[i]);
		buf_putc(b, '\n');
	}
	head(b, "collector_last_snapshot_timestamp_seconds", "gauge",
	     "When these values were taken, seconds since the epoch.");
	buf_puts(b, P "collector_last_snapshot_timestamp_seconds ");
	buf_fixed(b, in->time_ns, 9);
	buf_putc(b, '\n');
}

size_t out_prom(struct buf *b, const struct snap_info *in,
		const struct cgs_snapshot *s)
{
	size_t *keep = NULL, n = 0, cut = 0;
	uint64_t cut_series = 0;
	struct cglabels L, I;
	/* lean: the workload labels once per cgroup, in taskstat_cgroup_info */
	bool info = in->prom_lean && in->workload_labels;

	buf_init(&L.text);
	buf_init(&I.text);
	L.off = I.off = NULL;
	if (prom_keep(in, s, &keep, &n, &cut, &cut_series) < 0 ||
	    !cglabels_make(&L, s, keep, n, !in->workload_labels ? WL_NONE :
			   info ? WL_LEAN : WL_ALL) ||
	    (info && !cglabels_make(&I, s, keep, n, WL_ALL))) {
		/* as any other allocation failure of the text: truncated */
		b->oom = true;
		cglabels_free(&L);
		cglabels_free(&I);
		free(keep);
		return 0;
	}
	size_t nf;
	const struct prom_family *fam = prom_families(&nf);
	if (!fam)
		b->oom = true;
	struct prom_ctx ctx = { .in = in, .s = s, .L = &L, .keep = keep,
				.n = n, .info = info ? &I : NULL };
	for (size_t k = 0; fam && k < nf; k++) {
		if (!prom_family_in(&fam[k], PROM_SCOPE_CGROUP, in))
			continue;
		head(b, fam[k].name, fam[k].type, fam[k].help);
		for (size_t x = 0; x < n; x++)
			fam[k].write(b, &fam[k], &ctx, x);
	}

	cglabels_free(&L);
	cglabels_free(&I);
	free(keep);
	out_prom_attribution(b, in);
	out_prom_health(b, in, s, cut, cut_series);
	out_prom_process(b, in);
	return cut;
}
