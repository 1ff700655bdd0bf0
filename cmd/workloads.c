// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The collector's workload view: the library's identity resolver and
 * workload view (cgs_identity_*, cgs_workloads_*) made at setup, fed every
 * snapshot, and its Prometheus families (taskstat_workload_*): one set
 * of series per workload (namespace/pod/container, or unit) that carries
 * on across the container's restarts.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "escape.h"
#include "prom_family.h"
#include "workloads.h"

static unsigned tsc_id_readers(void);

int tsc_workloads_open(struct tsc *c)
{
	const struct tsc_ident_opts *o = &c->o->ident;
	if (o->no_workloads)
		return 0;
	if (c->o->depth) { /* folded paths name no container */
		tsc_debug("--depth: no workload view (it needs every cgroup "
			 "unfolded)\n");
		return 0;
	}
	if (!o->off && !c->o->replay) { /* a capture's paths: not this host's */
		struct cgs_identity_opts io = {
			.sz = sizeof(io), .containerd_state = o->containerd,
			.crio_storage = o->crio, .docker_root = o->docker,
			.kubelet_logs = o->kubelet_logs,
			/* a table per listener shard (--events names):
			 * shards beyond it share one, two by two */
			.readers = tsc_id_readers(),
		};
		int r = cgs_identity_new(&io, &c->ident);
		if (r < 0)
			return r;
	}
	struct cgs_workloads_opts wo = {
		.sz = sizeof(wo), .identity = c->ident,
		.retire_after_ms = o->retire_ns / 1000000u,
	};
	return cgs_workloads_new(&wo, &c->wl);
}

/* At most one reader table per CPU: a listener has a shard per CPU up to
 * 16 by default. */
static unsigned tsc_id_readers(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

void tsc_workloads_watch(struct tsc *c)
{
	if (!c->ident || !c->rollup)
		return;
	int r = cgs_rollup_identity(c->rollup, c->ident);
	if (r == -EOPNOTSUPP)
		tsc_debug("workload names: no kernel source, so containers "
			  "are named at their first snapshot (a short one "
			  "whose runtime state is gone by then stays "
			  "unnamed)\n");
	else if (r < 0)
		tsc_warn("workload names at cgroup creation: %s (named at "
			 "their first snapshot instead)\n", strerror(-r));
}

void tsc_workloads_close(struct tsc *c)
{
	if (c->rollup) /* the rollup's hook borrows c->ident */
		cgs_rollup_identity(c->rollup, NULL);
	cgs_workloads_free(c->wl);
	c->wl = NULL;
	cgs_identity_free(c->ident);
	c->ident = NULL;
}

void tsc_workloads_update(struct tsc *c, const struct cgs_snapshot *s)
{
	if (!c->wl)
		return;
	/* a scrape served the text made before: the zeros of the workloads
	 * new in it were seen, their counts may show now */
	if (atomic_exchange(&c->prom_served, false))
		cgs_workloads_served(c->wl);
	int r = cgs_workloads_update(c->wl, s, tsc_mono_ns() / 1000000u);
	if (r < 0 && !c->wl_err_said) {
		tsc_warn("workload view: %s (counted again next snapshot)\n",
			 strerror(-r));
		c->wl_err_said = true;
	}
}

static void label(struct buf *b, bool *first, const char *k, const char *v)
{
	if (!*v)
		return;
	buf_puts(b, *first ? "{" : ",");
	*first = false;
	buf_puts(b, k);
	buf_puts(b, "=\"");
	esc_prom_label(b, v, strlen(v));
	buf_putc(b, '"');
}

/* "taskstat_workload_<name>{kind=...,namespace=...,...", no closing brace */
static void open_series(struct buf *b, const char *name,
			const struct cgs_workload_view *v)
{
	bool first = true;
	buf_puts(b, "taskstat_workload_");
	buf_puts(b, name);
	label(b, &first, "kind", cgs_workload_kind_name(v->kind));
	label(b, &first, "namespace", v->k8s_namespace);
	label(b, &first, "pod", v->pod);
	label(b, &first, "container", v->container);
	label(b, &first, "unit", v->unit);
}

static void value(struct buf *b, uint64_t x)
{
	buf_putc(b, ' ');
	buf_u64(b, x);
	buf_putc(b, '\n');
}

static void family(struct buf *b, const char *name, const char *type,
		   const char *help)
{
	buf_printf(b, "# HELP taskstat_workload_%s %s\n"
		   "# TYPE taskstat_workload_%s %s\n", name, help, name, type);
}

typedef void write_fn(struct buf *b, const struct cgs_workload_view *v);

static void w_info(struct buf *b, const struct cgs_workload_view *v)
{
	open_series(b, "info", v);
	if (*v->image) {
		buf_puts(b, ",image=\"");
		esc_prom_label(b, v->image, strlen(v->image));
		buf_putc(b, '"');
	}
	buf_puts(b, "} 1\n");
}

static void w_exits(struct buf *b, const struct cgs_workload_view *v)
{
	static const char *const names[5] = { "clean", "exit_nonzero",
		"signaled", "core_dumped", "oom_killed" };
	uint64_t x[5];
	/* the per-cgroup lean rule; oom_kills is 0 where not counted */
	prom_outcomes_excl(v->total, true, x);
	for (int k = 0; k < 5; k++) { /* every outcome from 0 on */
		open_series(b, "process_exits_total", v);
		buf_printf(b, ",outcome=\"%s\"}", names[k]);
		value(b, x[k]);
	}
}

static void w_signals(struct buf *b, const struct cgs_workload_view *v)
{
	for (int s = 1; v->signals && s < CGS_SIGNAL_SLOTS; s++) {
		if (!v->signals[s])
			continue;
		open_series(b, "process_signals_total", v);
		buf_printf(b, ",signal=\"%s\"}", cgs_signal_name(s));
		value(b, v->signals[s]);
	}
}

/* The crash signals (those of the rules' TaskstatCrashLoop). */
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
				     SIGABRT, SIGSYS, SIGTRAP };

