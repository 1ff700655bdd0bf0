/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a snapshot's outputs say besides the cgroups (struct snap_info):
 * the library's totals, the listener's losses, the run's settings. */
#include <stddef.h>
#include <string.h>

#include "collector.h"
#include "delayacct.h"
#include "output.h"
#include "sink.h"
#include "termwidth.h"

void tsc_fill_info(struct tsc *c, struct snap_info *in,
		   const struct cgs_snapshot *s, uint64_t time_ns, bool final)
{
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);

	memset(in, 0, sizeof(*in));
	in->time_ns = time_ns;
	in->seq = c->io.seq;
	in->final = final;
	in->replay = c->src.replay != NULL;
	in->hierarchy = c->src.hierarchy;
	in->interval_ns = c->o->interval_ns;
	in->top = c->o->top;
	if (c->io.out == &out_table_ops && !c->o->wide) /* what fits */
		in->width = tsc_term_width(c->io.out_fd);
	in->workload_labels = c->o->prom_workload_labels;
	in->prom_lean = !c->o->prom_full;
	in->prom_parents = c->o->prom_parents;
	in->start_ns = c->start_ns;
	in->snapshot_gen = t ? t->snapshot_gen : 0;
	in->retired_unserved = c->ret.retired_unserved;
	in->retired_forced = c->ret.retired_forced;
	in->removed_waiting = c->ret.removed_waiting;
	for (int k = 0; k < TSC_NOUT; k++)
		in->output_errors[k] = !c->io.ost[k].on ? -1 : (int64_t)
			__atomic_load_n(&c->io.ost[k].errors, __ATOMIC_RELAXED);
	in->records = t ? t->records : 0;
	in->unattributed = t ? t->unattributed : 0;
	in->refused = t ? t->refused : 0;
	if (t) {
		in->via_cache = t->via_cache;
		in->via_proc = t->via_proc;
		in->via_parent = t->via_parent;
		in->via_ancestor = t->via_ancestor;
		in->via_fork_parent = t->via_fork_parent;
		in->fork_tracking = t->fork_tracking;
		in->fork_drops = t->fork_drops;
		if (c->names.exe) {
			exe_cache_counts(c->names.exe, &c->names.exe_n);
			in->exe = &c->names.exe_n;
		}
		in->via_kernel = t->via_kernel;
		in->kernel_unmatched = t->kernel_unmatched;
		in->kernel_lost = t->kernel_lost;
		in->kernel_expired = t->kernel_expired;
		in->kernel_waits = t->kernel_waits;
		in->inferred = t->inferred;
		in->kernel_ringbuf = t->kernel_ringbuf;
		in->kernel_cgroup_ids = t->kernel_cgroup_ids;
		in->kernel_on = !c->src.replay &&
				t->attribution == CGS_ATTRIBUTION_KERNEL;
		if (in->kernel_on)
			in->ktot = *t;
		in->histograms = t->histograms;
		/* a replay's records come without the kernel's word on OOM
		 * kills, and this host's cgroups are not the recording's */
		if (!c->src.replay && t->oom_source == CGS_OOM_KERNEL)
			in->oom_source = "kernel";
		else if (!c->src.replay && t->oom_source == CGS_OOM_CGROUP)
			in->oom_source = "cgroup";
	}
	in->comms = c->o->comms;
	in->prom_comms = c->o->prom_comms;
	in->exes = c->o->exes;
	in->prom_exes = c->o->prom_exes;
	in->exe_map = c->names.exe;
	if (!c->src.replay)
		in->attribution = t && t->attribution == CGS_ATTRIBUTION_KERNEL
					  ? "kernel" : "proc";
	in->shards = c->src.nshards;
	in->delayacct = -1;
	if (!c->src.replay) {
		/* Re-read each time: someone may switch it during the run. */
		int d = tsc_delayacct_read();
		in->delayacct = d < 0 ? -1 : d;
	}
	if (c->src.l) {
		CGS_OPTS(cgs_loss, loss);
		if (cgs_listener_get_loss(c->src.l, CGS_ALL_SHARDS, &loss) == 0) {
			in->dropped = loss.dropped;
			/* A truncated message can't be decoded: malformed. */
			in->malformed = loss.malformed + loss.truncated;
			in->enobufs = loss.enobufs;
			in->truncated = loss.truncated;
			in->version0 = loss.version0;
		}
		for (unsigned i = 0; i < c->src.nshards; i++)
			c->src.rcvbuf[i] = cgs_listener_shard_rcvbuf(c->src.l, i);
		in->rcvbuf = c->src.rcvbuf;
		in->shard_cpus = c->src.shard_cpus;
	} else {
		in->dropped = c->src.rec_ctr.dropped;
		in->malformed = c->src.rec_ctr.malformed + c->src.rec_ctr.truncated +
				c->src.replay_malformed;
		in->enobufs = c->src.rec_ctr.enobufs;
	}
}

const struct tsc_kmiss tsc_kmiss[TSC_KMISS_N] = {
#define K(f) { #f, offsetof(struct cgs_rollup_totals, kmiss_##f) }
	K(lost), K(expired), K(mismatch), K(timeout), K(no_entry),
	K(before_attach),
	K(cgroup_gone), K(cgroup_unwalked), K(cgroup_purged), K(group),
	K(other),
#undef K
};
