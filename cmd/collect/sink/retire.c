/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Removed cgroups forgotten once every output has their final counts,
 * and the heap given back after retirements. */
#include <malloc.h>
#include <pthread.h>

#include "collector.h"
#include "memtrim.h"
#include "sink.h"

/*
 * A retired cgroup's memory goes back to the listener threads' malloc
 * arenas, where glibc keeps it as free heap between the cgroups still
 * tracked: under steady churn the RSS crept up with that fragmentation
 * (~27 MiB over 60,000 cgroups at 1,000/s). Give the free pages back once
 * TSC_TRIM_RETIRED cgroups went since the last time, at most every
 * MEMTRIM_EVERY_NS; and (retired 0: a snapshot that retired nothing)
 * the TSC_TRIM_RETIRED_TAIL or more that went since the last trim, once
 * MEMTRIM_EVERY_NS passed: the end of a burst is not left untrimmed.
 */
void tsc_trim_after_retiring(struct tsc *c, uint64_t retired)
{
	uint64_t now = tsc_mono_ns();

	c->ret.retired_untrimmed += retired;
	if (c->ret.retired_untrimmed <
		    (retired ? TSC_TRIM_RETIRED : TSC_TRIM_RETIRED_TAIL) ||
	    now - c->ret.trim_ns < MEMTRIM_EVERY_NS)
		return;
	malloc_trim(0);
	c->ret.retired_untrimmed = 0;
	c->ret.trim_ns = now;
}

/*
 * Bound memory on hosts with cgroup churn: forget removed cgroups once
 * their final counts reached every output. The snapshot lines and the
 * textfile were written with the snapshots; with --listen, a consumer
 * (a scrape, /snapshot: taskstat-top --connect) must have fetched a
 * snapshot that showed them, or they wait --retire-after and at most
 * --retire-max of them wait (the rest, removed first, go), and then are
 * retired all the same, counted: no consumer can pin memory. Retiring
 * before a snapshot takes only cgroups without an exit since the last
 * one. Not in replay: the recorded host's directories need not exist
 * here.
 */
void tsc_retire_removed(struct tsc *c)
{
	struct cgs_retire_opts o = { .sz = sizeof(o), .served = UINT64_MAX };
	struct cgs_retire_result res = { .sz = sizeof(res) };

	if (c->net.listen_fd >= 0 || c->net.http) {
		pthread_mutex_lock(&c->srv.prom_lock);
		o.served = c->srv.served_gen;
		pthread_mutex_unlock(&c->srv.prom_lock);
		o.wait_ms = c->o->retire_after_ns / 1000000u;
		o.max_waiting = c->o->retire_max;
	}
	if (cgs_rollup_retire(c->src.rollup, &o, &res) < 0)
		return; /* out of memory: the next snapshot tries again */
	c->ret.retired_unserved += res.unserved;
	c->ret.retired_forced += res.forced;
	c->ret.removed_waiting = res.waiting;
	tsc_trim_after_retiring(c, res.retired);
	if (res.unserved && !c->ret.unserved_said) {
		tsc_warn("%s: %llu removed cgroups retired before a scrape "
			"fetched their final counts, counted in "
			"taskstat_collector_retired_unserved_total (said "
			"once)\n", res.forced ? "--retire-max" :
			"--retire-after", (unsigned long long)res.unserved);
		c->ret.unserved_said = true;
	}
}
