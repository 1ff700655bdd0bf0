/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See signals.h. */
#include "signals.h"

void tsc_signals_block(sigset_t *set, int extra)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	if (extra)
		sigaddset(set, extra);
	sigprocmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}
