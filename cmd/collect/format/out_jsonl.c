/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON lines: one object per line, each with a "type". */
#include <string.h>

#include "escape.h"
#include "exe_cache.h"
#include "output.h"
#include "selfmetric.h"

static void key(struct buf *b, const char *k)
{
	buf_putc(b, ',');
	buf_putc(b, '"');
	buf_puts(b, k);
	buf_puts(b, "\":");
}

static void kv_u64(struct buf *b, const char *k, uint64_t v)
{
	key(b, k);
	buf_u64(b, v);
}

/* A string, plus "<k>_hex" with the raw bytes when it wasn't UTF-8. */
static void kv_str(struct buf *b, const char *k, const char *s)
{
	size_t n = strlen(s);
	key(b, k);
	if (esc_json(b, s, n)) {
		buf_puts(b, ",\"");
		buf_puts(b, k);
		buf_puts(b, "_hex\":\"");
		esc_hex(b, s, n);
		buf_putc(b, '"');
	}
}

/* namespace, pod, container_name, image: those not empty */
static void names(struct buf *b, const char *ns, const char *pod,
		  const char *ctr, const char *image)
{
	const struct { const char *k, *v; } kv[] = {
		{ "namespace", ns }, { "pod", pod },
		{ "container_name", ctr }, { "image", image },
	};
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		if (*kv[i].v)
			kv_str(b, kv[i].k, kv[i].v);
}

/* The names the workload view has for the cgroup (the runtimes' state):
 * "container" is taken by the id (below), so the name is container_name. */
static void identity(struct buf *b, const struct snap_info *in,
		     const char *path)
{
	struct cgs_workload_view v = { .sz = sizeof(v) };
	if (!in->workloads || cgs_workloads_find(in->workloads, path, &v) < 0)
		return;
	kv_str(b, "workload_kind", cgs_workload_kind_name(v.kind));
	names(b, v.k8s_namespace, v.pod, v.container, v.image);
}

/* What the path names (cgs_workload_from_path): only the members it
 * has, so an absent key means "the path does not say". */
static void workload(struct buf *b, const struct snap_info *in,
		     const char *path)
{
	CGS_OPTS(cgs_workload, w);
	identity(b, in, path);
	if (cgs_workload_from_path(path, &w) <= 0)
		return;
	const struct { const char *k, *v; } kv[] = {
		{ "unit", w.unit }, { "slice", w.slice },
		{ "runtime", w.runtime }, { "container", w.container },
		{ "container_id", w.container_id }, { "pod_uid", w.pod_uid },
		{ "qos_class", w.qos_class },
	};
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		if (*kv[i].v)
			kv_str(b, kv[i].k, kv[i].v);
}

static void counters(struct buf *b, const struct cgs_cgroup_stats *g)
{
	for (size_t i = 0; i < tsc_nfields; i++) {
		const struct cfield *f = &tsc_fields[i];
		key(b, f->name);
		field_put(b, field_get(g->self, f), f->unit);
	}
	for (int c = 0; c < CGS_DELAY__COUNT; c++) {
		const char *n = cgs_delay_name((enum cgs_delay_class)c);
		buf_printf(b, ",\"delay_%s_count\":", n);
		buf_u64(b, g->self->delay[c].count);
		buf_printf(b, ",\"delay_%s_s\":", n);
		buf_fixed(b, g->self->delay[c].total_ns, 9);
	}
	for (size_t i = 0; i < tsc_nfields; i++) {
		const struct cfield *f = &tsc_fields[i];
		if (!(f->flags & F_SUBTREE))
			continue;
		buf_printf(b, ",\"%s_subtree\":", f->name);
		field_put(b, field_get(g->subtree, f), f->unit);
	}
	for (size_t i = 0; i < tsc_nfields; i++) {
		const struct cfield *f = &tsc_fields[i];
		if (!(f->flags & F_DELTA))
			continue;
		buf_printf(b, ",\"%s_delta\":", f->name);
		field_put(b, field_get(g->self_delta, f), f->unit);
	}
}

