/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A snapshot's removal checks: which of its cgroups' directories are gone
 * (a bounded slice of stat()s per shard, the kernel source's rmdir
 * events, the entries no node vouches for). */
#include "attribute/ksrc.h"
#include "snapshot/snap_int.h"

struct snap_rmplan cgsi_snap_rmplan(struct cgs_rollup *r)
{
	struct snap_rmplan p = { .events = r->at.ksrc != NULL };
	if (!p.events)
		return p;
	struct cgsi_ksrc_rmstate rm = { 0 };
	cgsi_ksrc_sync_ids(r->at.ksrc, &rm);
	if (r->snap_gen <= 1 || rm.missed != r->rm_missed)
		r->rm_full = CGSI_CHECK_ROUNDS + 1; /* a whole round, at least */
	p.new_rmdirs = r->snap_gen <= 1 || rm.rmdirs != r->rm_rmdirs;
	p.slow = !r->rm_full;
	if (r->rm_full)
		r->rm_full--;
	r->rm_rmdirs = rm.rmdirs;
	r->rm_missed = rm.missed;
	return p;
}

/* stat() e's directory: gone, or another incarnation under its path. */
static void stat_entry(struct cgs_rollup *r, struct cgsi_rshard *s,
		       struct sent *e, uint64_t now)
{
	struct cgsi_cgnode *n = e->node;
	if (n->unknown || n->gone || n->path[0] != '/')
		return;
	bool gone;
	uint64_t ino = cgsi_cg_ino(&r->mount, n->path, s->dir, sizeof(s->dir),
				   &gone);
	if (gone || (ino && n->ino && ino != n->ino)) {
		n->gone = true;
		cgsi_node_seen_removed(n, now);
	}
	if (!e->ino && !n->gone)
		e->ino = ino;
	e->gone = n->gone;
}

/*
 * The removal checks of one shard's copy a->v[base .. base+cnt) (its list
 * order), snap_lock held, no shard lock: the next directories of the
 * round robin from the shard's cursor are stat()ed (CGSI_CHECK_SLICE, or
 * CGSI_CHECK_SLOW while the kernel source misses no cgroup event, plus
 * then every node without an id); with the kernel source, every node
 * whose id had an rmdir event is marked too, looked up when rmdir events
 * came since the last snapshot or the shard has nodes new to the look-up.
 */
void cgsi_snap_check_removed(struct cgs_rollup *r, struct cgsi_rshard *s,
			     struct vec *a, size_t base, size_t cnt,
			     size_t start, const struct snap_rmplan *p,
			     bool ids_new)
{
	size_t want = p->slow ? CGSI_CHECK_SLOW(cnt) : CGSI_CHECK_SLICE(cnt);
	uint64_t now = cgsi_rollup_now(r); /* removed_ms: retire.c */
	for (size_t j = 0; j < want && j < cnt; j++)
		stat_entry(r, s, &a->v[base + (start + j) % cnt], now);
	s->check_at = want < cnt ? a->v[base + (start + want) % cnt].node
				 : NULL;
	if (!p->events || (!p->new_rmdirs && !ids_new && !p->slow))
		return;
	/* from the copies (e->gone is n->gone now): the nodes are cold in
	 * the cache by now, the entries not */
	bool look = p->new_rmdirs || ids_new;
	for (size_t j = 0; j < cnt; j++) {
		struct sent *e = &a->v[base + j];
		if (e->gone || e->unknown)
			continue;
		if (!e->node_ino) {
			if (p->slow) /* no id: no event marks it */
				stat_entry(r, s, e, now);
			continue;
		}
		if (look && cgsi_ksrc_removed(r->at.ksrc, e->ino)) {
			e->gone = e->node->gone = true;
			cgsi_node_seen_removed(e->node, now);
		}
	}
}

/* Directory checks of entries no node vouches for: added ancestors and
 * folded ones (bounded by the number of distinct parent directories). */
void cgsi_snap_stat_unvouched(const struct cgs_rollup *r, struct vec *a)
{
	char dir[PATH_MAX + 64];
	for (size_t i = 0; i < a->n; i++) {
		struct sent *e = &a->v[i];
		if (e->unknown || (e->k && !e->folded))
			continue;
		bool gone;
		uint64_t ino = cgsi_cg_ino(&r->mount, e->path, dir, sizeof(dir),
					   &gone);
		e->gone = e->gone || gone || (ino && e->ino && ino != e->ino);
		if (!e->ino && !e->gone)
			e->ino = ino;
	}
}
