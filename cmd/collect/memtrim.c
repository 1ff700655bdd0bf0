/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The decision of memtrim.h; the caller calls malloc_trim(). */
#include "memtrim.h"

void memtrim_seen(struct memtrim *t, unsigned n)
{
	if (n > t->peak)
		t->peak = n;
}

bool memtrim_due(struct memtrim *t, unsigned n, uint64_t now_ns)
{
	memtrim_seen(t, n);
	if (t->peak - n < MEMTRIM_DROP || n > t->peak / 2)
		return false;
	if (t->trims && now_ns - t->last_ns < MEMTRIM_EVERY_NS)
		return false; /* still due: asked again at the next tick */
	t->peak = n;
	t->last_ns = now_ns;
	t->trims++;
	return true;
}