/* "outcomes": process exits by outcome, and by signal name. */
static void outcomes(struct buf *b, const struct snap_info *in,
		     const struct cgs_snapshot *s, size_t i,
		     const struct cgs_cgroup_stats *g)
{
	buf_puts(b, ",\"outcomes\":{");
	for (size_t k = 0; k < tsc_noutcomes; k++) {
		const struct ofield *f = &tsc_outcomes[k];
		buf_printf(b, "%s\"%s\":", k ? "," : "", f->name);
		if (k == TSC_OUTCOME_OOM && !in->oom_source) {
			buf_puts(b, "null");
			continue;
		}
		buf_u64(b, ofield_get(g->self, f));
	}
	buf_puts(b, ",\"signals\":{");
	CGS_OPTS(cgs_signal_counts, sc);
	bool first = true;
	if (g->self->exit_signaled &&
	    cgs_snapshot_get_signals(s, i, CGS_SET_SELF, &sc) == 0)
		for (int k = 1; k < CGS_SIGNAL_SLOTS; k++) {
			if (!sc.n[k])
				continue;
			buf_printf(b, "%s\"%s\":", first ? "" : ",",
				   cgs_signal_name(k));
			buf_u64(b, sc.n[k]);
			first = false;
		}
	buf_puts(b, "}}");
}

/* "<name>":{"<class>":seconds,...} of the classes with a non-zero peak
 * (at: its time, seconds since the epoch); nothing when none. */
static void peak_obj(struct buf *b, const char *name,
		     const struct cgs_delay_peaks *p, bool at)
{
	bool first = true;
	for (int c = 0; c < CGS_DELAY__COUNT; c++) {
		uint64_t v = at ? p->c[c].at_ns : p->c[c].max_ns;
		if (!v)
			continue;
		buf_printf(b, first ? ",\"%s\":{" : ",", name);
		buf_printf(b, "\"%s\":", cgs_delay_name((enum cgs_delay_class)c));
		buf_fixed(b, v, 9);
		first = false;
	}
	if (!first)
		buf_putc(b, '}');
}

/* The cgroup's longest delay per class (its own task records): since it
 * was first seen ("delay_max_s", "delay_max_at") and in the period
 * ("delay_max_delta_s", "delay_max_delta_at"); each only when known. */
static void peaks(struct buf *b, const struct cgs_snapshot *s, size_t i)
{
	CGS_OPTS(cgs_delay_peaks, p);
	if (cgs_snapshot_get_delay_peaks(s, i, CGS_SET_SELF, &p) == 0) {
		peak_obj(b, "delay_max_s", &p, false);
		peak_obj(b, "delay_max_at", &p, true);
	}
	if (cgs_snapshot_get_delay_peaks(s, i, CGS_SET_SELF_DELTA, &p) == 0) {
		peak_obj(b, "delay_max_delta_s", &p, false);
		peak_obj(b, "delay_max_delta_at", &p, true);
	}
}

/* "histograms": cumulative counts per bucket (bounds in the snapshot's
 * "histogram_le_s"), count and sum, of the cgroup itself. */
static void histograms(struct buf *b, const struct cgs_snapshot *s, size_t i)
{
	buf_puts(b, ",\"histograms\":{");
	for (int k = 0; k < CGS_HIST__COUNT; k++) {
		CGS_OPTS(cgs_hist, h);
		if (cgs_snapshot_get_hist(s, i, CGS_SET_SELF, (enum cgs_hist_kind)k,
				      &h) < 0)
			continue;
		buf_printf(b, "%s\"%s\":{\"cumulative\":[", k ? "," : "",
			   cgs_hist_name((enum cgs_hist_kind)k));
		for (unsigned j = 0; j < h.nbuckets; j++) {
			if (j)
				buf_putc(b, ',');
			buf_u64(b, h.cumulative[j]);
		}
		buf_puts(b, "],\"count\":");
		buf_u64(b, h.count);
		buf_puts(b, ",\"sum_s\":");
		buf_fixed(b, h.sum_ns, 9);
		buf_putc(b, '}');
	}
	buf_putc(b, '}');
}

