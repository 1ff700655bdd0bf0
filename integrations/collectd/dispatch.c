/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read callback: one snapshot of the rollup, the value lists of each
 * reported cgroup (types in docs/collectd.md), then the collector-level
 * counters, then retirement of removed cgroups (their last counts have
 * now been dispatched).
 */
#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"
#include "collectd/core/utils/common/common.h"
#include "collectd/core/utils/metadata/meta_data.h"

#include "name.h"
#include "plugin.h"

/* The meta data of the cgroup being dispatched (Identity true), NULL:
 * none; plugin_dispatch_values() copies it. */
static meta_data_t *cur_meta;

/* One value list of DERIVE values. */
static void put(const char *instance, const char *type, const char *tinst,
		size_t n, const uint64_t *v)
{
	value_t values[8];
	value_list_t vl = VALUE_LIST_INIT;

	for (size_t i = 0; i < n; i++)
		values[i].derive = (derive_t)v[i];
	vl.values = values;
	vl.values_len = n;
	vl.meta = cur_meta;
	sstrncpy(vl.plugin, TSCD_PLUGIN, sizeof(vl.plugin));
	sstrncpy(vl.plugin_instance, instance, sizeof(vl.plugin_instance));
	sstrncpy(vl.type, type, sizeof(vl.type));
	if (tinst)
		sstrncpy(vl.type_instance, tinst, sizeof(vl.type_instance));
	plugin_dispatch_values(&vl);
}

static void put_cgroup(const char *inst, const struct cgs_counters *k,
		       bool oom)
{
	put(inst, "taskstat_exits", NULL, 2,
	    (uint64_t[]){ k->tasks, k->processes });
	put(inst, "ps_cputime", NULL, 2,
	    (uint64_t[]){ k->utime_us, k->stime_us });
	put(inst, "taskstat_run_time", NULL, 2,
	    (uint64_t[]){ k->cpu_run_real_ns, k->cpu_run_virtual_ns });
	put(inst, "ps_pagefaults", NULL, 2,
	    (uint64_t[]){ k->minflt, k->majflt });
	put(inst, "ps_disk_octets", NULL, 2,
	    (uint64_t[]){ k->read_bytes, k->write_bytes });
	put(inst, "taskstat_outcomes", NULL, 4,
	    (uint64_t[]){ k->exit_clean, k->exit_nonzero, k->exit_signaled,
			  k->exit_core_dumped });
	if (oom)
		put(inst, "taskstat_oom_kills", NULL, 1,
		    (uint64_t[]){ k->oom_kills });
	if (!tscd.conf.delays)
		return;
	unsigned nd = cgs_delay_classes();
	for (unsigned d = 0; d < nd && d < CGS_DELAY_SLOTS; d++) {
		const char *dn = cgs_delay_name((enum cgs_delay_class)d);
		if (dn)
			put(inst, "taskstat_delay", dn, 2,
			    (uint64_t[]){ k->delay[d].count,
					  k->delay[d].total_ns });
	}
}

/*
 * The counters a cgroup reports: its own exits; at the folding depth its
 * subtree, which holds everything folded into it and, unlike the folded
 * self, keeps the counts of retired descendants (so it never decreases).
 */
static const struct cgs_counters *counters_of(const struct cgs_cgroup_stats *g)
{
	if (tscd.conf.depth && g->path[0] == '/' &&
	    g->depth == tscd.conf.depth)
		return g->subtree;
	return g->self;
}

/* Identity true: namespace, pod, container, image (those known) of a
 * container's or pod's cgroup, from the resolver's cache (filled when the
 * cgroup appeared) or its files. NULL for other cgroups. */
static meta_data_t *identity_meta(const char *path)
{
	CGS_OPTS(cgs_identity, id);
	if (!tscd.ident || cgs_identity_src_resolve(tscd.ident, path, &id) <= 0 ||
	    (!id.k8s_namespace[0] && !id.container[0]))
		return NULL;
	meta_data_t *m = meta_data_create();
	const struct { const char *k, *v; } kv[] = {
		{ "namespace", id.k8s_namespace }, { "pod", id.pod },
		{ "container", id.sandbox ? "" : id.container },
		{ "image", id.image },
	};
	for (size_t i = 0; m && i < sizeof(kv) / sizeof(kv[0]); i++)
		if (kv[i].v[0])
			meta_data_add_string(m, kv[i].k, kv[i].v);
	return m;
}

static void put_totals(const struct cgs_snapshot *s)
{
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	CGS_OPTS(cgs_loss, loss);

	if (cgs_listener_get_loss(tscd.l, CGS_ALL_SHARDS, &loss) == 0)
		put("", "taskstat_loss", NULL, 2,
		    (uint64_t[]){ loss.dropped, loss.malformed });
	if (t)
		put("", "taskstat_attribution", NULL, 3,
		    (uint64_t[]){ t->records, t->unattributed, t->inferred });
}

int tscd_read(void)
{
	CGS_OPTS(cgs_snapshot_opts, so, .fold_depth = tscd.conf.depth);
	struct cgs_snapshot *s = NULL;
	char inst[TSCD_NAME_MAX];
	int r;

	if (!tscd.rollup)
		return -1;
	r = cgs_rollup_snapshot(tscd.rollup, &so, &s);
	if (r < 0) {
		ERROR(TSCD_PLUGIN " plugin: snapshot: %s", cgs_strerror(r));
		return -1;
	}
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	bool oom = t && t->oom_source != CGS_OOM_NONE;
	for (size_t i = 0; i < cgs_snapshot_count(s); i++) {
		const struct cgs_cgroup_stats *g = cgs_snapshot_get_cgroup(s, i);
		const struct cgs_counters *k = counters_of(g);
		if (!k || (!k->tasks && !k->tgid_records))
			continue; /* an ancestor with no exit of its own */
		if (!tscd_select_match(&tscd.conf.select, g->path))
			continue;
		r = tscd_instance_name(g->path, inst, sizeof(inst));
		if (r == -EINVAL)
			continue; /* no such path comes from the library */
		cur_meta = identity_meta(g->path);
		put_cgroup(inst, k, oom);
		if (cur_meta)
			meta_data_destroy(cur_meta);
		cur_meta = NULL;
	}
	put_totals(s);
	cgs_snapshot_free(s);
	cgs_rollup_retire_removed(tscd.rollup);
	return 0;
}
