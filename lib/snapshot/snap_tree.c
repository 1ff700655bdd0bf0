/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A snapshot's hierarchy: entries folded to a depth, and every cgroup's
 * missing ancestors added so that subtree sums have a home (snap_int.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot/snap_int.h"

/* Path of the ancestor at `depth` (depth < e's depth). */
static size_t prefix_len(const char *p, unsigned depth)
{
	if (depth == 0)
		return 1; /* "/" */
	size_t i = 0;
	unsigned d = 0;
	for (; p[i]; i++)
		if (p[i] == '/' && p[i + 1] && p[i + 1] != '/' && d++ == depth)
			return i;
	return i;
}

void cgsi_snap_fold(struct vec *a, unsigned depth)
{
	for (size_t i = 0; i < a->n; i++) {
		struct sent *e = &a->v[i];
		if (e->unknown || e->depth <= depth)
			continue;
		e->len = prefix_len(e->path, depth);
		e->path[e->len] = '\0';
		e->depth = depth;
		e->ino = 0; /* the ancestor's, found by stat later */
		e->superseded = false;
		e->gone = false;
		e->folded = true;
	}
}

/* The chain of ancestors in a pass over the sorted entries: a path (an
 * entry's, or a prefix of it for an ancestor to add) and its depth. */
struct chain {
	const char *path;
	size_t len;
	unsigned depth;
};

static bool chain_push(struct chain **st, size_t *top, size_t *cap,
		       struct chain c)
{
	if (*top == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct chain *ns = realloc(*st, nc * sizeof(*ns));
		if (!ns)
			return false;
		*st = ns;
		*cap = nc;
	}
	(*st)[(*top)++] = c;
	return true;
}

/*
 * Every cgroup's ancestors appear, so subtree sums have a home, each just
 * before the first of its descendants (where the order puts it). In
 * place: a first pass over the sorted entries, with the chain of
 * ancestors seen, makes the missing ancestors' paths and counts them per
 * entry; then the entries move back from the end to make room. -ENOMEM
 * leaves a as it was.
 */
int cgsi_snap_add_ancestors(struct vec *a, struct snap_mem *m,
			    struct snap_scratch *sc)
{
	size_t n = a->n, top = 0, cap = 0, add = 0, nanc = 0;
	struct chain *st = NULL;
	uint32_t *cnt = cgsi_sbuf_get(&sc->cnt, (n ? n : 1) * sizeof(*cnt));
	char **anc = NULL;
	size_t anccap = 0;
	int rc = -ENOMEM;
	if (!cnt)
		return -ENOMEM;
	memset(cnt, 0, n * sizeof(*cnt));
	for (size_t i = 0; i < n; i++) {
		const struct sent *e = &a->v[i];
		if (e->unknown || e->path[0] != '/')
			continue;
		while (top && !cgsi_snap_path_under(st[top - 1].path, st[top - 1].len, e))
			top--;
		unsigned d = top ? st[top - 1].depth + 1 : 0;
		for (; d < e->depth; d++) {
			size_t pl = prefix_len(e->path, d);
			if (nanc == anccap) {
				size_t nc = anccap ? anccap * 2 : 64;
				char **na = realloc(anc, nc * sizeof(*na));
				if (!na)
					goto out;
				anc = na;
				anccap = nc;
			}
			if (!(anc[nanc] = path_dup(m, e->path, pl)) ||
			    !chain_push(&st, &top, &cap,
					(struct chain){ anc[nanc++], pl, d }))
				goto out;
			cnt[i]++;
			add++;
		}
		if (!chain_push(&st, &top, &cap,
				(struct chain){ e->path, e->len, e->depth }))
			goto out;
	}
	if (add && n + add > a->cap) {
		struct sent *nv = cgsi_sbuf_grow(&sc->ents,
						 (n + add) * sizeof(*nv),
						 n * sizeof(*nv));
		if (!nv)
			goto out;
		a->v = nv;
		a->cap = sc->ents.cap / sizeof(*nv);
	}
	/* from the end: slot w - 1 >= i, so nothing unread is overwritten */
	size_t w = n + add;
	for (size_t i = n; i-- > 0;) {
		struct sent e = a->v[i];
		a->v[--w] = e;
		for (uint32_t k = 1; k <= cnt[i]; k++) {
			struct sent *x = &a->v[--w];
			memset(x, 0, sizeof(*x));
			x->path = anc[--nanc];
			x->len = strlen(x->path);
			x->depth = e.depth - k;
		}
	}
	a->n = n + add;
	rc = 0;
out:
	free(anc); /* its paths: the snapshot's */
	free(st);
	return rc;
}
