/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every libFuzzer target here shares, and the plain driver that
 * replays their corpora (tests/hardening/fuzz_replay.c) includes too.
 */
#ifndef CGS_FUZZ_COMMON_H
#define CGS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* libFuzzer's entry point (it declares none); the replay driver calls it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise is a crash: libFuzzer keeps the input, and the replay
 * test fails under any build type (assert() would vanish with NDEBUG). */
#define CHECK(c)                                                             \
	do {                                                                  \
		if (!(c))                                                     \
			abort();                                              \
	} while (0)

#endif
