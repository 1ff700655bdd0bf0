/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The signals every command of cmd/ sees through a signalfd only
 * (signals.c, in tsc_util). */
#ifndef TSC_SIGNALS_H
#define TSC_SIGNALS_H

#include <signal.h>

/*
 * Fill *set with SIGINT, SIGTERM, SIGHUP and extra (0: none), block them
 * (call it before any thread exists, so that every thread inherits the
 * mask and only a signalfd of *set sees them) and ignore SIGPIPE: a
 * write to a closed pipe returns EPIPE instead of killing the command.
 */
void tsc_signals_block(sigset_t *set, int extra);

#endif
