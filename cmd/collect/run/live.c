/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live collection: listener threads account, the main thread snapshots.
 * tsc_live() runs the phases in order: open (live_open.c: listener,
 * rollup, privileges), prologue, start (self-test, /metrics, threads),
 * the loop, and the stop that writes the final snapshot.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "collector.h"
#include "workloads.h"

/* Per-shard callback: runs on the shard's own thread. */
static int on_exit_event(const struct cgs_exit *ev, void *user)
{
	struct tsc *c = user;
	unsigned sh = ev->shard < c->src.nshards ? ev->shard : 0;

	if (__builtin_expect(!c->o->events && c->io.cap_fd < 0, 1)) {
		/* no exit lines, no capture: the accounting alone, no path
		 * or source asked for */
		if (ev->task)
			cgs_rollup_add(c->src.rollup, sh, ev->task, NULL, NULL);
		if (ev->group)
			cgs_rollup_add(c->src.rollup, sh, ev->group, NULL, NULL);
		return 0;
	}

	struct tsc_shard *s = &c->src.shards[sh];
	CGS_OPTS(cgs_add_result, t);
	CGS_OPTS(cgs_add_result, g);

	if (ev->task) {
		cgs_rollup_add(c->src.rollup, sh, ev->task, NULL, &t);
		/* valid only until the next account call */
		buf_reset(&s->path);
		buf_puts(&s->path, t.path ? t.path : CGS_UNKNOWN_CGROUP);
	}
	if (ev->group)
		cgs_rollup_add(c->src.rollup, sh, ev->group, NULL, &g);

	const char *tp = ev->task && s->path.p ? s->path.p : NULL;
	pthread_mutex_lock(&s->lock);
	if (c->o->events) {
		if (ev->task)
			tsc_shard_event(c, s, ev->task, tp,
					cgs_source_name(t.source), ev->recv_ns, sh);
		if (ev->group)
			tsc_shard_event(c, s, ev->group, g.path,
					cgs_source_name(g.source), ev->recv_ns, sh);
	}
	if (c->io.cap_fd >= 0 &&
	    cap_encode_exit(&s->cap, ev->recv_ns, sh, ev->raw, ev->raw_len,
			    tp, ev->group ? g.path : NULL) < 0)
		s->cap_too_big++;
	tsc_shard_flush_locked(c, s, false);
	bool left = s->ev.len || s->cap.len;
	pthread_mutex_unlock(&s->lock);
	if (left)
		tsc_events_pending(c);
	return tsc_output_error(c); /* non-zero: the drain returns early */
}

static void hostinfo(struct tsc *c, struct buf *b)
{
	struct utsname u;
	if (uname(&u) == 0)
		buf_printf(b, "host=%s\nkernel=%s\nkernel_version=%s\n"
			   "machine=%s\n", u.nodename, u.release, u.version,
			   u.machine);
	buf_printf(b, "collector=taskstat-collect %s\nlibcgstats=%s\n",
		   TSC_VERSION, cgs_version());
	buf_printf(b, "interval_ns=%llu\n",
		   (unsigned long long)c->o->interval_ns);
	buf_printf(b, "hierarchy=%s\nshards=%u\ncpus=%s\nno_tgid=%d\n",
		   c->src.hierarchy ? c->src.hierarchy : "", c->src.nshards,
		   c->o->cpus ? c->o->cpus : "all", c->o->no_tgid);
	for (unsigned i = 0; i < c->src.nshards; i++)
		buf_printf(b, "shard%u_cpus=%s\n", i,
			   c->src.shard_cpus[i] ? c->src.shard_cpus[i] : "");
}

/* Report output errors (not EPIPE: the reader went away) and pick the
 * exit status: status, else TSC_EXIT_ERROR after EPIPE, else
 * TSC_EXIT_OUTPUT after failed writes. Shared with replay.c. */
int tsc_stop_status(struct tsc *c, int status)
{
	int oe = __atomic_load_n(&c->io.out_err, __ATOMIC_ACQUIRE);
	int ce = __atomic_load_n(&c->io.cap_err, __ATOMIC_ACQUIRE);
	int failed = tsc_outputs_finish(c);

	if (oe && oe != -EPIPE)
		tsc_err("%s: %s\n",
			c->o->output ? c->o->output : "stdout", strerror(-oe));
	if (ce)
		tsc_err("--record: %s: %s\n", c->o->record,
			strerror(-ce));
	if (status)
		return status;
	return oe || ce ? TSC_EXIT_ERROR : failed;
}

/* CSV header and capture header, before any line. */
static int write_prologue(struct tsc *c)
{
	struct buf hi;
	int r;

	buf_init(&hi);
	hostinfo(c, &hi);
	r = tsc_write_prologue(c, hi.p);
	buf_free(&hi);
	return r;
}

/* Type=notify: started once exit events are known to arrive (the
 * self-test) and the threads account them; the first watchdog ping. */
