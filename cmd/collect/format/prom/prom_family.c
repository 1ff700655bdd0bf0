/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The per-cgroup metric families (prom_family.h): counting and writing. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "prom_family.h"

void prom_pow2_put(struct buf *b, int e)
{
	/* 2^e: exact in decimal; the shortest digits that read back */
	double v = e >= 0 ? (double)(1ull << e) : 1.0 / (double)(1ull << -e);
	char t[40];
	for (int p = 1; p <= 17; p++) {
		snprintf(t, sizeof(t), "%.*g", p, v);
		if (strtod(t, NULL) == v)
			break;
	}
	buf_puts(b, t);
}

void prom_head(struct buf *b, const char *name, const char *type,
	       const char *help)
{
	buf_printf(b, "# HELP " PROM_PREFIX "%s %s\n# TYPE " PROM_PREFIX
		   "%s %s\n", name, help, name, type);
}

static const struct cgs_cgroup_stats *cg(const struct prom_ctx *c, size_t x)
{
	return cgs_snapshot_get_cgroup(c->s, c->keep[x]);
}

/* <prefix><name><labels of x><extra>} */
static void series_open(struct buf *b, const char *name, const char *suffix,
			const struct prom_ctx *c, size_t x)
{
	buf_puts(b, PROM_PREFIX);
	buf_puts(b, name);
	if (suffix)
		buf_puts(b, suffix);
	cglabel(b, c->L, x);
}

size_t prom_one(const struct prom_family *f, const struct snap_info *in,
		const struct cgs_snapshot *s, size_t i)
{
	(void)f, (void)in, (void)s, (void)i;
	return 1;
}

/* --- one series per counter field (tsc_fields) ------------------------- */

static void write_field(struct buf *b, const struct prom_family *f,
			const struct prom_ctx *c, size_t x)
{
	const struct cfield *fd = &tsc_fields[f->arg];
	series_open(b, f->name, NULL, c, x);
	buf_puts(b, "} ");
	field_put(b, field_get(cg(c, x)->self, fd), fd->unit);
	buf_putc(b, '\n');
}

/* --- delays, by class (arg: 1 seconds, else counts; | 2: lean, a class
 * from its first non-zero value on: cumulative, so it stays) ----------- */

static bool delay_shown(const struct prom_family *f,
			const struct cgs_delay_sum *d)
{
	return !(f->arg & 2) || d->count || d->total_ns;
}

static size_t delay_series(const struct prom_family *f,
			   const struct snap_info *in,
			   const struct cgs_snapshot *s, size_t i)
{
	(void)in;
	const struct cgs_counters *self = cgs_snapshot_get_cgroup(s, i)->self;
	size_t n = 0;
	for (int k = 0; k < CGS_DELAY__COUNT; k++)
		n += delay_shown(f, &self->delay[k]);
	return n;
}

static void write_delays(struct buf *b, const struct prom_family *f,
			 const struct prom_ctx *c, size_t x)
{
	const struct cgs_counters *self = cg(c, x)->self;
	for (int k = 0; k < CGS_DELAY__COUNT; k++) {
		if (!delay_shown(f, &self->delay[k]))
			continue;
		series_open(b, f->name, NULL, c, x);
		buf_printf(b, ",class=\"%s\"} ",
			   cgs_delay_name((enum cgs_delay_class)k));
		if (f->arg & 1)
			buf_fixed(b, self->delay[k].total_ns, 9);
		else
			buf_u64(b, self->delay[k].count);
		buf_putc(b, '\n');
	}
}

/* --- process outcomes ---------------------------------------------------- */

static size_t outcome_series(const struct prom_family *f,
			     const struct snap_info *in,
			     const struct cgs_snapshot *s, size_t i)
{
	(void)s, (void)i;
	return f->max_series - !in->oom_source;
}

