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
 *       refused (-E2BIG); a result struct whose sz cannot even hold sz
 *       (e.g. 0) is refused (-EINVAL); a NULL options pointer means "all
 *       defaults";
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
#define CGS_VERSION_MINOR 1
#define CGS_VERSION_PATCH 0

/**
 * CGS_OPTS() - Declare an sz-prefixed struct, zeroed, with its sz set.
 * @TYPE: Struct tag without the "struct" keyword, e.g. cgs_listener_opts.
 * @NAME: Name of the variable to declare.
 * @...: Designated initialisers of other members, if any.
 *
 * Declares `struct TYPE NAME`, zeroed first (as libbpf's LIBBPF_OPTS does,
 * so that the padding compilers copy from the initialiser is zero), with
 * .sz = sizeof(struct TYPE) and the given designated initialisers, e.g.
 *	CGS_OPTS(cgs_listener_opts, lo, .cpus = "0-3", .shards = 2);
 *	CGS_OPTS(cgs_record, rec);
 * Works for every sz-prefixed struct, options and results alike. It is a
 * declaration (a GNU statement expression: GCC or Clang), not an
 * expression.
 */
#define CGS_OPTS(TYPE, NAME, ...)                                            \
	struct TYPE NAME = ({                                                \
		memset(&NAME, 0, sizeof(struct TYPE));                       \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };     \
	})

/**
 * CGS_SZ_HAS() - Whether an sz-prefixed struct is large enough for a field.
 * @PTR: Pointer to the struct (one the library handed out or filled in).
 * @FIELD: Name of the member to test.
 *
 * Lets a program built against a newer header run on an older library:
 * test a field before reading it.
 *
 * Return: True when the struct at @PTR holds all of @FIELD, i.e. it came
 * from a library that knows the field.
 */
#define CGS_SZ_HAS(PTR, FIELD)                                               \
	(offsetof(__typeof__(*(PTR)), FIELD) + sizeof((PTR)->FIELD) <=       \
	 (PTR)->sz)

/**
 * cgs_version() - Version of the running library.
 *
 * The version the shared library was built as, which may differ from the
 * CGS_VERSION_* macros a program was compiled with.
 *
 * Context: Any thread.
 * Return: A version string such as "1.0.0", in static storage.
 */
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

/**
 * cgs_strerror() - Describe an error code returned by the library.
 * @err: An errno value, negative (as returned) or positive.
 *
 * Explains the CGS_ERR_* codes, ETIMEDOUT (see cgs_listener_selftest())
 * and EBADMSG in the library's terms; any other value gets strerror()'s
 * text. The CGS_ERR_* codes are plain errno values, so any EPERM, EXDEV,
 * ... gets the taskstats explanation.
 *
 * Context: Any thread.
 * Return: A message in static storage (strerror()'s for other codes);
 * not to be freed.
 */
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

/**
 * cgs_delay_classes() - Number of delay classes the running library knows.
 *
 * Context: Any thread.
 * Return: The library's CGS_DELAY__COUNT: at most CGS_DELAY_SLOTS, and
 * possibly more than the CGS_DELAY__COUNT a program was built with.
 */
unsigned cgs_delay_classes(void);

/**
 * cgs_delay_name() - Name of a delay class.
 * @c: The class, 0 <= c < cgs_delay_classes().
 *
 * Context: Any thread.
 * Return: "cpu", "blkio", "swapin", ... in static storage; NULL for a
 * class the library does not know.
 */
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

/*
 * CGS_DECODE_REUSE: a cgs_decode_msg() flag saying that *task and *group
 * are records the library filled before (the previous call's) or that were
 * zeroed (CGS_OPTS): the delay slots no kernel version fills (from
 * cgs_delay_classes() to CGS_DELAY_SLOTS) are then left as they are, zero,
 * instead of being cleared again (256 bytes per record). The listener does
 * this with its own records. Without the flag every byte is written.
 */
#define CGS_DECODE_REUSE (1u << 1)

/* cgs_decode_msg() return bits */
#define CGS_DECODED_TASK (1u << 0)  /* *task was filled (thread/process) */
#define CGS_DECODED_GROUP (1u << 1) /* *group was filled (TGID kind) */

/**
 * cgs_decode_msg() - Decode one taskstats generic-netlink message.
 * @msg: The message, nlmsghdr included, carrying a TASKSTATS_CMD_NEW (an
 *	exit event or a query's reply); any alignment is fine. Not kept.
 * @len: Bytes readable at @msg; the message's nlmsg_len must fit in them.
 *	Only the first message is decoded; bytes after it are ignored.
 * @flags: 0, or CGS_NO_TGID (the TGID record is skipped, not decoded)
 *	and/or CGS_DECODE_REUSE (see there).
 * @task: Receives the thread or process record; not NULL, sz set (see
 *	top). A smaller (older) struct gets its first sz bytes.
 * @group: Receives the TGID aggregate, as @task; may be NULL only with
 *	CGS_NO_TGID.
 * @st: Counters to add to, or NULL: messages counts every message looked
 *	at (-ENOMSG ones too), malformed the -EBADMSG ones, the others only
 *	accepted messages.
 *
 * A task record whose message also carries a TGID record, or with
 * CGS_AC_AGROUP, is of kind CGS_KIND_PROCESS. Never reads outside
 * [msg, msg+len). On error *task and *group may have been written.
 *
 * Context: Any thread; no allocation, no locks.
 * Return: A bitmask (> 0): CGS_DECODED_TASK if *task was filled (thread
 * or process kind), CGS_DECODED_GROUP if *group was filled (TGID kind);
 * 0 if the only record was skipped (CGS_NO_TGID); -EINVAL for a NULL
 * @msg or @task, a NULL @group without CGS_NO_TGID, or an sz too small to
 * hold sz; -ENOMSG for a message that is not a taskstats record (an
 * error, ack, done or overrun message, or another command); -EBADMSG for
 * malformed input.
 */
