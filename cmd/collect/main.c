/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * taskstat-collect: per-cgroup accounting of task exits from taskstats.
 * Exit status: 0 after a clean stop, 1 on a runtime error, 2 for an
 * invalid option (always before anything is registered), 3 when writing an
 * output failed; --check the same (0: every item ok).
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "collector.h"
#include "signals.h"

/* --check anywhere: a command line it rejects says FAIL options (and
 * exits 2, as without --check) */
static bool wants_check(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--check"))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct tsc_opts o;
	struct tsc c;
	sigset_t set;
	int r;

	/* SIGHUP, live: reopen the output files; SIGPIPE ignored: EPIPE
	 * instead of dying mid-snapshot */
	tsc_signals_block(&set, SIGUSR2); /* --stream: a full line next */

	r = tsc_parse_options(argc, argv, &o);
	if (r) {
		tsc_opts_free(&o);
		if (r != TSC_PARSE_DONE && wants_check(argc, argv)) {
			puts("FAIL options (the reason is on stderr)");
			return r;
		}
		return r == TSC_PARSE_DONE ? 0 : r;
	}
	tsc_log_max = o.log_level;
	int sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		tsc_err("signalfd: %m\n");
		return TSC_EXIT_ERROR;
	}
	tsc_export = &tsc_http_export; /* --listen, --web-config */
	r = tsc_setup(&c, &o);
	if (o.check)
		r = r ? tsc_check_failed(&c, r) : tsc_check(&c);
	else if (!r)
		r = o.replay ? tsc_replay(&c, sigfd) : tsc_live(&c, sigfd);
	tsc_teardown(&c);
	tsc_opts_free(&o);
	close(sigfd);
	return r;
}
