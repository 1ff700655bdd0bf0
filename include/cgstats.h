/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcgstats: loss-free taskstats exit accounting, attributed to cgroups.
 *
 * Conventions (as in libmnl/libbpf):
 *  - every function that can fail returns 0 (or a count) on success and a
 *    negative errno on failure; libnl's NLE_* codes never leak out;
 *  - handles are opaque; the free and close functions accept NULL;
 *  - every struct that crosses the ABI starts with a `sz` member and only
 *    ever grows at its end (new fields are appended, none is reordered or
 *    resized; arrays have a fixed capacity with room to spare):
 *     - a struct the caller fills in (options) or hands to the library to
 *       fill (results): the caller sets sz = sizeof(the struct), best with
 *       CGS_OPTS(); the library reads or writes only the first sz bytes,
 *       and a result's sz says on return how many bytes were written;
 *       options with non-zero bytes beyond what the library knows are
 *       refused (-E2BIG); a result struct with sz == 0 is refused
 *       (-EINVAL); a NULL options pointer means "all defaults";
 *     - a struct the library hands out by pointer: its sz says how much of
 *       it exists; CGS_SZ_HAS() tells whether a field is there, so that a
 *       program built against a newer header runs on an older library;
 *  - results of variable length (lists, distributions) come through
 *    accessor functions, never as fixed arrays in these structs;
 *  - pointers handed in stay owned by the caller unless stated; pointers
 *    handed out are owned by the library object they came from and stay
 *    valid as documented next to each function.
 */
#ifndef CGSTATS_H
#define CGSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memset, for CGS_OPTS() */

#ifdef __cplusplus
extern "C" {
#endif

#define CGS_VERSION_MAJOR 1
#define CGS_VERSION_MINOR 0
#define CGS_VERSION_PATCH 0

/*
 * CGS_OPTS(type, name, fields...) - declare `struct type name`, zeroed
 * (padding included), with .sz = sizeof(struct type) and the given
 * designated initialisers, e.g.
 *	CGS_OPTS(cgs_listener_opts, lo, .cpus = "0-3", .shards = 2);
 *	CGS_OPTS(cgs_record, rec);
 * Works for every sz-prefixed struct, options and results alike.
 */
#define CGS_OPTS(TYPE, NAME, ...)                                            \
	struct TYPE NAME = ({                                                \
		memset(&NAME, 0, sizeof(struct TYPE));                       \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };     \
	})

/*
 * CGS_SZ_HAS(ptr, field) - true when the sz-prefixed struct at ptr is large
 * enough to hold field (it came from a library that knows the field).
 */
#define CGS_SZ_HAS(PTR, FIELD)                                               \
	(offsetof(__typeof__(*(PTR)), FIELD) + sizeof((PTR)->FIELD) <=       \
	 (PTR)->sz)

/* Library version string, e.g. "0.1.0". Static storage. */
const char *cgs_version(void);

/*
 * Errors with a project-specific meaning (returned negated):
 *  CGS_ERR_NO_TASKSTATS  the kernel has no TASKSTATS genetlink family
 *  CGS_ERR_PERM          no CAP_NET_ADMIN in the initial user namespace
 *                        (also returned when running in a child user ns)
 *  CGS_ERR_NETNS         not in the initial network namespace: the kernel
 *                        would accept the registration and never send a
 *                        single event
 *  CGS_ERR_PIDNS         not in the initial pid namespace (the kernel
 *                        refuses to register listeners there)
 *  CGS_ERR_CGROUP2       cgroupstats asked for a cgroup2 directory, which
 *                        the kernel does not support
 * cgs_strerror() explains these and falls back to strerror() otherwise.
 */
#define CGS_ERR_NO_TASKSTATS EPROTONOSUPPORT
#define CGS_ERR_PERM EPERM
#define CGS_ERR_NETNS ENETUNREACH
#define CGS_ERR_PIDNS EXDEV
#define CGS_ERR_CGROUP2 EOPNOTSUPP

/* Message for a (negative or positive) errno value. Static storage. */
const char *cgs_strerror(int err);

/* ------------------------------------------------------------------------
 * Records
 * --------------------------------------------------------------------- */

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

