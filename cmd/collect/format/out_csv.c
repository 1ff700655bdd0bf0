/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CSV (RFC 4180: CRLF line ends, quoted fields). One header, then rows of
 * three types sharing the columns: "totals" (one per snapshot: collector
 * counters), "cgroup" (one per cgroup per snapshot) and "exit" (--events).
 * Columns that don't apply to a row type are empty.
 */
#include <string.h>

#include "escape.h"
#include "output.h"

/* Columns after the per-type leading block. Event columns come last. */
static const char *const ev_cols[] = {
	"pid", "tgid", "ppid", "uid", "gid", "comm", "kind", "exit_status",
	"exit_code", "signal", "etime_s", "btime",
};
#define NEV (sizeof(ev_cols) / sizeof(ev_cols[0]))

/* Workload columns (cgs_workload_from_path), appended after "source". */
#define NWL 7

static void workload(struct buf *b, const char *path)
{
	CGS_OPTS(cgs_workload, w);
	cgs_workload_from_path(path, &w); /* all empty on failure */
	const char *v[NWL] = { w.unit, w.slice, w.runtime, w.container,
			       w.container_id, w.pod_uid, w.qos_class };
	for (size_t i = 0; i < NWL; i++) {
		buf_putc(b, ',');
		esc_csv(b, v[i], strlen(v[i]));
	}
}

/* The names columns, appended last: NID of them. */
#define NID 4
static void names(struct buf *b, const char *ns, const char *pod,
		  const char *ctr, const char *image)
{
	const char *v[NID] = { ns, pod, ctr, image };
	for (size_t i = 0; i < NID; i++) {
		buf_putc(b, ',');
		esc_csv(b, v[i], strlen(v[i]));
	}
}

static void sep(struct buf *b, size_t n)
{
	while (n--)
		buf_putc(b, ',');
}

/* The delay peak columns (issue 39), appended after the names: per class
 * delay_<c>_max_s, then delay_<c>_max_at (seconds since the epoch, empty
 * when not known), then delay_<c>_max_delta_s: NPK of them. */
#define NPK (3 * CGS_DELAY__COUNT)

static void peak_header(struct buf *b)
{
	static const char *const sfx[3] = { "max_s", "max_at", "max_delta_s" };
	for (int k = 0; k < 3; k++)
		for (int c = 0; c < CGS_DELAY__COUNT; c++)
			buf_printf(b, ",delay_%s_%s",
				   cgs_delay_name((enum cgs_delay_class)c),
				   sfx[k]);
}

/* max[c], at[c] (0: empty) and, with delta, delta[c]; else empty. */
static void peak_cols(struct buf *b, const struct cgs_delay_peak *max,
		      const struct cgs_delay_peak *delta)
{
	for (int c = 0; c < CGS_DELAY__COUNT; c++) {
		buf_putc(b, ',');
		buf_fixed(b, max[c].max_ns, 9);
	}
	for (int c = 0; c < CGS_DELAY__COUNT; c++) {
		buf_putc(b, ',');
		if (max[c].at_ns)
			buf_fixed(b, max[c].at_ns, 9);
	}
	for (int c = 0; c < CGS_DELAY__COUNT; c++) {
		buf_putc(b, ',');
		if (delta)
			buf_fixed(b, delta[c].max_ns, 9);
	}
}

/* A cgroup's peak columns: its own, cumulative and in the period. */
static void cgroup_peaks(struct buf *b, const struct cgs_snapshot *s,
			 size_t i)
{
	CGS_OPTS(cgs_delay_peaks, p);
	CGS_OPTS(cgs_delay_peaks, d);
	if (cgs_snapshot_get_delay_peaks(s, i, CGS_SET_SELF, &p) < 0 ||
	    cgs_snapshot_get_delay_peaks(s, i, CGS_SET_SELF_DELTA, &d) < 0)
		memset(p.c, 0, sizeof(p.c)), memset(d.c, 0, sizeof(d.c));
	peak_cols(b, p.c, d.c);
}

/* Number of counter columns: fields, delays, subtree, delta. */
static size_t counter_cols(void)
{
	size_t n = tsc_nfields + 2 * CGS_DELAY__COUNT;
	for (size_t i = 0; i < tsc_nfields; i++)
		n += !!(tsc_fields[i].flags & F_SUBTREE) +
		     !!(tsc_fields[i].flags & F_DELTA);
	return n;
}

