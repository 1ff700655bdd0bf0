/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * taskstat_delay_max_seconds{class}: a cgroup's longest single delay of
 * each class over its exited tasks (cgs_snapshot_get_delay_peaks(), its own
 * records, since it was first seen), a gauge like peak_rss_bytes. Series
 * budget (issue 39): a class from its first non-zero peak on (never
 * before: kernels before struct taskstats v15 have none, and a class
 * whose delay accounting is off stays 0); the lean set has the CPU
 * (run-queue) wait only, --prom-level full every class.
 */
#include "prom_family.h"

static bool peaks_of(const struct cgs_snapshot *s, size_t i,
		     struct cgs_delay_peaks *p)
{
	return cgs_snapshot_get_delay_peaks(s, i, CGS_SET_SELF, p) == 0;
}

/* arg: 1 for the lean family (the CPU wait only) */
static bool peak_shown(const struct prom_family *f,
		       const struct cgs_delay_peaks *p, int c)
{
	return p->c[c].max_ns && (!(f->arg & 1) || c == CGS_DELAY_CPU);
}

static size_t shown(const struct prom_family *f,
		    const struct cgs_delay_peaks *p)
{
	size_t n = 0;
	for (int c = 0; c < CGS_DELAY__COUNT; c++)
		n += peak_shown(f, p, c);
	return n;
}

/* The series of p after the labels (opened: x a cgroup, else wv's). */
static void series(struct buf *b, const struct prom_family *f,
		   const struct prom_ctx *c, size_t x,
		   const struct cgs_workload_view *wv,
		   const struct cgs_delay_peaks *p)
{
	for (int k = 0; k < CGS_DELAY__COUNT; k++) {
		if (!peak_shown(f, p, k))
			continue;
		if (wv) {
			prom_wl_open(b, f, wv);
		} else {
			buf_puts(b, PROM_PREFIX);
			buf_puts(b, f->name);
			cglabel(b, c->L, x);
		}
		buf_printf(b, ",class=\"%s\"} ",
			   cgs_delay_name((enum cgs_delay_class)k));
		buf_fixed(b, p->c[k].max_ns, 9);
		buf_putc(b, '\n');
	}
}

static size_t peak_series(const struct prom_family *f,
			  const struct snap_info *in,
			  const struct cgs_snapshot *s, size_t i)
{
	(void)in;
	CGS_OPTS(cgs_delay_peaks, p);
	return peaks_of(s, i, &p) ? shown(f, &p) : 0;
}

static void write_peaks(struct buf *b, const struct prom_family *f,
			const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_delay_peaks, p);
	if (peaks_of(c->s, c->keep[x], &p))
		series(b, f, c, x, NULL, &p);
}

#define PEAK_FAMILY(set, lean, classes, which)                               \
	{ "delay_max_seconds", "gauge",                                       \
	  "Longest single delay of an exited task of the cgroup, by class "  \
	  "(" which "; from struct taskstats v15).",                          \
	  "seconds", set, "the largest of the cgroup's exited tasks; max() " \
	  "over cgroups is the host's", false, lean, classes, NULL,          \
	  peak_series, write_peaks, PROM_SCOPE_CGROUP }

/* --- per workload: the largest of its cgroups' (cgs_workload_view) */

static bool wl_on(const struct snap_info *in)
{
	return in->workloads != NULL;
}

static bool wl_peaks(const struct snap_info *in, size_t i,
		     struct cgs_workload_view *v)
{
	return cgs_workloads_get(in->workloads, i, v) == 0 && v->peaks;
}

static size_t wl_peak_series(const struct prom_family *f,
			     const struct snap_info *in,
			     const struct cgs_snapshot *s, size_t i)
{
	(void)s;
	CGS_OPTS(cgs_workload_view, v);
	return wl_peaks(in, i, &v) ? shown(f, v.peaks) : 0;
}

static void wl_write_peaks(struct buf *b, const struct prom_family *f,
			   const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_workload_view, v);
	if (wl_peaks(c->in, x, &v))
		series(b, f, c, x, &v, v.peaks);
}

/* (named as prom_family.c's workload families: scripts/check-docs finds
 * the workload metrics by it) */
#define WL_FAMILY(name, set, lean, classes, which)                           \
	{ name, "gauge",                                                      \
	  "Longest single delay of an exited task of the workload (every "   \
	  "cgroup it had), by class (" which ").",                            \
	  "seconds", set, "the largest of the workload's exited tasks",     \
	  false, lean, classes, wl_on, wl_peak_series, wl_write_peaks,       \
	  PROM_SCOPE_WORKLOAD }

const struct prom_family prom_peak_families[4] = {
	PEAK_FAMILY(PROM_SET_FULL, 0, CGS_DELAY__COUNT,
		    "a class from its first delay on"),
	PEAK_FAMILY(PROM_SET_LEAN, 1, 1,
		    "the CPU run-queue wait only; --prom-level full has "
		    "every class"),
	WL_FAMILY("workload_delay_max_seconds", PROM_SET_FULL, 0,
		  CGS_DELAY__COUNT, "a class from its first delay on"),
	WL_FAMILY("workload_delay_max_seconds", PROM_SET_LEAN, 1, 1,
		  "the CPU run-queue wait only; --prom-level full has every "
		  "class"),
};