/* Number of delay classes the running library knows (<= CGS_DELAY_SLOTS;
 * may exceed the CGS_DELAY__COUNT a program was built with). */
unsigned cgs_delay_classes(void);

/* Names "cpu", "blkio", ... ; NULL for an out-of-range class. */
const char *cgs_delay_name(enum cgs_delay_class c);

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
	size_t sz;              /* sizeof(struct cgs_record): see top */
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
	uint32_t ppid;
	uint32_t uid, gid;
	uint32_t exit_status; /* raw wait status (ac_exitcode) */
	uint8_t flag;         /* CGS_AC_* */
	int8_t nice;
	uint8_t sched;
	char comm[CGS_COMM_LEN + 1]; /* NUL-terminated, may hold any bytes */

	uint64_t btime_s;    /* start, seconds since the epoch (btime64 if
			      * carried, else the 32-bit ac_btime) */
	uint64_t etime_us;   /* elapsed time; for TGID kind a sum of thread
			      * lifetimes */
	uint64_t utime_us, stime_us;
	uint64_t utimescaled_us, stimescaled_us;
	uint64_t tgetime_us; /* thread group elapsed (v12) */

	uint64_t cpu_run_real_ns, cpu_run_virtual_ns, cpu_scaled_run_real_ns;
	struct cgs_delay delay[CGS_DELAY_SLOTS]; /* by enum cgs_delay_class */

	uint64_t minflt, majflt;
	uint64_t coremem_mbus, virtmem_mbus; /* integrals, MB-usec */
	uint64_t hiwater_rss_kb, hiwater_vm_kb; /* peaks, KiB */
	uint64_t read_char, write_char, read_syscalls, write_syscalls;
	uint64_t read_bytes, write_bytes, cancelled_write_bytes;
	uint64_t nvcsw, nivcsw;
	uint64_t exe_dev, exe_inode;
	/* new fields go here */
};

/* Counters the decoder keeps; a listener keeps one set per shard. */
struct cgs_decode_stats {
	size_t sz;                /* sizeof(struct cgs_decode_stats) */
	uint64_t messages;        /* netlink messages looked at */
	uint64_t records;         /* records produced */
	uint64_t malformed;       /* messages rejected */
	uint64_t unknown_version; /* records newer than the library knows,
				   * decoded by their known prefix */
	uint64_t unknown_bytes;   /* sum of their undecoded trailing bytes */
	uint64_t layout_guesses;  /* records whose layout was inferred (version
				   * 0 or a v14 header on a longer payload) */
	uint64_t tgid_skipped;    /* TGID records ignored (CGS_NO_TGID) */
};

/*
 * CGS_NO_TGID: ignore AGGR_TGID (per-thread-group) records. One switch, the
 * same bit in the flags of cgs_decode_msg(), cgs_listener_opts and
 * cgs_rollup_opts: a listener with it never decodes them, a rollup with it
 * never accounts them.
 */
#define CGS_NO_TGID (1u << 0)

/* cgs_decode_msg() return bits */
#define CGS_DECODED_TASK (1u << 0)  /* *task was filled (thread/process) */
#define CGS_DECODED_GROUP (1u << 1) /* *group was filled (TGID kind) */

/*
 * Decode one generic-netlink message (nlmsghdr included) carrying a
 * TASKSTATS_CMD_NEW. Any alignment of `msg` is fine. On success returns a
 * bitmask: 1 if *task was filled (thread or process kind), 2 if *group was
 * filled (TGID kind); 0 if the only record was skipped (CGS_NO_TGID,
 * with which `group` may be NULL). Returns -EBADMSG for malformed input (and counts it in
 * *st when st is not NULL), -ENOMSG for a message that is not a taskstats
 * record (e.g. an ack). Never reads outside [msg, msg+len).
 */
int cgs_decode_msg(const void *msg, size_t len, unsigned flags,
		   struct cgs_record *task, struct cgs_record *group,
		   struct cgs_decode_stats *st);

/*
 * Decode a bare struct taskstats payload (the STATS attribute's data) of
 * `len` bytes. `kind` is stored in out->kind; out->pid is ac_pid (0 for the
 * TGID kind). Returns 0, or -EBADMSG when the payload is shorter than its
 * version requires (counted in st->malformed).
 */
