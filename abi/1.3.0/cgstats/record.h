/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/record.h>: one decoded taskstats struct (struct cgs_record),
 * its delay classes and field groups. Part of <cgstats.h>.
 */
#ifndef CGSTATS_RECORD_H
#define CGSTATS_RECORD_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CGS_COMM_LEN 32 /* TS_COMM_LEN */

enum cgs_kind {
	CGS_KIND_THREAD = 1,  /* a thread exited, its process lives on */
	CGS_KIND_PROCESS = 2, /* the last (or only) thread of a process exited */
	CGS_KIND_TGID = 3,    /* per-thread-group aggregate (AGGR_TGID); it
			       * sums what the group's task records already
			       * carried: never add it to them */
};

/* Delay classes, in the order the kernel introduced them. */
enum cgs_delay_class {
	CGS_DELAY_CPU = 0,   /* runnable, waiting for a CPU (v1) */
	CGS_DELAY_BLKIO,     /* synchronous block I/O (v1) */
	CGS_DELAY_SWAPIN,    /* swapping in (v1) */
	CGS_DELAY_FREEPAGES, /* memory reclaim (v7) */
	CGS_DELAY_THRASHING, /* thrashing page cache (v9) */
	CGS_DELAY_COMPACT,   /* memory compaction (v11) */
	CGS_DELAY_WPCOPY,    /* write-protect copy (v13) */
	CGS_DELAY_IRQ,       /* IRQ/softirq (v14) */
	CGS_DELAY__COUNT     /* classes this header knows */
};

/* Capacity of every delay array in the ABI: classes the kernel adds later
 * fill slots CGS_DELAY__COUNT.. without moving any other field. */
#define CGS_DELAY_SLOTS 16

/**
 * cgs_delay_classes() - Number of delay classes the running library knows.
 *
 * Context: Any thread.
 * Return: The library's CGS_DELAY__COUNT: at most CGS_DELAY_SLOTS, and
 * possibly more than the CGS_DELAY__COUNT a program was built with.
 */
CGS_EXPORT unsigned cgs_delay_classes(void);

/**
 * cgs_delay_name() - Name of a delay class.
 * @c: The class, 0 <= c < cgs_delay_classes().
 *
 * Context: Any thread.
 * Return: "cpu", "blkio", "swapin", ... in static storage; NULL for a
 * class the library does not know.
 */
CGS_EXPORT const char *cgs_delay_name(enum cgs_delay_class c);

struct cgs_delay {
	uint64_t count;    /* number of delays recorded */
	uint64_t total_ns; /* sum of delays, ns (wraps silently in kernel) */
	uint64_t max_ns;   /* longest single delay, ns (v15+) */
	uint64_t min_ns;   /* shortest single delay, ns (v15+) */
};

/* Field groups: which of them the kernel's struct version carried. */
#define CGS_HAS_DELAY (1u << 0)     /* v1: cpu/blkio/swapin delays, cpu_run_* */
#define CGS_HAS_BASIC (1u << 1)     /* v2: flag, nice, comm, sched, uid, gid,
				     * pid, ppid, btime, etime, utime, stime,
				     * minflt, majflt */
#define CGS_HAS_XACCT (1u << 2)     /* v2: coremem, virtmem, hiwater_*,
				     * read/write chars and syscalls */
#define CGS_HAS_IO (1u << 3)        /* v3: read/write/cancelled_write bytes */
#define CGS_HAS_CTXSW (1u << 4)     /* v5: nvcsw, nivcsw */
#define CGS_HAS_SCALED (1u << 5)    /* v6: *_scaled */
#define CGS_HAS_FREEPAGES (1u << 6) /* v7 */
#define CGS_HAS_THRASHING (1u << 7) /* v9 */
#define CGS_HAS_BTIME64 (1u << 8)   /* v10 */
#define CGS_HAS_COMPACT (1u << 9)   /* v11 */
#define CGS_HAS_TGID (1u << 10)     /* v12: ac_tgid, tgetime, exe_dev/inode */
#define CGS_HAS_WPCOPY (1u << 11)   /* v13 */
#define CGS_HAS_IRQ (1u << 12)      /* v14 */
#define CGS_HAS_DELAY_MAXMIN (1u << 13) /* v15/v16: delay max/min */
#define CGS_HAS_DELAY_MAX_TS (1u << 14) /* v17: when each max happened */

