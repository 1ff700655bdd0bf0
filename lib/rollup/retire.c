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

/* A node of n's incarnation in shard o, or NULL. */
static struct cgsi_cgnode *twin(struct cgsi_rshard *o,
				const struct cgsi_cgnode *n)
{
	for (struct cgsi_cgnode *m = cgsi_cgtab_find(&o->cgs, n->path, n->len,
						     n->hash);
	     m; m = m->older)
		if (same_incarnation(n, m))
			return m;
	return NULL;
}

/* A removed cgroup that may be retired, judged over every shard: its node
 * in the lowest shard that has one, when its removal was first seen by
 * any of them, the latest snapshot that first showed a node's final
 * counts, and what is done with it. */
enum fate { KEEP, SERVED, UNSERVED, FORCED };
struct cand {
	struct cgsi_cgnode *n;
	unsigned shard;
	enum fate fate;
	uint64_t removed_ms, final_gen;
};

/* retirable() in every shard that has a node of n's incarnation (all shard
 * locks held), n being in the lowest of them: then *c tells about it. */
static bool judge(struct cgs_rollup *r, unsigned si, struct cgsi_cgnode *n,
		  uint64_t now, struct cand *c)
{
	if (!retirable(r, &r->shards[si], n, now))
		return false;
	*c = (struct cand){ n, si, KEEP, n->removed_ms, n->final_gen };
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *o = &r->shards[i];
		if (i == si)
			continue;
		for (struct cgsi_cgnode *m = cgsi_cgtab_find(&o->cgs, n->path,
							     n->len, n->hash);
		     m; m = m->older) {
			if (!same_incarnation(n, m))
				continue;
			if (i < si || !retirable(r, o, m, now))
				return false; /* judged with that shard's */
			c->removed_ms = CGS_MIN(c->removed_ms, m->removed_ms);
			c->final_gen = CGS_MAX(c->final_gen, m->final_gen);
		}
	}
	return true;
}

/* The retired n's counts to its parent p's carry (made on first need):
 * carry += cum + carry, carry_base += base + carry_base, the peaks since
 * the baselines kept. -ENOMEM leaves p as it was. */
static int carry_into(struct cgsi_cgnode *p, const struct cgsi_cgnode *n)
{
	if (!p->carry && !(p->carry = calloc(1, sizeof(*p->carry))))
		return -ENOMEM;
	struct cgsi_carry *pc = p->carry, *nc = n->carry;
	if (n->x && ((!pc->x && !(pc->x = calloc(1, sizeof(*pc->x)))) ||
		     !cgsi_node_x(p) || (n->sigs && !cgsi_node_widen(p))))
		return -ENOMEM;
	const struct cgsi_dpk *ndp = n->dpk, *ncdp = nc ? nc->dpk : NULL;
	if ((ndp || ncdp) && !cgsi_dpk_get(&pc->dpk))
		return -ENOMEM;
	if (ndp || ncdp)
		cgsi_dpk_carry(pc->dpk, ndp, ncdp);
	cgsi_counters_add(&pc->carry, &n->cum);
	cgsi_counters_add(&pc->carry_base, &n->base);
	uint64_t rss = n->ivl_rss, vm = n->ivl_vm;
	if (nc) {
		cgsi_counters_add(&pc->carry, &nc->carry);
		cgsi_counters_add(&pc->carry_base, &nc->carry_base);
		rss = CGS_MAX(rss, nc->ivl_rss);
		vm = CGS_MAX(vm, nc->ivl_vm);
	}
	pc->ivl_rss = CGS_MAX(pc->ivl_rss, rss);
	pc->ivl_vm = CGS_MAX(pc->ivl_vm, vm);
	if (!n->x)
		return 0;
	uint64_t(*d)[2] = pc->x->w;
	for (size_t i = 0; i < CGSI_XWORDS(n->sigs); i++) {
		const uint64_t *c = cgsi_xw(n->x, i);
		for (int j = 0; c && j < 2; j++)
			d[i][j] += c[j];
	}
	if (nc && nc->x)
		for (size_t i = 0; i < CGSI_XSET_WORDS; i++)
			for (int j = 0; j < 2; j++)
				d[i][j] += nc->x->w[i][j];
	return 0;
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
	if (carry_into(p, n) < 0)
		return -ENOMEM;
	/* what the parent already reported does not change */
	/* the kernel source's id cache may point at n */
	cgsi_attr_node_retired(&r->at, (unsigned)(s - r->shards));
	cgsi_oom_forget(r, n);
	if (s->check_at == n)
		s->check_at = n->next;
	cgsi_cgtab_del(&s->cgs, n);
	return 0;
}

/* The cgroup of c, its node in every shard; false on ENOMEM. */
static bool retire_cand(struct cgs_rollup *r, const struct cand *c,
			uint64_t now, uint64_t *nodes)
{
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *o = &r->shards[i];
		struct cgsi_cgnode *m;
		if (i == c->shard)
			continue;
		while ((m = twin(o, c->n))) {
			if (retire(r, o, m, now) < 0)
				return false;
			++*nodes;
		}
	}
	if (retire(r, &r->shards[c->shard], c->n, now) < 0)
		return false;
	++*nodes;
	return true;
}

struct cands {
	struct cand *v;
	size_t n, cap;
};

/* Every removed cgroup that may be retired (all locks held); false on
 * ENOMEM. */
