/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The commands' clocks, in ns (clock.h). */
#include <stdint.h>
#include <time.h>

#include "clock.h"

uint64_t tsc_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tsc_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
