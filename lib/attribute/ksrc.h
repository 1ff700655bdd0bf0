/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel attribution source: a BPF program on sched_process_exit
 * (exitcg.bpf.c) hands each exiting task's cgroup id (cgroup2, or the v1
 * hierarchy in use: cgid_v1.h) to user space
 * through a ring per CPU, read by the listener shard that owns the CPU;
 * each record is joined with its own entry (kjoin.h) and the id mapped to
 * a path (cgid.h).
 *
 * Hot path per record: reading the shard's rings (mmapped memory, no
 * syscall), a hash probe, a verified claim. The entry is written microseconds after
 * taskstats queued the record (longer when the exiting task is preempted in
 * between, as on a loaded host), so a record read before its entry waits
 * for it while the task is still exiting (not yet a zombie or gone: the
 * tracepoint runs before that), up to wait_ms (default CGSI_KSRC_WAIT_MS),
 * polling every ~50 us. A task that is done, its entry lost (a full ring),
 * costs one /proc/<tid>/stat read and no wait. A record without a
 * verified entry returns "not found" and the caller falls back, counted.
 *
 * Minimum kernel: 5.12 with BTF (CONFIG_DEBUG_INFO_BTF): BTF tracepoints
 * and mmapable arrays (5.5), bpf_get_current_cgroup_id (4.18), the ring
 * buffer of cgroup events (5.8), fetching atomics (5.12); a v1 controller's
 * hierarchy the same; a named v1 hierarchy 6.8 (bpf_task_get_cgroup1).
 * Privilege:
 * CAP_BPF + CAP_PERFMON (5.8+) or CAP_SYS_ADMIN.
 */
#ifndef CGS_ATTRIBUTE_KSRC_H
#define CGS_ATTRIBUTE_KSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute/kjoin.h"
#include "attribute/mounts.h"
#include "cgstats.h"

#define CGSI_KSRC_WAIT_MS 1000u
#define CGSI_KSRC_RING_BYTES (2u << 20)

struct cgsi_ksrc;

/* Why a record has no kernel answer: one reason a record (the lookup's
 * in cgsi_kinfo.miss, the id's path's and the group record's in attr.c),
 * so that records = via_kernel + the sum over reasons. */
enum cgsi_kmiss {
	CGSI_KMISS_NONE = 0,
	CGSI_KMISS_LOST,       /* its entry dropped, its CPU's ring full */
	CGSI_KMISS_EXPIRED,    /* its entry expired or was evicted before
				* the record was read (read too late) */
	CGSI_KMISS_MISMATCH,   /* entries of its tid, none verified */
	CGSI_KMISS_TIMEOUT,    /* still exiting when the wait ended */
	CGSI_KMISS_NO_ENTRY,   /* done, no entry and none lost, after the
				* start: on a CPU no shard reads */
	CGSI_KMISS_BEFORE_ATTACH, /* the same before the shard's first
				   * match: exited before the program was
				   * attached (queued since registering) */
	CGSI_KMISS_CG_GONE,    /* its cgroup removed before its id was
				* learnt (not found by a walk after the
				* exit, its mkdir event lost or none) */
	CGSI_KMISS_CG_UNWALKED, /* its cgroup id unknown, no walk since the
				 * exit (walks are rate-limited) */
	CGSI_KMISS_CG_PURGED,  /* its cgroup's path dropped already
				* (removed too long before the record) */
	CGSI_KMISS_GROUP,      /* a TGID record whose process record had
				* no kernel answer */
	CGSI_KMISS_OTHER,      /* path too long, no memory */
	CGSI_KMISS_N
};

struct cgsi_ksrc_stats {
	uint64_t matched;       /* records joined with their kernel entry */
	uint64_t lost;          /* entries the kernel could not queue (its
				 * CPU's ring full): exact, counted by the
				 * program */
	uint64_t expired;       /* entries no record claimed */
	uint64_t evicted;       /* entries pushed out of a full join table */
	uint64_t waits;         /* records that waited for their entry */
	uint64_t unresolved;    /* ids without a known path */
	uint64_t cg_lost;       /* cgroup events lost (ring full) */
	uint64_t ring_bytes;    /* ring bytes per shard (all its CPUs) */
	uint64_t ring_queued;   /* entries in the rings now, unread */
	uint64_t ring_peak;     /* most entries one CPU's ring held when
				 * read */
	uint64_t ring_slots;    /* entries per CPU ring */
	uint64_t walks;         /* walks of the cgroup2 mount */
	uint64_t walk_ms_last;  /* how long the last one took */
	/* kernel.bpf_stats_enabled = 1: the programs' run time and count
	 * (else bpf_stats 0 and these 0) */
	uint64_t bpf_stats;
	uint64_t bpf_exit_ns, bpf_exit_cnt; /* sched_process_exit */
	uint64_t bpf_cg_ns, bpf_cg_cnt;     /* the cgroup event programs */
	uint64_t bpf_exec_ns, bpf_exec_cnt; /* sched_process_exec (exe_max) */
	uint64_t exe_lost;      /* new executables not sent: ring full */
};

