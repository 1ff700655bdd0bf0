/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Decoding a process exit's wait status (ac_exitcode). Hot path: inline. */
#ifndef CGS_ROLLUP_WSTATUS_H
#define CGS_ROLLUP_WSTATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "cgstats.h"

/*
 * The outcome of wait status @st: the exit code in bits 8..15, else the
 * terminating signal in bits 0..6 (0x7f: stopped, not an end: counted as
 * not clean) and the core-dump bit 0x80. *@sig receives the signal
 * (1..126) of a signaled or core-dumped outcome, else 0.
 */
static inline enum cgs_exit_outcome cgsi_wstatus(uint32_t st, unsigned *sig)
{
	unsigned s = st & 0x7f;
	unsigned by_signal = s != 0 && s != 0x7f;
	/* branch-free: the rollup's hot path adds these up */
	*sig = by_signal ? s : 0;
	return (enum cgs_exit_outcome)(by_signal ? CGS_EXIT_SIGNALED +
						   !!(st & 0x80)
						 : st != 0);
}

/* A crash: killed by SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS or
 * SIGTRAP (the signals of the collector's crash-loop alerts,
 * enum cgs_exe_rank). */
static inline bool cgsi_crash_signal(unsigned sig)
{
	/* Linux's numbers, as cgs_signal_name() has them (no <signal.h>
	 * here: it declares acct() and more in every user of this file) */
	const uint32_t crash = 1u << 11 /* SIGSEGV */ | 1u << 7 /* SIGBUS */ |
			       1u << 4 /* SIGILL */ | 1u << 8 /* SIGFPE */ |
			       1u << 6 /* SIGABRT */ | 1u << 31 /* SIGSYS */ |
			       1u << 5 /* SIGTRAP */;
	return sig < 32 && (crash >> sig & 1u);
}

#endif