static void write_outcomes(struct buf *b, const struct prom_family *f,
			   const struct prom_ctx *c, size_t x)
{
	for (size_t k = 0; k < tsc_noutcomes; k++) {
		if (k == TSC_OUTCOME_OOM && !c->in->oom_source)
			continue;
		series_open(b, f->name, NULL, c, x);
		buf_printf(b, ",outcome=\"%s\"} ", tsc_outcomes[k].name);
		buf_u64(b, ofield_get(cg(c, x)->self, &tsc_outcomes[k]));
		buf_putc(b, '\n');
	}
}

/* --- lean: process exits by exclusive outcome ---------------------------- */

/* Each process exit in one outcome: signaled without the core dumps and
 * the OOM kills (SIGKILL, no core), so that sum() over outcome is the
 * process exits. With oom_source "cgroup" the kills are the cgroup's own
 * counter: at most the signal exits left, so no outcome goes negative. */
void prom_outcomes_excl(const struct cgs_counters *c, bool oom,
			uint64_t v[5])
{
	uint64_t sig = c->exit_signaled - c->exit_core_dumped;
	v[0] = c->exit_clean;
	v[1] = c->exit_nonzero;
	v[3] = c->exit_core_dumped;
	v[4] = oom ? (c->oom_kills < sig ? c->oom_kills : sig) : 0;
	v[2] = sig - v[4];
}

/* Lean outcome k of a cgroup: not oom_killed without an OOM source; for a
 * named container's or pod's cgroup (its workload_process_exits_total has
 * every outcome from 0) only once non-zero (it stays). A unit's cgroup is
 * its name (the per-cgroup panels select by unit): it keeps its zeros. */
static bool outcome_shown(const struct snap_info *in, const char *path,
			  const uint64_t v[5], size_t k, int *wl)
{
	if (k == 4 && !in->oom_source)
		return false;
	if (v[k])
		return true;
	if (*wl < 0) {
		CGS_OPTS(cgs_workload_view, w);
		*wl = in->workloads &&
		      cgs_workloads_find(in->workloads, path, &w) == 0 &&
		      w.kind != CGS_WLK_UNIT;
	}
	return !*wl;
}

static size_t outcome_excl_series(const struct prom_family *f,
				  const struct snap_info *in,
				  const struct cgs_snapshot *s, size_t i)
{
	(void)f;
	const struct cgs_cgroup_stats *g = cgs_snapshot_get_cgroup(s, i);
	uint64_t v[5];
	size_t n = 0;
	int wl = -1;
	prom_outcomes_excl(g->self, in->oom_source != NULL, v);
	for (size_t k = 0; k < 5; k++)
		n += outcome_shown(in, g->path, v, k, &wl);
	return n;
}

static void write_outcomes_excl(struct buf *b, const struct prom_family *f,
				const struct prom_ctx *c, size_t x)
{
	static const char *const names[5] = { "clean", "exit_nonzero",
		"signaled", "core_dumped", "oom_killed" };
	uint64_t v[5];
	int wl = -1;
	prom_outcomes_excl(cg(c, x)->self, c->in->oom_source != NULL, v);
	for (size_t k = 0; k < 5; k++) {
		if (!outcome_shown(c->in, cg(c, x)->path, v, k, &wl))
			continue;
		series_open(b, f->name, NULL, c, x);
		buf_printf(b, ",outcome=\"%s\"} ", names[k]);
		buf_u64(b, v[k]);
		buf_putc(b, '\n');
	}
}

/* --- process exits by signal --------------------------------------------- */

static bool signals_of(const struct cgs_snapshot *s, size_t i,
		       struct cgs_signal_counts *sc)
{
	return cgs_snapshot_get_cgroup(s, i)->self->exit_signaled &&
	       cgs_snapshot_get_signals(s, i, CGS_SET_SELF, sc) == 0;
}

static size_t signal_series(const struct prom_family *f,
			    const struct snap_info *in,
			    const struct cgs_snapshot *s, size_t i)
{
	(void)f, (void)in;
	size_t n = 0;
	CGS_OPTS(cgs_signal_counts, sc);
	if (signals_of(s, i, &sc))
		for (int k = 1; k < CGS_SIGNAL_SLOTS; k++)
			n += sc.n[k] != 0;
	return n;
}