int cgs_decode_msg(const void *msg, size_t len, unsigned flags,
		   struct cgs_record *task, struct cgs_record *group,
		   struct cgs_decode_stats *st);

/**
 * cgs_decode_payload() - Decode a bare struct taskstats payload.
 * @payload: The STATS attribute's data; any alignment. Not kept.
 * @len: Its length in bytes.
 * @kind: Stored in out->kind as given (not checked).
 * @out: Receives the record; not NULL, sz set (see top). out->pid is
 *	ac_pid (0 for the TGID kind).
 * @st: Counters to add to (malformed, layout_guesses, unknown_version,
 *	unknown_bytes; not messages or records), or NULL.
 *
 * Version 0 payloads (TGID aggregates of older kernels) are decoded with
 * the largest known layout that fits, versions newer than the library by
 * their known prefix.
 *
 * Context: Any thread; no allocation, no locks.
 * Return: 0; -EINVAL for a NULL @payload or @out or an sz too small to
 * hold sz; -EBADMSG when the payload is shorter than its version requires
 * (counted in st->malformed).
 */
int cgs_decode_payload(const void *payload, size_t len, enum cgs_kind kind,
		       struct cgs_record *out, struct cgs_decode_stats *st);

/**
 * cgs_taskstats_size() - Size of a struct taskstats version.
 * @version: Struct version, 1..CGS_TASKSTATS_VERSION_MAX.
 *
 * Context: Any thread.
 * Return: Its size in bytes on x86-64; 0 for 0 or a version newer than
 * the library knows.
 */
size_t cgs_taskstats_size(unsigned version);

/* Newest struct version this library decodes fully. */
#define CGS_TASKSTATS_VERSION_MAX 16

/* ------------------------------------------------------------------------
 * CPU lists
 * --------------------------------------------------------------------- */

/**
 * cgs_cpulist_validate() - Check a cpulist against this host's CPUs.
 * @list: A cpulist such as "0-3,7"; NULL counts as empty.
 * @errbuf: Receives a one-line, NUL-terminated explanation on failure
 *	(not on -ENOMEM); may be NULL. Untouched on success.
 * @errlen: Size of @errbuf; 0 for none.
 *
 * Validates the syntax, then that every CPU listed is a possible CPU of
 * this host (/sys/devices/system/cpu/possible).
 *
 * Context: Any thread.
 * Return: The number of distinct CPUs listed (> 0); -EINVAL for a syntax
 * error (empty list, descending range, stray character); -ERANGE for a
 * CPU number of 8192 or more or a CPU that is not possible; -ENOMEM;
 * -errno or -EIO when the possible CPUs cannot be read or parsed.
 */
int cgs_cpulist_validate(const char *list, char *errbuf, size_t errlen);

/**
 * cgs_possible_cpus() - Number of possible CPUs of this host.
 *
 * Read from /sys/devices/system/cpu/possible.
 *
 * Context: Any thread.
 * Return: The number of possible CPUs; -errno when the file cannot be
 * read, -EIO when it cannot be parsed, -ENOMEM.
 */
int cgs_possible_cpus(void);

/* ------------------------------------------------------------------------
 * Exit listener
 * --------------------------------------------------------------------- */

struct cgs_listener;

/* Severity of a log message, as syslog's LOG_* levels. */
enum cgs_log_level { CGS_LOG_ERR = 3, CGS_LOG_WARNING = 4, CGS_LOG_INFO = 6,
		     CGS_LOG_DEBUG = 7 };
/**
 * typedef cgs_log_fn - Receives the listener's log messages.
 * @level: Severity.
 * @msg: One line, no trailing newline; valid only during the call.
 * @ctx: cgs_listener_opts.log_ctx.
 *
 * Context: Called from the thread in a listener call and from the
 * runner's shard threads, possibly from several at once.
 */
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
	/* passed to log; kept, like log, until cgs_listener_close() */
	void *log_ctx;
};

/**
 * cgs_listener_open() - Open a listener and register for exit events.
 * @out: Receives the listener on success, NULL on failure; owned by the
 *	caller, freed with cgs_listener_close().
 * @opts: Options, or NULL for the defaults. Not kept after the call,
 *	except opts->log and opts->log_ctx.
 *
 * Resolves the TASKSTATS family, checks namespaces and privileges, and
 * registers one socket per shard for its CPU subset (contiguous, split
 * as evenly as possible). The receive buffer is set with SO_RCVBUFFORCE,
 * else SO_RCVBUF (capped by net.core.rmem_max; a warning is logged when
 * it comes out smaller). The listener owns its sockets and deregisters
 * every mask before closing them. Events that arrive before a shard's
 * registration is acknowledged are kept for its first drain.
 *
 * Context: Needs CAP_NET_ADMIN. Waits up to 2 s per kernel ack.
 * Return: 0 on success, or a negative errno: -EINVAL for a NULL @out,
 * unknown flags, opts->sz too small or a cpulist syntax error; -E2BIG for
 * options this library does not know; -ERANGE for a CPU that is out of
 * range or not possible; -CGS_ERR_PIDNS, -CGS_ERR_PERM or -CGS_ERR_NETNS
 * from the namespace checks (unless CGS_LISTEN_NO_NS_CHECK);
 * -CGS_ERR_NO_TASKSTATS; -CGS_ERR_PERM without CAP_NET_ADMIN or when the
 * kernel refuses a registration; -ETIMEDOUT when the kernel does not
 * answer one; -ENOMEM; another -errno from the kernel or from reading
 * /sys/devices/system/cpu/possible.
 */
int cgs_listener_open(struct cgs_listener **out,
		      const struct cgs_listener_opts *opts);