int cgs_decode_payload(const void *payload, size_t len, enum cgs_kind kind,
		       struct cgs_record *out, struct cgs_decode_stats *st);

/* Size in bytes of struct taskstats version v on x86-64 (0 if unknown). */
size_t cgs_taskstats_size(unsigned version);

/* Newest struct version this library decodes fully. */
#define CGS_TASKSTATS_VERSION_MAX 16

/* ------------------------------------------------------------------------
 * CPU lists
 * --------------------------------------------------------------------- */

/*
 * Validate a cpulist ("0-3,7") against the possible CPUs of this host.
 * Returns the number of CPUs listed, or -EINVAL/-ERANGE with a one-line
 * explanation in errbuf (may be NULL).
 */
int cgs_cpulist_validate(const char *list, char *errbuf, size_t errlen);

/* Number of possible CPUs (from /sys/devices/system/cpu/possible). */
int cgs_possible_cpus(void);

/* ------------------------------------------------------------------------
 * Exit listener
 * --------------------------------------------------------------------- */

struct cgs_listener;

enum cgs_log_level { CGS_LOG_ERR = 3, CGS_LOG_WARNING = 4, CGS_LOG_INFO = 6,
		     CGS_LOG_DEBUG = 7 };
typedef void (*cgs_log_fn)(enum cgs_log_level level, const char *msg,
			   void *ctx);

/* cgs_listener_opts.flags: CGS_NO_TGID, and */
#define CGS_LISTEN_NO_NS_CHECK (1u << 1) /* skip the namespace checks */

struct cgs_listener_opts {
	size_t sz;          /* sizeof(struct cgs_listener_opts) */
	const char *cpus;   /* cpulist to listen on; NULL: all possible CPUs */
	unsigned shards;    /* sockets; 0: one per CPU up to 16, then
			     * CPUs split evenly over 16; capped at the number
			     * of CPUs listened on */
	size_t rcvbuf;      /* receive buffer per shard, bytes; 0: 16 MiB */
	unsigned flags;     /* CGS_LISTEN_* */
	cgs_log_fn log;     /* warnings; NULL: written to stderr */
	void *log_ctx;
};

/*
 * Resolve the family, check namespaces and privileges, and register one
 * socket per shard for its CPU subset. Returns 0 and *out, or a negative
 * errno (see CGS_ERR_*; -EINVAL for a bad cpulist). The listener owns its
 * sockets and deregisters every mask before closing them.
 */
int cgs_listener_open(struct cgs_listener **out,
		      const struct cgs_listener_opts *opts);

/* Stop the runner if running, deregister, close. NULL is fine. */
void cgs_listener_close(struct cgs_listener *l);

unsigned cgs_listener_shards(const struct cgs_listener *l);
/* Socket of a shard, for the caller's own poll/epoll loop; owned by l. */
int cgs_listener_shard_fd(const struct cgs_listener *l, unsigned shard);
/* cpulist of a shard; owned by l. */
const char *cgs_listener_shard_cpus(const struct cgs_listener *l,
				    unsigned shard);
/* Receive buffer the kernel granted a shard, bytes (as getsockopt says). */
size_t cgs_listener_shard_rcvbuf(const struct cgs_listener *l,
				 unsigned shard);

/*
 * One exit event: the records of one netlink message. `task` is the thread
 * or process record (NULL only for a malformed-but-partial message, never
 * in practice); `group` the TGID aggregate, if the kernel sent one and it
 * was not disabled. `raw` is the message as received. All pointers are
 * valid only during the callback.
 */
struct cgs_exit {
	size_t sz; /* sizeof(struct cgs_exit) of the library */
	const struct cgs_record *task;
	const struct cgs_record *group;
	const void *raw;
	size_t raw_len;
	unsigned shard;
	uint64_t recv_ns; /* CLOCK_REALTIME when the batch was received */
};

/* Return 0 to go on, non-zero to make cgs_listener_drain() return after the
 * current batch (the runner ignores it)
 * (events already received are still delivered; nothing is dropped). */