static void write_signals(struct buf *b, const struct prom_family *f,
			  const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_signal_counts, sc);
	if (!signals_of(c->s, c->keep[x], &sc))
		return;
	for (int k = 1; k < CGS_SIGNAL_SLOTS; k++) {
		if (!sc.n[k])
			continue;
		series_open(b, f->name, NULL, c, x);
		buf_printf(b, ",signal=\"%s\"} ", cgs_signal_name(k));
		buf_u64(b, sc.n[k]);
		buf_putc(b, '\n');
	}
}

/* --- distributions ------------------------------------------------------- */

static bool hist_on(const struct snap_info *in)
{
	return in->histograms;
}

/*
 * The text's buckets: the library's fine ones (powers of 2 of a second,
 * the native histogram's schema 0), bucket j (j < nfine - 1) with upper
 * bound 2^(fine_first + j) s, then +Inf (the unbounded fine bucket goes
 * there only). The zeros are in every bucket.
 */
static unsigned text_buckets(const struct cgs_hist *h)
{
	return h->nfine ? h->nfine : 1;
}

/* Observations <= bucket j's bound. */
static uint64_t text_cumulative(const struct cgs_hist *h, unsigned j)
{
	uint64_t c = h->zero_count;
	if (j + 1 >= text_buckets(h))
		return h->count;
	for (unsigned b = 0; b <= j; b++)
		c += h->fine[b];
	return c;
}

static uint64_t in_bucket(const struct cgs_hist *h, unsigned j)
{
	if (j + 1 >= text_buckets(h))
		return h->nfine ? h->fine[j] : h->count;
	return h->fine[j] + (j ? 0 : h->zero_count);
}

/* Whether bucket j is written: always in full; in
 * lean only +Inf, the upper bound of every bucket that holds an
 * observation and the lower bound of one that follows empty buckets (not
 * of the lowest: histogram_quantile() takes 0 for the lowest bucket's
 * lower bound, as for any histogram). Quantiles are those of the full
 * buckets but in the lowest non-empty one; per-bucket counts never
 * decrease, so a bound appears with the first observation next to it and
 * stays. */
static bool bucket_shown(const struct prom_family *f, const struct cgs_hist *h,
			 unsigned j)
{
	return (f->sets & PROM_SET_FULL) || j + 1 >= text_buckets(h) ||
	       in_bucket(h, j) ||
	       (in_bucket(h, j + 1) && text_cumulative(h, j));
}

static int hist_of(const struct prom_family *f, const struct cgs_snapshot *s,
		   size_t i, struct cgs_hist *h)
{
	return cgs_snapshot_get_hist(s, i, CGS_SET_SELF,
				 (enum cgs_hist_kind)f->arg, h);
}

static size_t hist_series(const struct prom_family *f,
			  const struct snap_info *in,
			  const struct cgs_snapshot *s, size_t i)
{
	(void)in;
	CGS_OPTS(cgs_hist, h);
	if (hist_of(f, s, i, &h) < 0)
		return 0;
	size_t n = 2;
	for (unsigned j = 0; j < text_buckets(&h); j++)
		n += bucket_shown(f, &h, j);
	return n;
}

static void write_hist(struct buf *b, const struct prom_family *f,
		       const struct prom_ctx *c, size_t x)
{
	CGS_OPTS(cgs_hist, h);
	if (hist_of(f, c->s, c->keep[x], &h) < 0)
		return;
	uint64_t cum = h.zero_count;
	for (unsigned j = 0; j < text_buckets(&h); j++) {
		bool last = j + 1 >= text_buckets(&h);
		cum = last ? h.count : cum + h.fine[j];
		if (!bucket_shown(f, &h, j))
			continue;
		series_open(b, f->name, "_bucket", c, x);
		buf_puts(b, ",le=\"");
		if (last)
			buf_puts(b, "+Inf");
		else
			prom_pow2_put(b, h.fine_first + (int)j);
		buf_puts(b, "\"} ");
		buf_u64(b, cum);
		buf_putc(b, '\n');
	}
	series_open(b, f->name, "_sum", c, x);
	buf_puts(b, "} ");
	buf_fixed(b, h.sum_ns, 9);
	buf_putc(b, '\n');
	series_open(b, f->name, "_count", c, x);
	buf_puts(b, "} ");
	buf_u64(b, h.count);
	buf_putc(b, '\n');
}

