/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/snapshot.h>: a rollup's snapshot (cgs_rollup_snapshot() ...
 * cgs_snapshot_free()): every cgroup with its counters, exits by signal,
 * distributions and top commands. Part of <cgstats.h>.
 */
#ifndef CGSTATS_SNAPSHOT_H
#define CGSTATS_SNAPSHOT_H

#include "rollup.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-cgroup counters. Sums unless noted. */
/* A delay class summed over records (struct cgs_delay without peaks). */
struct cgs_delay_sum {
	uint64_t count;    /* delays recorded */
	uint64_t total_ns; /* their sum, ns */
};

struct cgs_counters {
	size_t sz;             /* bytes of this struct the library filled */
	uint64_t tasks;        /* task exit records (thread + process kinds) */
	uint64_t processes;    /* process exits (AGROUP) */
	uint64_t tgid_records; /* TGID aggregates seen (not added to sums) */
	/* the struct cgs_record fields of the same names, summed over the
	 * task records (thread and process kinds) */
	uint64_t utime_us, stime_us;
	uint64_t cpu_run_real_ns, cpu_run_virtual_ns;
	struct cgs_delay_sum delay[CGS_DELAY_SLOTS]; /* by cgs_delay_class */
	uint64_t minflt, majflt;
	uint64_t read_char, write_char, read_syscalls, write_syscalls;
	uint64_t read_bytes, write_bytes, cancelled_write_bytes;
	uint64_t nvcsw, nivcsw;
	uint64_t coremem_mbus, virtmem_mbus;
	uint64_t hiwater_rss_kb_max, hiwater_vm_kb_max; /* peaks, not sums */
	/* process exits (CGS_KIND_PROCESS records) by outcome, from the wait
	 * status (see cgs_exit_classify()); per signal:
	 * cgs_snapshot_get_signals() */
	uint64_t exit_clean;       /* exited with status 0 */
	uint64_t exit_nonzero;     /* exited with a non-zero code */
	uint64_t exit_signaled;    /* killed by a signal */
	uint64_t exit_core_dumped; /* of those, with a core dump (bit 0x80) */
	/* processes the kernel's OOM killer chose as victims, counted as
	 * totals.oom_source says (0 and meaningless with CGS_OOM_NONE) */
	uint64_t oom_kills;
	/* new counters go here */
};

/*
 * One cgroup of a snapshot. The counters are pointed to, not embedded, so
 * that struct cgs_counters can grow; all pointers are owned by the
 * snapshot and valid until cgs_snapshot_free().
 */
struct cgs_cgroup_stats {
	size_t sz;          /* bytes of this struct the library filled */
	const char *path;   /* "/a/b", "/" or CGS_UNKNOWN_CGROUP */
	unsigned depth;     /* 0 for "/" and the unknown bucket */
	uint64_t ino;       /* cgroup directory inode when known, else 0 */
	bool removed;       /* directory no longer exists */
	const struct cgs_counters *self, *subtree; /* cumulative */
	const struct cgs_counters *self_delta, *subtree_delta; /* since the
								* previous
								* snapshot */
	/* records of this cgroup (self) whose cgroup was inferred from a
	 * parent or fork ancestor, not known: cumulative and since the
	 * previous snapshot. Always 0 with the kernel source. */
	uint64_t inferred, inferred_delta;
	/* new fields go here */
};

struct cgs_snapshot;

struct cgs_snapshot_opts {
	size_t sz;           /* sizeof(struct cgs_snapshot_opts) */
	unsigned fold_depth; /* fold cgroups deeper than this into their
			      * ancestor at this depth; 0: no folding */
	bool no_delta;       /* don't advance the delta baseline */
	/* commands listed per cgroup and ranking (cgs_snapshot_get_comm());
	 * the rest is folded into (other); 0: every one the summary holds */
	unsigned comms;
	/* (1.4) executables listed per cgroup and ranking
	 * (cgs_snapshot_get_exe()), the same way (64 bits wide: it starts
	 * after the 1.3 struct's tail padding, which old callers may not
	 * have zeroed) */
	uint64_t exes;
};

