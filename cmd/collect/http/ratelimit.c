/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The decision of ratelimit.h; the caller writes the lines. */
#include "ratelimit.h"

#define LINE_NS (1000000000ull / RATELIMIT_PER_S)
#define FULL_NS (RATELIMIT_BURST * LINE_NS)

bool ratelimit_allow(struct ratelimit *rl, uint64_t now_ns)
{
	if (!rl->last_ns)
		rl->tokens_ns = FULL_NS;
	else if (now_ns > rl->last_ns)
		rl->tokens_ns += now_ns - rl->last_ns;
	if (rl->tokens_ns > FULL_NS)
		rl->tokens_ns = FULL_NS;
	rl->last_ns = now_ns ? now_ns : 1;
	if (rl->tokens_ns >= LINE_NS) {
		rl->tokens_ns -= LINE_NS;
		return true;
	}
	if (!rl->pending && !rl->refused)
		rl->summary_ns = now_ns; /* the first summary one interval on */
	rl->pending++;
	rl->refused++;
	return false;
}

bool ratelimit_summary(struct ratelimit *rl, uint64_t now_ns, uint64_t *n)
{
	if (!rl->pending || now_ns - rl->summary_ns < RATELIMIT_SUMMARY_NS)
		return false;
	*n = rl->pending;
	rl->pending = 0;
	rl->summary_ns = now_ns;
	return true;
}
