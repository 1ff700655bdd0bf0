/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cgroup node's extras, made when the node is: its command and
 * executable summaries
 * and OOM baseline. Its histogram and signal sets are not: the
 * accounting path allocates them sparse (extra.h, struct cgsi_xnode:
 * 288 bytes for 8 words) with the node's first record (cgsi_node_x()), so
 * an ancestor that only groups (no exit of its own) never has them, grows
 * them as words are first used (cgsi_xnode_slot()), and widens them to
 * every histogram slot and the signal counts (4,704 bytes) at its first
 * exit by signal (cgsi_node_widen());
 * NULL sets read as zeros everywhere (snap_extra.c, retire.c, oom.c),
 * and the signal words as zeros while !n->sigs. */
#include <stdlib.h>
#include <string.h>

#include "rollup/rollup_int.h"

struct cgsi_topk *cgsi_tops_new(unsigned k)
{
	return calloc(k, sizeof(struct cgsi_topk));
}

void cgsi_tops_free(struct cgsi_topk *c, unsigned k)
{
	if (!c)
		return;
	for (unsigned i = 0; i < k; i++)
		cgsi_topk_fini(&c[i]); /* calloc'd: a zeroed one is a no-op */
	free(c);
}

void cgsi_node_created(struct cgs_rollup *r, struct cgsi_rshard *s,
		       struct cgsi_cgnode *n)
{
	s->ids_new = true; /* snap_removed.c */
	if (r->o.comms)
		n->comms = cgsi_tops_new(CGSI_NCOMM);
	if (r->o.exes)
		n->exes = cgsi_tops_new(CGSI_NEXE);
	cgsi_oom_baseline(r, s, n);
}

struct cgsi_xnode *cgsi_xnode_new(uint64_t *nz)
{
	struct cgsi_xnode *x = malloc(CGSI_XNODE_BYTES(CGSI_XSLOTS_FIRST));
	if (!x)
		return NULL;
	memset(x->slot, CGSI_XNOSLOT, sizeof(x->slot));
	for (unsigned k = 0; k < CGS_HIST__COUNT; k++) {
		x->slot[CGSI_XW_SUM(k)] = (uint8_t)k;
		x->w[k][0] = x->w[k][1] = 0;
		cgsi_nz_mark(nz, CGSI_XW_SUM(k));
	}
	x->used = CGS_HIST__COUNT;
	x->cap = CGSI_XSLOTS_FIRST;
	return x;
}

uint64_t *cgsi_xnode_slot(struct cgsi_xnode **xp, uint64_t *nz, size_t word)
{
	struct cgsi_xnode *x = *xp;
	if (x->used == x->cap) {
		/* half as many again: a busy cgroup's 40-odd words in a few
		 * steps, never more than the 156 histogram words (a pair
		 * with the signal counts has room for them all: never full) */
		unsigned cap = x->cap + x->cap / 2;
		if (cap > CGSI_XSET_HIST_WORDS)
			cap = CGSI_XSET_HIST_WORDS;
		x = realloc(x, CGSI_XNODE_BYTES(cap));
		if (!x)
			return NULL;
		x->cap = (uint8_t)cap;
		*xp = x;
	}
	unsigned s = x->used++;
	x->slot[word] = (uint8_t)s;
	x->w[s][0] = x->w[s][1] = 0;
	cgsi_nz_mark(nz, word);
	return x->w[s];
}

struct cgsi_xnode *cgsi_node_widen(struct cgsi_cgnode *n)
{
	if (n->sigs)
		return n->x;
	if (!n->x && !(n->x = cgsi_xnode_new(n->xnz)))
		return NULL;
	struct cgsi_xnode *x = realloc(n->x, CGSI_XNODE_BYTES(CGSI_XSET_WORDS));
	if (!x)
		return NULL;
	/* the histogram words' slots stay where they are, the signal
	 * counts' pairs after every slot there can be */
	memset(x->w[x->cap], 0,
	       (CGSI_XSET_WORDS - x->cap) * sizeof(x->w[0]));
	x->cap = CGSI_XSET_HIST_WORDS;
	n->x = x;
	n->sigs = true;
	return x;
}
