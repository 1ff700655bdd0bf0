/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How many of a noisy source's log lines to print: a token bucket of
 * RATELIMIT_BURST lines refilled at RATELIMIT_PER_S a second; what it
 * refuses is counted, and said in one summary line at most every
 * RATELIMIT_SUMMARY_NS. libmicrohttpd logs a line per refused or broken
 * connection, thousands a second under a slow-client attack, from the
 * thread that serves every client: printed in full, a pipe nobody reads
 * or a slow journal would stall the endpoint. The caller writes.
 */
#ifndef TSC_RATELIMIT_H
#define TSC_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#define RATELIMIT_BURST 5u
#define RATELIMIT_PER_S 1u
#define RATELIMIT_SUMMARY_NS (10ull * 1000000000ull)

struct ratelimit {
	uint64_t tokens_ns;  /* credit: RATELIMIT_PER_S lines a second */
	uint64_t last_ns;    /* the last refill (0: none yet, full bucket) */
	uint64_t summary_ns; /* the last summary (or the first refusal) */
	uint64_t pending;    /* refused since the last summary */
	uint64_t refused;    /* refused in all */
};

/* Whether to print a line now; if not, counts it as refused. */
bool ratelimit_allow(struct ratelimit *rl, uint64_t now_ns);
/* Whether a summary is due now (lines were refused and the last summary
 * is RATELIMIT_SUMMARY_NS old); if so *n = how many since the last one,
 * and the count starts again. Summaries take no token. */
bool ratelimit_summary(struct ratelimit *rl, uint64_t now_ns, uint64_t *n);

#endif
