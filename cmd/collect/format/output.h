/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Formatting of snapshots and exit events into buffers (no I/O here). */
#ifndef TSC_OUTPUT_H
#define TSC_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "cgstats.h"

struct exe_cache; /* exe_cache.h */

/* What a snapshot line says about the collector itself. */
/* The kernel source's reasons for a record without its answer
 * (cgs_rollup_totals.kmiss_*), as the outputs name them (sink.c). */
#define TSC_KMISS_N 11
struct tsc_kmiss {
	const char *name;
	size_t off; /* in struct cgs_rollup_totals */
};
extern const struct tsc_kmiss tsc_kmiss[TSC_KMISS_N];

static inline uint64_t tsc_kmiss_get(const struct cgs_rollup_totals *t,
				     unsigned i)
{
	return *(const uint64_t *)((const char *)t + tsc_kmiss[i].off);
}

struct snap_info {
	uint64_t time_ns;      /* CLOCK_REALTIME (replay: recorded time) */
	uint64_t seq;          /* 1, 2, ... */
	bool final;            /* written on stop */
	bool replay;
	const char *hierarchy;
	uint64_t interval_ns;
	uint64_t records, unattributed, dropped, malformed, enobufs;
	/* of malformed: messages larger than the receive slot; records of
	 * version 0 (old kernels' group records, decoded by their size):
	 * JSON only, only when non-zero (live) */
	uint64_t truncated, version0;
	uint64_t refused; /* records the rollup could not take (always 0
			   * when wired right: shown so that it is seen) */
	/* how records found their cgroup; fork events lost (attribution of
	 * reaped processes degrades, so it is shown, not hidden) */
	uint64_t via_cache, via_proc, via_parent, via_ancestor;
	uint64_t via_fork_parent; /* --attribution fast */
	const char *attribution;  /* "kernel" or "proc" (NULL in replay) */
	uint64_t via_kernel, kernel_unmatched, kernel_lost, kernel_expired;
	uint64_t kernel_waits;     /* records that waited for their entry */
	uint64_t inferred;        /* records whose cgroup was inferred */
	uint64_t kernel_ringbuf;  /* bytes per shard, 0: no kernel source */
	uint64_t kernel_cgroup_ids; /* ids the kernel source has a path for */
	/* the kernel source's own counters (kmiss_*, rings, walks, BPF run
	 * time): kernel_on only while it attributes (never in replay) */
	bool kernel_on;
	struct cgs_rollup_totals ktot;
	bool fork_tracking;
	uint64_t fork_drops;
	unsigned shards;
	const size_t *rcvbuf;         /* per shard; NULL in replay */
	const char *const *shard_cpus; /* per shard; NULL in replay */
	unsigned top;                  /* table: cgroups shown, 0: all */
	/* table: the width its lines fit (columns chosen by priority, long
	 * paths shortened, header wrapped), 0: --wide, every column */
	unsigned width;
	/* kernel.task_delayacct now: 1 on, 0 off, -1 unknown (no such
	 * sysctl, or replay: this host's setting says nothing of the
	 * recording's), then omitted */
	int delayacct;
	/* how oom_kills count: "kernel", "cgroup", or NULL when they are
	 * not counted (then omitted / null) */
	const char *oom_source;
	bool histograms;        /* the snapshot has distributions */
	unsigned comms;         /* --comms: commands shown per cgroup, 0: off */
	bool prom_comms;        /* --prom-comms */
	unsigned exes;          /* --exes: executables shown per cgroup, 0: off */
	bool prom_exes;         /* --prom-exes */
	/* names the --exes executables (exe_cache_get()); NULL: none known
	 * (replay), each shown by its device and inode */
	struct exe_cache *exe_map;
	bool workload_labels; /* Prometheus: --prom-workload-labels */
	/* --prom-level lean (the default; false: full, today's set) and
	 * --prom-parents (lean: ancestors without exits exported too) */
	bool prom_lean, prom_parents;
	uint64_t start_ns;      /* the collector's start, CLOCK_REALTIME */
	/* failed writes per output ("output", "record", "textfile"), -1:
	 * no such output in this run */
	int64_t output_errors[3];
	/* --cgroup / --exclude-cgroup: the cgroups every per-cgroup output
	 * shows, as indices into the snapshot in its order (NULL: all);
	 * the totals above count every cgroup all the same */
	const size_t *shown;
	size_t nshown;
	uint64_t cgroups_filtered; /* cgroups left out by the filters */
	uint64_t prom_max_series;  /* --prom-max-series, 0: no limit */
	/* removed cgroups retired before a consumer fetched their final
	 * counts (--retire-after, --retire-max), of those forced out by
	 * --retire-max, and those waiting for one now */
	uint64_t retired_unserved, retired_forced, removed_waiting;
	uint64_t snapshot_gen;     /* the library's generation of it */
	/* the workload view as of this snapshot (names on JSON rows), NULL:
	 * off */
	const struct cgs_workloads *workloads;
	/* --events live: the executables' map's counts (exe_cache.h); NULL:
	 * no map (replay, no --events), nothing written */
	const struct exe_counts *exe;
	/* --stream (stream.h): TSC_STREAM_NONE writes no such field (--stream
	 * full: the lines as before); TSC_STREAM_FULL, TSC_STREAM_CHANGES.
	 * With changes, shown holds the cgroups whose rows changed, at[k] the
	 * k-th one's position in the full state and drop[0..ndrop) the rows
	 * of the previous line's full state it replaces or removes */
	int stream;
	const size_t *at, *drop;
	size_t ndrop;
};

