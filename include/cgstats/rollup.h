/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/rollup.h>: the rollup (cgs_rollup_new() ... cgs_rollup_free()):
 * attributes records to cgroups, keeps per-cgroup counters, its
 * collector-level totals, and retires removed cgroups. Its snapshots are
 * in <cgstats/snapshot.h>. Part of <cgstats.h>.
 */
#ifndef CGSTATS_ROLLUP_H
#define CGSTATS_ROLLUP_H

#include "listener.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cgs_rollup;

/* Path used for exits that could not be attributed. */
#define CGS_UNKNOWN_CGROUP "(unknown)"

/* cgs_rollup_opts.flags: CGS_NO_TGID (TGID-kind records are ignored),
 * and */
/* Track forks from the proc connector (kernels before 6.6 require
 * CAP_NET_ADMIN; when the connector cannot be opened the rollup is created
 * without it: see totals.fork_tracking), so that an
 * exit whose process and parent are already reaped is attributed to its
 * nearest live fork ancestor. Costs a socket and 32 bytes per process
 * remembered, min(pid_max, 65536) of them (2 MiB at most); no thread,
 * nothing on the path of known processes. Fork times (the kernel's
 * CLOCK_MONOTONIC) are compared with clock_ms, which must then advance as
 * CLOCK_MONOTONIC does (the default does: it reads CLOCK_MONOTONIC_COARSE,
 * the same clock at tick resolution). The socket is opened whatever
 * proc_root says.
 * Not used when the kernel source is in use (cgs_rollup_attribution()). */
#define CGS_ROLLUP_TRACK_FORKS (1u << 1)
/* Fast attribution (requires CGS_ROLLUP_TRACK_FORKS, ignored without it):
 * the exit record of a process not in the cache that lived less than
 * revalidate_ms takes its fork parent's cgroup, with no /proc read, when
 * the parent is alive and its cache entry
 * was read from /proc after the parent's own fork and less than
 * revalidate_ms ago (totals.via_fork_parent); a parent not cached, or not
 * provably after its fork, or too long ago, is read from /proc once for
 * its next children. A parent known dead or gone, or a fork unknown: the
 * child's /proc as usual.
 * Trade-off: a child that moved itself to another cgroup between fork and
 * exit (systemd services, container runtimes) is attributed to its
 * parent's cgroup. Off by default. */
#define CGS_ROLLUP_FAST_ATTRIBUTION (1u << 2)
/* Distributions: per-cgroup histograms of task lifetime, process lifetime,
 * CPU time and CPU delay per task (cgs_snapshot_get_hist()). O(1) per record
 * with no allocation; costs 6.6 KiB per cgroup and shard (with the
 * per-signal counts, which share its allocation). Off by default. */
#define CGS_ROLLUP_HISTOGRAMS (1u << 3)
/* Since 1.3: keep no delay peaks (cgs_snapshot_get_delay_peaks() then
 * says 0 for every class). Peaks cost a compare per delay class of each
 * task record that carries them (struct taskstats v15+: about 55
 * instructions a record) and about 280 bytes per cgroup and shard
 * with a peak; kept by default. */
#define CGS_ROLLUP_NO_DELAY_PEAKS (1u << 4)

/*
 * Where a record's cgroup comes from (cgs_rollup_opts.attribution).
 *
 * CGS_ATTRIBUTION_KERNEL: the kernel itself, at exit time. A BPF program
 * on the sched_process_exit tracepoint hands each exiting task's cgroup
 * id (cgroup2, or the v1 hierarchy in use) to the library (a ring per CPU, read by the shard that receives that
 * CPU's records, without a syscall),
 * and each record is joined with its own entry, verified by tid, tgid,
 * lifetime, run time, context switches and start second. Exact whatever
 * the launcher did (moved after fork, clone3 into a cgroup, reaped at
 * once, pid reused). Needs Linux >= 5.12 with BTF, CAP_BPF + CAP_PERFMON
 * (or CAP_SYS_ADMIN) when the rollup is created (not afterwards), a
 * library built with libbpf; on a v1 controller's hierarchy the same, on a
 * named v1 hierarchy (name=systemd) Linux >= 6.8. A record whose
 * entry cannot be found (its CPU's ring full: totals.kernel_lost; preempted
 * for over a second between the two points) falls back to /proc, counted in
 * totals.kernel_unmatched. cgs_rollup_new() fails when it cannot load.
 * CGS_ATTRIBUTION_PROC: read /proc/<pid>/cgroup, a cache, the parent, fork
 * ancestry (see CGS_ROLLUP_TRACK_FORKS): a guess after the fact; what is
 * inferred from a parent or ancestor is counted per cgroup (inferred).
 * CGS_ATTRIBUTION_AUTO (0, the default): KERNEL where it loads, else
 * PROC; cgs_rollup_attribution() says which, cgs_rollup_kernel_error()
 * why not.
 */