/**
 * cgs_listener_close() - Stop, deregister and free a listener.
 * @l: The listener, or NULL (nothing is done).
 *
 * Stops the runner if it is running (as cgs_listener_stop()), deregisters
 * each shard's CPUs and closes its socket. When a deregistration fails
 * (e.g. CAP_NET_ADMIN was dropped after open), one short-lived child is
 * forked per CPU of that shard, so that the kernel drops the stale entry
 * instead of a later socket on the same port id inheriting it.
 * Everything @l handed out (fds, cpulists) becomes invalid.
 *
 * Context: Not from an exit callback; no other call on @l may be running.
 */
void cgs_listener_close(struct cgs_listener *l);

/**
 * cgs_listener_shards() - Number of shards of a listener.
 * @l: The listener, or NULL.
 *
 * Return: The number of shards (sockets), or 0 for a NULL @l.
 */
unsigned cgs_listener_shards(const struct cgs_listener *l);
/**
 * cgs_listener_shard_fd() - Socket of a shard, for the caller's own loop.
 * @l: The listener.
 * @shard: 0 <= shard < cgs_listener_shards().
 *
 * For poll/epoll with cgs_listener_drain(), instead of the runner. The
 * socket is owned by @l: do not close it or read from it.
 *
 * Return: The file descriptor, valid until cgs_listener_close(); -EINVAL
 * for a NULL @l or a shard out of range.
 */
int cgs_listener_shard_fd(const struct cgs_listener *l, unsigned shard);
/**
 * cgs_listener_shard_cpus() - CPUs a shard listens on.
 * @l: The listener.
 * @shard: 0 <= shard < cgs_listener_shards().
 *
 * Return: Its cpulist, e.g. "0-3", owned by @l and valid until
 * cgs_listener_close(); NULL for a NULL @l or a shard out of range.
 */
const char *cgs_listener_shard_cpus(const struct cgs_listener *l,
				    unsigned shard);
/**
 * cgs_listener_shard_rcvbuf() - Receive buffer the kernel granted a shard.
 * @l: The listener.
 * @shard: 0 <= shard < cgs_listener_shards().
 *
 * Return: Its size in bytes as getsockopt(SO_RCVBUF) says (the kernel
 * doubles what it is asked for); 0 for a NULL @l or a shard out of range.
 */
size_t cgs_listener_shard_rcvbuf(const struct cgs_listener *l,
				 unsigned shard);

/*
 * One exit event: the records of one netlink message. `task` is the thread
 * or process record (NULL only for a message that carries nothing but a
 * TGID record, which the kernel never sends); `group` the TGID aggregate,
 * if the kernel sent one and it was not disabled (CGS_NO_TGID). `raw` is
 * the message as received. All pointers are valid only during the
 * callback: the library reuses the records for the shard's next event.
 */
struct cgs_exit {
	size_t sz; /* sizeof(struct cgs_exit) of the library */
	const struct cgs_record *task;
	const struct cgs_record *group;
	const void *raw;
	/* bytes at raw (its nlmsg_len) */
	size_t raw_len;
	/* the shard that received it */
	unsigned shard;
	uint64_t recv_ns; /* CLOCK_REALTIME when the batch was received */
};

/**
 * typedef cgs_exit_fn - Receives one exit event.
 * @ev: The event; it and everything it points to is valid only during
 *	the call.
 * @user: The pointer given with the callback.
 *
 * Context: Called from the thread draining the shard: the caller of
 * cgs_listener_drain() or cgs_listener_selftest(), or the runner's thread
 * for that shard.
 * Return: 0 to go on, non-zero to make cgs_listener_drain() return after
 * the current batch (the runner and cgs_listener_selftest() ignore it)
 * (events already received are still delivered; nothing is dropped).
 */
typedef int (*cgs_exit_fn)(const struct cgs_exit *ev, void *user);

/**
 * cgs_listener_drain() - Receive and decode what is queued on one shard.
 * @l: The listener.
 * @shard: 0 <= shard < cgs_listener_shards().
 * @fn: Called per exit event from the calling thread; may be NULL (the
 *	events are then discarded, counted in cgs_loss.discarded).
 * @user: Passed to @fn.
 *
 * Never blocks. Reads in batches of up to 64 datagrams until the socket
 * is empty or @fn asked to stop. Messages that fail to decode are not
 * delivered but counted (see cgs_listener_loss()), as are ENOBUFS
 * overruns and truncated datagrams.
 *
 * Context: Not safe to call concurrently for the same shard, nor while
 * the runner or cgs_listener_selftest() is active; different shards may
 * be drained from different threads at once.
 * Return: The number of events delivered (0 when nothing was queued); or
 * -EINVAL for a NULL @l or a shard out of range; or -errno when receiving
 * fails (events already passed to @fn in this call stay delivered).
 */
int cgs_listener_drain(struct cgs_listener *l, unsigned shard, cgs_exit_fn fn,
		       void *user);

struct cgs_run_opts {
	size_t sz;            /* sizeof(struct cgs_run_opts) */
	unsigned batch_ms;    /* after draining, wait this long before the
			       * next wake-up (fewer wake-ups, bigger batches);
			       * 0: 20 (also when opts is NULL);
			       * CGS_RUN_NO_BATCH: wake per message. (Before
			       * 1.2, 0 in an opts given meant per message.) */
	bool pin;             /* pin each shard thread to its CPUs */
};

/* cgs_run_opts.batch_ms: no batching, a wake-up per message */
#define CGS_RUN_NO_BATCH (~0u)

/**
 * cgs_listener_run() - Start one receive thread per shard.
 * @l: The listener.
 * @fn: Called per exit event; may be NULL (events discarded, counted in
 *	cgs_loss.discarded).
 * @user: Passed to @fn; must stay valid until cgs_listener_stop().
 * @opts: Options, or NULL for the defaults (batch_ms 20); not kept.
 *
 * Each thread calls @fn for its own shard's events only (so a consumer can
 * keep per-shard state without locks); @fn's return value is ignored.
 * Receive errors are logged as warnings and the thread goes on. The
 * runner can be started again after cgs_listener_stop().
 *
 * Context: @fn runs on the shard threads, concurrently for different
 * shards. Do not call cgs_listener_drain() while the runner is active.
 * Return: 0 on success; -EINVAL for a NULL @l, a runner already running
 * or opts->sz too small; -E2BIG for options this library does not know;
 * -errno when the stop eventfd or a thread cannot be created (the
 * threads already started are stopped and joined).
 */
