// SPDX-License-Identifier: LGPL-2.1-or-later
/* Exit records held for their names: see hold.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hold.h"

void tsc_hold_init(struct tsc_hold *h, unsigned max, uint64_t hold_ns)
{
	memset(h, 0, sizeof(*h));
	h->max = max ? max : TSC_HOLD_MAX;
	h->hold_ns = hold_ns ? hold_ns : TSC_HOLD_NS;
}

void tsc_hold_free(struct tsc_hold *h)
{
	for (unsigned i = 0; h->e && i < h->n; i++)
		free(h->e[(h->head + i) % h->max].cgroup);
	free(h->e);
	h->e = NULL;
	h->n = 0;
}

int tsc_hold_push(struct tsc_hold *h, const struct cgs_record *r,
		  const char *cgroup, const char *source, uint64_t recv_ns,
		  uint64_t now_ns)
{
	if (h->n >= h->max) {
		h->out[TSC_HOLD_FULL]++;
		return -ENOSPC;
	}
	if (!h->e && !(h->e = calloc(h->max, sizeof(*h->e))))
		return -ENOMEM;
	struct tsc_hold_ent *e = &h->e[(h->head + h->n) % h->max];
	if (!(e->cgroup = strdup(cgroup)))
		return -ENOMEM;
	memcpy(&e->rec, r, sizeof(e->rec));
	e->source = source;
	e->recv_ns = recv_ns;
	e->until_ns = now_ns + h->hold_ns;
	if (!h->n)
		h->next_check_ns = now_ns + TSC_HOLD_CHECK_NS;
	h->n++;
	h->held++;
	return 0;
}

unsigned tsc_hold_release(struct tsc_hold *h, uint64_t now_ns, bool all,
			  tsc_hold_lookup_fn *lookup,
			  tsc_hold_write_fn *write, void *ctx)
{
	unsigned kept = 0, n = h->n;
	for (unsigned i = 0; i < n; i++) {
		struct tsc_hold_ent *e = &h->e[(h->head + i) % h->max];
		struct cgs_identity id = { .sz = sizeof(id) };
		int r = lookup(ctx, e->cgroup, &id);
		if (r == -EAGAIN && !all && now_ns < e->until_ns) {
			/* kept, in order: moved down over those gone */
			struct tsc_hold_ent *to =
				&h->e[(h->head + kept) % h->max];
			if (to != e)
				*to = *e;
			kept++;
			continue;
		}
		write(ctx, e, r == 0 ? &id : NULL);
		h->out[r == 0 ? TSC_HOLD_NAMED : r == -EAGAIN
			? TSC_HOLD_TIMEOUT : TSC_HOLD_UNNAMED]++;
		free(e->cgroup);
		e->cgroup = NULL;
	}
	h->n = kept;
	if (!kept)
		h->head = 0;
	h->next_check_ns = now_ns + TSC_HOLD_CHECK_NS;
	return kept;
}

/* --- the collector's shards ------------------------------------------- */
#include <time.h>

#include "collector.h"
#include "output.h"

struct hold_ctx {
	struct tsc *c;
	struct tsc_shard *s;
	unsigned shard;
};

static int hold_lookup(void *arg, const char *cgroup, struct cgs_identity *id)
{
	struct hold_ctx *x = arg;
	return cgs_identity_src_peek(x->c->names.ident, x->shard, cgroup, id);
}

static void hold_write(void *arg, const struct tsc_hold_ent *e,
		       const struct cgs_identity *id)
{
	struct hold_ctx *x = arg;
	tsc_event_out(x->c, x->s, &e->rec, e->cgroup, e->source, e->recv_ns,
		      x->shard, id);
}

void tsc_hold_shard(struct tsc *c, struct tsc_shard *s, unsigned shard,
		    uint64_t now_ns, bool all)
{
	struct hold_ctx x = { c, s, shard };
	if (s->hold.n && c->names.ident)
		tsc_hold_release(&s->hold, now_ns, all, hold_lookup,
				 hold_write, &x);
}

unsigned tsc_hold_settle(struct tsc *c, uint64_t wait_ns, bool all)
{
	uint64_t end = tsc_mono_ns() + wait_ns;
	for (;;) {
		uint64_t now = tsc_mono_ns();
		bool last = now >= end;
		unsigned held = 0;
		for (unsigned i = 0; i < c->src.nshards; i++) {
			struct tsc_shard *s = &c->src.shards[i];
			pthread_mutex_lock(&s->lock);
			tsc_hold_shard(c, s, i, now, all && last);
			held += s->hold.n;
			pthread_mutex_unlock(&s->lock);
		}
		if (!held || last)
			return held;
		struct timespec ts = { 0, 2000000 }; /* the resolver's turn */
		nanosleep(&ts, NULL);
	}
}