enum cgs_attribution {
	CGS_ATTRIBUTION_AUTO = 0,
	CGS_ATTRIBUTION_KERNEL = 1,
	CGS_ATTRIBUTION_PROC = 2,
};

struct cgs_rollup_opts {
	size_t sz;             /* sizeof(struct cgs_rollup_opts) */
	/* the kernel source supports 1..64 shards */
	/* concurrent writers (listener shards); 0: the listener's
	 * (opts.listener), else as many as a listener opened with the
	 * defaults has on this host (one per possible CPU up to 16, then
	 * the CPUs split evenly over 16), so that the two defaults agree.
	 * A rollup may have more shards than the listener, never fewer:
	 * records of a shard beyond the rollup's are refused (counted in
	 * totals.refused) */
	unsigned shards;
	const char *hierarchy; /* "v2" or a v1 controller name ("cpu",
				* "memory", ...); NULL: v2 if mounted, else
				* the first v1 controller found */
	const char *proc_root; /* NULL: "/proc" (tests use a fake tree) */
	const char *mountinfo; /* NULL: <proc_root>/self/mountinfo */
	unsigned grace_ms;     /* keep a dead process's entry, and a removed
				* cgroup, this long for late records; 0:
				* 2000 */
	unsigned revalidate_ms; /* re-read a live process's cgroup after this
				 * long, bounding how late a move is seen;
				 * 0: 1000 */
	unsigned flags;        /* CGS_ROLLUP_* */
	/* clock_ms and clock_ctx are kept; clock_ms is called from every
	 * thread that calls into the rollup: it must be thread-safe. The
	 * default reads CLOCK_MONOTONIC_COARSE (CLOCK_MONOTONIC at tick
	 * resolution) */
	uint64_t (*clock_ms)(void *ctx); /* monotonic ms; NULL: the default */
	/* passed to clock_ms */
	void *clock_ctx;
	enum cgs_attribution attribution; /* 0: CGS_ATTRIBUTION_AUTO */
	size_t kernel_ringbuf; /* kernel source: ring bytes per shard, shared
				* out among its CPUs (a power of two of 64-byte
				* entries each); 0: 2 MiB */
	unsigned kernel_wait_ms; /* kernel source: longest wait of a record
				  * for the entry of a task still exiting;
				  * 0: 1000 */
	/* kernel source: cpulist of each shard (shards entries, as
	 * cgs_listener_shard_cpus() gives them), so that a CPU's entries go
	 * to the shard that receives that CPU's records; NULL: the
	 * listener's (opts.listener), else the possible CPUs cut as a
	 * listener with as many shards cuts them. A mismatch costs time
	 * (the record's entry is looked for on the other shards), never a
	 * record. Not kept after cgs_rollup_new(). */
	const char *const *shard_cpus;
	/* when cgs_rollup_new() fails on the attribution source (the
	 * kernel source cannot be had, or an unknown attribution), a
	 * sentence saying why (e.g. what the kernel source is missing) is
	 * written here; other failures leave it untouched; may be NULL;
	 * not kept */
	char *errbuf;
	/* size of errbuf */
	size_t errbuf_len;
	/* top commands per cgroup (cgs_snapshot_get_comm()): counters of each
	 * bounded summary (one by CPU, one by exits) per cgroup and shard,
	 * 1..4096; 0: off. An estimate is off by at most the ranking's total
	 * divided by this (see struct cgs_comm). */
	unsigned comms;
	/* the listener whose records this rollup accounts: shards and
	 * shard_cpus are taken from it (each must then be 0 / NULL or agree
	 * with it); NULL: see shards and shard_cpus. Not kept after
	 * cgs_rollup_new(). */
	const struct cgs_listener *listener;
	/* (1.4) top executables per cgroup (cgs_snapshot_get_exe()), keyed
	 * by the records' (exe_dev, exe_inode): counters of each bounded
	 * summary (by CPU, by exits, by crashes) per cgroup and shard,
	 * 1..4096; 0: off (nothing kept, nothing done per record). The same
	 * summary and error bound as comms (see struct cgs_exe). */
	unsigned exes;
	/* (1.4) executables by (dev, inode) made paths
	 * (cgs_rollup_get_exe()): at most this many held, 1..1048576; 0:
	 * off (nothing loaded, no memory). With the kernel source, a program
	 * on the exec tracepoint learns each executable as it is exec'd (an
	 * LRU map of this many); else, and for what ran before, /proc/PID/exe
	 * of the live processes and the usual bin directories */
	unsigned exe_paths;
};

