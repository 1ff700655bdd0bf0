/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-workload families (taskstat_workload_*, the workload view):
 * their series and how they are written; prom_family.c puts them in the
 * one table after the per-cgroup families. */
#include <signal.h>
#include <string.h>

#include "escape.h"
#include "prom_family.h"

static bool wl_on(const struct snap_info *in)
{
	return in->workloads != NULL;
}

static bool wl_get(const struct prom_ctx *c, size_t x,
		   struct cgs_workload_view *v)
{
	return cgs_workloads_get(c->in->workloads, x, v) == 0;
}

static void wl_label(struct buf *b, bool *first, const char *k, const char *v)
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

/* "taskstat_<name>{kind=...,namespace=...,...", no closing brace */
void prom_wl_open(struct buf *b, const struct prom_family *f,
		  const struct cgs_workload_view *v)
{
	bool first = true;
	buf_puts(b, PROM_PREFIX);
	buf_puts(b, f->name);
	wl_label(b, &first, "kind", cgs_workload_kind_name(v->kind));
	wl_label(b, &first, "namespace", v->k8s_namespace);
	wl_label(b, &first, "pod", v->pod);
	wl_label(b, &first, "container", v->container);
	wl_label(b, &first, "unit", v->unit);
}

static void wl_value(struct buf *b, uint64_t x)
{
	buf_putc(b, ' ');
	buf_u64(b, x);
	buf_putc(b, '\n');
}

/* Lean: no info of a unit without an image (1, its other series' labels) */
static bool wl_info_shown(const struct snap_info *in,
			  const struct cgs_workload_view *v)
{
	return !in->prom_lean || v->kind != CGS_WLK_UNIT || *v->image;
}

static size_t wl_info_series(const struct prom_family *f,
			     const struct snap_info *in,
			     const struct cgs_snapshot *s, size_t i)
{
	(void)f, (void)s;
	CGS_OPTS(cgs_workload_view, v);
	return cgs_workloads_get(in->workloads, i, &v) == 0 &&
	       wl_info_shown(in, &v);
}

static void wl_info(struct buf *b, const struct prom_family *f,
		    const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_workload_view, v);
	if (!wl_get(c, x, &v) || !wl_info_shown(c->in, &v))
		return;
	prom_wl_open(b, f, &v);
	if (*v.image) {
		buf_puts(b, ",image=\"");
		esc_prom_label(b, v.image, strlen(v.image));
		buf_putc(b, '"');
	}
	buf_puts(b, "} 1\n");
}

static void wl_exits(struct buf *b, const struct prom_family *f,
		     const struct prom_ctx *c, size_t x)
{
	static const char *const names[5] = { "clean", "exit_nonzero",
		"signaled", "core_dumped", "oom_killed" };
	CGS_OPTS(cgs_workload_view, v);
	uint64_t n[5];
	if (!wl_get(c, x, &v))
		return;
	/* the per-cgroup lean rule; oom_kills is 0 where not counted */
	prom_outcomes_excl(v.total, true, n);
	for (int k = 0; k < 5; k++) { /* every outcome from 0 on */
		prom_wl_open(b, f, &v);
		buf_printf(b, ",outcome=\"%s\"}", names[k]);
		wl_value(b, n[k]);
	}
}

static size_t wl_signal_series(const struct prom_family *f,
			       const struct snap_info *in,
			       const struct cgs_snapshot *s, size_t i)
{
	(void)f, (void)s;
	CGS_OPTS(cgs_workload_view, v);
	size_t n = 0;
	if (cgs_workloads_get(in->workloads, i, &v) == 0)
		for (int k = 1; v.signals && k < CGS_SIGNAL_SLOTS; k++)
			n += v.signals[k] != 0;
	return n;
}

static void wl_signals(struct buf *b, const struct prom_family *f,
		       const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_workload_view, v);
	if (!wl_get(c, x, &v))
		return;
	for (int k = 1; v.signals && k < CGS_SIGNAL_SLOTS; k++) {
		if (!v.signals[k])
			continue;
		prom_wl_open(b, f, &v);
		buf_printf(b, ",signal=\"%s\"}", cgs_signal_name(k));
		wl_value(b, v.signals[k]);
	}
}

/* The crash signals (those of the rules' TaskstatCrashLoop). */
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
				     SIGABRT, SIGSYS, SIGTRAP };

