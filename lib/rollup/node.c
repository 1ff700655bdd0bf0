/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cgroup node's extras, made when the node is: its command summaries
 * and OOM baseline. Its histogram and signal sets are not: the
 * accounting path allocates the histogram words (2,496 bytes) with the
 * node's first record (cgsi_node_x()), so an ancestor that only groups
 * (no exit of its own) never has them, and widens them to the signal
 * counts (4,544 bytes) at its first exit by signal (cgsi_node_widen());
 * NULL sets read as zeros everywhere (snap_extra.c, retire.c, oom.c),
 * and the signal words as zeros while !n->sigs. */
#include <stdlib.h>
#include <string.h>

#include "rollup/rollup_int.h"

struct cgsi_topk *cgsi_comms_new(uint32_t cap)
{
	struct cgsi_topk *c = calloc(2, sizeof(*c));
	if (!c)
		return NULL;
	if (cgsi_topk_init(&c[0], cap) < 0 || cgsi_topk_init(&c[1], cap) < 0) {
		cgsi_comms_free(c);
		return NULL;
	}
	return c;
}

void cgsi_comms_free(struct cgsi_topk *c)
{
	if (!c)
		return;
	cgsi_topk_fini(&c[0]);
	cgsi_topk_fini(&c[1]);
	free(c);
}

void cgsi_node_created(struct cgs_rollup *r, struct cgsi_rshard *s,
		       struct cgsi_cgnode *n)
{
	if (r->o.comms)
		n->comms = cgsi_comms_new(r->o.comms);
	cgsi_oom_baseline(r, s, n);
}

struct cgsi_xpair *cgsi_node_widen(struct cgsi_cgnode *n)
{
	if (n->sigs)
		return n->x;
	struct cgsi_xpair *x = realloc(n->x, CGSI_XPAIR_BYTES(true));
	if (!x)
		return NULL;
	size_t had = n->x ? CGSI_XPAIR_BYTES(false) : 0;
	memset((char *)x + had, 0, CGSI_XPAIR_BYTES(true) - had);
	n->x = x;
	n->sigs = true;
	return x;
}