/*
 * Load and attach the program. shard_cpus[i] is the cpulist of listener
 * shard i (NULL: CPU c goes to shard c % nshards). wait_ms 0: default;
 * ring_bytes 0: CGSI_KSRC_RING_BYTES.
 * ring_bytes is shared out among a shard's CPUs (a power of two of
 * 64-byte entries per CPU, at least 64). want_comm: entries carry
 * their process's command (16 more bytes per slot). On failure returns -errno and a
 * sentence in err (what is missing).
 */
int cgsi_ksrc_open(struct cgsi_ksrc **out, const struct cgsi_cg_mount *m,
		   unsigned nshards, const char *const *shard_cpus,
		   size_t ring_bytes, unsigned wait_ms, bool want_comm,
		   unsigned exe_max, char *err, size_t errlen);
void cgsi_ksrc_close(struct cgsi_ksrc *k);

/*
 * Executables seen at exec (exe_max > 0 at open: the program on
 * sched_process_exec, an LRU map of exe_max executables): fn(ctx, dev,
 * ino, flags, path) for each one sent since the last drain, path as the
 * exec'ing task's mount namespace names it (CGSK_EXE_F_TRUNC: its last
 * names only, led by ".../"). Returns the number read, -EOPNOTSUPP when
 * the program is not loaded. Thread-safe (one drain at a time).
 */
typedef void cgsi_ksrc_exe_fn(void *ctx, uint64_t dev, uint64_t ino,
			      unsigned flags, const char *path);
int cgsi_ksrc_exe_drain(struct cgsi_ksrc *k, cgsi_ksrc_exe_fn *fn, void *ctx);
/* New executables the program could not send (its ring full), or
 * -EOPNOTSUPP when it is not loaded. */
int64_t cgsi_ksrc_exe_lost(struct cgsi_ksrc *k);

/*
 * The cgroup id (in the hierarchy in use) the task of `rec` (thread or
 * process kind) exited in, whether its process was an OOM victim, and
 * (want_comm) its process's command. Returns true and fills *ki on a
 * verified match. Only the writer of `shard` calls this for that shard.
 */
bool cgsi_ksrc_lookup(struct cgsi_ksrc *k, unsigned shard,
		      const struct cgs_record *rec, struct cgsi_kinfo *ki);

/* Path of a cgroup id that a task had at exit_ns (CLOCK_MONOTONIC) into
 * buf; returns its length, or when the id is unknown: -ESTALE (its entry
 * was dropped: removed long ago), -ENOENT (not found by a walk that
 * started after exit_ns: removed before it was learnt; no walk is made
 * for it again), -EAGAIN (no walk since exit_ns, and none allowed yet:
 * CGSI_CGID_WALK_COST). Thread-safe. */
int cgsi_ksrc_path(struct cgsi_ksrc *k, uint64_t id, uint64_t exit_ns,
		   char *buf, size_t len);

void cgsi_ksrc_stats(struct cgsi_ksrc *k, struct cgsi_ksrc_stats *out);

/*
 * What a snapshot's removal checks may take from the cgroup events
 * (snap_removed.c), as of the events read so far. rmdirs: rmdir events
 * applied to the id table (only grows). missed: events that may have
 * removed a cgroup without marking an id the table holds (the event ring
 * full, an rmdir of an id the table did not hold, an unreadable path;
 * only grows). While missed stays, every cgroup removed since whose id
 * the table holds answers 1 to cgsi_ksrc_removed().
 */
struct cgsi_ksrc_rmstate {
	uint64_t rmdirs, missed;
};

/* Read the cgroup events queued so far (mkdir/rmdir), so that
 * cgsi_ksrc_removed() answers as of now; *rm (if not NULL) as of them.
 * Thread-safe. */
void cgsi_ksrc_sync_ids(struct cgsi_ksrc *k, struct cgsi_ksrc_rmstate *rm);

/* Whether cgroup id `id` is known to be removed (an rmdir event within
 * the last CGSI_CGID_KEEP_MS): 1; 0 when live or unknown. Thread-safe,
 * no syscall. */
int cgsi_ksrc_removed(struct cgsi_ksrc *k, uint64_t id);

/* Entries of the id -> path table (live and recently removed). */
size_t cgsi_ksrc_ids(struct cgsi_ksrc *k);

/*
 * A cgroup event hook (workload identity, issue 24): fn(ctx, type, id,
 * path) for every cgroup2 mkdir (CGSI_KSRC_MKDIR) and rmdir
 * (CGSI_KSRC_RMDIR), called with the id table's lock held, from whichever
 * thread reads the event ring (the reader thread, a snapshot, a lookup's
 * rare read): it must be quick and must not call back into the source
 * (a bounded queue push). While a hook is set, mkdir events wake the
 * reader thread, so that they are seen within milliseconds. NULL fn
 * removes it; on return no call of the old hook is running. Thread-safe.
 */
#define CGSI_KSRC_MKDIR 2
#define CGSI_KSRC_RMDIR 3
/* Setting a hook also calls it with this type for every cgroup the id
 * table holds as live (there before: the start-up walk's, a seed). */
#define CGSI_KSRC_EXISTING 4
typedef void cgsi_ksrc_cg_fn(void *ctx, int type, uint64_t id,
			     const char *path);
void cgsi_ksrc_set_cg_hook(struct cgsi_ksrc *k, cgsi_ksrc_cg_fn *fn,
			   void *ctx);

#endif