static void say_ready(struct tsc *c)
{
	char msg[160];

	snprintf(msg, sizeof(msg),
		 "READY=1\nSTATUS=collecting task exits on %u listener "
		 "socket%s, a snapshot every %llu ms",
		 c->src.nshards, c->src.nshards == 1 ? "" : "s",
		 (unsigned long long)(c->o->interval_ns / 1000000u));
	tsc_notify_send(&c->notify, msg);
	tsc_notify_watchdog(&c->notify, tsc_mono_ns());
}

/* Everything up to running listener threads; prints why it failed. */
static int live_start(struct tsc *c)
{
	struct cgs_run_opts run;
	char err[256];
	int r;

	/* Prove that exit events reach us (foreign netns, broken kernels)
	 * rather than sit silent; what arrives meanwhile is accounted. */
	r = cgs_listener_selftest(c->src.l, 1000, on_exit_event, c);
	if (r == -ETIMEDOUT) {
		tsc_err("self-test failed: no exit event "
			"arrived within 1 s; the kernel sends taskstats "
			"exit events only to listeners in the initial "
			"network namespace (is this a container or "
			"PrivateNetwork=?)\n");
		return r;
	}
	if (r < 0) {
		tsc_err("self-test failed: %s\n",
			cgs_strerror(r));
		return r;
	}
	if (c->srv.prom_on || c->srv.json_on) {
		/* seq 0: /metrics and /snapshot answer from the start */
		tsc_snapshot(c, tsc_real_ns(), false);
		if (c->net.listen_fd >= 0) {
			r = tsc_export->http_start(c, err, sizeof(err));
			if (r < 0) {
				tsc_err("--listen: %s\n", err);
				return r;
			}
		}
	}
	memset(&run, 0, sizeof(run));
	run.sz = sizeof(run);
	/* batch_ms 0: the library's adaptive wait (up to 50 ms), where the
	 * kernel source names each exit's cgroup. The /proc fallback needs
	 * a record while its process's parent still lives (a shell that ran
	 * 30 short commands is gone ~30 ms later): 1 ms, as it measured
	 * (tests/kubernetes/image_runc.py's workload: 7 of 7 named, against
	 * 1 of 4 with the adaptive wait and 2 of 3 with the 20 ms of 1.2). */
	CGS_OPTS(cgs_rollup_totals, t);
	if (cgs_rollup_get_totals(c->src.rollup, &t) == 0 &&
	    t.attribution != CGS_ATTRIBUTION_KERNEL)
		run.batch_ms = TSC_FALLBACK_BATCH_MS;
	r = cgs_listener_run(c->src.l, on_exit_event, c, &run);
	if (r < 0) {
		tsc_err("cannot start the listener threads: %s\n",
			cgs_strerror(r));
		return r;
	}
	say_ready(c);
	return 0;
}

/* Wait for a signal or a listener thread's error, at most until the
 * monotonic time `until`. Returns the signal's number, 0 otherwise (timeout,
 * wake-up, EINTR), or a negative errno. */