/**
 * cgs_rollup_snapshot() - Consistent snapshot of every cgroup.
 * @r: The rollup.
 * @o: Options, or NULL for the defaults; not kept.
 * @out: Receives the snapshot on success (NULL on failure); owned by the
 *	caller, freed with cgs_snapshot_free(). It owns all its data and
 *	may outlive @r.
 *
 * Every cgroup in path order (a parent before its subtree; the unknown
 * bucket last), with subtree sums; ancestors that saw no exit are added.
 * Deltas are since the previous snapshot that advanced the baseline: the
 * baseline is the rollup's, shared by every caller. Takes each shard's
 * lock once.
 *
 * Context: Safe alongside cgs_rollup_add() calls; serialised with
 * other snapshots and cgs_rollup_retire_removed(). stat()s cgroup
 * directories to flag removed cgroups: all of them up to 1,024 per
 * shard, else a round-robin slice (every one within 32 snapshots); with
 * the kernel source, an rmdir event flags its cgroup at the next
 * snapshot, and while no cgroup event was missed (the kernel_cg_lost
 * total and the like) the slice slows to a safety net (every cgroup
 * within ~512 snapshots; a cgroup with no id every snapshot).
 * Return: 0; -EINVAL for a NULL @r or @out or o->sz too small; -E2BIG for
 * options this library does not know; -ENOMEM.
 */
CGS_EXPORT int
cgs_rollup_snapshot(struct cgs_rollup *r, const struct cgs_snapshot_opts *o,
		    struct cgs_snapshot **out);
/**
 * cgs_snapshot_count() - Number of cgroups in a snapshot.
 * @s: The snapshot, or NULL.
 *
 * Return: The number of entries (the unknown bucket included); 0 for a
 * NULL @s.
 */
CGS_EXPORT size_t cgs_snapshot_count(const struct cgs_snapshot *s);
/**
 * cgs_snapshot_get_cgroup() - One cgroup of a snapshot.
 * @s: The snapshot.
 * @i: Index, 0 <= i < cgs_snapshot_count(), in path order.
 *
 * Since 1.3; before, cgs_snapshot_get_cgroup() (kept: <cgstats/deprecated.h>).
 *
 * Context: A snapshot is not changed after it is made: it may be read
 * from several threads at once.
 * Return: The i-th cgroup, owned by @s and valid (with everything it
 * points to) until cgs_snapshot_free(); NULL for a NULL @s or @i out of
 * range.
 */
CGS_EXPORT const struct cgs_cgroup_stats *
cgs_snapshot_get_cgroup(const struct cgs_snapshot *s, size_t i);
/**
 * cgs_snapshot_get_totals() - Totals at snapshot time.
 * @s: The snapshot.
 *
 * Since 1.3; before, cgs_snapshot_get_totals() (kept: <cgstats/deprecated.h>).
 *
 * Return: The totals, owned by @s and valid until cgs_snapshot_free();
 * cgroups counts the distinct cgroups in @s (not the unknown bucket).
 * NULL for a NULL @s.
 */
CGS_EXPORT const struct cgs_rollup_totals *
cgs_snapshot_get_totals(const struct cgs_snapshot *s);

/* Which counters of a cgroup (struct cgs_cgroup_stats' four sets). */
enum cgs_counter_set {
	CGS_SET_SELF = 0,
	CGS_SET_SUBTREE = 1,
	CGS_SET_SELF_DELTA = 2,
	CGS_SET_SUBTREE_DELTA = 3,
};

/* Capacity of signal counts: slot i counts signal number i (1..127, as
 * a wait status can carry); slot 0 is unused. */
#define CGS_SIGNAL_SLOTS 128

struct cgs_signal_counts {
	size_t sz;                  /* bytes the library filled */
	uint64_t n[CGS_SIGNAL_SLOTS]; /* process exits by terminating signal */
};

/**
 * cgs_snapshot_get_signals() - Process exits of a cgroup by signal.
 * @s: The snapshot.
 * @i: Index of the cgroup, 0 <= i < cgs_snapshot_count().
 * @set: Which counters.
 * @out: Receives the counts; sz set (see <cgstats.h>), on return the bytes
 *	written. Their sum is the set's exit_signaled.
 *
 * Since 1.3; before, cgs_snapshot_get_signals() (kept: <cgstats/deprecated.h>).
 *
 * Context: As cgs_snapshot_get_cgroup().
 * Return: 0; -EINVAL for a NULL @s or @out, out->sz too small, @i or @set
 * out of range.
 */
CGS_EXPORT int cgs_snapshot_get_signals(const struct cgs_snapshot *s, size_t i,
					enum cgs_counter_set set,
					struct cgs_signal_counts *out);