static void w_crashes(struct buf *b, const struct cgs_workload_view *v)
{
	uint64_t n = 0;
	for (size_t k = 0; v->signals && k < sizeof(crash_signals) /
					      sizeof(*crash_signals); k++)
		n += v->signals[crash_signals[k]];
	open_series(b, "crashes_total", v);
	buf_putc(b, '}');
	value(b, n);
}

static void w_cpu(struct buf *b, const struct cgs_workload_view *v)
{
	open_series(b, "cpu_seconds_total", v);
	buf_printf(b, ",mode=\"user\"} %.6f\n", v->total->utime_us / 1e6);
	open_series(b, "cpu_seconds_total", v);
	buf_printf(b, ",mode=\"system\"} %.6f\n", v->total->stime_us / 1e6);
}

static void w_tasks(struct buf *b, const struct cgs_workload_view *v)
{
	open_series(b, "task_exits_total", v);
	buf_putc(b, '}');
	value(b, v->total->tasks);
}

static void w_cgroups(struct buf *b, const struct cgs_workload_view *v)
{
	open_series(b, "cgroups_total", v);
	buf_putc(b, '}');
	value(b, v->cgroups_seen);
}

static const struct {
	const char *name, *type, *help;
	write_fn *write;
} families[] = {
	{ "info", "gauge", "A workload (namespace/pod/container from the "
	  "node's runtime state, or a systemd unit) and its image; its "
	  "series carry on across the container's restarts.", w_info },
	{ "process_exits_total", "counter", "Process exits of the workload, "
	  "every cgroup it had, by exclusive outcome (clean, exit_nonzero, "
	  "signaled, core_dumped, oom_killed); 0 from its first sample.",
	  w_exits },
	{ "process_signals_total", "counter", "Process exits of the workload "
	  "by terminating signal (once non-zero).", w_signals },
	{ "crashes_total", "counter", "Process exits of the workload by a "
	  "crash signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, "
	  "SIGTRAP); 0 from its first sample.", w_crashes },
	{ "cpu_seconds_total", "counter", "CPU time of the workload's exited "
	  "tasks, by mode.", w_cpu },
	{ "task_exits_total", "counter", "Task (thread and process) exit "
	  "records of the workload.", w_tasks },
	{ "cgroups_total", "counter", "Cgroups the workload has had: its "
	  "container's restarts + 1.", w_cgroups },
};