/* --stream changes: a last column "stream" (full or changes; empty on
 * exit rows), told by the prologue, before any row (one format a run). */
static bool stream_col;
/* --exes or --events: NEXE columns before it (filled on "exe" rows and
 * exit rows), told the same way */
#define NEXE 6
static bool exe_cols;

/* The stream column of a snapshot row, and the row's end. */
static void row_end(struct buf *b, const struct snap_info *in)
{
	sep(b, exe_cols ? NEXE : 0);
	if (in->stream != TSC_STREAM_NONE) {
		buf_putc(b, ',');
		buf_puts(b, snap_stream_name(in));
	}
	buf_puts(b, "\r\n");
}

static void header(struct buf *b, bool stream, bool exes)
{
	buf_puts(b, "type,time,seq,final,records,dropped,unattributed,"
		    "malformed,cgroup,depth,removed");
	for (size_t i = 0; i < tsc_nfields; i++)
		buf_printf(b, ",%s", tsc_fields[i].name);
	for (int c = 0; c < CGS_DELAY__COUNT; c++) {
		const char *n = cgs_delay_name((enum cgs_delay_class)c);
		buf_printf(b, ",delay_%s_count,delay_%s_s", n, n);
	}
	for (size_t i = 0; i < tsc_nfields; i++)
		if (tsc_fields[i].flags & F_SUBTREE)
			buf_printf(b, ",%s_subtree", tsc_fields[i].name);
	for (size_t i = 0; i < tsc_nfields; i++)
		if (tsc_fields[i].flags & F_DELTA)
			buf_printf(b, ",%s_delta", tsc_fields[i].name);
	for (size_t i = 0; i < NEV; i++)
		buf_printf(b, ",%s", ev_cols[i]);
	buf_puts(b, ",inferred,source");
	/* appended columns (later additions go after these) */
	for (size_t i = 0; i < tsc_noutcomes; i++)
		buf_printf(b, ",%s", tsc_outcomes[i].name);
	buf_puts(b, ",unit,slice,runtime,container,container_id,pod_uid,"
		    "qos_class,cgroups_filtered");
	/* the runtimes' names (issue 24; "container" is the id's column) */
	buf_puts(b, ",namespace,pod,container_name,image");
	peak_header(b);
	if (exes)
		buf_puts(b, ",exe_rank,exe,exe_dev,exe_inode,exe_value,"
			    "exe_error");
	buf_printf(b, "%s\r\n", stream ? ",stream" : "");
	stream_col = stream;
	exe_cols = exes;
}

static void lead(struct buf *b, const char *type, const struct snap_info *in)
{
	buf_puts(b, type);
	buf_putc(b, ',');
	buf_fixed(b, in->time_ns, 9);
	buf_putc(b, ',');
	buf_u64(b, in->seq);
	buf_puts(b, in->final ? ",true," : ",false,");
}

/* --exes: a row "exe" per entry of cgroup i's rankings, after its own:
 * the cgroup, then only the exe_* columns: the ranking (cpu, exits,
 * crashes), the path (empty when not known; (other)'s words), device
 * (major:minor) and inode (empty for (other)), the value (a lower bound:
 * CPU seconds or a count) and its error bound. */
static void exe_rows(struct buf *b, const struct snap_info *in,
		     const struct cgs_snapshot *s, size_t i, const char *path)
{
	static const char *const rank[] = { "cpu", "exits", "crashes" };
	size_t before = 2 + counter_cols() + NEV + 2 + tsc_noutcomes + NWL +
			1 + NID + NPK;
	for (int r = 0; r < 3; r++)
		for (size_t j = 0, n = cgs_snapshot_exe_count(s, i, r); j < n;
		     j++) {
			const struct cgs_exe *x = cgs_snapshot_get_exe(s, i, r, j);
			char name[4096], dev[32];
			bool known = tsc_exe_name(in, x, name, sizeof(name));
			lead(b, "exe", in);
			sep(b, 4);
			esc_csv(b, path, strlen(path));
			sep(b, before);
			buf_printf(b, ",%s,", rank[r]);
			if (known || x->other)
				esc_csv(b, name, strlen(name));
			if (!x->other) {
				tsc_exe_dev(dev, sizeof(dev), x->dev);
				buf_printf(b, ",%s,%llu,", dev,
					   (unsigned long long)x->inode);
			} else {
				buf_puts(b, ",,,");
			}
			field_put(b, x->value, r ? U_COUNT : U_US);
			buf_putc(b, ',');
			field_put(b, x->error, r ? U_COUNT : U_US);
			if (in->stream != TSC_STREAM_NONE)
				buf_printf(b, ",%s", snap_stream_name(in));
			buf_puts(b, "\r\n");
		}
}

