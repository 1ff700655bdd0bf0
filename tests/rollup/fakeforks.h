/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fork tracking on the fake tree: a rollup whose forks are injected, and
 * the injections (white-box: links cgstats_internal). */
#ifndef CGS_TESTS_ROLLUP_FAKEFORKS_H
#define CGS_TESTS_ROLLUP_FAKEFORKS_H

#include <stdint.h>

#include "support/fakeproc.h"

/* cgsi_rollup_new() on f with these flags and fork tracking, if asked
 * for, without the connector: the fake tree's pids are not the host's.
 * A failure fails the case, and so does a tracker that is missing or has
 * a socket when CGS_ROLLUP_TRACK_FORKS is asked for. */
struct cgs_rollup *fp_forks_rollup(struct fakeproc *f, unsigned flags);
/* A fork `ago_ms` before now (rollup ms). */
void fp_fork(struct cgs_rollup *r, uint32_t parent, uint32_t child,
	     uint64_t ago_ms);
/* n fork events lost, as the kernel's drop counter would say. */
void fp_lost(struct cgs_rollup *r, uint64_t n);

#endif