int cgs_listener_run(struct cgs_listener *l, cgs_exit_fn fn, void *user,
		     const struct cgs_run_opts *opts);

/**
 * cgs_listener_stop() - Stop the runner.
 * @l: The listener.
 *
 * Each shard thread drains what is queued one last time (delivered to
 * @fn), then the threads are joined. Afterwards the shards may be drained
 * by hand, or the runner started again.
 *
 * Context: Not from an exit callback (it joins the calling thread).
 * Return: 0; -EINVAL for a NULL @l or a runner not running.
 */
int cgs_listener_stop(struct cgs_listener *l);

struct cgs_loss {
	size_t sz;         /* sizeof(struct cgs_loss) */
	uint64_t dropped;  /* events the kernel dropped (socket drop counter
			    * since open); exact. Plus events the library
			    * dropped while waiting for a registration ack
			    * (over 8 MiB, or no memory) */
	uint64_t enobufs;  /* overrun episodes reported with ENOBUFS */
	uint64_t seq_gaps; /* events missing by sequence number (only for
			    * shards listening on a single CPU) */
	uint64_t truncated; /* messages larger than the receive slot */
	/* the decoder's counters (struct cgs_decode_stats), flat so that
	 * both can grow */
	uint64_t messages, records, malformed, unknown_version, unknown_bytes,
		layout_guesses, tgid_skipped;
	/* events received while no callback was given (fn NULL in
	 * cgs_listener_drain(), cgs_listener_run() or
	 * cgs_listener_selftest()): consumed, delivered to nobody */
	uint64_t discarded;
};

/* cgs_listener_loss() shard meaning all shards */
#define CGS_ALL_SHARDS (~0u)
/**
 * cgs_listener_loss() - Loss and decode counters of a listener.
 * @l: The listener.
 * @shard: 0 <= shard < cgs_listener_shards(), or CGS_ALL_SHARDS for the
 *	sum over all shards.
 * @out: Receives the counters; sz set (see top), on return the bytes
 *	written.
 *
 * Counters are cumulative since cgs_listener_open().
 *
 * Context: Safe to call from any thread, also while the runner or
 * cgs_listener_drain() is active (the counters may lag by a batch).
 * Return: 0; -EINVAL for a NULL @l or @out, out->sz too small to hold sz,
 * or a shard out of range.
 */
int cgs_listener_loss(struct cgs_listener *l, unsigned shard,
		      struct cgs_loss *out);

/**
 * cgs_listener_selftest() - Prove that exit events reach the listener.
 * @l: The listener.
 * @timeout_ms: Longest wait for the record, ms (>= 0).
 * @fn: Receives every event seen meanwhile, the child's included; may be
 *	NULL: then the exits of the whole host during the self-test are
 *	consumed and lost to the caller (counted in cgs_loss.discarded).
 *	Pass the callback that will run afterwards (e.g.
 *	cgs_rollup_account_exit) to keep them. Its return value is ignored.
 * @user: Passed to @fn.
 *
 * Forks a child that exits at once, on one of the listener's CPUs (it is
 * pinned there: a listener of a cpulist hears only those CPUs), and waits
 * up to @timeout_ms for its exit record on any shard. It drains the shards itself: events it
 * receives are consumed (passed to @fn), not left queued.
 *
 * Context: Only while the runner is not active (before cgs_listener_run()
 * or after cgs_listener_stop()), and not concurrently with
 * cgs_listener_drain().
 * Return: 0 when the record came; -ETIMEDOUT when it never came (e.g. a
 * foreign network namespace); -EINVAL for a NULL @l, an active runner or
 * a negative @timeout_ms; -errno when fork() or receiving fails; -ENOMEM.
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

/**
 * cgs_query_open() - Open a handle for queries of live tasks.
 * @out: Receives the handle on success, NULL on failure; owned by the
 *	caller, freed with cgs_query_close().
 * @opts: Options, or NULL for the defaults; not kept after the call.
 *
 * Opens one generic-netlink socket and resolves the TASKSTATS family. No
 * namespace or privilege check is made here.
 *
 * Return: 0 on success; -EINVAL for a NULL @out or opts->sz too small;
 * -E2BIG for options this library does not know; -ENOMEM;
 * -CGS_ERR_NO_TASKSTATS; another -errno from the socket.
 */
int cgs_query_open(struct cgs_query **out, const struct cgs_query_opts *opts);
/**
 * cgs_query_close() - Close a query handle.
 * @q: The handle, or NULL (nothing is done).
 */
void cgs_query_close(struct cgs_query *q);

/**
 * cgs_query_pid() - Stats of a live thread.
 * @q: The handle.
 * @pid: Thread id (not 0).
 * @out: Receives the record, of kind CGS_KIND_THREAD; set out->sz first
 *	(CGS_OPTS): at most that many bytes are written, and sz says how many.
 *
 * Context: One request at a time per handle: not thread-safe; use one
 * handle per thread. Waits up to opts->timeout_ms for the answer.
 * Return: 0; -EINVAL for a NULL @q or @out, out->sz 0 or a @pid of 0;
 * -ESRCH when it does not exist; -ETIMEDOUT when the kernel did not answer
 * in time; -EBADMSG for an answer that cannot be decoded (or an ack with no
 * answer); -ENOMSG for an answer that is not a taskstats record; -ENOBUFS
 * when the query socket overran; another -errno the kernel answered with.
 */