/**
 * cgs_rollup_new() - Create a rollup.
 * @out: Receives the rollup on success; owned by the caller, freed with
 *	cgs_rollup_free(). Set to NULL first.
 * @o: Options, or NULL for the defaults. Its strings and shard_cpus are
 *	not kept; clock_ms and clock_ctx are.
 *
 * Finds the cgroup hierarchy in mountinfo, sizes the pid tables from
 * <proc_root>/sys/kernel/pid_max (bounded whatever it says: 1 MiB of exit
 * generations at most, 8 KiB with the kernel source), and loads the
 * attribution source (see enum cgs_attribution): with CGS_ATTRIBUTION_AUTO
 * a kernel source that cannot be had is not an error
 * (cgs_rollup_kernel_error() says why).
 * Fork tracking (CGS_ROLLUP_TRACK_FORKS) is best effort.
 *
 * Context: Loading the kernel source needs CAP_BPF and CAP_PERFMON (or
 * CAP_SYS_ADMIN).
 * Return: 0 on success, or a negative errno: -EINVAL for a NULL @out,
 * o->sz too small, unknown flags or attribution; -E2BIG for options this
 * library does not know; -ENOENT when the v1 controller asked for is not
 * mounted (-errno when mountinfo cannot be read for it); -ENOMEM. With
 * CGS_ATTRIBUTION_KERNEL, when the kernel source cannot be had (reason in
 * o->errbuf): -EINVAL for shards beyond 64 or a proc_root other than
 * "/proc"; -EOPNOTSUPP without cgroup2, BTF, or libbpf in this build;
 * -EPERM without the capabilities; another -errno from loading.
 */
CGS_EXPORT int
cgs_rollup_new(struct cgs_rollup **out, const struct cgs_rollup_opts *o);
/**
 * cgs_rollup_free() - Free a rollup.
 * @r: The rollup, or NULL (nothing is done).
 *
 * Unloads the kernel source and closes the fork tracker. Paths handed out
 * by cgs_rollup_add() become invalid; snapshots stay valid (they own
 * their data).
 *
 * Context: No other call on @r may be running.
 */
CGS_EXPORT void cgs_rollup_free(struct cgs_rollup *r);

/**
 * cgs_rollup_hierarchy() - The cgroup hierarchy in use.
 * @r: The rollup.
 *
 * Return: "v2" or the v1 controller name ("cpu", ...), owned by @r and
 * valid until cgs_rollup_free(); NULL for a NULL @r.
 */
CGS_EXPORT const char *cgs_rollup_hierarchy(const struct cgs_rollup *r);

/**
 * cgs_rollup_attribution() - The attribution source in use.
 * @r: The rollup.
 *
 * Return: CGS_ATTRIBUTION_KERNEL or CGS_ATTRIBUTION_PROC (also for a NULL
 * @r); never CGS_ATTRIBUTION_AUTO.
 */
CGS_EXPORT enum cgs_attribution
cgs_rollup_attribution(const struct cgs_rollup *r);

/**
 * cgs_rollup_kernel_error() - Why the kernel source is not in use.
 * @r: The rollup.
 *
 * Return: A sentence naming what is missing, owned by @r and valid until
 * cgs_rollup_free(); NULL when the kernel source is in use, was not asked
 * for (CGS_ATTRIBUTION_PROC), or @r is NULL.
 */
CGS_EXPORT const char *cgs_rollup_kernel_error(const struct cgs_rollup *r);

/* How one record was attributed (struct cgs_add_result). */
enum cgs_source {
	CGS_SOURCE_NONE = 0,     /* not attributed: the unknown bucket, or a
				  * TGID record ignored (CGS_NO_TGID) */
	CGS_SOURCE_KERNEL = 1,   /* the kernel's exit-time cgroup */
	CGS_SOURCE_PROC = 2,     /* the process's own /proc/<pid>/cgroup (now
				  * or cached) */
	CGS_SOURCE_INFERRED = 3, /* inferred from its parent or a fork
				  * ancestor: a guess, counted per cgroup */
	CGS_SOURCE_GIVEN = 4,    /* (1.3) the caller's: cgs_add_opts.path */
};

/**
 * cgs_source_name() - Name of an attribution source.
 * @s: The source.
 *
 * Return: "none", "kernel", "proc", "inferred" or "given", in static
 * storage; NULL when out of range.
 */
CGS_EXPORT const char *cgs_source_name(enum cgs_source s);

/* How cgs_rollup_add() takes one record; NULL: attribute it. */
struct cgs_add_opts {
	size_t sz;        /* sizeof(struct cgs_add_opts) */
	/* the record's cgroup when the caller knows it (e.g. a replayed
	 * capture): absolute ("/a/b") or CGS_UNKNOWN_CGROUP; copied, not
	 * kept. No attribution is done then (no via_* counter, nothing
	 * inferred). NULL: the rollup attributes the record */
	const char *path;
};