typedef int (*cgs_exit_fn)(const struct cgs_exit *ev, void *user);

/*
 * Receive and decode everything queued on one shard without blocking.
 * Calls fn per exit event from the calling thread. Returns the number of
 * events delivered (0 when nothing was queued), or a negative errno. Not
 * safe to call concurrently for the same shard; different shards may be
 * drained from different threads at once.
 */
int cgs_listener_drain(struct cgs_listener *l, unsigned shard, cgs_exit_fn fn,
		       void *user);

struct cgs_run_opts {
	size_t sz;            /* sizeof(struct cgs_run_opts) */
	unsigned batch_ms;    /* after draining, wait this long before the
			       * next wake-up (fewer wake-ups, bigger batches);
			       * 0: wake per message; default 20 when opts NULL */
	bool pin;             /* pin each shard thread to its CPUs */
};

/*
 * Start one receive thread per shard, each calling fn for its own shard's
 * events (so a consumer can keep per-shard state without locks).
 */
int cgs_listener_run(struct cgs_listener *l, cgs_exit_fn fn, void *user,
		     const struct cgs_run_opts *opts);

/* Drain what is queued one last time, stop and join the threads. */
int cgs_listener_stop(struct cgs_listener *l);

struct cgs_loss {
	size_t sz;         /* sizeof(struct cgs_loss) */
	uint64_t dropped;  /* events the kernel dropped (socket drop counter
			    * since open); exact */
	uint64_t enobufs;  /* overrun episodes reported with ENOBUFS */
	uint64_t seq_gaps; /* events missing by sequence number (only for
			    * shards listening on a single CPU) */
	uint64_t truncated; /* messages larger than the receive slot */
	/* the decoder's counters (struct cgs_decode_stats), flat so that
	 * both can grow */
	uint64_t messages, records, malformed, unknown_version, unknown_bytes,
		layout_guesses, tgid_skipped;
};

/*
 * Loss and decode counters of one shard, or summed over all shards when
 * shard == CGS_ALL_SHARDS. Safe to call while the runner is active.
 */
#define CGS_ALL_SHARDS (~0u)
int cgs_listener_loss(struct cgs_listener *l, unsigned shard,
		      struct cgs_loss *out);

/*
 * Prove the whole path: fork a child that exits at once and wait up to
 * timeout_ms for its exit record on any shard. Must be called before
 * cgs_listener_run (it drains the shards itself; other events seen meanwhile
 * are passed to fn, which may be NULL). Returns 0, or -ETIMEDOUT when the
 * record never came (e.g. a foreign network namespace).
 */
int cgs_listener_selftest(struct cgs_listener *l, int timeout_ms,
			  cgs_exit_fn fn, void *user);

/* ------------------------------------------------------------------------
 * Queries of live tasks
 * --------------------------------------------------------------------- */

struct cgs_query;

struct cgs_query_opts {
	size_t sz;           /* sizeof(struct cgs_query_opts) */
	unsigned timeout_ms; /* longest wait for the kernel's answer to one
			      * request; 0: 2000 */
};

int cgs_query_open(struct cgs_query **out, const struct cgs_query_opts *opts);
void cgs_query_close(struct cgs_query *q);

/* Stats of a live thread (kind THREAD) or thread group (kind TGID).
 * -ESRCH when it does not exist. */
int cgs_query_pid(struct cgs_query *q, uint32_t pid, struct cgs_record *out);
int cgs_query_tgid(struct cgs_query *q, uint32_t tgid,
		   struct cgs_record *out);

struct cgs_cgroupstats {
	size_t sz; /* sizeof(struct cgs_cgroupstats) */
	uint64_t nr_sleeping, nr_running, nr_stopped, nr_uninterruptible,
		nr_io_wait;
};

/* Task state counts of a cgroup v1 directory. -CGS_ERR_CGROUP2 for a
 * cgroup2 directory, -ENOENT/-ENOTDIR for a bad path. */
int cgs_query_cgroupstats(struct cgs_query *q, const char *cgroup_dir,
			  struct cgs_cgroupstats *out);

/* ------------------------------------------------------------------------
 * Rollup: attribution of exits to cgroups, per-cgroup totals
 * --------------------------------------------------------------------- */

