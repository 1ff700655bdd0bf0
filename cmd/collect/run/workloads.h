/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The collector's workload view (workloads.c). */
#ifndef TSC_WORKLOADS_H
#define TSC_WORKLOADS_H

#include <stddef.h>

#include "buf.h"
#include "cgstats.h"

struct tsc;

/* At setup: the view unless --no-workloads or --depth; 0 or -errno. */
int tsc_workloads_open(struct tsc *c);
void tsc_workloads_close(struct tsc *c);
/* After privileges are shed: names containers when their cgroup appears
 * (the kernel source's mkdir events: cgs_rollup_set_identity()), and those
 * there now; on SIGHUP again (those not named yet are looked up). */
void tsc_workloads_watch(struct tsc *c);
/* Every snapshot (main thread), before the outputs are formatted. */
void tsc_workloads_update(struct tsc *c, const struct cgs_snapshot *s);
/* The taskstat_workload_* families; returns the workloads written. */
size_t tsc_workloads_prom(struct buf *b, const struct tsc *c);

#endif
