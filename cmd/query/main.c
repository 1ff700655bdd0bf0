/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * taskstat-query: the kernel's accounting of a live thread, thread group
 * or cgroup v1 directory, once or every --watch seconds (deltas). Exit
 * status: query.h, TSQ_EXIT_*.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "delayacct.h"
#include "query.h"
#include "signals.h"
#include "threads.h"

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Write and empty the buffer: 0, or TSQ_EXIT_ERROR after saying why. */
static int flush(struct buf *b)
{
	int r = b->oom ? -ENOMEM : write_all(STDOUT_FILENO, b->p, b->len);

	buf_reset(b);
	if (r < 0) {
		fprintf(stderr, TSQ_PROG ": stdout: %s\n", strerror(-r));
		return TSQ_EXIT_ERROR;
	}
	return 0;
}

/* Sleep until CLOCK_MONOTONIC reaches `until`: 1 when SIGINT, SIGTERM or
 * SIGHUP came first, else 0. */
static int wait_until(int sigfd, uint64_t until)
{
	for (;;) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		if (now >= until)
			return 0;
		uint64_t left = until - now;
		struct timespec ts = { .tv_sec = (time_t)(left / 1000000000u),
				       .tv_nsec = (long)(left % 1000000000u) };
		struct pollfd p = { .fd = sigfd, .events = POLLIN };
		int n = ppoll(&p, 1, &ts, NULL);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return 1;
	}
}

/*
 * kernel.task_delayacct, read with the collector's helper. Off, the
 * kernel still counts CPU (run-queue) delays, from the scheduler's own
 * statistics, but measures no other class; a task started while it was
 * off has none of them even after it is switched on.
 */
static void check_delayacct(void)
{
	int on = tsc_delayacct_read();

	if (on == 0)
		fprintf(stderr, TSQ_PROG ": warning: kernel.task_delayacct "
			"is 0: only cpu delays are measured, the other classes "
			"(blkio, swapin, ...) stay 0; sysctl -w "
			"kernel.task_delayacct=1 measures them for tasks "
			"started after that\n");
	else if (on < 0 && on != -ENOENT)
		fprintf(stderr, TSQ_PROG ": warning: kernel.task_delayacct: "
			"%s\n", strerror(-on));
}

/* One pid or tgid query: the record, its times, the command name (a
 * thread group's record carries none: /proc's). */
static int take(struct cgs_query *q, enum tsq_target t, uint32_t id,
		struct tsq_sample *s)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->rec.sz = sizeof(s->rec);
	r = t == TSQ_TGID ? cgs_query_tgid(q, id, &s->rec)
			  : cgs_query_pid(q, id, &s->rec);
	s->mono_ns = now_ns(CLOCK_MONOTONIC);
	s->real_ns = now_ns(CLOCK_REALTIME);
	if (r < 0)
		return r;
	if (t == TSQ_TGID)
		tsq_proc_comm(id, s->comm);
	else
		memcpy(s->comm, s->rec.comm, sizeof(s->comm));
	return 0;
}

/* Why a pid or tgid query failed, and the exit status for it. */
static int task_error(enum tsq_target t, uint32_t id, int err)
{
	const char *what = t == TSQ_TGID ? "tgid" : "pid";

	switch (-err) {
	case ESRCH:
		fprintf(stderr, TSQ_PROG ": %s %u: no such %s (ESRCH)\n", what,
			id, t == TSQ_TGID ? "thread group" : "thread");
		return TSQ_EXIT_NOTASK;
	case EPERM:
		fprintf(stderr, TSQ_PROG ": %s %u: permission denied: the "
			"kernel answers taskstats queries of threads and "
			"thread groups only with CAP_NET_ADMIN in the initial "
			"user namespace (run as root); --cgroup needs no "
			"capability\n", what, id);
		return TSQ_EXIT_ERROR;
	default:
		fprintf(stderr, TSQ_PROG ": %s %u: %s\n", what, id,
			cgs_strerror(err));
		return TSQ_EXIT_ERROR;
	}
}

static int query_once(struct cgs_query *q, const struct tsq_opts *o,
		      struct buf *b)
{
	struct tsq_sample s, *threads = NULL;
	unsigned n = 0;
	int r = take(q, o->target, o->id, &s);

	if (r < 0)
		return task_error(o->target, o->id, r);
	if (o->threads) {
		r = tsq_threads(q, o->id, &threads, &n);
		if (r < 0) {
			fprintf(stderr, TSQ_PROG ": --threads: tgid %u: %s\n",
				o->id, r == -EPERM ? "permission denied"
						   : cgs_strerror(r));
			return TSQ_EXIT_ERROR;
		}
	}
	if (o->json)
		tsq_json_record(b, &s, threads, n);
	else
		tsq_text_record(b, &s, threads, n);
	free(threads);
	return flush(b);
}

