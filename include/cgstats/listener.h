/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/listener.h>: the exit listener (cgs_listener_open() ...
 * cgs_listener_close()): registers for taskstats exit events on every
 * CPU, one socket per shard, and delivers them decoded (struct cgs_exit),
 * from the caller's loop or from a thread per shard. Part of <cgstats.h>.
 */
#ifndef CGSTATS_LISTENER_H
#define CGSTATS_LISTENER_H

#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif

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
			     * of CPUs listened on. Given (non-zero), the
			     * runner also gives each shard its own thread (as
			     * before 1.3); 0: threads as needed (see
			     * cgs_listener_run()) */
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
CGS_EXPORT int cgs_listener_open(struct cgs_listener **out,
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
CGS_EXPORT void cgs_listener_close(struct cgs_listener *l);

/**
 * cgs_listener_shards() - Number of shards of a listener.
 * @l: The listener, or NULL.
 *
 * Return: The number of shards (sockets), or 0 for a NULL @l.
 */
CGS_EXPORT unsigned cgs_listener_shards(const struct cgs_listener *l);
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
CGS_EXPORT int
cgs_listener_shard_fd(const struct cgs_listener *l, unsigned shard);
/**
 * cgs_listener_shard_cpus() - CPUs a shard listens on.
 * @l: The listener.
 * @shard: 0 <= shard < cgs_listener_shards().
 *
 * Return: Its cpulist, e.g. "0-3", owned by @l and valid until
 * cgs_listener_close(); NULL for a NULL @l or a shard out of range.
 */
CGS_EXPORT const char *cgs_listener_shard_cpus(const struct cgs_listener *l,
					       unsigned shard);
/**
 * cgs_listener_shard_rcvbuf() - Receive buffer the kernel granted a shard.
 * @l: The listener.
 * @shard: 0 <= shard < cgs_listener_shards().
 *
 * Return: Its size in bytes as getsockopt(SO_RCVBUF) says (the kernel
 * doubles what it is asked for); 0 for a NULL @l or a shard out of range.
 */
CGS_EXPORT size_t cgs_listener_shard_rcvbuf(const struct cgs_listener *l,
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
 * delivered but counted (see cgs_listener_get_loss()), as are ENOBUFS
 * overruns and truncated datagrams.
 *
 * Context: Not safe to call concurrently for the same shard, nor while
 * the runner or cgs_listener_selftest() is active; different shards may
 * be drained from different threads at once.
 * Return: The number of events delivered (0 when nothing was queued); or
 * -EINVAL for a NULL @l or a shard out of range; or -errno when receiving
 * fails (events already passed to @fn in this call stay delivered).
 */
CGS_EXPORT int
cgs_listener_drain(struct cgs_listener *l, unsigned shard, cgs_exit_fn fn,
		   void *user);

struct cgs_run_opts {
	size_t sz;            /* sizeof(struct cgs_run_opts) */
	unsigned batch_ms;    /* after draining, wait this long before the
			       * next wake-up (fewer wake-ups, bigger batches);
			       * 0 (also when opts is NULL): adaptive, 0 to 50
			       * ms from the sockets' fill (20 before 1.3);
			       * CGS_RUN_NO_BATCH: wake per message. (Before
			       * 1.2, 0 in an opts given meant per message.)
			       * A rollup on the /proc fallback (no kernel
			       * source) wants its records while their
			       * parents live: give it 1 (ms), as
			       * taskstat-collect does. */
	bool pin;             /* pin each shard thread to its CPUs */
};

/* cgs_run_opts.batch_ms: no batching, a wake-up per message */
#define CGS_RUN_NO_BATCH (~0u)

/**
 * cgs_listener_run() - Start the receive threads.
 * @l: The listener.
 * @fn: Called per exit event; may be NULL (events discarded, counted in
 *	cgs_loss.discarded).
 * @user: Passed to @fn; must stay valid until cgs_listener_stop().
 * @opts: Options, or NULL for the defaults (adaptive batch wait); not kept.
 *
 * By default (cgs_listener_opts.shards 0) one thread serves every shard,
 * and a thread is added, up to one per shard, while one cannot keep up (a
 * socket over half full although it no longer waits, the kernel dropping,
 * 1,024 datagrams taking over 50 ms to drain with more queued, or draining
 * taking 3/4 of its time), and taken away again when the
 * threads are busy less than 30 % of one thread's time for a second
 * (cgs_listener_get_threads() says how many run). With an adaptive batch wait
 * (batch_ms 0) a thread waits longer while little arrives and shorter as a
 * socket fills, never longer than a burst of 100,000 exits per second and
 * CPU takes to fill half a socket's buffer, at most 50 ms. With
 * cgs_listener_opts.shards given, each shard has a thread of its own.
 *
 * The events of one shard are delivered by one thread at a time, in
 * order; a shard may move between threads, with the move ordered (a
 * happens-before) between them, so a consumer can keep per-shard state
 * without locks. @fn's return value is ignored. Receive errors are logged
 * as warnings and the thread goes on. The runner can be started again
 * after cgs_listener_stop().
 *
 * Context: @fn runs on the shard threads, concurrently for different
 * shards. Do not call cgs_listener_drain() while the runner is active.
 * Return: 0 on success; -EINVAL for a NULL @l, a runner already running
 * or opts->sz too small; -E2BIG for options this library does not know;
 * -errno when the stop eventfd or a thread cannot be created (the
 * threads already started are stopped and joined).
 */
CGS_EXPORT int
cgs_listener_run(struct cgs_listener *l, cgs_exit_fn fn, void *user,
		 const struct cgs_run_opts *opts);

/**
 * cgs_listener_get_threads() - Receive threads of the runner that drain now.
 * @l: The listener, or NULL.
 *
 * Return: How many of the runner's threads are active (1 to
 * cgs_listener_shards()), or 0 for a NULL @l or a runner not running.
 *
 * Context: Safe from any thread, also while the runner changes it.
 */
CGS_EXPORT unsigned cgs_listener_get_threads(const struct cgs_listener *l);

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
CGS_EXPORT int cgs_listener_stop(struct cgs_listener *l);

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
	/* From 1.3: struct cgs_decode_stats' version0 */
	uint64_t version0;
};

/* cgs_listener_get_loss() shard meaning all shards */
#define CGS_ALL_SHARDS (~0u)
/**
 * cgs_listener_get_loss() - Loss and decode counters of a listener.
 * @l: The listener.
 * @shard: 0 <= shard < cgs_listener_shards(), or CGS_ALL_SHARDS for the
 *	sum over all shards.
 * @out: Receives the counters; sz set (see <cgstats.h>), on return the bytes
 *	written.
 *
 * Counters are cumulative since cgs_listener_open().
 *
 * Since 1.3; before, cgs_listener_get_loss() (kept: <cgstats/deprecated.h>).
 *
 * Context: Safe to call from any thread, also while the runner or
 * cgs_listener_drain() is active (the counters may lag by a batch).
 * Return: 0; -EINVAL for a NULL @l or @out, out->sz too small to hold sz,
 * or a shard out of range.
 */
CGS_EXPORT int cgs_listener_get_loss(struct cgs_listener *l, unsigned shard,
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
 * up to @timeout_ms for its exit record on any shard. It drains the shards
 * itself: events it receives are consumed (passed to @fn), not left queued.
 *
 * Context: Only while the runner is not active (before cgs_listener_run()
 * or after cgs_listener_stop()), and not concurrently with
 * cgs_listener_drain().
 * Return: 0 when the record came; -ETIMEDOUT when it never came (e.g. a
 * foreign network namespace); -EINVAL for a NULL @l, an active runner or
 * a negative @timeout_ms; -errno when fork() or receiving fails; -ENOMEM.
 */
CGS_EXPORT int cgs_listener_selftest(struct cgs_listener *l, int timeout_ms,
				     cgs_exit_fn fn, void *user);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_LISTENER_H */