/* --- top commands (--prom-comms) ----------------------------------------- */

static bool comms_on(const struct snap_info *in)
{
	return in->prom_comms;
}

static size_t comm_series(const struct prom_family *f,
			  const struct snap_info *in,
			  const struct cgs_snapshot *s, size_t i)
{
	(void)in;
	return cgs_snapshot_comm_count(s, i, (enum cgs_comm_rank)f->arg);
}

/* One entry of a ranking: label="name", CPU us as seconds or a count. */
static void rank_series(struct buf *b, const struct prom_family *f,
			const struct prom_ctx *c, size_t x, const char *label,
			const char *name, bool cpu, uint64_t v)
{
	series_open(b, f->name, NULL, c, x);
	buf_printf(b, ",%s=\"", label);
	esc_prom_label(b, name, strlen(name));
	buf_puts(b, "\"} ");
	if (cpu)
		buf_fixed(b, v, 6);
	else
		buf_u64(b, v);
	buf_putc(b, '\n');
}

static void write_comms(struct buf *b, const struct prom_family *f,
			const struct prom_ctx *c, size_t x)
{
	enum cgs_comm_rank r = (enum cgs_comm_rank)f->arg;
	size_t i = c->keep[x], k = cgs_snapshot_comm_count(c->s, i, r);
	for (size_t j = 0; j < k; j++) {
		const struct cgs_comm *m = cgs_snapshot_get_comm(c->s, i, r, j);
		rank_series(b, f, c, x, "comm",
			    m->other ? TSC_OTHER_COMMS : m->comm,
			    r == CGS_COMMS_BY_CPU, m->value);
	}
}

/* --- top executables (--prom-exes) --------------------------------------- */

static bool exes_on(const struct snap_info *in)
{
	return in->prom_exes;
}

static size_t exe_series(const struct prom_family *f,
			 const struct snap_info *in,
			 const struct cgs_snapshot *s, size_t i)
{
	(void)in;
	return cgs_snapshot_exe_count(s, i, (enum cgs_exe_rank)f->arg);
}

/* True when name's hash was in seen[0..mask] already (else it is now). */
static bool seen_before(uint64_t *seen, size_t mask, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h |= 1; /* 0: an empty slot */
	size_t at = (size_t)h & mask;
	while (seen[at] && seen[at] != h)
		at = (at + 1) & mask;
	if (seen[at])
		return true;
	seen[at] = h;
	return false;
}

size_t prom_exe_seen(uint64_t *seen, size_t k)
{
	size_t m = 2;
	while (m < 2 * k && m < PROM_EXE_SEEN)
		m *= 2;
	memset(seen, 0, m * sizeof(*seen));
	return m;
}

/* exe="<path>", or the words of tsc_exe_name() when it is not known. Two
 * executables of a ranking may have one path (a file replaced in place
 * whose old inode the map names by it too): the later one gets
 * " (inode N)", so that no two series have the same labels. */
void prom_exe_name(const struct snap_info *in, const struct cgs_exe *e,
		   size_t j, uint64_t *seen, size_t m, char *name, size_t n)
{
	tsc_exe_name(in, e, name, n);
	if (j < m / 2 && seen_before(seen, m - 1, name)) {
		size_t l = strnlen(name, n - 32);
		snprintf(name + l, n - l, " (inode %llu)",
			 (unsigned long long)e->inode);
	}
}