/* What cgs_rollup_add() did with one record. */
struct cgs_add_result {
	size_t sz;        /* sizeof(struct cgs_add_result) */
	/* the cgroup path (CGS_UNKNOWN_CGROUP when not attributed; NULL for
	 * a TGID record ignored by CGS_NO_TGID or a refused one), owned by
	 * the rollup and valid until the next call for the same shard (and
	 * no longer than until cgs_rollup_retire_removed(),
	 * cgs_rollup_retire() or cgs_rollup_free()) */
	const char *path;
	/* how it was attributed; CGS_SOURCE_NONE on error or for an ignored
	 * record */
	enum cgs_source source;
};

/**
 * cgs_rollup_add() - Attribute a record to a cgroup and account it.
 * @r: The rollup.
 * @shard: The writer: 0 <= shard < opts.shards (with the kernel source,
 *	the listener shard that received the record).
 * @rec: The record, e.g. cgs_exit.task or .group; a smaller (older)
 *	struct is fine. Not kept.
 * @o: How (a known path), or NULL: attribute it. Not kept.
 * @out: If not NULL, receives the cgroup path and how the record was
 *	attributed; sz set (see <cgstats.h>), on return the bytes written.
 *
 * The one accounting call (since 1.3; it replaces cgs_rollup_account(),
 * cgs_rollup_account_src() and cgs_rollup_account_path(), kept in
 * <cgstats/deprecated.h>); what it can be told grows in @o, what it says
 * back in @out. O(1) in the cgroup depth. A TGID-kind record only counts
 * as tgid_records of its cgroup; with CGS_NO_TGID it is ignored.
 *
 * Context: Concurrent calls must use distinct shards; safe alongside
 * snapshots, totals and retirement from other threads. May block: on
 * /proc reads, and with the kernel source up to kernel_wait_ms for the
 * entry of a task still exiting (not with o->path).
 * Return: 0 (also for an ignored or unattributed record); -EINVAL for a
 * NULL @r or @rec, a shard out of range, rec->sz too small to reach tgid
 * (a smaller sz of an older caller is read as far as it goes, the rest
 * taken as zero), a kind out of range, a relative o->path, o->sz too
 * small or out->sz unable to hold sz; -E2BIG for options this library
 * does not know; with o->path, -ENAMETOOLONG for a path of PATH_MAX bytes
 * or more and -ENOMEM. A record refused is counted in totals.refused.
 */
CGS_EXPORT int cgs_rollup_add(struct cgs_rollup *r, unsigned shard,
			      const struct cgs_record *rec, const struct cgs_add_opts *o,
			      struct cgs_add_result *out);

/**
 * cgs_rollup_account_exit() - Account an exit event: a ready callback.
 * @ev: The event, from a listener (its task and group records, if any,
 *	are accounted under ev->shard).
 * @rollup: The struct cgs_rollup. Made with both objects' defaults, or
 *	for the listener (cgs_rollup_opts.listener), it has a shard for each
 *	of the listener's.
 *
 * The common wiring in one function of the type cgs_exit_fn, e.g.
 *	cgs_listener_open(&l, NULL);
 *	cgs_rollup_new(&r, NULL);
 *	cgs_listener_run(l, cgs_rollup_account_exit, r, NULL);
 * (examples/agent-defaults.c is this agent, compiled and run by the
 * tests). cgs_rollup_add() of each record, as each shard's thread
 * calls it. A record the rollup cannot take (a shard
 * beyond the rollup's, when it was made with fewer shards than the
 * listener has) is not accounted but counted in totals.refused: nothing
 * is lost silently.
 *
 * Context: As cgs_rollup_add(), from the listener's thread for
 * ev->shard.
 * Return: 0 (drain on); a refused record is counted, not returned (the
 * runner ignores the return value).
 */
CGS_EXPORT int cgs_rollup_account_exit(const struct cgs_exit *ev, void *rollup);