int cgs_query_pid(struct cgs_query *q, uint32_t pid, struct cgs_record *out);
/**
 * cgs_query_tgid() - Stats of a live thread group, summed over threads.
 * @q: The handle.
 * @tgid: Thread group id (not 0).
 * @out: Receives the record, of kind CGS_KIND_TGID (pid 0, tgid @tgid);
 *	set out->sz first (CGS_OPTS), as for cgs_query_pid().
 *
 * Context: As cgs_query_pid().
 * Return: As cgs_query_pid(); -ESRCH when the group does not exist.
 */
int cgs_query_tgid(struct cgs_query *q, uint32_t tgid,
		   struct cgs_record *out);

struct cgs_cgroupstats {
	size_t sz; /* sizeof(struct cgs_cgroupstats) */
	/* tasks of the cgroup by state: sleeping, running, stopped,
	 * uninterruptible sleep, waiting for I/O */
	uint64_t nr_sleeping, nr_running, nr_stopped, nr_uninterruptible,
		nr_io_wait;
};

/**
 * cgs_query_cgroupstats() - Task state counts of a cgroup v1 directory.
 * @q: The handle.
 * @cgroup_dir: Path of the cgroup's directory; not kept.
 * @out: Receives the counts; set out->sz first (CGS_OPTS): at most that
 *	many bytes are written, and sz says how many.
 *
 * Context: As cgs_query_pid().
 * Return: 0; -EINVAL for a NULL argument or out->sz 0; -CGS_ERR_CGROUP2
 * for a cgroup2 directory; -ENOENT/-ENOTDIR for a bad path, -ENOTDIR also for a
 * directory not on a cgroup v1 file system; another -errno from open()
 * (e.g. -EACCES); -ETIMEDOUT, -EBADMSG or a kernel error as for
 * cgs_query_pid().
 */
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
 * nearest live fork ancestor. Costs a socket and 32 bytes per process
 * remembered, min(pid_max, 65536) of them (2 MiB at most); no thread, nothing on the path of known processes. Fork times are
 * compared with clock_ms, which must then be CLOCK_MONOTONIC based (the
 * default). The socket is opened whatever proc_root says.
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
 * CPU time and CPU delay per task (cgs_snapshot_hist()). O(1) per record
 * with no allocation; costs 6.6 KiB per cgroup and shard (with the
 * per-signal counts, which share its allocation). Off by default. */
#define CGS_ROLLUP_HISTOGRAMS (1u << 3)

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
	 * default reads CLOCK_MONOTONIC_COARSE */
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
	/* top commands per cgroup (cgs_snapshot_comm()): counters of each
	 * bounded summary (one by CPU, one by exits) per cgroup and shard,
	 * 1..4096; 0: off. An estimate is off by at most the ranking's total
	 * divided by this (see struct cgs_comm). */
	unsigned comms;
	/* the listener whose records this rollup accounts: shards and
	 * shard_cpus are taken from it (each must then be 0 / NULL or agree
	 * with it); NULL: see shards and shard_cpus. Not kept after
	 * cgs_rollup_new(). */
	const struct cgs_listener *listener;
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
 * generations at most, 8 KiB with the kernel source), and loads the attribution source (see
 * enum cgs_attribution): with CGS_ATTRIBUTION_AUTO a kernel source that
 * cannot be had is not an error (cgs_rollup_kernel_error() says why).
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
int cgs_rollup_new(struct cgs_rollup **out, const struct cgs_rollup_opts *o);
/**
 * cgs_rollup_free() - Free a rollup.
 * @r: The rollup, or NULL (nothing is done).
 *
 * Unloads the kernel source and closes the fork tracker. Paths handed out
 * by cgs_rollup_account() become invalid; snapshots stay valid (they own
 * their data).
 *
 * Context: No other call on @r may be running.
 */
void cgs_rollup_free(struct cgs_rollup *r);

/**
 * cgs_rollup_hierarchy() - The cgroup hierarchy in use.
 * @r: The rollup.
 *
 * Return: "v2" or the v1 controller name ("cpu", ...), owned by @r and
 * valid until cgs_rollup_free(); NULL for a NULL @r.
 */
const char *cgs_rollup_hierarchy(const struct cgs_rollup *r);

/**
 * cgs_rollup_attribution() - The attribution source in use.
 * @r: The rollup.
 *
 * Return: CGS_ATTRIBUTION_KERNEL or CGS_ATTRIBUTION_PROC (also for a NULL
 * @r); never CGS_ATTRIBUTION_AUTO.
 */
enum cgs_attribution cgs_rollup_attribution(const struct cgs_rollup *r);

/**
 * cgs_rollup_kernel_error() - Why the kernel source is not in use.
 * @r: The rollup.
 *
 * Return: A sentence naming what is missing, owned by @r and valid until
 * cgs_rollup_free(); NULL when the kernel source is in use, was not asked
 * for (CGS_ATTRIBUTION_PROC), or @r is NULL.
 */
const char *cgs_rollup_kernel_error(const struct cgs_rollup *r);

/**
 * cgs_rollup_account() - Attribute a record to a cgroup and account it.
 * @r: The rollup.
 * @shard: The writer: 0 <= shard < opts.shards (with the kernel source,
 *	the listener shard that received the record).
 * @rec: The record, e.g. cgs_exit.task or .group; a smaller (older)
 *	struct is fine. Not kept.
 * @path_out: If not NULL, receives the cgroup path (CGS_UNKNOWN_CGROUP
 *	when not attributed; NULL for a TGID record ignored by CGS_NO_TGID),
 *	owned by @r and valid until the next call for the same shard (and
 *	no longer than until cgs_rollup_retire_removed() or
 *	cgs_rollup_free()).
 *
 * O(1) in the cgroup depth. A TGID-kind record only counts as
 * tgid_records of its cgroup; with CGS_NO_TGID it is ignored.
 *
 * Context: Concurrent calls must use distinct shards; safe alongside
 * snapshots, totals and retirement from other threads. May block: on
 * /proc reads, and with the kernel source up to kernel_wait_ms for the
 * entry of a task still exiting.
 * Return: 0 (also for an ignored or unattributed record); -EINVAL for a
 * NULL @r or @rec, a shard out of range, rec->sz too small to reach tgid
 * (a smaller sz of an older caller is read as far as it goes, the rest
 * taken as zero), or a kind out of range.
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

/**
 * cgs_source_name() - Name of an attribution source.
 * @s: The source.
 *
 * Return: "none", "kernel", "proc" or "inferred", in static storage; NULL
 * when out of range.
 */
