/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-shard process cache: tgid -> cgroup node, so that the threads of a
 * known process cost no syscall (open addressing, no allocation in steady
 * state). How a dead process's entry is told from a pid reused, and the
 * memory bound: docs/design/attribution-pcache.md.
 */
#include <stdlib.h>

#include "attribute/pcache.h"
#include "util/common.h"

int cgsi_pcache_init(struct cgsi_pcache *c, uint32_t cap)
{
	uint32_t n = 64;
	while (n < cap)
		n <<= 1;
	memset(c, 0, sizeof(*c));
	c->slot = calloc(n, sizeof(*c->slot));
	if (!c->slot)
		return -ENOMEM;
	c->mask = n - 1;
	return 0;
}

void cgsi_pcache_fini(struct cgsi_pcache *c)
{
	free(c->slot);
	memset(c, 0, sizeof(*c));
}

bool cgsi_pentry_dead(const struct cgsi_pentry *e,
		      const struct cgsi_deaths *d, uint64_t *since)
{
	if (e->dead_ms) {
		*since = e->dead_ms;
		return true;
	}
	uint64_t v = cgsi_deaths_load(d, e->tgid);
	if (cgsi_death_gen(v) != e->gen) {
		*since = cgsi_death_ms(v);
		return true;
	}
	return false;
}

static bool expired(const struct cgsi_pentry *e,
		    const struct cgsi_pcache_policy *p)
{
	uint64_t since;
	if (cgsi_pentry_dead(e, p->deaths, &since))
		return p->now > since + p->grace_ms;
	return p->now > e->resolved_ms + CGSI_PCACHE_IDLE_MS;
}

void cgsi_pcache_remove(struct cgsi_pcache *c, struct cgsi_pentry *e)
{
	uint32_t i = (uint32_t)(e - c->slot);
	if (e->cg)
		c->ref(e->cg, -1);
	/* backward shift: pull later members of the probe run into the hole */
	for (uint32_t j = (i + 1) & c->mask;; j = (j + 1) & c->mask) {
		struct cgsi_pentry *f = &c->slot[j];
		if (!f->tgid)
			break;
		uint32_t h = cgsi_pcache_hash(c, f->tgid);
		/* f may move to i if its home h is not in (i, j] cyclically */
		if (((j - h) & c->mask) >= ((j - i) & c->mask)) {
			c->slot[i] = *f;
			i = j;
		}
	}
	memset(&c->slot[i], 0, sizeof(c->slot[i]));
	c->count--;
}

uint32_t cgsi_pcache_sweep(struct cgsi_pcache *c, uint32_t n,
			   const struct cgsi_pcache_policy *p)
{
	uint32_t cap = c->mask + 1, evicted = 0;
	if (n >= cap) {
		/* full pass; a removal may shift an unvisited entry into the
		 * current slot, so re-examine it */
		for (uint32_t i = 0; i < cap; i++)
			while (c->slot[i].tgid && expired(&c->slot[i], p)) {
				cgsi_pcache_remove(c, &c->slot[i]);
				evicted++;
			}
		/* entries that wrapped from the start to the end of the array
		 * were already visited at their new index or later: done */
		return evicted;
	}
	for (uint32_t k = 0; k < n; k++) {
		struct cgsi_pentry *e = &c->slot[c->cursor];
		if (e->tgid && expired(e, p)) {
			cgsi_pcache_remove(c, e);
			evicted++;
		}
		c->cursor = (c->cursor + 1) & c->mask;
	}
	return evicted;
}

static int grow(struct cgsi_pcache *c)
{
	uint32_t ncap = (c->mask + 1) * 2;
	struct cgsi_pentry *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	struct cgsi_pentry *old = c->slot;
	uint32_t ocap = c->mask + 1;
	c->slot = ns;
	c->mask = ncap - 1;
	c->cursor = 0;
	for (uint32_t i = 0; i < ocap; i++) {
		if (!old[i].tgid)
			continue;
		uint32_t j = cgsi_pcache_hash(c, old[i].tgid);
		while (ns[j].tgid)
			j = (j + 1) & c->mask;
		ns[j] = old[i];
	}
	free(old);
	return 0;
}

struct cgsi_pentry *cgsi_pcache_insert(struct cgsi_pcache *c, uint32_t tgid,
				       void *cg,
				       const struct cgsi_pcache_policy *p)
{
	cgsi_pcache_sweep(c, 2, p);
	uint32_t cap = c->mask + 1;
	if ((uint64_t)(c->count + 1) * 2 > cap) {
		cgsi_pcache_sweep(c, cap, p);
		if ((uint64_t)(c->count + 1) * 8 > (uint64_t)cap * 3 &&
		    grow(c) < 0 && c->count + 1 >= cap)
			return NULL;
	}
	uint32_t i = cgsi_pcache_hash(c, tgid);
	while (c->slot[i].tgid)
		i = (i + 1) & c->mask;
	struct cgsi_pentry *e = &c->slot[i];
	memset(e, 0, sizeof(*e));
	e->tgid = tgid;
	e->cg = cg;
	if (cg)
		c->ref(cg, 1);
	c->count++;
	return e;
}
