/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/outcome.h>: how a process exited, from its wait status, and
 * signal names. Part of <cgstats.h>.
 */
#ifndef CGSTATS_OUTCOME_H
#define CGSTATS_OUTCOME_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Outcome of a process exit, from its raw wait status (ac_exitcode). */
enum cgs_exit_outcome {
	CGS_EXIT_CLEAN = 0,   /* exit(0) */
	CGS_EXIT_NONZERO = 1, /* exit(n), n != 0 */
	CGS_EXIT_SIGNALED = 2, /* killed by a signal, no core dump */
	CGS_EXIT_CORE_DUMPED = 3, /* killed by a signal, core dumped */
};

/**
 * cgs_exit_classify() - Classify a wait status.
 * @status: Raw wait status, as cgs_record.exit_status.
 * @sig: If not NULL, receives the signal number (1..127) of a signaled
 *	outcome, else 0.
 *
 * Since 1.2; before, cgs_exit_outcome() (kept: <cgstats/deprecated.h>).
 *
 * Context: Any thread.
 * Return: The outcome. (A status that is neither an exit nor a
 * termination by signal, e.g. a stop, counts as CGS_EXIT_NONZERO.)
 */
CGS_EXPORT enum cgs_exit_outcome cgs_exit_classify(uint32_t status, int *sig);

/**
 * cgs_signal_name() - Name of a signal number.
 * @sig: Signal number.
 *
 * Context: Any thread.
 * Return: "SIGKILL", "SIGSEGV", ..., "SIGRTMIN+3" (Linux numbers, SIGRTMIN
 * being 34 as glibc has it; 32 and 33 are "SIG32" and "SIG33"), in static
 * storage; NULL for a number outside 1..CGS_SIGNAL_SLOTS-1.
 */
CGS_EXPORT const char *cgs_signal_name(int sig);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_OUTCOME_H */