static void write_exes(struct buf *b, const struct prom_family *f,
		       const struct prom_ctx *c, size_t x)
{
	enum cgs_exe_rank r = (enum cgs_exe_rank)f->arg;
	size_t i = c->keep[x], k = cgs_snapshot_exe_count(c->s, i, r);
	char name[4096];
	uint64_t seen[PROM_EXE_SEEN];
	size_t m = prom_exe_seen(seen, k);
	for (size_t j = 0; j < k; j++) {
		const struct cgs_exe *e = cgs_snapshot_get_exe(c->s, i, r, j);
		prom_exe_name(c->in, e, j, seen, m, name, sizeof(name));
		rank_series(b, f, c, x, "exe", name, r == CGS_EXES_BY_CPU,
			    e->value);
	}
}

#define EXE_FAMILY(name, help, unit, rank)                                    \
	(struct prom_family){                                                 \
		name, "counter",                                              \
		help " of the cgroup's top executables (--exes; a lower "     \
		"bound; exe=\"" TSC_OTHER_EXES "\" the rest).",               \
		unit, PROM_SET_BOTH,                                          \
		"a lower bound per executable; the set of executables "      \
		"changes",                                                    \
		false, rank, 0, exes_on, exe_series, write_exes,              \
		PROM_SCOPE_CGROUP,                                            \
	}

/* --- records whose cgroup was inferred ----------------------------------- */

/* lean: from the first inferred record on */
static size_t inferred_series(const struct prom_family *f,
			      const struct snap_info *in,
			      const struct cgs_snapshot *s, size_t i)
{
	(void)f, (void)in;
	return cgs_snapshot_get_cgroup(s, i)->inferred != 0;
}

static void write_inferred(struct buf *b, const struct prom_family *f,
			   const struct prom_ctx *c, size_t x)
{
	if (f->series != prom_one && !cg(c, x)->inferred)
		return;
	series_open(b, f->name, NULL, c, x);
	buf_puts(b, "} ");
	buf_u64(b, cg(c, x)->inferred);
	buf_putc(b, '\n');
}

/* --- lean --prom-workload-labels: the labels once per cgroup ------------- */

static bool info_on(const struct snap_info *in)
{
	return in->workload_labels;
}

static size_t info_series(const struct prom_family *f,
			  const struct snap_info *in,
			  const struct cgs_snapshot *s, size_t i)
{
	(void)f, (void)in;
	CGS_OPTS(cgs_workload, w);
	return cgs_workload_from_path(cgs_snapshot_get_cgroup(s, i)->path, &w) > 0;
}

static void write_info(struct buf *b, const struct prom_family *f,
		       const struct prom_ctx *c, size_t x)
{
	if (!c->info || !info_series(f, c->in, c->s, c->keep[x]))
		return; /* no workload label */
	buf_puts(b, PROM_PREFIX);
	buf_puts(b, f->name);
	cglabel(b, c->info, x);
	buf_puts(b, "} 1\n");
}

static const struct prom_family info_family = {
	"cgroup_info", "gauge",
	"1 for each exported cgroup with workload labels (lean "
	"--prom-workload-labels: unit, slice, container_id, pod_uid, "
	"qos_class here, not on every series; join on cgroup).", "",
	PROM_SET_LEAN, "* on (cgroup) group_left(...) to label other series",
	false, 0, 1, info_on, info_series, write_info, PROM_SCOPE_CGROUP,
};

/* --- the table ------------------------------------------------------------ */

static const char *const read_sum =
	"rate() per cgroup; sum() over cgroups is the host's";

#define DELAY_SECONDS(set, lean)                                           \
	{ "delay_seconds_total", "counter",                                 \
	  "Time exited tasks spent waiting, by class (delay accounting).", \
	  "seconds", set, read_sum, false, 1 | (lean), CGS_DELAY__COUNT,    \
	  NULL, delay_series, write_delays, PROM_SCOPE_CGROUP }