/* Distributions (CGS_ROLLUP_HISTOGRAMS), on fixed log-scale buckets. */
enum cgs_hist_kind {
	CGS_HIST_LIFETIME = 0,      /* a task's own lifetime (ac_etime), every
				     * task record */
	CGS_HIST_PROC_LIFETIME = 1, /* a process's lifetime (ac_tgetime; ac_etime
				     * before v12), process exits */
	CGS_HIST_CPU = 2,           /* user + system CPU time per task record */
	CGS_HIST_CPU_DELAY = 3,     /* run-queue wait per task record
				     * (delay[CGS_DELAY_CPU].total_ns) */
	CGS_HIST__COUNT
};

/* Capacity of a histogram's classic arrays (le_ns, cumulative). */
#define CGS_HIST_SLOTS 32
/* Capacity of its fine buckets (fine[], from 1.3). */
#define CGS_HIST_FINE_SLOTS 40

/*
 * A distribution. The library counts in buckets at the powers of 2 of a
 * second, those of a Prometheus native histogram of schema 0 (from 1.3;
 * before, 4^k us): fine bucket i holds the observations in
 * (2^(i-1), 2^i] s, i = -19..16 (the lowest, (0, 1.9 us]), zero_count
 * those of 0, and the bucket i = 17 those above 2^16 s (18.2 h: a bound
 * below, not above). The classic arrays hold the same counts two buckets
 * in one: upper bounds 4^m s, m = -9..8 (3.8 us .. 18.2 h), then +Inf.
 */
struct cgs_hist {
	size_t sz;          /* bytes the library filled */
	unsigned nbuckets;  /* buckets in use, the last one +Inf */
	/* upper bound of bucket b, ns, rounded down (an observation v, whole
	 * ns, counts in every bucket with v <= le_ns[b]); UINT64_MAX for
	 * +Inf */
	uint64_t le_ns[CGS_HIST_SLOTS];
	/* observations <= le_ns[b]: cumulative, never decreasing along b */
	uint64_t cumulative[CGS_HIST_SLOTS];
	uint64_t count;     /* observations (== the +Inf bucket) */
	uint64_t sum_ns;    /* their sum, ns */
	/* From 1.3 (when sz covers them): the fine buckets. */
	int schema;           /* 0: bounds 2^(i * 2^-schema) s */
	int fine_first;       /* i of fine[0]: -19 */
	unsigned nfine;       /* fine buckets in use (37): i up to
			       * fine_first + nfine - 1, the last one
			       * unbounded above */
	uint64_t zero_count;  /* observations of 0 (in no fine bucket) */
	uint64_t fine[CGS_HIST_FINE_SLOTS]; /* observations in bucket
					     * fine_first + b alone */
};

/**
 * cgs_hist_name() - Name of a histogram.
 * @k: The histogram.
 *
 * Context: Any thread.
 * Return: "lifetime", "process_lifetime", "cpu" or "cpu_delay", in static
 * storage; NULL when out of range.
 */
CGS_EXPORT const char *cgs_hist_name(enum cgs_hist_kind k);

/**
 * cgs_snapshot_get_hist() - A distribution of one cgroup.
 * @s: The snapshot.
 * @i: Index of the cgroup, 0 <= i < cgs_snapshot_count().
 * @set: Which counters (self or subtree, cumulative or delta).
 * @k: Which distribution.
 * @out: Receives it; sz set (see <cgstats.h>), on return the bytes written.
 *
 * Cumulative sets never decrease from one snapshot to the next, also
 * when a descendant is retired (its counts move into its parent's
 * subtree).
 *
 * Since 1.3; before, cgs_snapshot_get_hist() (kept: <cgstats/deprecated.h>).
 *
 * Context: As cgs_snapshot_get_cgroup().
 * Return: 0; -ENODATA when the rollup keeps no histograms
 * (CGS_ROLLUP_HISTOGRAMS not set); -EINVAL for a NULL @s or @out,
 * out->sz too small, or @i, @set or @k out of range.
 */
CGS_EXPORT int cgs_snapshot_get_hist(const struct cgs_snapshot *s, size_t i,
				     enum cgs_counter_set set, enum cgs_hist_kind k,
				     struct cgs_hist *out);

/**
 * cgs_hist_quantile() - Estimate a quantile of a histogram.
 * @h: The histogram.
 * @q: The quantile, 0 <= q <= 1.
 *
 * Interpolates linearly inside the bucket that holds the quantile (as
 * Prometheus' histogram_quantile() does), in the fine buckets when h->sz
 * holds them, else in the classic ones; a quantile in the +Inf (or the
 * unbounded fine) bucket is reported as the last finite bound.
 *
 * Context: Any thread.
 * Return: The estimate, ns; 0 for an empty histogram or a NULL @h.
 */
