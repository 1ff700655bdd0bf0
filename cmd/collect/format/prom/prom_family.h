/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The metric families of the Prometheus exposition: one table (name, type,
 * help, unit, set, scope, how to read it, whether it can be a native
 * histogram) that both writes the series and counts them, so that the
 * series count (--prom-max-series) cannot drift from what is written: the
 * per-cgroup families, then the per-workload ones (taskstat_workload_*,
 * the workload view's, written after the collector's own series).
 */
#ifndef TSC_PROM_FAMILY_H
#define TSC_PROM_FAMILY_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "output.h"

#define PROM_PREFIX "taskstat_"

/*
 * The labels of each exported cgroup's series, without the closing brace,
 * made once per exposition: {cgroup="<path>" plus the workload labels.
 */
struct cglabels {
	struct buf text;
	size_t *off; /* n + 1 offsets into text */
};

static inline void cglabel(struct buf *b, const struct cglabels *L, size_t x)
{
	buf_add(b, L->text.p + L->off[x], L->off[x + 1] - L->off[x]);
}

/* What one exposition is made of. */
struct prom_ctx {
	const struct snap_info *in;
	const struct cgs_snapshot *s;
	const struct cglabels *L; /* labels of keep[x], x < n */
	const size_t *keep;       /* snapshot indices of the exported cgroups */
	size_t n;
	/* lean --prom-workload-labels: every workload label of keep[x], for
	 * taskstat_cgroup_info (L has cgroup, and unit if not a container) */
	const struct cglabels *info;
};

/* Sets a family belongs to (a bit each): --prom-level full writes the
 * PROM_SET_FULL families, lean (the default) the PROM_SET_LEAN ones. */
#define PROM_SET_FULL (1u << 0)
#define PROM_SET_LEAN (1u << 1)
#define PROM_SET_BOTH (PROM_SET_FULL | PROM_SET_LEAN)

/* What a family's series are of: the exported cgroups (i, x: snapshot
 * index, c->keep[x]) or the workloads of the view (in->workloads; i, x:
 * the workload index, 0 to cgs_workloads_count() - 1). */
enum prom_scope { PROM_SCOPE_CGROUP, PROM_SCOPE_WORKLOAD };

struct prom_family {
	const char *name; /* metric name without PROM_PREFIX */
	const char *type; /* "counter", "gauge" or "histogram" */
	const char *help;
	const char *unit; /* base unit of the value: "seconds", "bytes", "" */
	unsigned sets;    /* PROM_SET_* */
	/* how to read it: what sum() over cgroups and rate() mean */
	const char *read;
	bool native_hist; /* could be sent as a native histogram */
	int arg;          /* the family's own: field index, histogram kind,
			   * ranking */
	/* per cgroup (workload) at most (0: no bound known, e.g. command
	 * rankings) */
	size_t max_series;
	/* written in this run (NULL: always) */
	bool (*on)(const struct snap_info *in);
	/* series of snapshot cgroup (workload) i */
	size_t (*series)(const struct prom_family *f,
			 const struct snap_info *in,
			 const struct cgs_snapshot *s, size_t i);
	/* the series of exported cgroup x (c->keep[x]), or of workload x */
	void (*write)(struct buf *b, const struct prom_family *f,
		      const struct prom_ctx *c, size_t x);
	enum prom_scope scope; /* 0: per cgroup */
};

/* The delay peak families (prom_peaks.c): per cgroup full, lean; per
 * workload full, lean. */
extern const struct prom_family prom_peak_families[4];

/* "taskstat_<name>{kind=...,namespace=...,...", no closing brace: a
 * workload's labels (prom_workload.c). */
struct cgs_workload_view;
void prom_wl_open(struct buf *b, const struct prom_family *f,
		  const struct cgs_workload_view *v);

/* A ranking's exe="..." values (prom_family.c): seen[PROM_EXE_SEEN] made
 * ready for k entries (its size returned: m), then entry j's value into
 * name[n], made unique in the ranking (" (inode N)" on a repeat). */
#define PROM_EXE_SEEN 2048u /* --exes 1000 and (other), twice over */
struct cgs_exe;
size_t prom_exe_seen(uint64_t *seen, size_t k);
void prom_exe_name(const struct snap_info *in, const struct cgs_exe *e,
		   size_t j, uint64_t *seen, size_t m, char *name, size_t n);

/* The families, in exposition order; *n receives their number. Built once,
 * thread-safe, never freed. NULL on ENOMEM. */
const struct prom_family *prom_families(size_t *n);

/* Whether family f is written in this run (its level, then its own). */
static inline bool prom_family_on(const struct prom_family *f,
				  const struct snap_info *in)
{
	if (!(f->sets & (in->prom_lean ? PROM_SET_LEAN : PROM_SET_FULL)))
		return false;
	return !f->on || f->on(in);
}

/* Whether family f is of scope sc and written in this run. */
static inline bool prom_family_in(const struct prom_family *f,
				  enum prom_scope sc,
				  const struct snap_info *in)
{
	return f->scope == sc && prom_family_on(f, in);
}

/* prom_workload.c: the per-workload families (*n of them), in order. */
const struct prom_family *prom_workload_table(size_t *n);
/* A family's series count when it has one series (per cgroup or
 * workload). */
size_t prom_one(const struct prom_family *f, const struct snap_info *in,
		const struct cgs_snapshot *s, size_t i);

/* The taskstat_workload_* families of the workloads in in->workloads (no
 * family without a workload); returns the workloads written. */
size_t prom_workload_families(struct buf *b, const struct snap_info *in);
/* The series prom_workload_families() writes now. */
size_t prom_workload_series(const struct snap_info *in);

/*
 * The cgroups whose series are written (in *keep, a malloc'ed array of
 * snapshot indices, in snapshot order) within in->prom_max_series, the
 * same for the text and protobuf (out_prom.c); what is left out in *cut
 * and *cut_series. -ENOMEM or 0.
 */
int prom_keep(const struct snap_info *in, const struct cgs_snapshot *s,
	      size_t **keep, size_t *nkeep, size_t *cut, uint64_t *cut_series);

/* The collector's build_info and the process_* metrics of the client
 * libraries (prom_process.c). */
void prom_build_info(struct buf *b);
void prom_process_metrics(struct buf *b);

/* 2^e (|e| < 64) as Go's strconv 'g' -1 writes it ("0.5", "1",
 * "1.9073486328125e-06"): a histogram bucket's le. */
void prom_pow2_put(struct buf *b, int e);

/* "# HELP" and "# TYPE" of a metric. */
void prom_head(struct buf *b, const char *name, const char *type,
	       const char *help);

/*
 * Process exits in exclusive outcomes (clean, exit_nonzero, signaled
 * without core dumps and OOM kills, core_dumped, oom_killed), so that
 * they add up to the process exits; oom: the OOM kills are counted.
 */
void prom_outcomes_excl(const struct cgs_counters *c, bool oom,
			uint64_t v[5]);

#endif