static const struct prom_family fixed_families[] = {
	{ "delays_total", "counter",
	  "Delays exited tasks waited, by class (delay accounting).", "",
	  PROM_SET_FULL, read_sum, false, 0, CGS_DELAY__COUNT, NULL,
	  delay_series, write_delays, PROM_SCOPE_CGROUP },
	DELAY_SECONDS(PROM_SET_FULL, 0),
	DELAY_SECONDS(PROM_SET_LEAN, 2), /* the classes seen non-zero */
	{ "process_outcomes_total", "counter",
	  "Process exits of the cgroup by outcome: clean (status 0), "
	  "exit_nonzero, signaled (core_dumped is a part of it), oom_kills "
	  "(OOM killer victims, as collector_oom_source says).", "",
	  PROM_SET_FULL, "rate() per outcome; core_dumped is within signaled",
	  false, 0, 0 /* tsc_noutcomes, set at build */, NULL, outcome_series,
	  write_outcomes, PROM_SCOPE_CGROUP },
	{ "process_signals_total", "counter",
	  "Process exits of the cgroup by the signal that ended them.", "",
	  PROM_SET_BOTH, "a series appears at its first exit by that signal",
	  false, 0, CGS_SIGNAL_SLOTS - 1, NULL, signal_series,
	  write_signals, PROM_SCOPE_CGROUP },
};

/* lean: instead of process_exits_total and process_outcomes_total */
static const struct prom_family outcome_family = {
	"process_exits_total", "counter",
	"Process exits (last thread of a process) in the cgroup itself, by "
	"outcome, each in one: clean (status 0), exit_nonzero, signaled (by "
	"a signal, no core dump, not an OOM kill), core_dumped, oom_killed "
	"(OOM killer victims, as collector_oom_source says); for a named "
	"container's or pod's cgroup an outcome from its first exit on "
	"(workload_process_exits_total has them all from 0).", "",
	PROM_SET_LEAN, "sum without (outcome) is the process exits", false,
	0, 5, NULL, outcome_excl_series, write_outcomes_excl,
	PROM_SCOPE_CGROUP,
};

static const struct prom_family inferred_families[] = {
	{ "inferred_records_total", "counter",
	  "Records of the cgroup whose cgroup was inferred from a parent or "
	  "fork ancestor (the /proc fallback's guesses).", "", PROM_SET_FULL,
	  "0 with the kernel source", false, 0, 1, NULL, prom_one,
	  write_inferred, PROM_SCOPE_CGROUP },
	{ "inferred_records_total", "counter",
	  "Records of the cgroup whose cgroup was inferred from a parent or "
	  "fork ancestor (the /proc fallback's guesses; from the first on).",
	  "", PROM_SET_LEAN, "absent with the kernel source", false, 0, 1,
	  NULL, inferred_series, write_inferred, PROM_SCOPE_CGROUP },
};

/* The per-field families of the lean set; the others are full only. */
static unsigned field_sets(const char *prom)
{
	static const char *const lean[] = {
		"task_exits_total", "user_cpu_seconds_total",
		"system_cpu_seconds_total", "minor_page_faults_total",
		"major_page_faults_total", "storage_read_bytes_total",
		"storage_write_bytes_total", "peak_rss_bytes",
	};
	for (size_t k = 0; k < sizeof(lean) / sizeof(lean[0]); k++)
		if (!strcmp(prom, lean[k]))
			return PROM_SET_BOTH;
	return PROM_SET_FULL;
}

/* The distribution of the lean set (with sparse buckets, see
 * bucket_shown); run-queue delay is there as delay_seconds_total */
static bool hist_lean(enum cgs_hist_kind k)
{
	return k == CGS_HIST_PROC_LIFETIME;
}

static struct prom_family hist_family(int k, bool lean)
{
	return (struct prom_family){
		hist_prom_name((enum cgs_hist_kind)k), "histogram",
		hist_prom_help((enum cgs_hist_kind)k), "seconds",
		lean ? PROM_SET_LEAN : PROM_SET_FULL,
		lean ? "histogram_quantile() over rate() of the buckets; a "
		       "bucket bound appears with the first observation next "
		       "to it"
		     : "histogram_quantile() over rate() of the buckets",
		true, k, CGS_HIST_FINE_SLOTS + 2,
		hist_on, hist_series, write_hist, PROM_SCOPE_CGROUP,
	};
}