/* ac_flag bits (linux/acct.h) */
#define CGS_AC_FORK 0x01
#define CGS_AC_SU 0x02
#define CGS_AC_CORE 0x08
#define CGS_AC_XSIG 0x10
#define CGS_AC_AGROUP 0x20

/* cgs_record.layout of a "version 14" payload of 496..559 bytes: the
 * linux-next layout (Dec 2024) with only *_delay_max after each total. */
#define CGS_LAYOUT_V14_MAXONLY 114

/*
 * One decoded taskstats struct, independent of the kernel's version.
 * Fields the sending version did not carry are zero; `fields` says which
 * groups were carried. Units are in the names or comments.
 */
struct cgs_record {
	size_t sz;              /* sizeof(struct cgs_record): see <cgstats.h> */
	/* what exited: thread, process, or the TGID aggregate */
	enum cgs_kind kind;
	uint16_t version;       /* struct version the kernel sent */
	uint16_t layout;        /* layout used to decode (== version unless
				 * guessed, e.g. 15 for a long v14, or
				 * CGS_LAYOUT_V14_MAXONLY) */
	uint32_t payload_len;   /* bytes of the STATS attribute */
	uint32_t unknown_bytes; /* trailing payload bytes not understood */
	uint32_t fields;        /* CGS_HAS_* */

	uint32_t pid;  /* from the message (AGGR_PID's PID), 0 for TGID kind */
	uint32_t tgid; /* ac_tgid, or AGGR_TGID's TGID for the TGID kind */
	/* parent's pid (ac_ppid) */
	uint32_t ppid;
	/* real user and group id (ac_uid, ac_gid) */
	uint32_t uid, gid;
	uint32_t exit_status; /* raw wait status (ac_exitcode) */
	uint8_t flag;         /* CGS_AC_* */
	/* nice value (ac_nice) and scheduling discipline (ac_sched) */
	int8_t nice;
	uint8_t sched;
	char comm[CGS_COMM_LEN + 1]; /* NUL-terminated, may hold any bytes */

	uint64_t btime_s;    /* start, seconds since the epoch (btime64 if
			      * carried, else the 32-bit ac_btime) */
	uint64_t etime_us;   /* elapsed time; for TGID kind a sum of thread
			      * lifetimes */
	/* user and system CPU time, us; the same scaled by CPU frequency */
	uint64_t utime_us, stime_us;
	uint64_t utimescaled_us, stimescaled_us;
	uint64_t tgetime_us; /* thread group elapsed (v12) */

	/* time running on a CPU, ns: real (wall-clock), virtual, scaled */
	uint64_t cpu_run_real_ns, cpu_run_virtual_ns, cpu_scaled_run_real_ns;
	struct cgs_delay delay[CGS_DELAY_SLOTS]; /* by enum cgs_delay_class */

	/* minor and major page faults */
	uint64_t minflt, majflt;
	uint64_t coremem_mbus, virtmem_mbus; /* integrals, MB-usec */
	uint64_t hiwater_rss_kb, hiwater_vm_kb; /* peaks, KiB */
	/* bytes passed to read/write syscalls, and their number */
	uint64_t read_char, write_char, read_syscalls, write_syscalls;
	/* bytes read from and written to storage; writes cancelled by a
	 * truncate before reaching it (bytes) */
	uint64_t read_bytes, write_bytes, cancelled_write_bytes;
	/* voluntary and involuntary context switches */
	uint64_t nvcsw, nivcsw;
	/* device and inode of the executable (v12) */
	uint64_t exe_dev, exe_inode;
	/* From 1.3: when each class's longest delay (delay[c].max_ns)
	 * happened, CLOCK_REALTIME ns since the epoch; 0 when the kernel
	 * did not say (before v17) or the task had no such delay */
	uint64_t delay_max_at_ns[CGS_DELAY_SLOTS];
	/* new fields go here */
};

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_RECORD_H */