static int wait_until(struct tsc *c, int sigfd, uint64_t until)
{
	uint64_t now = tsc_mono_ns();
	struct timespec ts = { 0, 0 };
	struct pollfd pf[2] = {
		{ .fd = sigfd, .events = POLLIN },
		{ .fd = c->src.wake_fd, .events = POLLIN },
	};

	if (until > now) {
		ts.tv_sec = (time_t)((until - now) / 1000000000u);
		ts.tv_nsec = (long)((until - now) % 1000000000u);
	}
	if (ppoll(pf, 2, &ts, NULL) < 0)
		return errno == EINTR ? 0 : -errno;
	if (pf[1].revents & POLLIN) {
		/* reset: an output error (checked by the caller) or lines
		 * waiting in a shard buffer (c->io.ev_pending) */
		uint64_t v;
		if (read(c->src.wake_fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: read by an earlier wake-up */
		}
	}
	if (pf[0].revents & POLLIN) {
		struct signalfd_siginfo si;
		if (read(sigfd, &si, sizeof(si)) != sizeof(si))
			return SIGTERM; /* stop anyway */
		return (int)si.ssi_signo;
	}
	return 0;
}

/*
 * Snapshot every --interval and flush events TSC_EV_PROMPT_NS after a shard
 * thread left the first of them in its buffer (woken by it), and at least
 * once a second (held exits answered meanwhile), until SIGINT/SIGTERM,
 * --duration or EPIPE on the main output (reported by live_stop); SIGHUP
 * reopens the output files, SIGUSR2 makes the next snapshot line full
 * (--stream changes). Returns 0, or a negative errno when waiting failed
 * (printed).
 */
static int live_loop(struct tsc *c, int sigfd)
{
	const uint64_t iv = c->o->interval_ns;
	const uint64_t flush_iv = c->o->events ? (iv < 1000000000u ? iv :
						  1000000000u) : 0;
	uint64_t now = tsc_mono_ns();
	uint64_t deadline = c->o->duration_ns ? now + c->o->duration_ns
					      : UINT64_MAX;
	uint64_t next_snap = now + iv;
	uint64_t next_flush = flush_iv ? now + flush_iv : UINT64_MAX;
	uint64_t prompt_at = UINT64_MAX; /* the prompt flush, when due */
	int r;

	/* --events: the map of executables (made and first filled before the
	 * capabilities went, live_open.c), rescanned after each snapshot */

	for (;;) {
		uint64_t until = next_snap;
		if (deadline < until)
			until = deadline;
		if (next_flush < until)
			until = next_flush;
		if (prompt_at < until)
			until = prompt_at;
		if (tsc_notify_deadline(&c->notify) < until)
			until = tsc_notify_deadline(&c->notify);
		if (tsc_export && tsc_export->web_deadline(c) < until)
			until = tsc_export->web_deadline(c);
		r = wait_until(c, sigfd, until);
		if (r < 0) {
			tsc_err("poll: %s\n", strerror(-r));
			return r;
		}
		if (r == SIGUSR2) { /* --stream changes: the next line full */
			tsc_stream_full_next(&c->io.stream);
			continue;
		}
		if (r == SIGHUP) { /* logrotate: reopen; reload certificates */
			tsc_reopen(c);
			/* containers not named yet: looked up again */
			tsc_workloads_watch(c);
			if (tsc_export)
				tsc_export->web_reload(c, "SIGHUP");
			continue;
		}
		if (r > 0 || tsc_output_error(c))
			return 0;
		now = tsc_mono_ns();
		/* the loop's own pulse: a loop stuck anywhere stops it */
		tsc_notify_watchdog(&c->notify, now);
		if (tsc_export)
			tsc_export->web_poll(c, now);
		if (now >= deadline)
			return 0;
		if (now >= next_snap) {
			c->io.seq++;
			tsc_snapshot(c, tsc_real_ns(), false);
			tsc_debug("snapshot %llu written in %.1f ms\n",
				  (unsigned long long)c->io.seq,
				  (double)(tsc_mono_ns() - now) / 1e6);
			next_snap += iv;
			if (next_snap <= now) /* we were late: don't burst */
				next_snap = now + iv;
			if (c->names.exe)
				exe_cache_scan(c->names.exe);
		}
		if (prompt_at == UINT64_MAX &&
		    __atomic_load_n(&c->io.ev_pending, __ATOMIC_ACQUIRE))
			prompt_at = now + TSC_EV_PROMPT_NS;
		if (now >= prompt_at || now >= next_flush) {
			/* cleared first: a line left during the flush wakes
			 * the loop again */
			__atomic_store_n(&c->io.ev_pending, 0,
					 __ATOMIC_RELEASE);
			prompt_at = UINT64_MAX;
			tsc_flush_all(c);
			if (now >= next_flush)
				next_flush = now + flush_iv;
		}
	}
}

/* Drain what the kernel queued, write the final snapshot, leave a complete
 * capture on disk; err is the loop's. Returns the exit status. */
static int live_stop(struct tsc *c, int err)
{
	int status = err < 0 ? TSC_EXIT_ERROR : 0;
	uint64_t too_big = 0;
	int r;

	tsc_notify_send(&c->notify, "STOPPING=1");
	r = cgs_listener_stop(c->src.l);
	if (r < 0 && !tsc_output_error(c))
		tsc_err("stopping the listener: %s\n",
			cgs_strerror(r));
	/* the exits held for their names: until answered, at most their
	 * hold; then as they are */
	tsc_hold_settle(c, TSC_HOLD_NS, true);
	/* the events and capture records drained last reach their files even
	 * if the final snapshot fails */
	tsc_flush_all(c);
	c->io.seq++;
	r = tsc_snapshot(c, tsc_real_ns(), true);
	if (r < 0) {
		tsc_err("final snapshot: %s\n", cgs_strerror(r));
		status = TSC_EXIT_ERROR;
	}
	if (c->io.cap_fd >= 0 && fsync(c->io.cap_fd) < 0 && errno != EINVAL) {
		int e = -errno;
		tsc_err("--record: %s: fsync: %s\n",
			c->o->record, strerror(-e));
		c->io.ost[TSC_OUT_RECORD].errors++;
		if (!c->io.ost[TSC_OUT_RECORD].first_err)
			c->io.ost[TSC_OUT_RECORD].first_err = e;
	}
	for (unsigned i = 0; i < c->src.nshards; i++)
		too_big += c->src.shards[i].cap_too_big;
	if (too_big)
		tsc_warn("--record: %llu records too large for "
			"the capture format were not recorded\n",
			(unsigned long long)too_big);
	return tsc_stop_status(c, status);
}

int tsc_live_start(struct tsc *c)
{
	int r = tsc_live_open(c);
	return r < 0 ? r : live_start(c);
}

int tsc_live(struct tsc *c, int sigfd)
{
	if (tsc_live_open(c) < 0)
		return TSC_EXIT_ERROR;
	if (write_prologue(c) < 0) /* the write error is c's to report */
		return tsc_stop_status(c, TSC_EXIT_ERROR);
	if (live_start(c) < 0)
		return TSC_EXIT_ERROR;
	return live_stop(c, live_loop(c, sigfd));
}
