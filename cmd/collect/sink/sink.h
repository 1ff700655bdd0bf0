/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The collector's output stage, between its files: outputs.c (writes and
 * their errors), served.c (the kept snapshot's texts), info.c (struct
 * snap_info), retire.c and snapshot.c. Their public half is in
 * collector.h. */
#ifndef TSC_SINK_H
#define TSC_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "collector.h"
#include "output.h"

/* outputs.c: write b to output k, under its writer's lock (held:
 * _locked takes it, _kept does not reset b); p NULL: the capture header. */
void tsc_out_write(struct tsc *c, enum tsc_out k, const void *p, size_t len,
		   bool oom);
void tsc_out_write_kept(struct tsc *c, enum tsc_out k, const struct buf *b);
void tsc_out_write_locked(struct tsc *c, enum tsc_out k, struct buf *b);
/* A write of output k failed with err (-errno) / succeeded again. */
void tsc_out_failed(struct tsc *c, enum tsc_out k, int err);
void tsc_out_recovered(struct tsc *c, enum tsc_out k);
/* b to path by a temporary file and rename(); 0 or -errno. */
int tsc_textfile_write(const char *path, const struct buf *b);
/* served.c, under prom_lock: the Prometheus text of the kept snapshot,
 * made if not yet; the kept snapshot and its texts freed. */
void tsc_prom_make_locked(struct tsc *c);
void tsc_kept_free_locked(struct tsc *c);
/* info.c */
void tsc_fill_info(struct tsc *c, struct snap_info *in,
		   const struct cgs_snapshot *s, uint64_t time_ns, bool final);
/* retire.c */
void tsc_retire_removed(struct tsc *c);
void tsc_trim_after_retiring(struct tsc *c, uint64_t retired);

#endif