struct cgs_rollup;

/* Path used for exits that could not be attributed. */
#define CGS_UNKNOWN_CGROUP "(unknown)"

/* cgs_rollup_opts.flags: CGS_NO_TGID (TGID-kind records are ignored),
 * and */
/* Track forks from the proc connector (kernels before 6.6 require
 * CAP_NET_ADMIN; when the connector cannot be opened the rollup is created
 * without it: see totals.fork_tracking), so that an
 * exit whose process and parent are already reaped is attributed to its
 * nearest live fork ancestor. Costs a socket and 12 bytes per possible
 * pid; no thread, nothing on the path of known processes. Fork times are
 * compared with clock_ms, which must then be CLOCK_MONOTONIC based (the
 * default). The socket is opened whatever proc_root says. */
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

/*
 * Where a record's cgroup comes from (cgs_rollup_opts.attribution).
 *
 * CGS_ATTRIBUTION_KERNEL: the kernel itself, at exit time. A BPF program
 * on the sched_process_exit tracepoint hands each exiting task's cgroup2
 * id to the library (a ring per CPU, read by the shard that receives that
 * CPU's records, without a syscall),
 * and each record is joined with its own entry, verified by tid, tgid,
 * lifetime, run time, context switches and start second. Exact whatever
 * the launcher did (moved after fork, clone3 into a cgroup, reaped at
 * once, pid reused). Needs Linux >= 5.12 with BTF, CAP_BPF + CAP_PERFMON
 * (or CAP_SYS_ADMIN) when the rollup is created (not afterwards), a
 * library built with libbpf, and the cgroup2 hierarchy. A record whose
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
	unsigned shards;       /* concurrent writers (listener shards); 0: 1 */
	const char *hierarchy; /* "v2" or a v1 controller name ("cpu",
				* "memory", ...); NULL: v2 if mounted, else
				* the first v1 controller found */
	const char *proc_root; /* NULL: "/proc" (tests use a fake tree) */
	const char *mountinfo; /* NULL: <proc_root>/self/mountinfo */
	unsigned grace_ms;     /* keep a dead process's entry this long for
				* late records from other shards; 0: 2000 */
	unsigned revalidate_ms; /* re-read a live process's cgroup after this
				 * long, bounding how late a move is seen;
				 * 0: 1000 */
	unsigned flags;        /* CGS_ROLLUP_* */
	uint64_t (*clock_ms)(void *ctx); /* monotonic ms; NULL: CLOCK_MONOTONIC */
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
	 * to the shard that receives that CPU's records; NULL: CPU c to
	 * shard c % shards. Not kept after cgs_rollup_new(). */
	const char *const *shard_cpus;
	/* when cgs_rollup_new() fails, a sentence saying why (e.g. what the
	 * kernel source is missing) is written here; may be NULL */
	char *errbuf;
	size_t errbuf_len;
};

int cgs_rollup_new(struct cgs_rollup **out, const struct cgs_rollup_opts *o);
void cgs_rollup_free(struct cgs_rollup *r);

/* The hierarchy in use ("v2", "cpu", ...); owned by r. */
const char *cgs_rollup_hierarchy(const struct cgs_rollup *r);

/* The attribution source in use: CGS_ATTRIBUTION_KERNEL or _PROC. */
enum cgs_attribution cgs_rollup_attribution(const struct cgs_rollup *r);

/* Why the kernel source is not in use (a sentence naming what is missing),
 * or NULL when it is, or was not asked for. Owned by r. */
const char *cgs_rollup_kernel_error(const struct cgs_rollup *r);

/*
 * Attribute a record to a cgroup and account it, on behalf of one shard
 * (0 <= shard < opts.shards); concurrent calls must use distinct shards.
 * If path_out is not NULL it receives the cgroup path (owned by r, valid
 * until the next call for the same shard). O(1) in the cgroup depth.
 */
int cgs_rollup_account(struct cgs_rollup *r, unsigned shard,
		       const struct cgs_record *rec, const char **path_out);