/* Collector-level attribution counters. */
struct cgs_rollup_totals {
	size_t sz;                /* sizeof(struct cgs_rollup_totals) */
	uint64_t records;         /* records accounted */
	uint64_t unattributed;    /* records put in the unknown bucket */
	uint64_t via_cache;       /* attributed from the per-process cache */
	uint64_t via_proc;        /* attributed by reading /proc/<tgid> */
	uint64_t via_parent;      /* process gone; attributed via its parent */
	uint64_t proc_reads;      /* /proc reads done */
	uint64_t cache_entries;   /* live cache entries, all shards */
	/* cgroups: distinct ones in a snapshot's totals; from
	 * cgs_rollup_get_totals(), cgroup nodes per shard, summed */
	uint64_t cgroups;         /* cgroups tracked */
	/* CGS_ROLLUP_TRACK_FORKS */
	uint64_t via_ancestor;    /* process and parent gone; attributed via
				   * the nearest fork ancestor still known */
	uint64_t fork_tracking;   /* 1 if forks are tracked, 0 if not asked
				   * or the connector could not be opened */
	uint64_t fork_events;     /* process forks received */
	uint64_t fork_drops;      /* fork events the kernel dropped (exact) */
	/* CGS_ROLLUP_FAST_ATTRIBUTION */
	uint64_t via_fork_parent; /* new process attributed to its live fork
				   * parent's cached cgroup, no /proc read */
	/* the kernel source (CGS_ATTRIBUTION_KERNEL) */
	uint64_t attribution;      /* enum cgs_attribution in use */
	uint64_t via_kernel;       /* records attributed from the kernel's
				    * exit-time cgroup (TGID records too) */
	uint64_t kernel_unmatched; /* records with no verified kernel entry:
				    * attributed by the /proc fallback */
	uint64_t kernel_lost;      /* kernel entries dropped, their ring full
				    * (exact, counted by the BPF program) */
	uint64_t kernel_expired;   /* kernel entries no record claimed (their
				    * record was dropped, see cgs_loss) */
	uint64_t kernel_waits;     /* records that waited for their entry */
	uint64_t kernel_unresolved; /* cgroup ids without a known path */
	uint64_t kernel_ringbuf;   /* ring bytes per shard */
	/* both sources */
	uint64_t inferred;         /* records whose cgroup was inferred from a
				    * parent or fork ancestor (via_parent +
				    * via_ancestor + via_fork_parent) */
	/* exit outcomes and distributions */
	uint64_t oom_source;   /* enum cgs_oom_source: how oom_kills count */
	uint64_t oom_unreadable; /* cgroup OOM counter reads that failed
				  * (CGS_OOM_CGROUP): kills there are missed */
	uint64_t histograms;   /* 1 with CGS_ROLLUP_HISTOGRAMS */
	uint64_t comms;        /* opts.comms: counters per summary, 0: off */
	uint64_t comm_own;     /* task records whose process's command was
				* not known: ranked under their own comm
				* (the /proc source, a thread whose process
				* was gone) */
	/* the kernel source: cgroup ids it holds a path for (live ones, and
	 * those removed in the last minute, at most 8,192 of those kept the
	 * whole minute: their late records) */
	uint64_t kernel_cgroup_ids;
	/* records given to cgs_rollup_add() (or the calls it replaced) or
	 * cgs_rollup_account_exit() that could not be accounted: a shard
	 * beyond the rollup's (a rollup made with fewer shards than its
	 * listener), a record that is not one (kind out of range, sz too
	 * small), a path that is not absolute. Counted, never silent. */
	uint64_t refused;
	/* a snapshot's totals only (0 from cgs_rollup_get_totals()): which
	 * snapshot of its rollup this is, 1, 2, ... in the order they were
	 * made; what cgs_retire_opts.served takes */
	uint64_t snapshot_gen;
	/* (1.3) the kernel source: why each record of kernel_unmatched had
	 * no kernel answer, one reason a record, so that with the kernel
	 * source records = via_kernel + the sum of these eleven */
	uint64_t kmiss_lost;     /* its entry dropped, its CPU's ring full
				  * (together at most kernel_lost) */
	uint64_t kmiss_expired;  /* its entry expired or pushed out of the
				  * join table before the record was read */
	uint64_t kmiss_mismatch; /* entries of its thread id, none verified */
	uint64_t kmiss_timeout;  /* still exiting when the wait ended */
	uint64_t kmiss_no_entry; /* its task done, no entry and none lost,
				  * after its shard's first match: on a CPU
				  * no shard reads */
	uint64_t kmiss_before_attach; /* the same before its shard's first
				       * match: exited before the program
				       * was attached (start-up) */
	uint64_t kmiss_cgroup_gone; /* entry found; its cgroup removed before
				     * its id's path was learnt (a walk after
				     * the exit did not find it) */
	uint64_t kmiss_cgroup_unwalked; /* entry found; its id unknown and
					 * no walk since the exit (walks are
					 * rate-limited) */
	uint64_t kmiss_cgroup_purged; /* entry found; its removed cgroup's
				       * path dropped already (see
				       * kernel_cgroup_ids) */
	uint64_t kmiss_group;    /* TGID records whose process record had no
				  * kernel answer */
	uint64_t kmiss_other;    /* path too long for the rollup, no memory */
	/* (1.3) the kernel source's own state */
	uint64_t kernel_cg_lost;     /* cgroup mkdir/rmdir events the program
				      * could not queue (their ring full) */
	uint64_t kernel_ring_queued; /* exit entries queued, unread, now */
	uint64_t kernel_ring_peak;   /* most entries one CPU's ring held when
				      * read (its fill level's high mark) */
	uint64_t kernel_ring_slots;  /* entries per CPU ring */
	uint64_t kernel_walks;       /* walks of the cgroup2 mount */
	uint64_t kernel_walk_ms;     /* how long the last walk took */
	/* 1 when the kernel counts BPF run time (sysctl
	 * kernel.bpf_stats_enabled = 1, or BPF_ENABLE_STATS held by some
	 * process): the four below are the programs' run time (ns) and run
	 * count while it was on (bpf_prog_info run_time_ns, run_cnt); 0: not
	 * known, all 0 */
	uint64_t kernel_bpf_stats;
	uint64_t kernel_bpf_exit_ns;     /* the sched_process_exit program */
	uint64_t kernel_bpf_exit_runs;
	uint64_t kernel_bpf_cgroup_ns;   /* the cgroup event programs */
	uint64_t kernel_bpf_cgroup_runs;
	/* (1.3) a snapshot's totals only: 1 when it was taken with no_delta
	 * (its deltas are since the last snapshot that advanced the
	 * baseline, and the next one's will be too) */
	uint64_t no_delta;
	/* (1.4) opts.exes: counters per summary, 0: off */
	uint64_t exes;
	/* (1.4) with opts.exes, task records that name no executable (dev and
	 * inode 0: kernel threads, kernels before struct taskstats v12):
	 * ranked as the executable 0:0 */
	uint64_t exe_none;
};