enum { TSC_STREAM_NONE, TSC_STREAM_FULL, TSC_STREAM_CHANGES };
static inline const char *snap_stream_name(const struct snap_info *in)
{
	return in->stream == TSC_STREAM_CHANGES ? "changes" : "full";
}

/* Number of cgroups shown, and the snapshot index of the k-th of them. */
static inline size_t snap_shown(const struct snap_info *in,
				const struct cgs_snapshot *s)
{
	return in->shown ? in->nshown : cgs_snapshot_count(s);
}

static inline size_t snap_index(const struct snap_info *in, size_t k)
{
	return in->shown ? in->shown[k] : k;
}

/* Exit outcomes of a cgroup's process exits (struct cgs_counters), in
 * output order; oom_kills last (omitted when snap_info.oom_source is
 * NULL). */
struct ofield {
	const char *name; /* JSON key, CSV column suffix, Prometheus label */
	size_t off;
};
extern const struct ofield tsc_outcomes[];
extern const size_t tsc_noutcomes;
/* The outcome count f of counters c. */
uint64_t ofield_get(const struct cgs_counters *c, const struct ofield *f);
#define TSC_OUTCOME_OOM (tsc_noutcomes - 1)

/* The comm label of a ranking's (other) entry in Prometheus: longer than
 * any command (CGS_COMM_LEN bytes at most), so no process can name itself
 * so and make two series of one label set. */
#define TSC_OTHER_COMMS "(other commands, not in the top N)"
_Static_assert(sizeof(TSC_OTHER_COMMS) - 1 > CGS_COMM_LEN,
	       "the (other) label must not be a possible comm");

/* --exes: the label of a ranking's (other) entry in Prometheus, and of
 * the executable 0:0 (records naming none). A known executable's is its
 * path ('/' first); one the map does not know is "unknown <major>:<minor>
 * <inode>". */
#define TSC_OTHER_EXES "(other executables, not in the top N)"
#define TSC_NO_EXE "(none: kernel thread or kernel before taskstats v12)"
/* The name of x into out (n bytes): its path, true; false when not known
 * (then the words above; (other) included). */
bool tsc_exe_name(const struct snap_info *in, const struct cgs_exe *x,
		  char *out, size_t n);
/* ac_exe_dev as "<major>:<minor>" into out (n bytes). */
void tsc_exe_dev(char *out, size_t n, uint64_t dev);

/* Histogram bucket bounds (seconds) and names, shared by the formats. */
void hist_le_put(struct buf *b, uint64_t le_ns);
/* Metric base name of a histogram ("task_lifetime_seconds", ...). */
const char *hist_prom_name(enum cgs_hist_kind k);
const char *hist_prom_help(enum cgs_hist_kind k);

/* Counter fields shared by the formats, in output order. */
enum funit {
	U_COUNT, /* plain count */
	U_US,    /* microseconds, written as seconds */
	U_NS,    /* nanoseconds, written as seconds */
	U_KB,    /* KiB, written as bytes */
};
#define F_SUBTREE (1u << 0) /* also written as <name>_subtree */
#define F_DELTA (1u << 1)   /* also written as <name>_delta */
#define F_PEAK (1u << 2)    /* a maximum, not a sum (Prometheus gauge) */

struct cfield {
	const char *name; /* JSON key / CSV column */
	size_t off;       /* offset of the uint64_t in struct cgs_counters */
	enum funit unit;
	unsigned flags;
	const char *prom; /* metric name without prefix, NULL: not exported */
	const char *help;
};

extern const struct cfield tsc_fields[];
extern const size_t tsc_nfields;

uint64_t field_get(const struct cgs_counters *c, const struct cfield *f);
void field_put(struct buf *b, uint64_t v, enum funit u);
/* Wait status -> exit code (or -1) and signal (or 0). */
int exit_code_of(uint32_t status);
int exit_signal_of(uint32_t status);
/* Wait status -> a core was dumped (WCOREDUMP), as outcome core_dumped. */
bool exit_core_of(uint32_t status);
const char *kind_name(enum cgs_kind k);

/*
 * One --format: what goes to --output. Chosen once in setup (c->io.out);
 * nothing else tells the formats apart.
 */
struct out_ops {
	/* Once, before any snapshot or event; NULL: nothing. stream: the
	 * lines say full or changes (--stream changes); exe_cols: --exes
	 * or --events (CSV: the executables' columns, filled by "exe" rows
	 * and, with --events, by "exit" rows) */
	void (*prologue)(struct buf *b, bool stream, bool exe_cols);
	void (*snapshot)(struct buf *b, const struct snap_info *in,
			 const struct cgs_snapshot *s);
	/* On a listener thread, into that shard's buffer; id: the cgroup's
	 * names (cgs_identity_src_peek()), NULL when none is known; exe: the
	 * executable's path (exe_cache.h), NULL when not known. */
	void (*event)(struct buf *b, const struct cgs_record *r,
		      const char *cgroup, const char *source, uint64_t recv_ns,
		      unsigned shard, const struct cgs_identity *id,
		      const char *exe);
};

extern const struct out_ops out_table_ops, out_jsonl_ops, out_csv_ops;

/*
 * Prometheus text exposition format 0.0.4. Per-cgroup series of the
 * cgroups shown, within in->prom_max_series: when they would be more, the
 * cgroups with the most task exits (self) are kept, the first one that
 * does not fit and all after it left out. Returns the number of cgroups
 * left out (0: every one shown was written).
 */
size_t out_prom(struct buf *b, const struct snap_info *in,
		const struct cgs_snapshot *s);

/* Per-cgroup series out_prom() writes for the i-th cgroup of s. */
size_t prom_cgroup_series(const struct snap_info *in,
			  const struct cgs_snapshot *s, size_t i);

#endif