/* How one record was attributed (cgs_rollup_account_src). */
enum cgs_source {
	CGS_SOURCE_NONE = 0,     /* not attributed: the unknown bucket, or a
				  * TGID record ignored (CGS_NO_TGID) */
	CGS_SOURCE_KERNEL = 1,   /* the kernel's exit-time cgroup */
	CGS_SOURCE_PROC = 2,     /* the process's own /proc/<pid>/cgroup (now
				  * or cached) */
	CGS_SOURCE_INFERRED = 3, /* inferred from its parent or a fork
				  * ancestor: a guess, counted per cgroup */
};

/* "none", "kernel", "proc", "inferred"; NULL when out of range. */
const char *cgs_source_name(enum cgs_source s);

/*
 * cgs_rollup_account(), also telling how the record was attributed:
 * *src_out (may be NULL) receives its enum cgs_source.
 */
int cgs_rollup_account_src(struct cgs_rollup *r, unsigned shard,
			   const struct cgs_record *rec, const char **path_out,
			   enum cgs_source *src_out);

/* Account a record to a known path (e.g. replayed captures). */
int cgs_rollup_account_path(struct cgs_rollup *r, unsigned shard,
			    const struct cgs_record *rec, const char *path);

/* Per-cgroup counters. Sums unless noted. */
struct cgs_delay_sum {
	uint64_t count;    /* delays recorded */
	uint64_t total_ns; /* their sum, ns */
};

struct cgs_counters {
	size_t sz;             /* bytes of this struct the library filled */
	uint64_t tasks;        /* task exit records (thread + process kinds) */
	uint64_t processes;    /* process exits (AGROUP) */
	uint64_t tgid_records; /* TGID aggregates seen (not added to sums) */
	uint64_t utime_us, stime_us;
	uint64_t cpu_run_real_ns, cpu_run_virtual_ns;
	struct cgs_delay_sum delay[CGS_DELAY_SLOTS]; /* by cgs_delay_class */
	uint64_t minflt, majflt;
	uint64_t read_char, write_char, read_syscalls, write_syscalls;
	uint64_t read_bytes, write_bytes, cancelled_write_bytes;
	uint64_t nvcsw, nivcsw;
	uint64_t coremem_mbus, virtmem_mbus;
	uint64_t hiwater_rss_kb_max, hiwater_vm_kb_max; /* peaks, not sums */
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
};

struct cgs_snapshot;

struct cgs_snapshot_opts {
	size_t sz;           /* sizeof(struct cgs_snapshot_opts) */
	unsigned fold_depth; /* fold cgroups deeper than this into their
			      * ancestor at this depth; 0: no folding */
	bool no_delta;       /* don't advance the delta baseline */
};

/*
 * Consistent snapshot of every cgroup, in path order, with subtree sums.
 * The caller owns *out (cgs_snapshot_free). Takes each shard's lock once.
 */
int cgs_rollup_snapshot(struct cgs_rollup *r, const struct cgs_snapshot_opts *o,
			struct cgs_snapshot **out);
size_t cgs_snapshot_count(const struct cgs_snapshot *s);
/* i-th cgroup in path order; owned by s. */
const struct cgs_cgroup_stats *cgs_snapshot_get(const struct cgs_snapshot *s,
						size_t i);
/* Totals at snapshot time. */
const struct cgs_rollup_totals *cgs_snapshot_totals(
	const struct cgs_snapshot *s);
void cgs_snapshot_free(struct cgs_snapshot *s);

/*
 * Forget cgroups whose directory is gone and whose counters have been in a
 * snapshot since their last exit. Returns how many were retired.
 */
int cgs_rollup_retire_removed(struct cgs_rollup *r);

int cgs_rollup_totals(struct cgs_rollup *r, struct cgs_rollup_totals *out);

/*
 * Parse a /proc/<pid>/cgroup text: the path for `hierarchy` ("v2" = the
 * "0::" line, or a v1 controller name). Writes a NUL-terminated path into
 * buf. Returns its length, -ENOENT if the hierarchy is absent, -ENAMETOOLONG
 * if buf is too small, -EBADMSG for garbage.
 */
int cgs_parse_proc_cgroup(const char *text, size_t len, const char *hierarchy,
			  char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_H */