static bool collect(struct cgs_rollup *r, uint64_t now, struct cands *a)
{
	for (unsigned i = 0; i < r->nshards; i++) {
		for (struct cgsi_cgnode *n = r->shards[i].cgs.first; n;
		     n = n->next) {
			struct cand c;
			if (!judge(r, i, n, now, &c))
				continue;
			if (a->n == a->cap) {
				size_t cap = a->cap ? 2 * a->cap : 64;
				struct cand *v = realloc(a->v,
							 cap * sizeof(*v));
				if (!v)
					return false;
				a->v = v;
				a->cap = cap;
			}
			a->v[a->n++] = c;
		}
	}
	return true;
}

static int by_removed(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Beyond max_waiting, the waiting ones removed longest ago are FORCED:
 * k = waiting - max of them, the earliest removal times first (ties in
 * list order). false on ENOMEM. */
static bool force_excess(struct cands *a, size_t waiting, uint64_t max)
{
	if (!max || waiting <= max)
		return true;
	uint64_t *t = malloc(waiting * sizeof(*t));
	if (!t)
		return false;
	size_t w = 0, k = waiting - max, less = 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].fate == KEEP)
			t[w++] = a->v[i].removed_ms;
	qsort(t, w, sizeof(*t), by_removed);
	uint64_t cut = t[k - 1];
	for (size_t i = 0; i < k; i++)
		less += t[i] < cut;
	free(t);
	size_t at_cut = k - less; /* of those removed at `cut` */
	for (size_t i = 0; i < a->n; i++) {
		struct cand *c = &a->v[i];
		if (c->fate != KEEP || c->removed_ms > cut)
			continue;
		if (c->removed_ms == cut && !at_cut)
			continue;
		if (c->removed_ms == cut)
			at_cut--;
		c->fate = FORCED;
	}
	return true;
}

/* What happens to each candidate; returns how many are left waiting. */
static size_t decide(struct cands *a, const struct cgs_retire_opts *o,
		     uint64_t now)
{
	size_t waiting = 0;
	for (size_t i = 0; i < a->n; i++) {
		struct cand *c = &a->v[i];
		if (c->final_gen <= o->served)
			c->fate = SERVED;
		else if (now - c->removed_ms >= o->wait_ms)
			c->fate = UNSERVED;
		else
			waiting++;
	}
	return waiting;
}

static void lock_all(struct cgs_rollup *r, uint64_t now)
{
	/* every shard locked (in order; only retiring, under snap_lock, holds
	 * more than one): a cgroup's nodes are judged and retired together */
	pthread_mutex_lock(&r->snap_lock);
	for (unsigned i = 0; i < r->nshards; i++) {
		struct cgsi_rshard *s = &r->shards[i];
		cgsi_flock_lock(&s->lock);
		/* drop expired cache entries first: they hold references */
		cgsi_attr_sweep(&r->at, i, now);
	}
}

static void unlock_all(struct cgs_rollup *r)
{
	for (unsigned i = r->nshards; i-- > 0;)
		cgsi_flock_unlock(&r->shards[i].lock);
	pthread_mutex_unlock(&r->snap_lock);
}

/* cgs_rollup_retire() with its options copied; *nodes counts the nodes
 * retired. -ENOMEM when the candidates cannot be listed. */
static int retire_run(struct cgs_rollup *r, const struct cgs_retire_opts *o,
		      struct cgs_retire_result *res, uint64_t *nodes)
{
	struct cands a = { 0 };
	uint64_t now = cgsi_rollup_now(r);
	int rc = 0;

	lock_all(r, now);
	if (!collect(r, now, &a)) {
		rc = -ENOMEM;
		goto out;
	}
	res->waiting = decide(&a, o, now);
	if (!force_excess(&a, res->waiting, o->max_waiting)) {
		rc = -ENOMEM;
		goto out;
	}
	/* deepest first (the lists are in path order): a removed parent
	 * takes its children's carry with it */
	for (size_t i = a.n; i-- > 0;) {
		const struct cand *c = &a.v[i];
		if (c->fate == KEEP)
			continue;
		if (!retire_cand(r, c, now, nodes))
			break;
		res->retired++;
		res->unserved += c->fate >= UNSERVED;
		res->forced += c->fate == FORCED;
		res->waiting -= c->fate == FORCED;
	}
out:
	unlock_all(r);
	free(a.v);
	return rc;
}

int cgs_rollup_retire(struct cgs_rollup *r,
		      const struct cgs_retire_opts *opts,
		      struct cgs_retire_result *out)
{
	if (!r || (out && !CGSI_OUT_OK(out)))
		return -EINVAL;
	struct cgs_retire_opts o;
	int rc = cgsi_opts_copy(&o, sizeof(o), opts, opts ? opts->sz : 0);
	if (rc < 0)
		return rc;
	if (!opts)
		o.served = UINT64_MAX;
	struct cgs_retire_result res = { .sz = sizeof(res) };
	uint64_t nodes = 0;
	rc = retire_run(r, &o, &res, &nodes);
	if (rc < 0)
		return rc;
	return out ? cgsi_out_copy(out, &res, sizeof(res)) : 0;
}

/* Every snapshot counts as consumed. Returns the nodes retired (a cgroup
 * seen by k shards counts k times, as it always did). */
int cgs_rollup_retire_removed(struct cgs_rollup *r)
{
	if (!r)
		return -EINVAL;
	const struct cgs_retire_opts all = { .sz = sizeof(all),
					     .served = UINT64_MAX };
	struct cgs_retire_result res = { .sz = sizeof(res) };
	uint64_t nodes = 0;
	retire_run(r, &all, &res, &nodes); /* ENOMEM: nothing retired */
	return (int)CGS_MIN(nodes, (uint64_t)INT32_MAX);
}