static void snapshot(struct buf *b, const struct snap_info *in,
		     const struct cgs_snapshot *s)
{
	size_t cc = counter_cols();

	lead(b, "totals", in);
	buf_printf(b, "%llu,%llu,%llu,%llu", (unsigned long long)in->records,
		   (unsigned long long)in->dropped,
		   (unsigned long long)in->unattributed,
		   (unsigned long long)in->malformed);
	sep(b, 3 + cc + NEV);
	buf_printf(b, ",%llu,%s", (unsigned long long)in->inferred,
		   in->attribution ? in->attribution : "");
	sep(b, tsc_noutcomes + NWL);
	buf_printf(b, ",%llu", (unsigned long long)in->cgroups_filtered);
	sep(b, NID + NPK);
	row_end(b, in);
	for (size_t j = 0, m = snap_shown(in, s); j < m; j++) {
		const struct cgs_cgroup_stats *g =
			cgs_snapshot_get_cgroup(s, snap_index(in, j));
		lead(b, "cgroup", in);
		sep(b, 4);
		esc_csv(b, g->path, strlen(g->path));
		buf_printf(b, ",%u,%s", g->depth, g->removed ? "true" : "false");
		for (size_t f = 0; f < tsc_nfields; f++) {
			buf_putc(b, ',');
			field_put(b, field_get(g->self, &tsc_fields[f]),
				  tsc_fields[f].unit);
		}
		for (int c = 0; c < CGS_DELAY__COUNT; c++) {
			buf_putc(b, ',');
			buf_u64(b, g->self->delay[c].count);
			buf_putc(b, ',');
			buf_fixed(b, g->self->delay[c].total_ns, 9);
		}
		for (size_t f = 0; f < tsc_nfields; f++) {
			if (!(tsc_fields[f].flags & F_SUBTREE))
				continue;
			buf_putc(b, ',');
			field_put(b, field_get(g->subtree, &tsc_fields[f]),
				  tsc_fields[f].unit);
		}
		for (size_t f = 0; f < tsc_nfields; f++) {
			if (!(tsc_fields[f].flags & F_DELTA))
				continue;
			buf_putc(b, ',');
			field_put(b, field_get(g->self_delta, &tsc_fields[f]),
				  tsc_fields[f].unit);
		}
		sep(b, NEV);
		buf_printf(b, ",%llu,", (unsigned long long)g->inferred);
		for (size_t k = 0; k < tsc_noutcomes; k++) {
			buf_putc(b, ',');
			if (k == TSC_OUTCOME_OOM && !in->oom_source)
				continue; /* not counted: empty, not 0 */
			buf_u64(b, ofield_get(g->self, &tsc_outcomes[k]));
		}
		workload(b, g->path);
		buf_putc(b, ',');
		struct cgs_workload_view v = { .sz = sizeof(v) };
		if (in->workloads &&
		    cgs_workloads_find(in->workloads, g->path, &v) == 0)
			names(b, v.k8s_namespace, v.pod, v.container, v.image);
		else
			sep(b, NID);
		cgroup_peaks(b, s, snap_index(in, j));
		row_end(b, in);
		if (exe_cols)
			exe_rows(b, in, s, snap_index(in, j), g->path);
	}
}

/* An exit row's exe_* columns: its executable's path (empty when not
 * known), device and inode (empty when the record carries none, before
 * v12 and for thread-group records). */
static void exe_of_exit(struct buf *b, const struct cgs_record *r,
			const char *exe)
{
	char dev[32];
	buf_puts(b, ",,");
	if (exe)
		esc_csv(b, exe, strlen(exe));
	if (!r->exe_inode) {
		sep(b, 4);
		return;
	}
	tsc_exe_dev(dev, sizeof(dev), r->exe_dev);
	buf_printf(b, ",%s,%llu,,", dev, (unsigned long long)r->exe_inode);
}

