/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-shard process cache: tgid -> cgroup node (an opaque reference the
 * cache's owner gives, counted through its ref callback). See pcache.c. */
#ifndef CGS_ATTRIBUTE_PCACHE_H
#define CGS_ATTRIBUTE_PCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "attribute/deaths.h"

/* Entries not re-resolved for this long are dropped even if no exit was
 * seen for them (an exit record lost to an overrun must not pin an entry
 * until its pid comes round again). */
#define CGSI_PCACHE_IDLE_MS 600000u

/* A dead entry re-reads /proc at most this often (see fallback.c). */
#define CGSI_DEAD_RECHECK_MS 100u

struct cgsi_pentry {
	uint32_t tgid;          /* 0: free slot */
	uint32_t gen : 24;      /* death generation of tgid when resolved */
	uint32_t gone : 1;      /* /proc/<tgid> was found missing: re-reading
				 * it could only find a pid reuser */
	uint32_t inferred : 1;  /* cg came from a parent or fork ancestor,
				 * not from this process's own /proc */
	uint32_t reaped : 1;    /* found gone by a re-read while alive as far
				 * as known: its exit record may still come */
	uint32_t kin : 1;       /* read as the parent of an exit, not for a
				 * record of its own: its own first record
				 * reads /proc again (reaped: this cg) */
	void *cg;               /* the node: holds a reference (ref()) */
	uint64_t resolved_ms;   /* cgroup last read from /proc (or inferred) */
	uint64_t dead_ms;       /* 0: alive as far as this shard knows */
};

struct cgsi_pcache {
	struct cgsi_pentry *slot;
	uint32_t mask;   /* capacity - 1 */
	uint32_t count;
	uint32_t cursor; /* incremental sweep position */
	/* take (+1) or drop (-1) a reference on a node (not NULL) */
	void (*ref)(void *node, int delta);
};

struct cgsi_pcache_policy {
	const struct cgsi_deaths *deaths;
	uint64_t now, grace_ms;
};

/* An empty cache; its owner then sets c->ref. */
int cgsi_pcache_init(struct cgsi_pcache *c, uint32_t cap);
void cgsi_pcache_fini(struct cgsi_pcache *c);

static inline uint32_t cgsi_pcache_hash(const struct cgsi_pcache *c,
					uint32_t tgid)
{
	return (tgid * 2654435761u) & c->mask;
}

static inline struct cgsi_pentry *cgsi_pcache_find(struct cgsi_pcache *c,
						   uint32_t tgid)
{
	for (uint32_t i = cgsi_pcache_hash(c, tgid);; i = (i + 1) & c->mask) {
		struct cgsi_pentry *e = &c->slot[i];
		if (e->tgid == tgid)
			return e;
		if (!e->tgid)
			return NULL;
	}
}

/*
 * Insert tgid (must be absent) pointing at cg (takes a reference). May
 * sweep and grow: entry pointers obtained before are invalid afterwards.
 * NULL on ENOMEM.
 */
struct cgsi_pentry *cgsi_pcache_insert(struct cgsi_pcache *c, uint32_t tgid,
				       void *cg,
				       const struct cgsi_pcache_policy *p);

/* Point e at node n (not NULL), moving its reference. */
static inline void cgsi_pentry_repoint(struct cgsi_pcache *c,
				       struct cgsi_pentry *e, void *n)
{
	if (n == e->cg)
		return;
	if (e->cg)
		c->ref(e->cg, -1);
	c->ref(n, 1);
	e->cg = n;
}

/* Drop an entry (releases its cgroup reference). Invalidates pointers. */
void cgsi_pcache_remove(struct cgsi_pcache *c, struct cgsi_pentry *e);

/* Whether an entry's process is known dead, and since when (ms). */
bool cgsi_pentry_dead(const struct cgsi_pentry *e,
		      const struct cgsi_deaths *d, uint64_t *since);

/* Evict expired entries among the next n slots (n >= capacity: all).
 * Returns how many were evicted. */
uint32_t cgsi_pcache_sweep(struct cgsi_pcache *c, uint32_t n,
			   const struct cgsi_pcache_policy *p);

#endif
