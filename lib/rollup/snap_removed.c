/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A snapshot's removal checks: which of its cgroups' directories are gone
 * (a bounded slice of stat()s per shard, the kernel source's rmdir
 * events, the entries no node vouches for). */
#include "attribute/ksrc.h"
#include "rollup/snap_int.h"

/*
 * The removal checks of one shard's copy a->v[base .. base+cnt) (its list
 * order), snap_lock held, no shard lock: the next CGSI_CHECK_SLICE(cnt)
 * directories from the shard's cursor are stat()ed; with the kernel
 * source, every node whose id had an rmdir event is marked too.
 */
void cgsi_snap_check_removed(struct cgs_rollup *r, struct cgsi_rshard *s,
			     struct vec *a, size_t base, size_t cnt,
			     size_t start)
{
	size_t want = CGSI_CHECK_SLICE(cnt);
	uint64_t now = cgsi_rollup_now(r); /* removed_ms: retire.c */
	for (size_t j = 0; j < want && j < cnt; j++) {
		struct sent *e = &a->v[base + (start + j) % cnt];
		struct cgsi_cgnode *n = e->node;
		if (n->unknown || n->gone || n->path[0] != '/')
			continue;
		bool gone;
		uint64_t ino = cgsi_cg_ino(&r->mount, n->path, s->dir,
					   sizeof(s->dir), &gone);
		if (gone || (ino && n->ino && ino != n->ino)) {
			n->gone = true;
			cgsi_node_seen_removed(n, now);
		}
		if (!e->ino && !n->gone)
			e->ino = ino;
		e->gone = n->gone;
	}
	s->check_at = want < cnt ? a->v[base + (start + want) % cnt].node
				 : NULL;
	if (!r->at.ksrc)
		return;
	/* from the copies (e->gone is n->gone now): the nodes are cold in
	 * the cache by now, the entries not */
	for (size_t j = 0; j < cnt; j++) {
		struct sent *e = &a->v[base + j];
		if (!e->gone && e->node_ino && !e->unknown &&
		    cgsi_ksrc_removed(r->at.ksrc, e->ino)) {
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
