/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Real clocks for the tests (the rollup's fake clock is in fakeproc.h). */
#ifndef CGS_TESTS_CLOCK_H
#define CGS_TESTS_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in seconds: for "within 1 s" checks and rates. */
double cgt_now_s(void);

/* Sleep ms milliseconds, all of them even when signals interrupt. */
void cgt_sleep_ms(long ms);

#endif