/* How oom_kills are counted (totals.oom_source). */
enum cgs_oom_source {
	CGS_OOM_NONE = 0,   /* not counted: no kernel source, and the
			     * hierarchy has no memory OOM counter */
	CGS_OOM_KERNEL = 1, /* exact, from the kernel at exit time: a
			     * process exit whose process was an OOM victim
			     * (its signal_struct's oom_mm), attributed with
			     * its exit */
	CGS_OOM_CGROUP = 2, /* from each cgroup's own counter (cgroup2
			     * memory.events.local, v1 memory.oom_control
			     * oom_kill), read at snapshot time for cgroups
			     * with a SIGKILL exit since the previous one
			     * (attributed by cgs_rollup_add(), not given
			     * a path in cgs_add_opts), against a
			     * baseline: the value when the rollup was
			     * created, 0 for a cgroup created since. Kills
			     * in a cgroup removed before the snapshot are
			     * missed (its counter is gone with it) */
};

/**
 * cgs_rollup_get_totals() - Collector-level attribution counters, now.
 * @r: The rollup.
 * @out: Receives the totals; sz set (see <cgstats.h>), on return the bytes
 *	written.
 *
 * Cheaper than a snapshot, but totals.cgroups counts cgroup nodes per
 * shard (a cgroup seen by k shards counts k times; removed incarnations
 * count until retired). Also reads what the fork tracker has queued.
 * Since 1.2; before, cgs_rollup_totals() (kept: <cgstats/deprecated.h>).
 *
 * Context: Safe alongside cgs_rollup_add() and snapshots.
 * Return: 0; -EINVAL for a NULL @r or @out, or out->sz too small to hold
 * sz.
 */
CGS_EXPORT int cgs_rollup_get_totals(struct cgs_rollup *r,
				     struct cgs_rollup_totals *out);

/**
 * cgs_rollup_retire_removed() - Forget cgroups that are gone.
 * @r: The rollup.
 *
 * Nothing else retires: a rollup whose owner never calls this keeps every
 * removed cgroup (its memory grows with cgroup churn). Call it after each
 * snapshot (examples/agent-defaults.c does).
 * Retires cgroups whose directory is gone (or holds a newer incarnation)
 * since at least grace_ms (cgs_rollup_opts; counted from when a snapshot
 * or this call first saw it gone: an exit can reach the rollup after the
 * rmdir), that no cached process points to, and whose counters have been
 * in a snapshot since their last exit. Their totals move into their parent's
 * subtree sums, which continue without a jump. Expired process cache
 * entries are dropped first. Stops early, silently, on ENOMEM.
 *
 * Context: Safe alongside cgs_rollup_add(); serialised with
 * snapshots. stat()s the cgroup directories of shards up to 1,024
 * cgroups; larger ones rely on the snapshots' removal checks. Paths that
 * cgs_rollup_add() handed out for retired cgroups become invalid.
 * Return: How many cgroups were retired (>= 0); -EINVAL for a NULL @r.
 */
CGS_EXPORT int cgs_rollup_retire_removed(struct cgs_rollup *r);

