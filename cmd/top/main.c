/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * taskstat-top: a live view of task exits per cgroup. Exit status: 0
 * after q or a clean stop, 1 on a runtime error, 2 for an invalid option.
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

#include "collector.h"
#include "top.h"

void top_view_setup(struct top_view *v, const struct top_opts *o)
{
	top_view_init(v);
	v->tree = !o->flat;
	v->sort = o->sort;
	v->max_depth = o->max_depth;
	v->match = o->match;
}

int top_refresh(struct top_view *v, struct top_source *src, char *err,
		size_t errlen)
{
	struct top_frame f;
	char *json;
	size_t len;
	int r;

	r = top_source_fetch(src, &json, &len, err, errlen);
	if (r < 0)
		return r;
	r = top_frame_parse(json, len, &f, err, errlen);
	free(json);
	if (r < 0)
		return r;
	/* a collector that has not snapshotted since: nothing new */
	if (v->cur.cg && f.seq == v->cur.seq && f.time == v->cur.time) {
		top_frame_free(&f);
		return 0;
	}
	r = top_view_push(v, &f);
	top_frame_free(&f);
	if (r < 0) {
		snprintf(err, errlen, "%s", strerror(-r));
		return r;
	}
	return 1;
}

uint64_t top_interval(const struct top_opts *o, const struct top_view *v)
{
	if (o->connect && !o->tsc.interval_set && v->cur.interval_s >= 0.01)
		return (uint64_t)(v->cur.interval_s * 1e9);
	return o->tsc.interval_ns;
}

int top_wait(int sigfd, bool watch_input, uint64_t until, bool *resized)
{
	struct pollfd pf[2] = {
		{ .fd = sigfd, .events = POLLIN },
		{ .fd = STDIN_FILENO, .events = POLLIN },
	};
	uint64_t now = tsc_mono_ns();
	struct timespec ts = { 0, 0 };

	if (until > now) {
		ts.tv_sec = (time_t)((until - now) / 1000000000u);
		ts.tv_nsec = (long)((until - now) % 1000000000u);
	}
	if (ppoll(pf, watch_input ? 2 : 1, &ts, NULL) < 0)
		return 0; /* EINTR: look again */
	if (pf[0].revents & POLLIN) {
		struct signalfd_siginfo si;
		if (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGWINCH) {
				*resized = true;
				return 0;
			}
			return 1;
		}
	}
	if (watch_input && (pf[1].revents & (POLLIN | POLLHUP)))
		return 2;
	return 0;
}

int main(int argc, char **argv)
{
	struct top_opts o;
	struct top_source *src = NULL;
	sigset_t set;
	int r;

	r = top_parse_options(argc, argv, &o);
	if (r) {
		top_opts_free(&o);
		return r == TSC_PARSE_DONE ? 0 : r;
	}
	bool screen = !o.batch && isatty(STDOUT_FILENO) &&
		      isatty(STDIN_FILENO);
	/* Blocked before any thread exists (as in taskstat-collect): only
	 * the signalfd sees them. SIGWINCH too, so a resize reaches the main
	 * loop whichever thread the kernel picks. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGWINCH);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	int sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		perror(TOP_PROG ": signalfd");
		top_opts_free(&o);
		return TSC_EXIT_ERROR;
	}
	r = top_source_open(&src, &o);
	if (!r)
		r = screen ? top_screen(&o, src, sigfd)
			   : top_plain(&o, src, sigfd);
	top_source_close(src);
	top_opts_free(&o);
	close(sigfd);
	return r;
}
