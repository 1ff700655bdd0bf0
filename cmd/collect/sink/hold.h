/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Exit records held for their names (issue 38.3, 40): a listener shard's
 * record whose cgroup's name look-up is still pending
 * (cgs_identity_src_peek() == -EAGAIN) waits here, in arrival order, until
 * the look-up answers or TSC_HOLD_NS passed, then is formatted with what
 * it has. Bounded: TSC_HOLD_MAX records per shard (a record that finds
 * it full is written at once, unnamed, counted); no file is read and no
 * lock shared between shards is taken. Under the shard's lock.
 */
#ifndef TSC_HOLD_H
#define TSC_HOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "cgstats.h"

#define TSC_HOLD_NS 2000000000ull /* the resolver retries for ~1.3 s */
#define TSC_HOLD_MAX 256u         /* records per shard (~0.8 KiB each) */
#define TSC_HOLD_CHECK_NS 1000000ull /* asked again at most every 1 ms */

struct tsc_hold_ent {
	struct cgs_record rec;
	char *cgroup;
	const char *source;  /* static (cgs_source_name()) */
	uint64_t recv_ns;
	uint64_t until_ns;   /* monotonic: written as it is after this */
};

/* Why held records left (counters: written by the shard's thread under
 * its lock, read by snapshots as they are). */
enum tsc_hold_result {
	TSC_HOLD_NAMED,   /* the look-up named it */
	TSC_HOLD_UNNAMED, /* the look-up answered, no source named it */
	TSC_HOLD_TIMEOUT, /* TSC_HOLD_NS passed, still pending */
	TSC_HOLD_FULL,    /* not held: TSC_HOLD_MAX reached */
	TSC_HOLD__RESULTS
};

struct tsc_hold {
	struct tsc_hold_ent *e; /* a ring of max, made at the first hold */
	unsigned head, n, max;
	uint64_t hold_ns;
	uint64_t next_check_ns;
	uint64_t held;                      /* records held */
	uint64_t out[TSC_HOLD__RESULTS];
};

/* The names of a held record's cgroup: 0 (*id filled), -EAGAIN (still
 * pending), else none. */
typedef int tsc_hold_lookup_fn(void *ctx, const char *cgroup,
			       struct cgs_identity *id);
/* Write a released record with its names (NULL: none). */
typedef void tsc_hold_write_fn(void *ctx, const struct tsc_hold_ent *e,
			       const struct cgs_identity *id);

/* max 0: TSC_HOLD_MAX; hold_ns 0: TSC_HOLD_NS. */
void tsc_hold_init(struct tsc_hold *h, unsigned max, uint64_t hold_ns);
void tsc_hold_free(struct tsc_hold *h);

/* Hold r (copied, and cgroup) until now_ns + hold_ns: 0; -ENOSPC when
 * full (counted TSC_HOLD_FULL), -ENOMEM: the caller writes it now. */
int tsc_hold_push(struct tsc_hold *h, const struct cgs_record *r,
		  const char *cgroup, const char *source, uint64_t recv_ns,
		  uint64_t now_ns);

/* Whether a release is due (something held, TSC_HOLD_CHECK_NS since the
 * last one); cheap: call it per record. */
static inline bool tsc_hold_due(const struct tsc_hold *h, uint64_t now_ns)
{
	return h->n && now_ns >= h->next_check_ns;
}

/* Ask again for every held record, oldest first: those answered (or past
 * their time, or all when @all) are written and leave; the rest keep
 * their order. Returns the number still held. */
unsigned tsc_hold_release(struct tsc_hold *h, uint64_t now_ns, bool all,
			  tsc_hold_lookup_fn *lookup,
			  tsc_hold_write_fn *write, void *ctx);

#endif
