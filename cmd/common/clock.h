/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The commands' clocks, in ns (clock.c). */
#ifndef TSC_CLOCK_H
#define TSC_CLOCK_H

#include <stdint.h>

uint64_t tsc_mono_ns(void); /* CLOCK_MONOTONIC */
uint64_t tsc_real_ns(void); /* CLOCK_REALTIME */

#endif