const char *cgs_source_name(enum cgs_source s);

/**
 * cgs_rollup_account_src() - cgs_rollup_account(), also telling how.
 * @r: As cgs_rollup_account().
 * @shard: As cgs_rollup_account().
 * @rec: As cgs_rollup_account().
 * @path_out: As cgs_rollup_account().
 * @src_out: If not NULL, receives how the record was attributed;
 *	CGS_SOURCE_NONE on error or for an ignored record.
 *
 * Context: As cgs_rollup_account().
 * Return: As cgs_rollup_account().
 */
int cgs_rollup_account_src(struct cgs_rollup *r, unsigned shard,
			   const struct cgs_record *rec, const char **path_out,
			   enum cgs_source *src_out);

/**
 * cgs_rollup_account_path() - Account a record to a known cgroup path.
 * @r: The rollup.
 * @shard: As cgs_rollup_account().
 * @rec: The record; a smaller (older) struct is fine. Not kept.
 * @path: The cgroup path, absolute ("/a/b") or CGS_UNKNOWN_CGROUP; copied,
 *	not kept.
 *
 * For e.g. replayed captures: no attribution is done (no via_* counter,
 * nothing inferred). A TGID record is ignored with CGS_NO_TGID.
 *
 * Context: As cgs_rollup_account(), without the waits.
 * Return: 0; -EINVAL for a NULL argument, a shard out of range, rec->sz
 * too small, a kind out of range or a relative path; -ENAMETOOLONG for a
 * path of PATH_MAX bytes or more; -ENOMEM.
 */
int cgs_rollup_account_path(struct cgs_rollup *r, unsigned shard,
			    const struct cgs_record *rec, const char *path);

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
 * tests). What cgs_rollup_account() does with each record, as each
 * shard's thread calls it. A record the rollup cannot take (a shard
 * beyond the rollup's, when it was made with fewer shards than the
 * listener has) is not accounted but counted in totals.refused: nothing
 * is lost silently.
 *
 * Context: As cgs_rollup_account(), from the listener's thread for
 * ev->shard.
 * Return: 0 (drain on); a refused record is counted, not returned (the
 * runner ignores the return value).
 */
int cgs_rollup_account_exit(const struct cgs_exit *ev, void *rollup);

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
	 * status (see cgs_exit_outcome()); per signal: cgs_snapshot_signals() */
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
	 * cgs_rollup_totals(), cgroup nodes per shard, summed */
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
	/* records given to cgs_rollup_account*() or
	 * cgs_rollup_account_exit() that could not be accounted: a shard
	 * beyond the rollup's (a rollup made with fewer shards than its
	 * listener), a record that is not one (kind out of range, sz too
	 * small), a path that is not absolute. Counted, never silent. */
	uint64_t refused;
	/* a snapshot's totals only (0 from cgs_rollup_totals()): which
	 * snapshot of its rollup this is, 1, 2, ... in the order they were
	 * made; what cgs_retire_opts.served takes */
	uint64_t snapshot_gen;
};

struct cgs_snapshot;