/* An entry's value, error bound and (other)'s max_each: CPU us as
 * seconds (count NULL), else the count under its name. */
static void rank_value(struct buf *b, const char *count, uint64_t value,
		       uint64_t error, bool other, uint64_t max_each)
{
	if (!count) {
		buf_puts(b, ",\"cpu_s\":");
		buf_fixed(b, value, 6);
		buf_puts(b, ",\"error_s\":");
		buf_fixed(b, error, 6);
		if (other) {
			buf_puts(b, ",\"max_each_s\":");
			buf_fixed(b, max_each, 6);
		}
		return;
	}
	kv_u64(b, count, value);
	kv_u64(b, "error", error);
	if (other)
		kv_u64(b, "max_each", max_each);
}

/* Rankings of executables: a snapshot's cgroup i's, or (w set) the
 * workload view's workload i's. */
struct exe_src {
	const struct cgs_snapshot *s;
	const struct cgs_workloads *w;
	size_t i;
};

static size_t exe_n(const struct exe_src *x, int r)
{
	enum cgs_exe_rank by = (enum cgs_exe_rank)r;
	return x->w ? cgs_workloads_exe_count(x->w, x->i, by)
		    : cgs_snapshot_exe_count(x->s, x->i, by);
}

static const struct cgs_exe *exe_at(const struct exe_src *x, int r, size_t j)
{
	enum cgs_exe_rank by = (enum cgs_exe_rank)r;
	return x->w ? cgs_workloads_get_exe(x->w, x->i, by, j)
		    : cgs_snapshot_get_exe(x->s, x->i, by, j);
}

/* "exes": the top executables by CPU, process exits and crashes, as
 * "comms" has them; each by its device ("major:minor"), inode and path
 * ("exe", null when the map does not know it); (other) last. */
static void exes(struct buf *b, const struct snap_info *in,
		 const struct exe_src *src)
{
	static const char *const rank[] = { "by_cpu", "by_exits",
					    "by_crashes" };
	static const char *const count[] = { NULL, "exits", "crashes" };
	buf_puts(b, ",\"exes\":{");
	for (int r = 0; r < 3; r++) {
		size_t n = exe_n(src, r);
		buf_printf(b, "%s\"%s\":[", r ? "," : "", rank[r]);
		for (size_t j = 0; j < n; j++) {
			const struct cgs_exe *x = exe_at(src, r, j);
			char path[4096], dev[32];
			buf_puts(b, j ? ",{" : "{");
			if (x->other) {
				buf_puts(b, "\"exe\":null,\"other\":true");
			} else {
				tsc_exe_dev(dev, sizeof(dev), x->dev);
				buf_printf(b, "\"dev\":\"%s\"", dev);
				kv_u64(b, "inode", x->inode);
				if (tsc_exe_name(in, x, path, sizeof(path))) {
					kv_str(b, "exe", path);
				} else {
					key(b, "exe");
					buf_puts(b, "null");
				}
			}
			rank_value(b, count[r], x->value, x->error, x->other,
				   x->max_each);
			buf_putc(b, '}');
		}
		buf_putc(b, ']');
	}
	buf_putc(b, '}');
}

/* "workloads" (with --exes): each workload's executables (its cgroups'
 * merged: cgs_workloads_get_exe()), named as the cgroup lines name it;
 * a workload with none is left out. */
