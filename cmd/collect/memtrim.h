/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * When to give the heap back after a burst of connections. Each HTTP
 * connection's memory (libmicrohttpd's pool and its own state) comes from
 * the HTTP thread's malloc arena; once a burst is over glibc keeps it as
 * free heap (it can only shrink an arena from its top), so the collector's
 * RSS would stay at the burst's high-water mark. The watchdog asks here,
 * and calls malloc_trim(0) when the answer is yes.
 */
#ifndef TSC_MEMTRIM_H
#define TSC_MEMTRIM_H

#include <stdbool.h>
#include <stdint.h>

/* Trim once the open connections have fallen to at most half their peak
 * and by at least MEMTRIM_DROP, at most once every MEMTRIM_EVERY_NS. */
#define MEMTRIM_DROP 32u
#define MEMTRIM_EVERY_NS (2ull * 1000000000ull)

struct memtrim {
	unsigned peak;    /* most connections open since the last trim */
	uint64_t last_ns; /* the last trim (0: none yet) */
	uint64_t trims;   /* how many */
};

/* n connections are open now (after an open or a close). */
void memtrim_seen(struct memtrim *t, unsigned n);
/* Whether to trim now, with n open; if so, counts the trim and starts
 * the next peak at n. */
bool memtrim_due(struct memtrim *t, unsigned n, uint64_t now_ns);

#endif