struct cgs_snapshot_opts {
	size_t sz;           /* sizeof(struct cgs_snapshot_opts) */
	unsigned fold_depth; /* fold cgroups deeper than this into their
			      * ancestor at this depth; 0: no folding */
	bool no_delta;       /* don't advance the delta baseline */
	/* commands listed per cgroup and ranking (cgs_snapshot_comm());
	 * the rest is folded into (other); 0: every one the summary holds */
	unsigned comms;
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
 * Context: Safe alongside cgs_rollup_account() calls; serialised with
 * other snapshots and cgs_rollup_retire_removed(). stat()s cgroup
 * directories to flag removed cgroups: all of them up to 1,024 per
 * shard, else a round-robin slice (every one within 32 snapshots); with
 * the kernel source, an rmdir event flags its cgroup at once.
 * Return: 0; -EINVAL for a NULL @r or @out or o->sz too small; -E2BIG for
 * options this library does not know; -ENOMEM.
 */
int cgs_rollup_snapshot(struct cgs_rollup *r, const struct cgs_snapshot_opts *o,
			struct cgs_snapshot **out);
/**
 * cgs_snapshot_count() - Number of cgroups in a snapshot.
 * @s: The snapshot, or NULL.
 *
 * Return: The number of entries (the unknown bucket included); 0 for a
 * NULL @s.
 */
size_t cgs_snapshot_count(const struct cgs_snapshot *s);
/**
 * cgs_snapshot_get() - One cgroup of a snapshot.
 * @s: The snapshot.
 * @i: Index, 0 <= i < cgs_snapshot_count(), in path order.
 *
 * Context: A snapshot is not changed after it is made: it may be read
 * from several threads at once.
 * Return: The i-th cgroup, owned by @s and valid (with everything it
 * points to) until cgs_snapshot_free(); NULL for a NULL @s or @i out of
 * range.
 */
const struct cgs_cgroup_stats *cgs_snapshot_get(const struct cgs_snapshot *s,
						size_t i);
/**
 * cgs_snapshot_totals() - Totals at snapshot time.
 * @s: The snapshot.
 *
 * Return: The totals, owned by @s and valid until cgs_snapshot_free();
 * cgroups counts the distinct cgroups in @s (not the unknown bucket).
 * NULL for a NULL @s.
 */
const struct cgs_rollup_totals *cgs_snapshot_totals(
	const struct cgs_snapshot *s);
/* ------------------------------------------------------------------------
 * Exit outcomes, distributions and commands of a snapshot's cgroups
 * --------------------------------------------------------------------- */

/* Outcome of a process exit, from its raw wait status (ac_exitcode). */
enum cgs_exit_outcome {
	CGS_EXIT_CLEAN = 0,   /* exit(0) */
	CGS_EXIT_NONZERO = 1, /* exit(n), n != 0 */
	CGS_EXIT_SIGNALED = 2, /* killed by a signal, no core dump */
	CGS_EXIT_CORE_DUMPED = 3, /* killed by a signal, core dumped */
};

/**
 * cgs_exit_outcome() - Classify a wait status.
 * @status: Raw wait status, as cgs_record.exit_status.
 * @sig: If not NULL, receives the signal number (1..127) of a signaled
 *	outcome, else 0.
 *
 * Context: Any thread.
 * Return: The outcome. (A status that is neither an exit nor a
 * termination by signal, e.g. a stop, counts as CGS_EXIT_NONZERO.)
 */
enum cgs_exit_outcome cgs_exit_outcome(uint32_t status, int *sig);

/**
 * cgs_signal_name() - Name of a signal number.
 * @sig: Signal number.
 *
 * Context: Any thread.
 * Return: "SIGKILL", "SIGSEGV", ..., "SIGRTMIN+3" (Linux numbers, SIGRTMIN
 * being 34 as glibc has it; 32 and 33 are "SIG32" and "SIG33"), in static
 * storage; NULL for a number outside 1..CGS_SIGNAL_SLOTS-1.
 */
const char *cgs_signal_name(int sig);

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
			     * (attributed by cgs_rollup_account*(), not
			     * cgs_rollup_account_path()), against a
			     * baseline: the value when the rollup was
			     * created, 0 for a cgroup created since. Kills
			     * in a cgroup removed before the snapshot are
			     * missed (its counter is gone with it) */
};

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
 * cgs_snapshot_signals() - Process exits of a cgroup by signal.
 * @s: The snapshot.
 * @i: Index of the cgroup, 0 <= i < cgs_snapshot_count().
 * @set: Which counters.
 * @out: Receives the counts; sz set (see top), on return the bytes
 *	written. Their sum is the set's exit_signaled.
 *
 * Context: As cgs_snapshot_get().
 * Return: 0; -EINVAL for a NULL @s or @out, out->sz too small, @i or @set
 * out of range.
 */
