/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Change-only streams (--stream changes, the default): which cgroups of a
 * snapshot the main output writes. A line is full (every cgroup shown) at
 * the start, after a reopen (SIGHUP), after a failed write, every
 * --full-every N lines, after SIGUSR2 and on stop (the final line: a file
 * ends with the whole state); else it holds the cgroups whose
 * row changed since the previous line (counters, deltas, removed) and
 * says where they go in the full state ("at") and which rows of the
 * previous state they replace or remove ("drop"): see docs/streams.md.
 *
 * State: 16 bytes a row of the previous line, a table of 4 bytes a slot
 * (at most half full) and the plan's arrays (3 x 8 bytes an entry):
 * ~80 bytes per cgroup shown.
 */
#ifndef TSC_STREAM_H
#define TSC_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgstats.h"

struct snap_info;

/* A row of a line's full state, as the planner compares them. */
struct tsc_srow {
	uint64_t key;      /* path and inode, hashed */
	uint32_t removed : 1, dirty : 1, matched : 1;
};

struct tsc_stream {
	bool on;          /* --stream changes */
	unsigned every;   /* --full-every: a full line every N, 0: never */
	bool full_due;    /* the next line is full */
	unsigned since_full; /* lines since the last full one */
	/* the rows of the previous line's full state, in its order */
	struct tsc_srow *rows;
	size_t n, cap;
	struct tsc_srow *spare; /* the line before's, reused */
	size_t spare_cap;
	uint32_t *tab;    /* rows index + 1, 0: empty; mask + 1 slots */
	size_t mask;
	bool dup;         /* two rows of one key: the next line is full */
	/* this line's plan: snapshot indices written, their positions in
	 * the full state, and the previous state's rows dropped */
	size_t *sel, *at, *drop;
	size_t nsel, ndrop, pcap;
	uint64_t errors_seen; /* the output's failed writes so far */
};

/* Make the next line full (reopen, SIGUSR2, a failed write). */
static inline void tsc_stream_full_next(struct tsc_stream *st)
{
	st->full_due = true;
}

/*
 * Plan the line of snapshot s whose shown cgroups in describes (and set
 * in's stream fields: full or changes, shown, at, drop). Needs no lock;
 * main thread. On ENOMEM the line is full (and so is the next).
 */
void tsc_stream_plan(struct tsc_stream *st, struct snap_info *in,
		     const struct cgs_snapshot *s, uint64_t out_errors);
void tsc_stream_free(struct tsc_stream *st);

/* The cgroup's own counters moved since the previous line (exits, OOM
 * kills, inferred records of its own): what a change-only table lists. */
bool tsc_stream_row_moved(const struct cgs_cgroup_stats *g);

/*
 * The planner on rows (tsc_stream_plan() is these two): room for a line
 * of m rows, to be filled with the line's rows in its order (key,
 * removed, dirty; matched 0), NULL on ENOMEM (the state is lost: a full
 * line); then the plan against the previous line, true for a
 * change-only one: st->sel[0..nsel) the positions written (as st->at),
 * st->drop[0..ndrop) the previous rows dropped, ascending. The rows
 * become the state (st keeps them).
 */
struct tsc_srow *tsc_stream_rows(struct tsc_stream *st, size_t m);
bool tsc_stream_diff(struct tsc_stream *st, struct tsc_srow *nw, size_t m,
		     bool full);

#endif