/* What cgs_rollup_retire() keeps for a consumer (e.g. a scraper). */
struct cgs_retire_opts {
	size_t sz;            /* sizeof(struct cgs_retire_opts) */
	/* the last snapshot a consumer got (its totals' snapshot_gen; 0:
	 * none yet, UINT64_MAX: every snapshot counts as consumed): a removed
	 * cgroup whose final counts were in it or an earlier one is retired
	 * as cgs_rollup_retire_removed() does */
	uint64_t served;
	/* one whose final counts the consumer has not had waits for it at
	 * most this long, counted from when its removal was first seen;
	 * then it is retired all the same (counted in unserved); 0: it does
	 * not wait */
	uint64_t wait_ms;
	/* at most this many wait at once: beyond, those removed longest ago
	 * are retired first (counted in unserved and forced); 0: no bound */
	uint64_t max_waiting;
};

/* What one cgs_rollup_retire() call did; a cgroup seen by several
 * shards counts once. */
struct cgs_retire_result {
	size_t sz;          /* sizeof(struct cgs_retire_result) */
	uint64_t retired;   /* removed cgroups retired */
	uint64_t unserved;  /* of those, with final counts no consumer had
			     * (waited wait_ms, or forced) */
	uint64_t forced;    /* of those, retired before wait_ms because
			     * more than max_waiting waited */
	uint64_t waiting;   /* removed cgroups left waiting for a consumer
			     * (at most max_waiting) */
};

/**
 * cgs_rollup_retire() - Forget cgroups that are gone, a consumer or not.
 * @r: The rollup.
 * @o: What to keep for a consumer, or NULL: every snapshot counts as
 *	consumed (as cgs_rollup_retire_removed()). Not kept.
 * @out: If not NULL, receives what was done; sz set (see <cgstats.h>), on
 *	return the bytes written.
 *
 * Retires what cgs_rollup_retire_removed() would (gone for grace_ms, no
 * cached process pointing to it, counters in a snapshot since the last
 * exit) among the removed cgroups whose final counts (the snapshot that
 * first showed them, judged over all shards) the consumer had
 * (o->served); those it has not had wait up to o->wait_ms since their
 * removal was first seen, and at most o->max_waiting of them at once
 * (the longest removed go first), then are retired all the same and
 * counted in out->unserved. So memory stays bounded whatever the
 * consumer does. A snapshot's cost per removed cgroup: no allocation
 * but a temporary array of the candidates.
 *
 * Context: As cgs_rollup_retire_removed().
 * Return: 0; -EINVAL for a NULL @r, o->sz too small or out->sz unable to
 * hold sz; -E2BIG for options this library does not know; -ENOMEM when
 * the candidates' array cannot be had (nothing retired then; a retirement
 * that cannot allocate its parent stops early, silently, as in
 * cgs_rollup_retire_removed()).
 */
CGS_EXPORT int
cgs_rollup_retire(struct cgs_rollup *r, const struct cgs_retire_opts *o,
		  struct cgs_retire_result *out);


struct cgs_identity_src; /* <cgstats/identity.h> */

/**
 * cgs_rollup_set_identity() - Name cgroups when they appear.
 * @r: A rollup; its kernel source (CGS_ATTRIBUTION_KERNEL) sees every
 *	cgroup2 mkdir and rmdir.
 * @src: The resolver (borrowed: it must outlive @r, or be detached first
 *	with a NULL @src); NULL detaches.
 *
 * Starts @src's resolver thread (once; it runs with the caller's
 * credentials and capabilities, so call it after dropping privileges,
 * with those the sources need: see docs/dashboards.md) and hooks it to
 * @r's cgroup events: a container or pod cgroup is queued at its mkdir
 * (bounded: opts.queue_len, counted when full), looked up within
 * milliseconds, before a short container's runtime state is deleted, and
 * its names cached (cgs_identity_src_peek(), cgs_identity_src_resolve())
 * until keep_ms after its rmdir. No file is read on the record path; the
 * hook costs a queue push per container cgroup event.
 *
 * The container and pod cgroups there at the call (the kernel source's
 * table of them, from its walk at open) are queued too (since 1.3;
 * counted in existing, at most max_cached), after the events; calling it
 * again with the same @src (e.g. on SIGHUP) queues those not named yet
 * again. A look-up that named nothing is made again 50 ms, 250 ms and 1 s
 * later (retried) while the cgroup lives. Until its look-up has answered,
 * cgs_identity_src_peek() says -EAGAIN for the cgroup. A container's
 * names name its pod's own cgroup too (pods_named), without the kubelet's
 * log folders.
 *
 * A cgroup whose event was lost (the kernel source's cgroup ring full),
 * or that was queued behind a full queue, is named at its first snapshot
 * (cgs_workloads_update()), if its runtime state is still there; one that
 * came and went before its look-up is unknown, counted in gone_before or
 * queue_full.
 *
 * Context: Any thread; not concurrently with cgs_rollup_free(@r).
 * Return: 0; -CGS_ERR_NO_KSRC when @r has no kernel source (the cgroups
 *	there now are still looked up, from a walk of the mount, and new
 *	ones are named at their first snapshot), -EINVAL for a NULL @r,
 *	-errno when the thread cannot be made.
 */