static const char *field_unit(enum funit u)
{
	switch (u) {
	case U_US:
	case U_NS: return "seconds";
	case U_KB: return "bytes";
	default: return "";
	}
}

static struct prom_family *table;
static size_t ntable;

static void build(void)
{
	size_t nf = 0, nfixed = sizeof(fixed_families) /
			       sizeof(fixed_families[0]);
	for (size_t f = 0; f < tsc_nfields; f++)
		nf += tsc_fields[f].prom != NULL;
	size_t nwl;
	const struct prom_family *wl = prom_workload_table(&nwl);
	size_t n = nf + 1 + nfixed + 2 * CGS_HIST__COUNT + 2 + 3 + 2 + 4 + nwl;
	struct prom_family *t = calloc(n + 1, sizeof(*t)), *p = t;
	if (!t)
		return;
	*p++ = info_family;
	for (size_t f = 0; f < tsc_nfields; f++) {
		const struct cfield *fd = &tsc_fields[f];
		if (!fd->prom)
			continue;
		bool peak = fd->flags & F_PEAK;
		*p++ = (struct prom_family){
			fd->prom, peak ? "gauge" : "counter", fd->help,
			field_unit(fd->unit), field_sets(fd->prom),
			peak ? "the largest of the cgroup's exited tasks"
			     : read_sum,
			false, (int)f, 1, NULL, prom_one, write_field,
			PROM_SCOPE_CGROUP,
		};
		if (!strcmp(fd->prom, outcome_family.name))
			*p++ = outcome_family;
	}
	for (size_t k = 0; k < nfixed; k++) {
		*p = fixed_families[k];
		if (p->write == write_outcomes)
			p->max_series = tsc_noutcomes;
		p++;
	}
	*p++ = prom_peak_families[0];
	*p++ = prom_peak_families[1];
	for (int k = 0; k < CGS_HIST__COUNT; k++) {
		*p++ = hist_family(k, false);
		if (hist_lean((enum cgs_hist_kind)k))
			*p++ = hist_family(k, true);
	}
	*p++ = (struct prom_family){
		"comm_cpu_seconds_total", "counter",
		"CPU time of exited tasks of the cgroup's top commands "
		"(--comms; a lower bound; comm=\"" TSC_OTHER_COMMS
		"\" the rest).", "seconds", PROM_SET_BOTH,
		"a lower bound per command; the set of commands changes",
		false, CGS_COMMS_BY_CPU, 0, comms_on, comm_series,
		write_comms, PROM_SCOPE_CGROUP,
	};
	*p++ = (struct prom_family){
		"comm_process_exits_total", "counter",
		"Process exits of the cgroup's top commands (--comms; a lower "
		"bound; comm=\"" TSC_OTHER_COMMS "\" the rest).", "",
		PROM_SET_BOTH,
		"a lower bound per command; the set of commands changes",
		false, CGS_COMMS_BY_EXITS, 0, comms_on, comm_series,
		write_comms, PROM_SCOPE_CGROUP,
	};
	*p++ = EXE_FAMILY("exe_cpu_seconds_total", "CPU time of exited tasks",
			  "seconds", CGS_EXES_BY_CPU);
	*p++ = EXE_FAMILY("exe_process_exits_total", "Process exits", "",
			  CGS_EXES_BY_EXITS);
	*p++ = EXE_FAMILY("exe_process_crashes_total", "Process exits by a "
			  "crash signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, "
			  "SIGSYS, SIGTRAP)", "", CGS_EXES_BY_CRASHES);
	*p++ = inferred_families[0];
	*p++ = inferred_families[1];
	for (size_t k = 0; k < nwl; k++) /* after the collector's own */
		*p++ = wl[k];
	*p++ = prom_peak_families[2], *p++ = prom_peak_families[3];
	table = t;
	ntable = (size_t)(p - t);
}

const struct prom_family *prom_families(size_t *n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, build);
	*n = ntable;
	return table;
}
