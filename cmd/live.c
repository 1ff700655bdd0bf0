/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Live collection: listener threads account, the main thread snapshots. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "collector.h"

/* Per-shard callback: runs on the shard's own thread. */
static int on_exit_event(const struct cgs_exit *ev, void *user)
{
	struct tsc *c = user;
	unsigned sh = ev->shard < c->nshards ? ev->shard : 0;
	struct tsc_shard *s = &c->shards[sh];
	bool keep = c->o->events || c->cap_fd >= 0;
	const char *tpath = NULL, *gpath = NULL;
	enum cgs_source tsrc = CGS_SOURCE_NONE, gsrc = CGS_SOURCE_NONE;

	if (ev->task) {
		cgs_rollup_account_src(c->rollup, sh, ev->task, &tpath, &tsrc);
		if (keep) { /* valid only until the next account call */
			buf_reset(&s->path);
			buf_puts(&s->path, tpath ? tpath : CGS_UNKNOWN_CGROUP);
		}
	}
	if (ev->group)
		cgs_rollup_account_src(c->rollup, sh, ev->group, &gpath, &gsrc);
	if (!keep)
		return 0;

	const char *tp = ev->task && s->path.p ? s->path.p : NULL;
	pthread_mutex_lock(&s->lock);
	if (c->o->events) {
		if (ev->task)
			tsc_shard_event(c, s, ev->task, tp,
					cgs_source_name(tsrc), ev->recv_ns, sh);
		if (ev->group)
			tsc_shard_event(c, s, ev->group, gpath,
					cgs_source_name(gsrc), ev->recv_ns, sh);
	}
	if (c->cap_fd >= 0 &&
	    cap_encode_exit(&s->cap, ev->recv_ns, sh, ev->raw, ev->raw_len,
			    tp, ev->group ? gpath : NULL) < 0)
		s->cap_too_big++;
	tsc_shard_flush_locked(c, s, false);
	pthread_mutex_unlock(&s->lock);
	return tsc_output_error(c) ? 1 : 0;
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
		   c->hierarchy ? c->hierarchy : "", c->nshards,
		   c->o->cpus ? c->o->cpus : "all", c->o->no_tgid);
	for (unsigned i = 0; i < c->nshards; i++)
		buf_printf(b, "shard%u_cpus=%s\n", i,
			   c->shard_cpus[i] ? c->shard_cpus[i] : "");
}

/* Report output errors (not EPIPE: the reader went away) and pick the
 * exit status. Shared with replay.c. */
int tsc_stop_status(struct tsc *c, int status)
{
	int oe = __atomic_load_n(&c->out_err, __ATOMIC_ACQUIRE);
	int ce = __atomic_load_n(&c->cap_err, __ATOMIC_ACQUIRE);
	if (oe && oe != EPIPE)
		fprintf(stderr, PROG ": %s: %s\n",
			c->o->output ? c->o->output : "stdout", strerror(oe));
	if (ce)
		fprintf(stderr, PROG ": --record: %s: %s\n", c->o->record,
			strerror(ce));
	return oe || ce ? 1 : status;
}

