/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Retiring removed cgroups. A node is retired when its directory is gone
 * (or holds a newer incarnation), no cache entry points to it and its
 * counters were in a snapshot since its last exit. Whether the directory
 * is gone: a snapshot's removal check (snapshot.c), or, in shards of up
 * to CGSI_CHECK_ALL nodes, a stat() here. Its totals move into
 * its parent's `carry` (retired descendants), baseline included, so the
 * parent's subtree sums and deltas continue without a jump.
 *
 * A cgroup's exits may be spread over shards, one node in each: the
 * snapshots merge them by path. So a node is retired only together with
 * its incarnation's nodes in every other shard, when each of them is
 * retirable: retiring one while another still holds an exit no snapshot
 * has shown would make the path's cumulative counts drop (a counter reset
 * to Prometheus) and its final value would never be shown.
 */
#include <stdlib.h>

#include "rollup/counters.h"
#include "rollup/rollup_int.h"

/*
 * Removed (superseded, seen removed by a snapshot, or, in small shards,
 * by a stat() here) for grace_ms already: an exit of the cgroup can reach
 * the rollup after the rmdir (queued in the socket behind others, or
 * waiting for its kernel entry), and one that came after retirement would
 * start the path's counts again from zero.
 */
static bool retirable(struct cgs_rollup *r, struct cgsi_rshard *s,
		      struct cgsi_cgnode *n, uint64_t now)
{
	if (n->unknown || n->refs || n->len <= 1 || n->path[0] != '/' ||
	    n->reported != n->cum.tasks + n->cum.tgid_records)
		return false;
	bool removed = !n->hashed || n->gone;
	if (!removed && s->cgs.count <= CGSI_CHECK_ALL) {
		bool gone;
		uint64_t ino = cgsi_cg_ino(&r->mount, n->path, s->dir,
					   sizeof(s->dir), &gone);
		removed = gone || (ino && n->ino && ino != n->ino);
	} /* else the snapshots' round-robin checks decide */
	if (!removed)
		return false;
	cgsi_node_seen_removed(n, now);
	return now - n->removed_ms >= r->o.grace_ms;
}

static bool same_incarnation(const struct cgsi_cgnode *a,
			     const struct cgsi_cgnode *b)
{
	return a->len == b->len && !memcmp(a->path, b->path, a->len) &&
	       (!a->ino || !b->ino || a->ino == b->ino);
}

/* retirable() in every shard that has a node of n's incarnation (all shard
 * locks held) */
static bool path_retirable(struct cgs_rollup *r, struct cgsi_rshard *s,
			   struct cgsi_cgnode *n, uint64_t now)
{
	if (!retirable(r, s, n, now))
		return false;
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *o = &r->shards[i];
		if (o == s)
			continue;
		for (struct cgsi_cgnode *m = cgsi_cgtab_find(&o->cgs, n->path,
							     n->len, n->hash);
		     m; m = m->older)
			if (same_incarnation(n, m) && !retirable(r, o, m, now))
				return false;
	}
	return true;
}

static int retire(struct cgs_rollup *r, struct cgsi_rshard *s,
		  struct cgsi_cgnode *n, uint64_t now)
{
	size_t pl = n->len;
	while (pl > 1 && n->path[pl - 1] != '/')
		pl--;
	if (pl > 1)
		pl--; /* "/a/b" -> "/a", "/a" -> "/" */
	char *pp = strndup(n->path, pl);
	if (!pp)
		return -ENOMEM;
	struct cgsi_cgnode *p = cgsi_intern(r, s, pp, pl, now, 0);
	free(pp);
	if (!p)
		return -ENOMEM;
	p->has_carry = true;
	cgsi_counters_add(&p->carry, &n->cum);
	cgsi_counters_add(&p->carry_base, &n->base);
	if (n->has_carry) {
		cgsi_counters_add(&p->carry, &n->carry);
		cgsi_counters_add(&p->carry_base, &n->carry_base);
	}
	p->carry_ivl_rss = CGS_MAX(p->carry_ivl_rss,
				   CGS_MAX(n->ivl_rss, n->carry_ivl_rss));
	p->carry_ivl_vm = CGS_MAX(p->carry_ivl_vm,
				  CGS_MAX(n->ivl_vm, n->carry_ivl_vm));
	if (n->x && cgsi_node_x(p)) {
		/* carry += cum + carry, carry_base += base + carry_base */
		uint64_t(*d)[2] = p->x->carry.w;
		const uint64_t(*c)[2] = n->x->cum.w, (*cc)[2] = n->x->carry.w;
		for (size_t i = 0; i < CGSI_XSET_WORDS; i++)
			for (int j = 0; j < 2; j++)
				d[i][j] += c[i][j] + cc[i][j];
		p->sigs = p->sigs || n->sigs;
	}
	/* what the parent already reported does not change */
	s->kgen++; /* the kernel source's id cache may point at n */
	cgsi_oom_forget(r, n);
	if (s->check_at == n)
		s->check_at = n->next;
	cgsi_cgtab_del(&s->cgs, n);
	return 0;
}

CGS_EXPORT int cgs_rollup_retire_removed(struct cgs_rollup *r)
{
	if (!r)
		return -EINVAL;
	int total = 0;
	uint64_t now = cgsi_rollup_now(r);
	/* every shard locked (in order; only retiring, under snap_lock, holds
	 * more than one): a cgroup's nodes are judged and retired together */
	pthread_mutex_lock(&r->snap_lock);
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *s = &r->shards[i];
		pthread_mutex_lock(&s->lock);
		/* drop expired cache entries first: they hold references */
		struct cgsi_pcache_policy pol = { &r->deaths, now,
						  r->o.grace_ms };
		cgsi_pcache_sweep(&s->cache, s->cache.mask + 1, &pol);
	}
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *s = &r->shards[i];
		/* parents created while retiring are appended and visited */
		for (struct cgsi_cgnode *n = s->cgs.first, *nx; n; n = nx) {
			nx = n->next;
			if (!path_retirable(r, s, n, now))
				continue;
			size_t c0 = s->cgs.count;
			if (retire(r, s, n, now) < 0)
				break;
			if (!nx && s->cgs.count == c0) /* a parent was added */
				nx = s->cgs.last;
			total++;
		}
	}
	for (unsigned i = r->nshards; i-- > 0;)
		pthread_mutex_unlock(&r->shards[i].lock);
	pthread_mutex_unlock(&r->snap_lock);
	return total;
}