CGS_EXPORT int cgs_rollup_set_identity(struct cgs_rollup *r,
				       struct cgs_identity_src *src);

/* What cgs_rollup_get_exe() says about a path (flags). */
#define CGS_EXE_DELETED (1u << 0)   /* the file is gone: its path names
				     * nothing now, or it had no link left
				     * at exec or at a scan */
#define CGS_EXE_REPLACED (1u << 1)  /* its path names another file now (an
				     * upgrade in place: a new file renamed
				     * over it) */
#define CGS_EXE_TRUNCATED (1u << 2) /* only the path's last names (a path
				     * deeper than 48 names or longer than
				     * 1 KiB): it starts with ".../" */
#define CGS_EXE_EXEC (1u << 3)      /* learned at exec by the kernel source
				     * (else from /proc or a bin directory) */
#define CGS_EXE_FOREIGN (1u << 4)   /* exec'd in another mount namespace (a
				     * container): the path is as that one
				     * names it, not checked for REPLACED */

/* Executables' counters (cgs_rollup_get_exe_counts()). */
struct cgs_exe_counts {
	size_t sz;         /* sizeof(struct cgs_exe_counts) */
	uint64_t known;    /* look-ups answered */
	uint64_t unknown;  /* look-ups not answered (-ENOENT) */
	uint64_t deleted;  /* answered with CGS_EXE_DELETED */
	uint64_t replaced; /* answered with CGS_EXE_REPLACED */
	uint64_t exec;     /* answered from the kernel's exec source */
	uint64_t entries;  /* executables held now */
	uint64_t evicted;  /* executables dropped to make room */
	uint64_t bytes;    /* user-space memory held (map, paths) */
	uint64_t lost;     /* executables the kernel could not send (its
			    * ring full; the next exec sends them) */
	uint64_t scans;    /* /proc scans */
	uint64_t exec_on;  /* 1: the kernel's exec source runs (else /proc
			    * and the bin directories only) */
};

/**
 * cgs_rollup_get_exe() - The path of an exit record's executable.
 * @buf: Receives the path, NUL-terminated, cut to @len - 1 bytes.
 * @len: Size of @buf (PATH_MAX is enough but for CGS_EXE_TRUNCATED ones).
 * @flags: If not NULL, receives CGS_EXE_* flags.
 * @r: The rollup, made with opts.exe_paths.
 * @dev: The record's exe_dev (ac_exe_dev, as stat(2)'s st_dev).
 * @inode: The record's exe_inode.
 *
 * Answers from what was learnt off the per-record path (see
 * cgs_rollup_opts.exe_paths): the kernel's exec-time paths, then
 * /proc/PID/exe and the bin directories; never reads a file for the
 * path. Deleted or replaced is checked by a stat(2) of the path at most
 * once a second per executable, cached. A script's exits name its
 * interpreter (the kernel records the file that runs).
 *
 * Context: Any thread, alongside cgs_rollup_add() and snapshots.
 * Return: the path's length (>= @len: cut), -ENOENT when not known
 * (counted), -EOPNOTSUPP when @r was made without exe_paths, -EINVAL for a
 * NULL @r or @buf or a zero @len.
 */
CGS_EXPORT int cgs_rollup_get_exe(char *buf, size_t len, unsigned *flags,
				  const struct cgs_rollup *r, uint64_t dev,
				  uint64_t inode);

/**
 * cgs_rollup_scan_exe() - Learn the executables of the live processes.
 * @r: The rollup, made with opts.exe_paths.
 *
 * Reads /proc/PID/exe of every process (those the caller may read), and
 * what the kernel's exec source sent. cgs_rollup_new() does it once; call
 * it now and then off the record path (the collector does after each
 * snapshot): without the kernel source it is how new executables are
 * learnt.
 *
 * Context: Any thread.
 * Return: the processes read, -EOPNOTSUPP without exe_paths, -EINVAL for
 * a NULL @r.
 */
CGS_EXPORT int cgs_rollup_scan_exe(const struct cgs_rollup *r);

/**
 * cgs_rollup_get_exe_counts() - The executables' counters.
 * @out: Receives them; sz set (see <cgstats.h>), on return the bytes
 *	written.
 * @r: The rollup, made with opts.exe_paths.
 *
 * Return: 0, -EOPNOTSUPP without exe_paths, -EINVAL for a NULL @r or @out
 * or out->sz too small to hold sz.
 */
CGS_EXPORT int cgs_rollup_get_exe_counts(struct cgs_exe_counts *out,
					 const struct cgs_rollup *r);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_ROLLUP_H */