int tsc_live(struct tsc *c, int sigfd)
{
	struct cgs_listener_opts lo;
	char err[256];
	int r;

	memset(&lo, 0, sizeof(lo));
	lo.sz = sizeof(lo);
	lo.cpus = c->o->cpus;
	lo.shards = c->o->shards;
	lo.rcvbuf = c->o->rcvbuf;
	lo.flags = c->o->no_tgid ? CGS_NO_TGID : 0;
	r = cgs_listener_open(&c->l, &lo);
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", cgs_strerror(r));
		return 1;
	}
	c->nshards = cgs_listener_shards(c->l);
	c->rcvbuf = calloc(c->nshards, sizeof(*c->rcvbuf));
	c->shard_cpus = calloc(c->nshards, sizeof(*c->shard_cpus));
	if (!c->rcvbuf || !c->shard_cpus || tsc_shards_init(c, c->nshards)) {
		fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
		return 1;
	}
	for (unsigned i = 0; i < c->nshards; i++) {
		c->shard_cpus[i] = cgs_listener_shard_cpus(c->l, i);
		c->rcvbuf[i] = cgs_listener_shard_rcvbuf(c->l, i);
	}

	/* The real rollup, one writer per listener shard. */
	struct cgs_rollup_opts ro;
	memset(&ro, 0, sizeof(ro));
	ro.sz = sizeof(ro);
	ro.shards = c->nshards;
	ro.hierarchy = c->o->hierarchy;
	ro.flags = c->o->no_tgid ? CGS_NO_TGID : 0;
	ro.attribution = c->o->attribution == TSC_ATTR_KERNEL
				 ? CGS_ATTRIBUTION_KERNEL
			 : c->o->attribution == TSC_ATTR_AUTO
				 ? CGS_ATTRIBUTION_AUTO
				 : CGS_ATTRIBUTION_PROC;
	ro.kernel_ringbuf = c->o->kernel_buffer;
	ro.shard_cpus = c->shard_cpus;
	/* Fork tracking opens the proc connector: before --user drops the
	 * privilege it needs. */
	if (!c->o->no_fork_events)
		ro.flags |= CGS_ROLLUP_TRACK_FORKS;
	if (c->o->fast_attribution)
		ro.flags |= CGS_ROLLUP_FAST_ATTRIBUTION;
	cgs_rollup_free(c->rollup);
	c->rollup = NULL;
	char why[320] = "";
	ro.errbuf = why;
	ro.errbuf_len = sizeof(why);
	r = cgs_rollup_new(&c->rollup, &ro);
	if (r < 0) {
		if (ro.attribution == CGS_ATTRIBUTION_KERNEL && why[0])
			fprintf(stderr, PROG ": --attribution kernel: %s\n",
				why);
		else
			fprintf(stderr, PROG ": rollup: %s\n", cgs_strerror(r));
		return 1;
	}
	{
		struct cgs_rollup_totals t = { .sz = sizeof(t) };
		cgs_rollup_totals(c->rollup, &t);
		if (t.attribution == CGS_ATTRIBUTION_KERNEL)
			fprintf(stderr, PROG ": attribution: kernel (each "
				"task's cgroup at exit, from BPF; rings of "
				"%llu KiB per shard)\n",
				(unsigned long long)t.kernel_ringbuf / 1024);
		else if (ro.attribution == CGS_ATTRIBUTION_AUTO)
			fprintf(stderr, PROG ": attribution: exact (/proc "
				"fallback: %s)\n",
				cgs_rollup_kernel_error(c->rollup));
		else
			fprintf(stderr, PROG ": attribution: %s (/proc)\n",
				c->o->fast_attribution ? "fast" : "exact");
	}
	if (!c->o->no_fork_events &&
	    cgs_rollup_attribution(c->rollup) == CGS_ATTRIBUTION_PROC) {
		struct cgs_rollup_totals t = { .sz = sizeof(t) };
		if (cgs_rollup_totals(c->rollup, &t) == 0 && !t.fork_tracking)
			fprintf(stderr, PROG ": warning: cannot track forks "
				"(proc connector unavailable); exits whose "
				"parent is gone too will be unattributed\n");
	}
	c->hierarchy = cgs_rollup_hierarchy(c->rollup);

	/* Registered: now shed privileges, before any thread exists. Even
	 * without --user nothing needs a capability from here on (closing
	 * copes with a refused deregistration). */
	if (c->drop) {
		r = priv_drop(&c->user, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, PROG ": --user %s: %s\n", c->o->user,
				err);
			return 1;
		}
	} else if (priv_shed_caps(err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wake_fd < 0) {
		fprintf(stderr, PROG ": eventfd: %s\n", strerror(errno));
		return 1;
	}

	struct buf hi;
	buf_init(&hi);
	hostinfo(c, &hi);
	r = tsc_write_prologue(c, hi.p);
	buf_free(&hi);
	if (r < 0)
		return tsc_stop_status(c, 1);

	/* Prove that exit events reach us (foreign netns, broken kernels)
	 * rather than sit silent; what arrives meanwhile is accounted. */
	r = cgs_listener_selftest(c->l, 1000, on_exit_event, c);
	if (r < 0) {
		if (r == -ETIMEDOUT)
			fprintf(stderr, PROG ": self-test failed: no exit event "
				"arrived within 1 s; the kernel sends taskstats "
				"exit events only to listeners in the initial "
				"network namespace (is this a container or "
				"PrivateNetwork=?)\n");
		else
			fprintf(stderr, PROG ": self-test failed: %s\n",
				cgs_strerror(r));
		return 1;
	}

	if (c->prom_on) {
		tsc_snapshot(c, tsc_real_ns(), false); /* seq 0: /metrics */
		if (c->listen_fd >= 0 && tsc_http_start(c, err, sizeof(err))) {
			fprintf(stderr, PROG ": --listen: %s\n", err);
			return 1;
		}
	}

	struct cgs_run_opts run;
	memset(&run, 0, sizeof(run));
	run.sz = sizeof(run);
	run.batch_ms = 20;
	r = cgs_listener_run(c->l, on_exit_event, c, &run);
	if (r < 0) {
		fprintf(stderr, PROG ": cannot start the listener threads: %s\n",
			cgs_strerror(r));
		return 1;
	}

	const uint64_t iv = c->o->interval_ns;
	const uint64_t flush_iv = c->o->events ? (iv < 1000000000u ? iv :
						  1000000000u) : 0;
	uint64_t now = tsc_mono_ns();
	uint64_t deadline = c->o->duration_ns ? now + c->o->duration_ns
					      : UINT64_MAX;
	uint64_t next_snap = now + iv;
	uint64_t next_flush = flush_iv ? now + flush_iv : UINT64_MAX;
	int status = 0;

	for (;;) {
		uint64_t until = next_snap;
		if (deadline < until)
			until = deadline;
		if (next_flush < until)
			until = next_flush;
		now = tsc_mono_ns();
		struct timespec ts = { 0, 0 };
		if (until > now) {
			ts.tv_sec = (time_t)((until - now) / 1000000000u);
			ts.tv_nsec = (long)((until - now) % 1000000000u);
		}
		struct pollfd pf[2] = {
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = c->wake_fd, .events = POLLIN },
		};
		r = ppoll(pf, 2, &ts, NULL);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, PROG ": poll: %s\n", strerror(errno));
			status = 1;
			break;
		}
		if (r > 0 && (pf[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			if (read(sigfd, &si, sizeof(si)) < 0) {
				/* stop anyway */
			}
			break;
		}
		if (tsc_output_error(c))
			break;
		now = tsc_mono_ns();
		if (now >= deadline)
			break;
		if (now >= next_snap) {
			c->seq++;
			tsc_snapshot(c, tsc_real_ns(), false);
			next_snap += iv;
			if (next_snap <= now) /* we were late: don't burst */
				next_snap = now + iv;
		}
		if (now >= next_flush) {
			tsc_flush_all(c);
			next_flush = now + flush_iv;
		}
	}

	/* Drain what the kernel queued, then the final snapshot. */
	r = cgs_listener_stop(c->l);
	if (r < 0 && !tsc_output_error(c))
		fprintf(stderr, PROG ": stopping the listener: %s\n",
			cgs_strerror(r));
	c->seq++;
	r = tsc_snapshot(c, tsc_real_ns(), true);
	if (r < 0) {
		fprintf(stderr, PROG ": final snapshot: %s\n", cgs_strerror(r));
		status = 1;
	}
	/* A clean stop leaves a complete capture on disk. */
	if (c->cap_fd >= 0 && fsync(c->cap_fd) < 0 && errno != EINVAL)
		tsc_note_error(c, &c->cap_err, errno);
	uint64_t too_big = 0;
	for (unsigned i = 0; i < c->nshards; i++)
		too_big += c->shards[i].cap_too_big;
	if (too_big)
		fprintf(stderr, PROG ": --record: %llu records too large for "
			"the capture format were not recorded\n",
			(unsigned long long)too_big);
	return tsc_stop_status(c, status);
}
