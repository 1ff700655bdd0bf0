/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One snapshot, every interval: removed cgroups retired, the library's
 * snapshot kept for the scrapes, the main output's line written (with
 * --stream changes: what changed), --textfile and the capture's counters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "filter.h"
#include "output.h"
#include "sink.h"
#include "workloads.h"

/* A capture's counters record after a snapshot line. */
static void write_capture_counters(struct tsc *c, const struct snap_info *in,
				   uint64_t time_ns)
{
	struct cap_counters ctr = {
		.time_ns = time_ns, .dropped = in->dropped,
		.malformed = in->malformed, .enobufs = in->enobufs,
	};
	struct buf b;

	buf_init(&b);
	cap_encode_counters(&b, &ctr);
	tsc_out_write_locked(c, TSC_OUT_RECORD, &b);
	buf_free(&b);
}

/* The snapshot s replaces the kept one (whose memory the library took
 * back first); under prom_lock, so that a scrape sees either. */
static int keep_snapshot(struct tsc *c, const struct cgs_snapshot_opts *so,
			 uint64_t time_ns, bool final)
{
	struct cgs_snapshot *s = NULL;
	struct tsc_view view;
	int r;

	if (!c->srv.kept_in && !(c->srv.kept_in = calloc(1, sizeof(*c->srv.kept_in))))
		return -ENOMEM;
	pthread_mutex_lock(&c->srv.prom_lock);
	tsc_kept_free_locked(c);
	r = cgs_rollup_snapshot(c->src.rollup, so, &s);
	if (r < 0) {
		pthread_mutex_unlock(&c->srv.prom_lock);
		return r;
	}
	tsc_workloads_update(c, s);
	c->ret.kept_removed = false;
	for (size_t i = cgs_snapshot_count(s); i-- > 0 && !c->ret.kept_removed;)
		c->ret.kept_removed = cgs_snapshot_get_cgroup(s, i)->removed;
	struct snap_info *in = c->srv.kept_in;
	tsc_fill_info(c, in, s, time_ns, final);
	in->workloads = c->names.wl;
	if (tsc_view_make(c->o, s, &view) < 0)
		tsc_warn("--cgroup: out of memory: this snapshot shows every "
			"cgroup\n");
	in->shown = view.idx;
	in->nshown = view.n;
	in->cgroups_filtered = view.filtered;
	in->prom_max_series = c->o->prom_max_series;
	c->srv.kept = s;
	c->srv.kept_idx = view.idx;
	c->srv.text_gen = in->snapshot_gen;
	pthread_mutex_unlock(&c->srv.prom_lock);
	return 0;
}

/* The main output's line of the kept snapshot: with --stream changes the
 * cgroups changed since the last line (stream.c). A full JSON line is
 * /snapshot's, kept for it instead of made again. */
static void write_main(struct tsc *c, uint64_t time_ns)
{
	struct snap_info in = *c->srv.kept_in;
	const struct cgs_snapshot *s = c->srv.kept;

	/* events before the snapshot that counts them: held ones a moment
	 * for their names (the resolver's look-ups take milliseconds) */
	tsc_hold_settle(c, 50000000u, false);
	tsc_flush_all(c);
	tsc_stream_plan(&c->io.stream, &in, s,
			__atomic_load_n(&c->io.ost[TSC_OUT_OUTPUT].errors,
					__ATOMIC_RELAXED));
	buf_reset(&c->io.snap);
	c->io.out->snapshot(&c->io.snap, &in, s);
	tsc_out_write_kept(c, TSC_OUT_OUTPUT, &c->io.snap);
	if (c->srv.json_on && c->io.out == &out_jsonl_ops &&
	    in.stream != TSC_STREAM_CHANGES) {
		buf_fit(&c->io.snap);
		pthread_mutex_lock(&c->srv.prom_lock);
		if (!c->srv.json_made) {
			struct buf t = c->srv.json;
			c->srv.json = c->io.snap;
			c->io.snap = t;
			c->srv.json_made = true;
		}
		pthread_mutex_unlock(&c->srv.prom_lock);
	}
	if (c->io.snap.cap > TSC_FLUSH_BYTES)
		buf_free(&c->io.snap); /* a full line's room: not kept */
	if (c->io.cap_fd >= 0)
		write_capture_counters(c, &in, time_ns);
}

/* Also used before the first interval (seq 0) to fill /metrics. */
int tsc_snapshot(struct tsc *c, uint64_t time_ns, bool final)
{
	struct cgs_snapshot_opts so;
	int r;

	/* Only a cgroup a snapshot showed removed can be retired (the
	 * snapshot flags what the retirement would: superseded, rmdir
	 * events, its stat()s, every cgroup of a small shard): without one,
	 * no pass over every cgroup. With --depth a removed cgroup may be
	 * folded into a live row: every snapshot then. */
	if (c->ret.retire_due && (c->ret.kept_removed || c->o->depth)) {
		tsc_retire_removed(c);
		c->ret.retire_due = false;
	} else if (c->ret.retired_untrimmed) {
		/* the last retirements came within MEMTRIM_EVERY_NS of a
		 * trim: give their memory back now that none follow */
		tsc_trim_after_retiring(c, 0);
	}
	memset(&so, 0, sizeof(so));
	so.sz = sizeof(so);
	so.fold_depth = c->o->depth;
	so.no_delta = c->io.seq == 0;
	so.comms = c->o->comms;
	so.exes = c->o->exes;
	r = keep_snapshot(c, &so, time_ns, final);
	if (r < 0)
		return r;
	if (c->io.seq > 0 && c->io.out) /* no main output: taskstat-top */
		write_main(c, time_ns);
	if (c->o->textfile) {
		/* a failure leaves the last complete version */
		pthread_mutex_lock(&c->srv.prom_lock);
		tsc_prom_make_locked(c);
		r = tsc_textfile_write(c->o->textfile, &c->srv.prom);
		pthread_mutex_unlock(&c->srv.prom_lock);
		if (r < 0)
			tsc_out_failed(c, TSC_OUT_TEXTFILE, r);
		else
			tsc_out_recovered(c, TSC_OUT_TEXTFILE);
	}
	__atomic_store_n(&c->srv.last_snap_mono_ns, tsc_mono_ns(), __ATOMIC_RELAXED);
	if (c->io.seq > 0 && !final && !c->src.replay)
		c->ret.retire_due = true;
	return 0;
}