int cgs_snapshot_signals(const struct cgs_snapshot *s, size_t i,
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

/* Capacity of a histogram's arrays. The library's buckets: upper bounds
 * 4^k microseconds, k = 0..18 (1 us .. about 19 hours), then +Inf. */
#define CGS_HIST_SLOTS 32

struct cgs_hist {
	size_t sz;          /* bytes the library filled */
	unsigned nbuckets;  /* buckets in use, the last one +Inf */
	/* upper bound of bucket b, ns (an observation v counts in every
	 * bucket with v <= le_ns[b]); UINT64_MAX for +Inf */
	uint64_t le_ns[CGS_HIST_SLOTS];
	/* observations <= le_ns[b]: cumulative, never decreasing along b */
	uint64_t cumulative[CGS_HIST_SLOTS];
	uint64_t count;     /* observations (== the +Inf bucket) */
	uint64_t sum_ns;    /* their sum, ns */
};

/**
 * cgs_hist_name() - Name of a histogram.
 * @k: The histogram.
 *
 * Context: Any thread.
 * Return: "lifetime", "process_lifetime", "cpu" or "cpu_delay", in static
 * storage; NULL when out of range.
 */
const char *cgs_hist_name(enum cgs_hist_kind k);

/**
 * cgs_snapshot_hist() - A distribution of one cgroup.
 * @s: The snapshot.
 * @i: Index of the cgroup, 0 <= i < cgs_snapshot_count().
 * @set: Which counters (self or subtree, cumulative or delta).
 * @k: Which distribution.
 * @out: Receives it; sz set (see top), on return the bytes written.
 *
 * Cumulative sets never decrease from one snapshot to the next, also
 * when a descendant is retired (its counts move into its parent's
 * subtree).
 *
 * Context: As cgs_snapshot_get().
 * Return: 0; -ENODATA when the rollup keeps no histograms
 * (CGS_ROLLUP_HISTOGRAMS not set); -EINVAL for a NULL @s or @out,
 * out->sz too small, or @i, @set or @k out of range.
 */
int cgs_snapshot_hist(const struct cgs_snapshot *s, size_t i,
		      enum cgs_counter_set set, enum cgs_hist_kind k,
		      struct cgs_hist *out);

/**
 * cgs_hist_quantile() - Estimate a quantile of a histogram.
 * @h: The histogram.
 * @q: The quantile, 0 <= q <= 1.
 *
 * Interpolates linearly inside the bucket that holds the quantile (as
 * Prometheus' histogram_quantile() does); a quantile in the +Inf bucket
 * is reported as the last finite bound.
 *
 * Context: Any thread.
 * Return: The estimate, ns; 0 for an empty histogram or a NULL @h.
 */
uint64_t cgs_hist_quantile(const struct cgs_hist *h, double q);

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
size_t cgs_snapshot_comm_count(const struct cgs_snapshot *s, size_t i,
			       enum cgs_comm_rank by);

/**
 * cgs_snapshot_comm() - One entry of a ranking.
 * @s: The snapshot.
 * @i: Index of the cgroup.
 * @by: The ranking.
 * @j: 0 <= j < cgs_snapshot_comm_count(), largest value first.
 *
 * Context: As cgs_snapshot_get().
 * Return: The entry, owned by @s and valid until cgs_snapshot_free();
 * NULL when out of range.
 */
const struct cgs_comm *cgs_snapshot_comm(const struct cgs_snapshot *s,
					 size_t i, enum cgs_comm_rank by,
					 size_t j);

/**
 * cgs_snapshot_free() - Free a snapshot.
 * @s: The snapshot, or NULL (nothing is done).
 */
void cgs_snapshot_free(struct cgs_snapshot *s);

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
 * Context: Safe alongside cgs_rollup_account(); serialised with
 * snapshots. stat()s the cgroup directories of shards up to 1,024
 * cgroups; larger ones rely on the snapshots' removal checks. Paths that
 * cgs_rollup_account() handed out for retired cgroups become invalid.
 * Return: How many cgroups were retired (>= 0); -EINVAL for a NULL @r.
 */
int cgs_rollup_retire_removed(struct cgs_rollup *r);

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
 * @out: If not NULL, receives what was done; sz set (see top), on return
 *	the bytes written.
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
int cgs_rollup_retire(struct cgs_rollup *r, const struct cgs_retire_opts *o,
		      struct cgs_retire_result *out);

/**
 * cgs_rollup_totals() - Collector-level attribution counters, now.
 * @r: The rollup.
 * @out: Receives the totals; sz set (see top), on return the bytes
 *	written.
 *
 * Cheaper than a snapshot, but totals.cgroups counts cgroup nodes per
 * shard (a cgroup seen by k shards counts k times; removed incarnations
 * count until retired). Also reads what the fork tracker has queued.
 *
 * Context: Safe alongside cgs_rollup_account() and snapshots.
 * Return: 0; -EINVAL for a NULL @r or @out, or out->sz too small to hold
 * sz.
 */
int cgs_rollup_totals(struct cgs_rollup *r, struct cgs_rollup_totals *out);

/**
 * cgs_parse_proc_cgroup() - Find a hierarchy's path in /proc/<pid>/cgroup.
 * @text: The file's contents; need not be NUL-terminated.
 * @len: Bytes of @text.
 * @hierarchy: "v2" (the "0::" line) or a v1 controller name ("cpu",
 *	"name=systemd", ...); NULL means "v2".
 * @buf: Receives the NUL-terminated path. On cgroup2 a trailing
 *	" (deleted)" (a removed cgroup still holding a zombie) is stripped.
 * @buflen: Size of @buf.
 *
 * Context: Any thread; no allocation.
 * Return: The path's length (without the NUL); -EINVAL for a NULL @text
 * or @buf or a @buflen of 0; -ENOENT if the hierarchy is absent;
 * -ENAMETOOLONG if buf is too small; -EBADMSG for garbage (also an empty
 * text, or a path that does not start with '/').
 */
int cgs_parse_proc_cgroup(const char *text, size_t len, const char *hierarchy,
			  char *buf, size_t buflen);

/* ------------------------------------------------------------------------
 * Workload names (for the export stage)
 * --------------------------------------------------------------------- */

#define CGS_WL_NAME_LEN 256    /* systemd unit names: 255 bytes + NUL */
#define CGS_WL_RUNTIME_LEN 16  /* "docker", "containerd", "cri-o", "podman" */
#define CGS_WL_CONTAINER_LEN 80 /* a container id: 64 hex digits */
#define CGS_WL_CONTAINER_ID_LEN 112 /* "<runtime>://<id>" */
#define CGS_WL_POD_UID_LEN 48  /* a UUID: 36 bytes */
#define CGS_WL_QOS_LEN 16      /* "Guaranteed", "Burstable", "BestEffort" */

/*
 * What a cgroup path says about the workload in it. Every member is a
 * NUL-terminated string, "" when the path does not say; a member is only
 * ever filled from a syntactically valid match of a known shape (see
 * lib/export/workload.c and docs/collector.md), so its bytes are printable
 * ASCII. Each group of members comes from the nearest cgroup along the path
 * (the cgroup itself or its closest ancestor) that names it.
 */
struct cgs_workload {
	size_t sz;                          /* sizeof(struct cgs_workload) */
	char unit[CGS_WL_NAME_LEN];         /* systemd unit: the nearest
					     * .service, .scope, .socket,
					     * .mount or .swap */
	char slice[CGS_WL_NAME_LEN];        /* the nearest systemd .slice */
	/* the nearest container; its three members go together */
	char runtime[CGS_WL_RUNTIME_LEN];   /* "" when the path does not say
					     * which runtime made it */
	char container[CGS_WL_CONTAINER_LEN]; /* the id, 64 hex digits */
	char container_id[CGS_WL_CONTAINER_ID_LEN]; /* "<runtime>://<id>" as
					     * kube-state-metrics writes it;
					     * "" when the runtime is unknown */
	/* the nearest Kubernetes pod (or QoS-level) cgroup */
	char pod_uid[CGS_WL_POD_UID_LEN];   /* with its dashes, as the API
					     * server shows it */
	char qos_class[CGS_WL_QOS_LEN];     /* as in the pod's status */
};

/**
 * cgs_workload_from_path() - Name the workload a cgroup path belongs to.
 * @path: A cgroup path as /proc/<pid>/cgroup shows it ("/system.slice/
 *	foo.service"); any bytes. A path not starting with '/' (such as
 *	CGS_UNKNOWN_CGROUP) names nothing.
 * @out: Receives the names; sz set (see top), on return the bytes written.
 *
 * Knows systemd units and slices; docker, containerd (CRI), CRI-O and
 * podman containers (their conmon monitors are not containers); Kubernetes
 * pods and QoS classes of both kubelet cgroup drivers, also nested under
 * another prefix (a node in a container). Reads no file.
 *
 * Context: Any thread; no allocation.
 * Return: The number of non-empty members of @out (>= 0); -EINVAL for a
 * NULL @path or @out, or out->sz too small to hold sz.
 */
int cgs_workload_from_path(const char *path, struct cgs_workload *out);

#ifdef __cplusplus
}
#endif

#include <cgstats/identity.h>
#include <cgstats/workloads.h>

#endif /* CGSTATS_H */