/* Event rows fill the counter columns they have (utime_s, stime_s, ...). */
static void event(struct buf *b, const struct cgs_record *r,
		  const char *cgroup, const char *source, uint64_t recv_ns,
		  unsigned shard,
		  const struct cgs_identity *id, const char *exe)
{
	struct cgs_counters c;

	memset(&c, 0, sizeof(c));
	c.tasks = r->kind != CGS_KIND_TGID;
	c.processes = r->kind == CGS_KIND_PROCESS;
	c.tgid_records = r->kind == CGS_KIND_TGID;
	c.utime_us = r->utime_us;
	c.stime_us = r->stime_us;
	c.cpu_run_real_ns = r->cpu_run_real_ns;
	c.cpu_run_virtual_ns = r->cpu_run_virtual_ns;
	c.minflt = r->minflt;
	c.majflt = r->majflt;
	c.read_char = r->read_char;
	c.write_char = r->write_char;
	c.read_syscalls = r->read_syscalls;
	c.write_syscalls = r->write_syscalls;
	c.read_bytes = r->read_bytes;
	c.write_bytes = r->write_bytes;
	c.cancelled_write_bytes = r->cancelled_write_bytes;
	c.nvcsw = r->nvcsw;
	c.nivcsw = r->nivcsw;
	c.coremem_mbus = r->coremem_mbus;
	c.virtmem_mbus = r->virtmem_mbus;
	c.hiwater_rss_kb_max = r->hiwater_rss_kb;
	c.hiwater_vm_kb_max = r->hiwater_vm_kb;

	buf_puts(b, "exit,");
	buf_fixed(b, recv_ns, 9);
	sep(b, 7); /* seq .. malformed, then cgroup */
	const char *cg = cgroup ? cgroup : CGS_UNKNOWN_CGROUP;
	esc_csv(b, cg, strlen(cg));
	sep(b, 2);
	for (size_t f = 0; f < tsc_nfields; f++) {
		buf_putc(b, ',');
		field_put(b, field_get(&c, &tsc_fields[f]), tsc_fields[f].unit);
	}
	for (int d = 0; d < CGS_DELAY__COUNT; d++) {
		buf_putc(b, ',');
		buf_u64(b, r->delay[d].count);
		buf_putc(b, ',');
		buf_fixed(b, r->delay[d].total_ns, 9);
	}
	for (size_t f = 0; f < tsc_nfields; f++)
		sep(b, !!(tsc_fields[f].flags & F_SUBTREE) +
			       !!(tsc_fields[f].flags & F_DELTA));
	buf_printf(b, ",%u,%u,%u,%u,%u,", r->pid, r->tgid, r->ppid, r->uid,
		   r->gid);
	esc_csv(b, r->comm, strlen(r->comm));
	buf_printf(b, ",%s,%u,%d,%d,", kind_name(r->kind), r->exit_status,
		   exit_code_of(r->exit_status), exit_signal_of(r->exit_status));
	buf_fixed(b, r->etime_us, 6);
	buf_putc(b, ',');
	buf_u64(b, r->btime_s);
	buf_printf(b, ",,%s", source ? source : "none");
	sep(b, tsc_noutcomes + NWL + 1);
	if (id)
		names(b, id->k8s_namespace, id->pod,
		      id->sandbox ? "" : id->container, id->image);
	else
		sep(b, NID);
	struct cgs_delay_peak pk[CGS_DELAY__COUNT];
	for (int d = 0; d < CGS_DELAY__COUNT; d++) {
		pk[d].max_ns = r->delay[d].max_ns;
		pk[d].at_ns = r->delay_max_at_ns[d];
	}
	peak_cols(b, pk, NULL); /* the task's own: no period */
	if (exe_cols) /* the exit's executable: no rank, value or error */
		exe_of_exit(b, r, exe);
	sep(b, stream_col);
	buf_puts(b, "\r\n");
	(void)shard;
	(void)exe; /* not a column yet: every CSV line would change */
}

const struct out_ops out_csv_ops = {
	.prologue = header,
	.snapshot = snapshot,
	.event = event,
};