static void wl_crashes(struct buf *b, const struct prom_family *f,
		       const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_workload_view, v);
	uint64_t n = 0;
	if (!wl_get(c, x, &v))
		return;
	for (size_t k = 0; v.signals && k < sizeof(crash_signals) /
					     sizeof(*crash_signals); k++)
		n += v.signals[crash_signals[k]];
	prom_wl_open(b, f, &v);
	buf_putc(b, '}');
	wl_value(b, n);
}

static void wl_cpu(struct buf *b, const struct prom_family *f,
		   const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_workload_view, v);
	if (!wl_get(c, x, &v))
		return;
	prom_wl_open(b, f, &v);
	buf_printf(b, ",mode=\"user\"} %.6f\n", v.total->utime_us / 1e6);
	prom_wl_open(b, f, &v);
	buf_printf(b, ",mode=\"system\"} %.6f\n", v.total->stime_us / 1e6);
}

/* arg: 0 the task exit records, 1 the cgroups the workload has had */
static void wl_count(struct buf *b, const struct prom_family *f,
		     const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_workload_view, v);
	if (!wl_get(c, x, &v))
		return;
	prom_wl_open(b, f, &v);
	buf_putc(b, '}');
	wl_value(b, f->arg ? v.cgroups_seen : v.total->tasks);
}

/* run-queue delay (class cpu), from its first non-zero value on */
static bool wl_delay_shown(const struct cgs_workload_view *v)
{
	return v->total->delay[CGS_DELAY_CPU].count ||
	       v->total->delay[CGS_DELAY_CPU].total_ns;
}

static size_t wl_delay_series(const struct prom_family *f,
			      const struct snap_info *in,
			      const struct cgs_snapshot *s, size_t i)
{
	(void)f, (void)s;
	CGS_OPTS(cgs_workload_view, v);
	return cgs_workloads_get(in->workloads, i, &v) == 0 &&
	       wl_delay_shown(&v);
}

static void wl_delay(struct buf *b, const struct prom_family *f,
		     const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_workload_view, v);
	if (!wl_get(c, x, &v) || !wl_delay_shown(&v))
		return;
	prom_wl_open(b, f, &v);
	buf_puts(b, ",class=\"cpu\"} ");
	buf_fixed(b, v.total->delay[CGS_DELAY_CPU].total_ns, 9);
	buf_putc(b, '\n');
}

/* --prom-exes: the workload's top executables (cgs_workloads_get_exe()),
 * as the cgroups' exe_* families have them */
static bool wl_exes_on(const struct snap_info *in)
{
	return in->workloads && in->prom_exes;
}

static size_t wl_exe_series(const struct prom_family *f,
			    const struct snap_info *in,
			    const struct cgs_snapshot *s, size_t i)
{
	(void)s;
	return cgs_workloads_exe_count(in->workloads, i,
				       (enum cgs_exe_rank)f->arg);
}

static void wl_exes(struct buf *b, const struct prom_family *f,
		    const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_workload_view, v);
	enum cgs_exe_rank r = (enum cgs_exe_rank)f->arg;
	size_t k = cgs_workloads_exe_count(c->in->workloads, x, r);
	if (!k || !wl_get(c, x, &v))
		return;
	char name[4096];
	uint64_t seen[PROM_EXE_SEEN];
	size_t m = prom_exe_seen(seen, k);
	for (size_t j = 0; j < k; j++) {
		const struct cgs_exe *e =
			cgs_workloads_get_exe(c->in->workloads, x, r, j);
		prom_exe_name(c->in, e, j, seen, m, name, sizeof(name));
		prom_wl_open(b, f, &v);
		buf_puts(b, ",exe=\"");
		esc_prom_label(b, name, strlen(name));
		buf_puts(b, "\"} ");
		if (r == CGS_EXES_BY_CPU)
			buf_fixed(b, e->value, 6);
		else
			buf_u64(b, e->value);
		buf_putc(b, '\n');
	}
}

#define WL_EXE_FAMILY(name, help, unit, rank)                                 \
	{ name, "counter", help " of the workload's top executables, every "  \
	  "cgroup it had (--exes; a lower bound; exe=\"" TSC_OTHER_EXES      \
	  "\" the rest).", unit, PROM_SET_BOTH,                               \
	  "a lower bound per executable; the set of executables changes",   \
	  false, rank, 0, wl_exes_on, wl_exe_series, wl_exes,               \
	  PROM_SCOPE_WORKLOAD }

#define WL_FAMILY(name, type, help, unit, read, arg, max, series, write) \
	{ name, type, help, unit, PROM_SET_BOTH, read, false, arg, max,   \
	  wl_on, series, write, PROM_SCOPE_WORKLOAD }