/* Containers looked up when their cgroup appeared, by result (issue 24):
 * 4 series per collector. */
static void identity_early(struct buf *b, const struct cgs_identity_counts *i)
{
	const struct { const char *r; uint64_t v; } f[] = {
		{ "named", i->early_named }, { "unnamed", i->early_unnamed },
		{ "gone_before", i->gone_before },
		{ "queue_full", i->queue_full },
	};
	buf_puts(b, "# HELP taskstat_collector_identity_early_total Container "
		 "and pod cgroups looked up when they appeared (cgroup mkdir), "
		 "by result; gone_before and queue_full stay unnamed unless "
		 "their first snapshot finds their state.\n"
		 "# TYPE taskstat_collector_identity_early_total counter\n");
	for (size_t k = 0; k < sizeof(f) / sizeof(*f); k++)
		buf_printf(b, "taskstat_collector_identity_early_total"
			   "{result=\"%s\"} %llu\n", f[k].r,
			   (unsigned long long)f[k].v);
}

/* What naming found and what the view keeps: the collector's own. */
static void self_metrics(struct buf *b, const struct tsc *c)
{
	struct cgs_workloads_counts w = { .sz = sizeof(w) };
	cgs_workloads_get_counts(c->wl, &w);
	buf_printf(b, "# HELP taskstat_collector_workloads Workloads in the "
		   "view now.\n# TYPE taskstat_collector_workloads gauge\n"
		   "taskstat_collector_workloads %llu\n"
		   "# HELP taskstat_collector_workload_cgroups_left_out_total "
		   "Cgroups in no workload: unnamed containers and pods, and "
		   "those past the view's bounds.\n"
		   "# TYPE taskstat_collector_workload_cgroups_left_out_total "
		   "counter\n"
		   "taskstat_collector_workload_cgroups_left_out_total"
		   "{reason=\"unnamed\"} %llu\n"
		   "taskstat_collector_workload_cgroups_left_out_total"
		   "{reason=\"over_limit\"} %llu\n",
		   (unsigned long long)w.workloads,
		   (unsigned long long)w.unnamed_cgroups,
		   (unsigned long long)w.over_limit);
	if (!c->ident)
		return;
	struct cgs_identity_counts i = { .sz = sizeof(i) };
	cgs_identity_get_counts(c->ident, &i);
	const struct { const char *r; uint64_t v; } f[] = {
		{ "too_big", i.too_big }, { "not_regular", i.not_regular },
		{ "loop", i.loop }, { "io_error", i.io_error },
		{ "bad_json", i.bad_json }, { "bad_value", i.bad_value },
		{ "dir_truncated", i.dir_truncated },
	};
	buf_puts(b, "# HELP taskstat_collector_identity_failures_total Runtime "
		 "state files or folders that named nothing, by reason.\n"
		 "# TYPE taskstat_collector_identity_failures_total counter\n");
	for (size_t k = 0; k < sizeof(f) / sizeof(*f); k++)
		buf_printf(b, "taskstat_collector_identity_failures_total"
			   "{reason=\"%s\"} %llu\n", f[k].r,
			   (unsigned long long)f[k].v);
	identity_early(b, &i);
}

size_t tsc_workloads_prom(struct buf *b, const struct tsc *c)
{
	if (!c->wl)
		return 0;
	self_metrics(b, c);
	size_t n = cgs_workloads_count(c->wl);
	if (!n)
		return 0;
	for (size_t f = 0; f < sizeof(families) / sizeof(*families); f++) {
		family(b, families[f].name, families[f].type,
		       families[f].help);
		for (size_t i = 0; i < n; i++) {
			struct cgs_workload_view v = { .sz = sizeof(v) };
			if (cgs_workloads_get(c->wl, i, &v) == 0)
				families[f].write(b, &v);
		}
	}
	return n;
}