static int query_watch(struct cgs_query *q, const struct tsq_opts *o,
		       int sigfd, struct buf *b)
{
	struct tsq_sample prev, cur;
	int r = take(q, o->target, o->id, &prev);

	if (r < 0)
		return task_error(o->target, o->id, r);
	uint64_t next = prev.mono_ns + o->watch_ns;
	for (unsigned long long seq = 1; !o->count || seq <= o->count;
	     seq++) {
		if (wait_until(sigfd, next))
			return 0;
		r = take(q, o->target, o->id, &cur);
		if (r == -ESRCH) {
			fprintf(stderr, TSQ_PROG ": %s %u has exited\n",
				o->target == TSQ_TGID ? "tgid" : "pid", o->id);
			return 0;
		}
		if (r < 0)
			return task_error(o->target, o->id, r);
		if (o->json)
			tsq_json_delta(b, &prev, &cur, seq);
		else
			tsq_text_delta(b, &prev, &cur, seq == 1);
		r = flush(b);
		if (r)
			return r;
		prev = cur;
		next += o->watch_ns;
		if (next < cur.mono_ns) /* fell behind (stopped, loaded) */
			next = cur.mono_ns + o->watch_ns;
	}
	return 0;
}

static int cgroup_error(const char *dir, int err)
{
	switch (-err) {
	case CGS_ERR_CGROUP2:
		fprintf(stderr, TSQ_PROG ": --cgroup: %s is a cgroup2 "
			"directory: the kernel's cgroupstats counts tasks of "
			"cgroup v1 directories only (e.g. one below "
			"/sys/fs/cgroup/cpu)\n", dir);
		return TSQ_EXIT_UNSUPPORTED;
	case ENOENT:
		return tsc_usage_error("--cgroup", "%s: no such directory",
				       dir);
	case ENOTDIR:
		return tsc_usage_error("--cgroup", "%s is not a directory of "
				       "a cgroup v1 hierarchy", dir);
	default:
		fprintf(stderr, TSQ_PROG ": --cgroup: %s: %s\n", dir,
			cgs_strerror(err));
		return TSQ_EXIT_ERROR;
	}
}

static int query_cgroup(struct cgs_query *q, const struct tsq_opts *o,
			int sigfd, struct buf *b)
{
	uint64_t next = now_ns(CLOCK_MONOTONIC);

	for (unsigned long long seq = o->watch_ns ? 1 : 0;; seq++) {
		CGS_OPTS(cgs_task_states, cs);
		int r = cgs_query_cgroup(q, o->cgroup, &cs);
		uint64_t real = now_ns(CLOCK_REALTIME);

		if (r < 0)
			return cgroup_error(o->cgroup, r);
		if (o->json)
			tsq_json_cgroup(b, o->cgroup, &cs, real, seq);
		else
			tsq_text_cgroup(b, o->cgroup, &cs, real,
					o->watch_ns != 0, seq <= 1);
		r = flush(b);
		if (r || !o->watch_ns || (o->count && seq >= o->count))
			return r;
		next += o->watch_ns;
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		if (next < now)
			next = now + o->watch_ns;
		if (wait_until(sigfd, next))
			return 0;
	}
}

int main(int argc, char **argv)
{
	struct tsq_opts o;
	struct cgs_query *q;
	struct buf b;
	sigset_t set;
	int r;

	/* Seen through the signalfd only: a clean stop of --watch. */
	tsc_signals_block(&set, 0);

	r = tsq_parse_options(argc, argv, &o);
	if (r)
		return r == TSQ_PARSE_DONE ? 0 : r;
	int sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		perror(TSQ_PROG ": signalfd");
		return TSQ_EXIT_ERROR;
	}
	r = cgs_query_open(&q, NULL);
	if (r < 0) {
		fprintf(stderr, TSQ_PROG ": %s\n", cgs_strerror(r));
		close(sigfd);
		return r == -CGS_ERR_NO_TASKSTATS ? TSQ_EXIT_UNSUPPORTED
						  : TSQ_EXIT_ERROR;
	}
	if (o.target == TSQ_TGID) {
		/* the kernel answers for a thread's id with its whole group */
		int g = tsq_proc_tgid(o.id);
		if (g > 0 && (uint32_t)g != o.id) {
			cgs_query_close(q);
			close(sigfd);
			return tsc_usage_error("--tgid", "%u is a thread of "
					       "thread group %d: give --tgid "
					       "%d, or %u as PID", o.id, g, g,
					       o.id);
		}
	}
	if (o.target != TSQ_CGROUP)
		check_delayacct();
	buf_init(&b);
	if (o.target == TSQ_CGROUP)
		r = query_cgroup(q, &o, sigfd, &b);
	else if (o.watch_ns)
		r = query_watch(q, &o, sigfd, &b);
	else
		r = query_once(q, &o, &b);
	buf_free(&b);
	cgs_query_close(q);
	close(sigfd);
	return r;
}