CGS_EXPORT uint64_t cgs_hist_quantile(const struct cgs_hist *h, double q);

/* The longest delay of one class (from 1.3). */
struct cgs_delay_peak {
	uint64_t max_ns; /* the longest single delay any task record of the
			  * set carried (its delay[c].max_ns), ns; 0: none */
	uint64_t at_ns;  /* when it happened: CLOCK_REALTIME ns since the
			  * epoch, from kernels that send it (struct
			  * taskstats v17); 0: not known */
};

/* A cgroup's delay peaks, by enum cgs_delay_class (from 1.3). */
struct cgs_delay_peaks {
	size_t sz;          /* bytes the library filled */
	unsigned nclasses;  /* classes the library knows (cgs_delay_classes()) */
	struct cgs_delay_peak c[CGS_DELAY_SLOTS];
};

/**
 * cgs_snapshot_get_delay_peaks() - The longest delays of one cgroup.
 * @s: The snapshot.
 * @i: Index of the cgroup, 0 <= i < cgs_snapshot_count().
 * @set: Which records: the cgroup's own (self) or its subtree's, since it
 *	was first seen (cumulative) or since the previous snapshot (delta:
 *	the records that arrived in the period).
 * @out: Receives the peaks; sz set (see <cgstats.h>), on return the bytes
 *	written.
 *
 * For each delay class the maximum over the task records (threads and
 * processes; never the TGID aggregates, whose max is the last thread's)
 * of the longest single delay the task had in its life (kernels from
 * struct taskstats v15; all zero before), with the time it happened when
 * the kernel sends it (v17). A record counts in the period in which it
 * arrived, so a delta peak may have happened before the period began
 * (at_ns says when, if known). Subtree peaks keep those of retired
 * descendants, as the subtree counters keep their counts.
 *
 * Context: As cgs_snapshot_get_cgroup().
 * Return: 0; -EINVAL for a NULL @s or @out, out->sz too small, or @i or
 * @set out of range.
 */
CGS_EXPORT int
cgs_snapshot_get_delay_peaks(const struct cgs_snapshot *s, size_t i,
			     enum cgs_counter_set set,
			     struct cgs_delay_peaks *out);

/* Rankings of the commands in a cgroup (cgs_rollup_opts.comms). */
enum cgs_comm_rank {
	CGS_COMMS_BY_CPU = 0,   /* user + system CPU of every task record,
				 * us (a command with none is not ranked
				 * by it) */
	CGS_COMMS_BY_EXITS = 1, /* process exits */
};

/*
 * One command of a ranking: the process's command (for a thread's record
 * its process's, not the thread's own name). Per cgroup (self), cumulative
 * since the cgroup was first seen; shards merged. Each cgroup keeps a
 * bounded summary per ranking (Space-Saving, cgs_rollup_opts.comms
 * counters: memory does not grow with the number of distinct commands):
 * a command's true value lies in [value, value + error], error is at most
 * the ranking's total / opts.comms, and a command whose true value is
 * above that is always listed. value is exact for a command counted since
 * its first exit and never pushed out by others.
 */
struct cgs_comm {
	size_t sz;                   /* bytes of this struct that exist */
	char comm[CGS_COMM_LEN + 1]; /* NUL-terminated; "" for (other) */
	bool other;                  /* the last entry: every command not
				      * listed before it, folded */
	/* us of CPU, or process exits, counted for the command: a lower
	 * bound of its true value (see above). For (other): the ranking's
	 * total minus the listed commands' upper bounds (value + error) */
	uint64_t value;
	/* the true value is at most value + error (for (other): the sum of
	 * the listed errors) */
	uint64_t error;
	/* (other) only: no command folded into it has more than this (0
	 * when the summary never had to push one out) */
	uint64_t max_each;
};

/**
 * cgs_snapshot_comm_count() - Entries of a ranking of one cgroup.
 * @s: The snapshot.
 * @i: Index of the cgroup.
 * @by: The ranking.
 *
 * At most cgs_snapshot_opts.comms commands (all the summary holds with
 * 0), largest value first, then (other) when anything is not listed.
 *
 * Return: The number of entries; 0 when commands are off, for a cgroup
 * with nothing counted, or for arguments out of range.
 */
CGS_EXPORT size_t
cgs_snapshot_comm_count(const struct cgs_snapshot *s, size_t i,
			enum cgs_comm_rank by);

