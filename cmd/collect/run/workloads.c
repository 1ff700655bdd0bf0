// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The collector's workload view: the library's identity resolver and
 * workload view (cgs_identity_*, cgs_workloads_*) made at setup, fed every
 * snapshot, and its Prometheus series: the collector's own about it here,
 * the families (taskstat_workload_*: one set of series per workload,
 * namespace/pod/container or unit, that carries on across the container's
 * restarts) in the one family table (prom_family.c).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "escape.h"
#include "prom_family.h"
#include "selfmetric.h"
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
		int r = cgs_identity_src_new(&c->names.ident, &io);
		if (r < 0)
			return r;
	}
	struct cgs_workloads_opts wo = {
		.sz = sizeof(wo), .identity = c->names.ident,
		.retire_after_ms = o->retire_ns / 1000000u,
	};
	return cgs_workloads_new(&c->names.wl, &wo);
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
	if (!c->names.ident || !c->src.rollup)
		return;
	int r = cgs_rollup_set_identity(c->src.rollup, c->names.ident);
	if (r == -CGS_ERR_NO_KSRC)
		tsc_debug("workload names: no kernel source, so new "
			  "containers are named at their first snapshot (a "
			  "short one whose runtime state is gone by then "
			  "stays unnamed); those there now are looked up\n");
	else if (r < 0)
		tsc_warn("workload names at cgroup creation: %s (named at "
			 "their first snapshot instead)\n", strerror(-r));
}

void tsc_workloads_close(struct tsc *c)
{
	if (c->src.rollup) /* the rollup's hook borrows c->names.ident */
		cgs_rollup_set_identity(c->src.rollup, NULL);
	cgs_workloads_free(c->names.wl);
	c->names.wl = NULL;
	cgs_identity_src_free(c->names.ident);
	c->names.ident = NULL;
}

void tsc_workloads_update(struct tsc *c, const struct cgs_snapshot *s)
{
	if (!c->names.wl)
		return;
	int r = cgs_workloads_update(c->names.wl, s, tsc_mono_ns() / 1000000u);
	if (r < 0 && !c->names.wl_err_said) {
		tsc_warn("workload view: %s (counted again next snapshot)\n",
			 strerror(-r));
		c->names.wl_err_said = true;
	}
}

/* Exits held for their names (hold.c), by how they left: 4 series per
 * collector, with --events. */
static void events_held(struct buf *b, const struct tsc *c)
{
	_Static_assert(TSC_HOLD_NS == 2000000000ull && TSC_HOLD_MAX == 256,
		       "selfmetric.c's help of events_held_total names them");
	uint64_t v[TSC_HOLD__RESULTS] = { 0 };
	for (unsigned i = 0; i < c->src.nshards; i++)
		for (int k = 0; k < TSC_HOLD__RESULTS; k++)
			v[k] += __atomic_load_n(&c->src.shards[i].hold.out[k],
						__ATOMIC_RELAXED);
	struct tsc_sm_held h = {
		.named = v[TSC_HOLD_NAMED], .unnamed = v[TSC_HOLD_UNNAMED],
		.timeout = v[TSC_HOLD_TIMEOUT], .full = v[TSC_HOLD_FULL],
	};
	tsc_sm_prom_of(b, TSC_SMG_HELD, &h);
}

/* What naming found and what the view keeps: the collector's own. */
static void self_metrics(struct buf *b, const struct tsc *c)
{
	struct cgs_workloads_counts w = { .sz = sizeof(w) };
	cgs_workloads_get_counts(c->names.wl, &w);
	tsc_sm_prom_of(b, TSC_SMG_WORKLOADS, &w);
	if (!c->names.ident)
		return;
	struct cgs_identity_counts i = { .sz = sizeof(i) };
	cgs_identity_src_get_counts(c->names.ident, &i);
	tsc_sm_prom_of(b, TSC_SMG_ID_FAILURES, &i);
	/* containers looked up when their cgroup appeared (issue 24) */
	tsc_sm_prom_of(b, TSC_SMG_ID_EARLY, &i);
	if (c->o->events && c->src.shards)
		events_held(b, c);
}

size_t tsc_workloads_prom(struct buf *b, const struct tsc *c)
{
	if (!c->names.wl)
		return 0;
	self_metrics(b, c);
	/* the families are the table's (prom_family.c), all at both levels */
	struct snap_info in = { .workloads = c->names.wl,
				.prom_lean = !c->o->prom_full,
				/* --prom-exes: the workloads' executables,
				 * named as the cgroups' are */
				.prom_exes = c->o->prom_exes,
				.exe_map = c->names.exe };
	return prom_workload_families(b, &in);
}