/* as many as the family has at most (workload exits: 5, CPU: 2) */
static size_t all_of(const struct prom_family *f, const struct snap_info *in,
		     const struct cgs_snapshot *s, size_t i)
{
	(void)in, (void)s, (void)i;
	return f->max_series;
}

static const char *const read_wl =
	"rate() per workload; it carries on across the container's restarts";

static const struct prom_family workload_families[] = {
	WL_FAMILY("workload_info", "gauge", "A workload (namespace/pod/"
		  "container from the node's runtime state, or a systemd "
		  "unit) and its image; its series carry on across the "
		  "container's restarts (lean: none for a unit without an "
		  "image, its labels are its other series').", "", "join on (namespace, pod, "
		  "container) or unit", 0, 1, wl_info_series, wl_info),
	WL_FAMILY("workload_process_exits_total", "counter", "Process exits "
		  "of the workload, every cgroup it had, by exclusive outcome "
		  "(clean, exit_nonzero, signaled, core_dumped, oom_killed); "
		  "0 from its first sample.", "", "sum without (outcome) is "
		  "the workload's process exits", 0, 5, all_of, wl_exits),
	WL_FAMILY("workload_process_signals_total", "counter", "Process exits "
		  "of the workload by terminating signal (once non-zero).", "",
		  "a series appears at its first exit by that signal", 0,
		  CGS_SIGNAL_SLOTS - 1, wl_signal_series, wl_signals),
	WL_FAMILY("workload_crashes_total", "counter", "Process exits of the "
		  "workload by a crash signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, "
		  "SIGABRT, SIGSYS, SIGTRAP); 0 from its first sample.", "",
		  "increase() counts the first crash", 0, 1, prom_one, wl_crashes),
	WL_FAMILY("workload_cpu_seconds_total", "counter", "CPU time of the "
		  "workload's exited tasks, by mode.", "seconds", read_wl, 0,
		  2, all_of, wl_cpu),
	WL_FAMILY("workload_delay_seconds_total", "counter", "Time the "
		  "workload's exited tasks waited for a CPU (class cpu, the "
		  "run-queue delay; from its first non-zero value on).",
		  "seconds", read_wl, 0, 1, wl_delay_series, wl_delay),
	WL_FAMILY("workload_task_exits_total", "counter", "Task (thread and "
		  "process) exit records of the workload.", "", read_wl, 0, 1,
		  prom_one, wl_count),
	WL_FAMILY("workload_cgroups_total", "counter", "Cgroups the workload "
		  "has had: its container's restarts + 1.", "", "increase() "
		  "is the container's restarts", 1, 1, prom_one, wl_count),
	WL_EXE_FAMILY("workload_exe_cpu_seconds_total", "CPU time of exited "
		      "tasks", "seconds", CGS_EXES_BY_CPU),
	WL_EXE_FAMILY("workload_exe_process_exits_total", "Process exits", "",
		      CGS_EXES_BY_EXITS),
	WL_EXE_FAMILY("workload_exe_process_crashes_total", "Process exits by "
		      "a crash signal", "", CGS_EXES_BY_CRASHES),
};

static size_t workloads_of(const struct snap_info *in)
{
	return in->workloads ? cgs_workloads_count(in->workloads) : 0;
}

size_t prom_workload_series(const struct snap_info *in)
{
	size_t nf, n = 0, nw = workloads_of(in);
	const struct prom_family *f = prom_families(&nf);
	for (size_t k = 0; f && k < nf; k++)
		if (prom_family_in(&f[k], PROM_SCOPE_WORKLOAD, in))
			for (size_t i = 0; i < nw; i++)
				n += f[k].series(&f[k], in, NULL, i);
	return n;
}

size_t prom_workload_families(struct buf *b, const struct snap_info *in)
{
	size_t nf, nw = workloads_of(in);
	const struct prom_family *f = prom_families(&nf);
	struct prom_ctx c = { .in = in };
	if (!nw)
		return 0;
	if (!f)
		b->oom = true;
	for (size_t k = 0; f && k < nf; k++) {
		if (!prom_family_in(&f[k], PROM_SCOPE_WORKLOAD, in))
			continue;
		prom_head(b, f[k].name, f[k].type, f[k].help);
		for (size_t x = 0; x < nw; x++)
			f[k].write(b, &f[k], &c, x);
	}
	return nw;
}

const struct prom_family *prom_workload_table(size_t *n)
{
	*n = sizeof(workload_families) / sizeof(workload_families[0]);
	return workload_families;
}