static void workload_exes(struct buf *b, const struct snap_info *in)
{
	buf_puts(b, ",\"workloads\":[");
	bool first = true;
	for (size_t i = 0, n = cgs_workloads_count(in->workloads); i < n;
	     i++) {
		struct exe_src x = { .w = in->workloads, .i = i };
		struct cgs_workload_view v = { .sz = sizeof(v) };
		if ((!exe_n(&x, 0) && !exe_n(&x, 1) && !exe_n(&x, 2)) ||
		    cgs_workloads_get(in->workloads, i, &v) < 0)
			continue;
		buf_puts(b, first ? "{\"workload_kind\":" :
				    ",{\"workload_kind\":");
		first = false;
		buf_printf(b, "\"%s\"", cgs_workload_kind_name(v.kind));
		names(b, v.k8s_namespace, v.pod, v.container, v.image);
		if (*v.unit)
			kv_str(b, "unit", v.unit);
		kv_u64(b, "cgroups_seen", v.cgroups_seen);
		kv_u64(b, "cgroups_live", v.cgroups_live);
		exes(b, in, &x);
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
}

/* "comms": the top commands by CPU (us as seconds) and by process exits,
 * each value a lower bound with the error bound of the summary, the rest
 * as {"comm":null,"other":true,...}. */
static void comms(struct buf *b, const struct cgs_snapshot *s, size_t i)
{
	static const char *const rank[] = { "by_cpu", "by_exits" };
	buf_puts(b, ",\"comms\":{");
	for (int r = 0; r < 2; r++) {
		size_t n = cgs_snapshot_comm_count(s, i, (enum cgs_comm_rank)r);
		buf_printf(b, "%s\"%s\":[", r ? "," : "", rank[r]);
		for (size_t j = 0; j < n; j++) {
			const struct cgs_comm *c =
				cgs_snapshot_get_comm(s, i, (enum cgs_comm_rank)r, j);
			buf_puts(b, j ? ",{" : "{");
			if (c->other) {
				buf_puts(b, "\"comm\":null,\"other\":true");
			} else {
				buf_puts(b, "\"comm\":");
				size_t cl = strlen(c->comm);
				if (esc_json(b, c->comm, cl)) {
					buf_puts(b, ",\"comm_hex\":\"");
					esc_hex(b, c->comm, cl);
					buf_putc(b, '"');
				}
			}
			rank_value(b, r == CGS_COMMS_BY_CPU ? NULL : "exits",
				   c->value, c->error, c->other, c->max_each);
			buf_putc(b, '}');
		}
		buf_putc(b, ']');
	}
	buf_putc(b, '}');
}

/* The bucket bounds, once per snapshot (the same for every cgroup and
 * histogram; the last one "+Inf", a string as JSON has no infinity). */
static void hist_bounds(struct buf *b, const struct cgs_snapshot *s)
{
	CGS_OPTS(cgs_hist, h);
	if (!cgs_snapshot_count(s) ||
	    cgs_snapshot_get_hist(s, 0, CGS_SET_SELF, CGS_HIST_LIFETIME, &h) < 0)
		return;
	buf_puts(b, ",\"histogram_le_s\":[");
	for (unsigned j = 0; j < h.nbuckets; j++) {
		if (j)
			buf_putc(b, ',');
		if (h.le_ns[j] == UINT64_MAX)
			buf_puts(b, "\"+Inf\"");
		else
			hist_le_put(b, h.le_ns[j]);
	}
	buf_putc(b, ']');
}

/* The kernel source's own counters ("kernel_source", only while it
 * attributes: never in replay). ~600 bytes a snapshot. */
static void kernel_source(struct buf *b, const struct snap_info *in)
{
	const struct cgs_rollup_totals *t = &in->ktot;

	buf_puts(b, ",\"kernel_source\":{\"unmatched_reasons\":{");
	for (unsigned i = 0; i < TSC_KMISS_N; i++) {
		if (i)
			buf_putc(b, ',');
		buf_printf(b, "\"%s\":", tsc_kmiss[i].name);
		buf_u64(b, tsc_kmiss_get(t, i));
	}
	buf_putc(b, '}');
	tsc_sm_json(b, TSC_SMG_KERNEL, in, NULL);
	key(b, "bpf_stats");
	if (!t->kernel_bpf_stats) {
		buf_puts(b, "null}"); /* kernel.bpf_stats_enabled is 0 */
		return;
	}
	buf_puts(b, "{\"exit_run_ns\":");
	buf_u64(b, t->kernel_bpf_exit_ns);
	kv_u64(b, "exit_runs", t->kernel_bpf_exit_runs);
	kv_u64(b, "cgroup_run_ns", t->kernel_bpf_cgroup_ns);
	kv_u64(b, "cgroup_runs", t->kernel_bpf_cgroup_runs);
	buf_puts(b, "}}");
}

/* A change-only line: where its cgroups go in the full state ("at") and
 * which rows of the previous state go ("drop"), see docs/streams.md. */
static void positions(struct buf *b, const struct snap_info *in,
		      const struct cgs_snapshot *s)
{
	buf_puts(b, ",\"drop\":[");
	for (size_t k = 0; k < in->ndrop; k++) {
		if (k)
			buf_putc(b, ',');
		buf_u64(b, in->drop[k]);
	}
	buf_puts(b, "],\"at\":[");
	for (size_t k = 0, m = snap_shown(in, s); k < m; k++) {
		if (k)
			buf_putc(b, ',');
		buf_u64(b, in->at[k]);
	}
	buf_putc(b, ']');
}

static void snapshot(struct buf *b, const struct snap_info *in,
		     const struct cgs_snapshot *s)
{
	buf_puts(b, "{\"type\":\"rollup\",\"time\":");
	buf_fixed(b, in->time_ns, 9);
	kv_u64(b, "seq", in->seq);
	if (in->stream != TSC_STREAM_NONE) {
		key(b, "stream");
		buf_putc(b, '"');
		buf_puts(b, snap_stream_name(in));
		buf_putc(b, '"');
	}
	key(b, "final");
	buf_puts(b, in->final ? "true" : "false");
	key(b, "replay");
	buf_puts(b, in->replay ? "true" : "false");
	key(b, "interval_s");
	buf_fixed(b, in->interval_ns, 9);
	kv_str(b, "hierarchy", in->hierarchy ? in->hierarchy : "");
	tsc_sm_json(b, TSC_SMG_RECORDS, in, s);
	if (in->attribution)
		kv_str(b, "attribution_source", in->attribution);
	static const enum tsc_sm_id attribution[] = {
		TSC_SM_VIA_KERNEL, TSC_SM_KERNEL_UNMATCHED, TSC_SM_KERNEL_LOST,
		TSC_SM_KERNEL_EXPIRED, TSC_SM_KERNEL_WAITS, TSC_SM_INFERRED,
		TSC_SM_VIA_CACHE, TSC_SM_VIA_PROC, TSC_SM_VIA_PARENT,
		TSC_SM_VIA_ANCESTOR, TSC_SM_VIA_FORK_PARENT,
	};
	buf_puts(b, ",\"attribution\":{");
	tsc_sm_json_ids(b, attribution,
			sizeof(attribution) / sizeof(attribution[0]), in);
	buf_putc(b, '}');
	if (in->kernel_on)
		kernel_source(b, in);
	tsc_sm_json(b, TSC_SMG_FORKS, in, s);
	if (in->exe) { /* --events live: what the exit events could name */
		buf_puts(b, ",\"exe\":{");
		tsc_sm_json_of(b, TSC_SMG_EXE, in->exe);
		buf_putc(b, '}');
	}
	if (in->delayacct >= 0) {
		key(b, "delayacct");
		buf_puts(b, in->delayacct ? "true" : "false");
	}
	kv_str(b, "oom_source", in->oom_source ? in->oom_source : "none");
	if (in->histograms)
		hist_bounds(b, s);
	tsc_sm_json(b, TSC_SMG_HEALTH, in, s);
	if (in->stream == TSC_STREAM_CHANGES)
		positions(b, in, s);
	buf_puts(b, ",\"cgroups\":[");
	for (size_t k = 0, m = snap_shown(in, s); k < m; k++) {
		size_t i = snap_index(in, k);
		const struct cgs_cgroup_stats *g = cgs_snapshot_get_cgroup(s, i);
		if (k)
			buf_putc(b, ',');
		buf_putc(b, '{');
		buf_puts(b, "\"cgroup\":");
		size_t pl = strlen(g->path);
		if (esc_json(b, g->path, pl)) {
			buf_puts(b, ",\"cgroup_hex\":\"");
			esc_hex(b, g->path, pl);
			buf_putc(b, '"');
		}
		kv_u64(b, "depth", g->depth);
		key(b, "removed");
		buf_puts(b, g->removed ? "true" : "false");
		workload(b, in, g->path);
		counters(b, g);
		kv_u64(b, "inferred", g->inferred);
		kv_u64(b, "inferred_delta", g->inferred_delta);
		outcomes(b, in, s, i, g);
		peaks(b, s, i);
		if (in->histograms)
			histograms(b, s, i);
		if (in->comms)
			comms(b, s, i);
		if (in->exes)
			exes(b, in, &(struct exe_src){ .s = s, .i = i });
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
	if (in->exes && in->workloads)
		workload_exes(b, in);
	buf_puts(b, "}\n");
}

static void event(struct buf *b, const struct cgs_record *r,
		  const char *cgroup, const char *source, uint64_t recv_ns,
		  unsigned shard,
		  const struct cgs_identity *id, const char *exe)
{
	buf_puts(b, "{\"type\":\"exit\",\"time\":");
	buf_fixed(b, recv_ns, 9);
	key(b, "kind");
	buf_putc(b, '"');
	buf_puts(b, kind_name(r->kind));
	buf_putc(b, '"');
	kv_u64(b, "pid", r->pid);
	kv_u64(b, "tgid", r->tgid);
	kv_u64(b, "ppid", r->ppid);
	kv_u64(b, "uid", r->uid);
	kv_u64(b, "gid", r->gid);
	kv_str(b, "comm", r->comm);
	if (exe) /* the executable's path, when the map knew it */
		kv_str(b, "exe", exe);
	kv_str(b, "cgroup", cgroup ? cgroup : CGS_UNKNOWN_CGROUP);
	kv_str(b, "source", source ? source : "none");
	if (id) /* the names the snapshot rows have, from the cache */
		names(b, id->k8s_namespace, id->pod,
		      id->sandbox ? "" : id->container, id->image);
	kv_u64(b, "exit_status", r->exit_status);
	buf_printf(b, ",\"exit_code\":%d,\"signal\":%d,\"core\":%s",
		   exit_code_of(r->exit_status), exit_signal_of(r->exit_status),
		   exit_core_of(r->exit_status) ? "true" : "false");
	kv_u64(b, "flag", r->flag);
	buf_printf(b, ",\"nice\":%d", r->nice);
	key(b, "utime_s");
	buf_fixed(b, r->utime_us, 6);
	key(b, "stime_s");
	buf_fixed(b, r->stime_us, 6);
	key(b, "etime_s");
	buf_fixed(b, r->etime_us, 6);
	kv_u64(b, "btime", r->btime_s);
	key(b, "cpu_run_real_s");
	buf_fixed(b, r->cpu_run_real_ns, 9);
	kv_u64(b, "minflt", r->minflt);
	kv_u64(b, "majflt", r->majflt);
	kv_u64(b, "read_char_bytes", r->read_char);
	kv_u64(b, "write_char_bytes", r->write_char);
	kv_u64(b, "read_syscalls", r->read_syscalls);
	kv_u64(b, "write_syscalls", r->write_syscalls);
	kv_u64(b, "read_bytes", r->read_bytes);
	kv_u64(b, "write_bytes", r->write_bytes);
	kv_u64(b, "hiwater_rss_bytes", r->hiwater_rss_kb * 1024);
	kv_u64(b, "hiwater_vm_bytes", r->hiwater_vm_kb * 1024);
	kv_u64(b, "nvcsw", r->nvcsw);
	kv_u64(b, "nivcsw", r->nivcsw);
	key(b, "delay_cpu_s");
	buf_fixed(b, r->delay[CGS_DELAY_CPU].total_ns, 9);
	key(b, "delay_blkio_s");
	buf_fixed(b, r->delay[CGS_DELAY_BLKIO].total_ns, 9);
	kv_u64(b, "version", r->version);
	kv_u64(b, "shard", shard);
	buf_puts(b, "}\n");
}

const struct out_ops out_jsonl_ops = {
	.snapshot = snapshot,
	.event = event,
};