/**
 * cgs_snapshot_get_comm() - One entry of a ranking.
 * @s: The snapshot.
 * @i: Index of the cgroup.
 * @by: The ranking.
 * @j: 0 <= j < cgs_snapshot_comm_count(), largest value first.
 *
 * Since 1.3; before, cgs_snapshot_get_comm() (kept: <cgstats/deprecated.h>).
 *
 * Context: As cgs_snapshot_get_cgroup().
 * Return: The entry, owned by @s and valid until cgs_snapshot_free();
 * NULL when out of range.
 */
CGS_EXPORT const struct cgs_comm *
cgs_snapshot_get_comm(const struct cgs_snapshot *s,
		      size_t i, enum cgs_comm_rank by,
		      size_t j);

/* Rankings of the executables in a cgroup (cgs_rollup_opts.exes). */
enum cgs_exe_rank {
	CGS_EXES_BY_CPU = 0,     /* user + system CPU of every task record,
				  * us (an executable with none is not
				  * ranked by it) */
	CGS_EXES_BY_EXITS = 1,   /* process exits */
	CGS_EXES_BY_CRASHES = 2, /* process exits by a crash signal: SIGSEGV,
				  * SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS,
				  * SIGTRAP (core dumped or not; what the
				  * collector's crash-loop alerts count) */
};

/*
 * One executable of a ranking (since 1.4): the file the exiting task ran,
 * as struct taskstats v12+ names it (ac_exe_dev, ac_exe_inode; a script
 * is its interpreter; a thread's record names its process's executable).
 * Per cgroup (self), cumulative since the cgroup was first seen; shards
 * merged. The same bounded summary as the commands' (struct cgs_comm,
 * cgs_rollup_opts.exes counters per ranking): the true value lies in
 * [value, value + error], error is at most the ranking's total /
 * opts.exes, and an executable whose true value is above that is always
 * listed. dev and inode 0 (cgs_rollup_totals.exe_none counts them): the
 * records named none (kernel threads, kernels before v12). Turning a
 * (dev, inode) into a path is the caller's (the library keeps no path).
 */
struct cgs_exe {
	size_t sz;      /* bytes of this struct that exist */
	uint64_t dev;   /* ac_exe_dev: the kernel's huge_encode_dev() of the
			 * file system's device; 0 for (other) */
	uint64_t inode; /* ac_exe_inode; 0 for (other) */
	bool other;     /* the last entry: every executable not listed before
			 * it, folded */
	/* us of CPU, process exits or crashes counted for the executable: a
	 * lower bound of its true value. For (other): the ranking's total
	 * minus the listed executables' upper bounds (value + error) */
	uint64_t value;
	/* the true value is at most value + error (for (other): the sum of
	 * the listed errors) */
	uint64_t error;
	/* (other) only: no executable folded into it has more than this (0
	 * when the summary never had to push one out) */
	uint64_t max_each;
};

/**
 * cgs_snapshot_exe_count() - Entries of an executables' ranking of one
 *	cgroup.
 * @s: The snapshot.
 * @i: Index of the cgroup.
 * @by: The ranking.
 *
 * At most cgs_snapshot_opts.exes executables (all the summary holds with
 * 0), largest value first (ties in a fixed order), then (other) when anything
 * is not listed. Since 1.4.
 *
 * Return: The number of entries; 0 when executables are off, for a
 * cgroup with nothing counted by @by, or for arguments out of range.
 */
CGS_EXPORT size_t
cgs_snapshot_exe_count(const struct cgs_snapshot *s, size_t i,
		       enum cgs_exe_rank by);

/**
 * cgs_snapshot_get_exe() - One entry of an executables' ranking.
 * @s: The snapshot.
 * @i: Index of the cgroup.
 * @by: The ranking.
 * @j: 0 <= j < cgs_snapshot_exe_count(), largest value first.
 *
 * Since 1.4.
 *
 * Context: As cgs_snapshot_get_cgroup().
 * Return: The entry, owned by @s and valid until cgs_snapshot_free();
 * NULL when out of range.
 */
CGS_EXPORT const struct cgs_exe *
cgs_snapshot_get_exe(const struct cgs_snapshot *s, size_t i,
		     enum cgs_exe_rank by, size_t j);

/**
 * cgs_snapshot_free() - Free a snapshot.
 * @s: The snapshot, or NULL (nothing is done).
 */
CGS_EXPORT void cgs_snapshot_free(struct cgs_snapshot *s);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_SNAPSHOT_H */
