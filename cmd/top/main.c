/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * taskstat-top: a live view of task exits per cgroup. Exit status: 0
 * after q or a clean stop, 1 on a runtime error, 2 for an invalid option.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "signals.h"
#include "top.h"

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
	tsc_signals_block(&set, SIGWINCH);
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
