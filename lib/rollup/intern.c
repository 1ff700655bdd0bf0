/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Path -> node on the slow path, telling cgroup incarnations apart by
 * their directory inode; and what attribution (attr.h) asks of the
 * rollup: a node is its key. */
#include "rollup/rollup_int.h"

struct cgsi_cgnode *cgsi_intern(struct cgs_rollup *r, struct cgsi_rshard *s,
				const char *path, size_t len, uint64_t now,
				unsigned flags)
{
	uint64_t h = cgsi_path_hash(path, len);
	struct cgsi_cgnode *n = cgsi_cgtab_find(&s->cgs, path, len, h);
	if (n && n->unknown)
		return n;
	if (n && (flags & CGSI_INTERN_DELETED))
		/* a zombie left in a removed cgroup: the newest removed
		 * incarnation (n itself if no newer one was seen yet) */
		return n->older ? n->older : n;
	uint64_t recheck = (flags & CGSI_INTERN_PROC) ? 1 : r->o.revalidate_ms;
	if (n && now < n->checked_ms + recheck)
		return n;
	bool gone;
	uint64_t ino = cgsi_cg_ino(&r->mount, path, s->dir, sizeof(s->dir),
				   &gone);
	if (n) {
		n->checked_ms = now;
		if (!ino || !n->ino || ino == n->ino) {
			if (!n->ino && ino) {
				n->ino = ino;
				s->ids_new = true;
			}
			return n;
		}
		/* removed and created again under the same path: a new cgroup
		 * (added first: on ENOMEM the old one goes on answering) */
	}
	struct cgsi_cgnode *old = n;
	n = cgsi_cgtab_add(&s->cgs, path, len, h);
	if (!n)
		return old;
	if (old)
		cgsi_cgtab_unhash(&s->cgs, old);
	n->older = old;
	n->ino = (flags & CGSI_INTERN_DELETED) ? 0 : ino;
	n->checked_ms = now;
	cgsi_node_created(r, s, n);
	return n;
}

struct cgsi_cgnode *cgsi_intern_id(struct cgs_rollup *r, struct cgsi_rshard *s,
				   const char *path, size_t len, uint64_t id,
				   uint64_t now)
{
	uint64_t h = cgsi_path_hash(path, len);
	struct cgsi_cgnode *n = cgsi_cgtab_find(&s->cgs, path, len, h);
	for (struct cgsi_cgnode *m = n; m; m = m->older)
		if (m->ino == id)
			return m;
	if (n && !n->ino) { /* interned while its directory was gone */
		n->ino = id;
		s->ids_new = true;
		return n;
	}
	struct cgsi_cgnode *old = n;
	n = cgsi_cgtab_add(&s->cgs, path, len, h);
	if (!n)
		return NULL;
	n->ino = id;
	n->checked_ms = now;
	if (old && old->ino > id) {
		/* a late exit of an incarnation older than the current one
		 * (ids grow with creation), first seen by this shard: it
		 * goes into the chain by age, the current one stays */
		cgsi_cgtab_unhash(&s->cgs, n);
		struct cgsi_cgnode *m = old;
		while (m->older && m->older->ino > id)
			m = m->older;
		n->older = m->older;
		m->older = n;
	} else {
		if (old)
			cgsi_cgtab_unhash(&s->cgs, old);
		n->older = old;
	}
	cgsi_node_created(r, s, n);
	return n;
}

static void *attr_intern(void *ctx, unsigned shard, const char *path,
			 size_t len, unsigned flags, uint64_t now)
{
	struct cgs_rollup *r = ctx;
	return cgsi_intern(r, &r->shards[shard], path, len, now, flags);
}

static void *attr_intern_id(void *ctx, unsigned shard, const char *path,
			    size_t len, uint64_t id, uint64_t now)
{
	struct cgs_rollup *r = ctx;
	return cgsi_intern_id(r, &r->shards[shard], path, len, id, now);
}

static const char *attr_path(const void *node, size_t *len, uint64_t *ino)
{
	const struct cgsi_cgnode *n = node;
	*len = n->len;
	*ino = n->ino;
	return n->path;
}

/* The process cache's references (retire.c keeps a referenced node). */
static void attr_ref(void *node, int delta)
{
	struct cgsi_cgnode *n = node;
	n->refs += (uint32_t)delta;
}

/* The rollup's clock, read by attribution only where it needs it. */
static uint64_t attr_now(void *ctx)
{
	return cgsi_rollup_now(ctx);
}

const struct cgsi_attr_ops cgsi_rollup_attr_ops = {
	.intern = attr_intern,
	.intern_id = attr_intern_id,
	.path = attr_path,
	.ref = attr_ref,
	.now = attr_now,
};
