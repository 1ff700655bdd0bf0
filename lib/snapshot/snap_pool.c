/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A snapshot's memory: blocks carved per cgroup, buffers mapped directly
 * when large, and the pool that keeps the last snapshot freed and the
 * scratch buffers for the next one.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "snapshot/snap_int.h"

/* A block of at least `bytes`: a spare one (the pool's, already faulted
 * in) when it fits, else a new one; NULL on ENOMEM. */
struct memblk *cgsi_snap_mem_block(struct snap_mem *m, size_t bytes)
{
	struct memblk *b = m->spare;
	if (b && b->cap >= bytes) {
		m->spare = b->next;
	} else {
		size_t cap = CGS_MAX((size_t)MEMBLK_BYTES - sizeof(*b), bytes);
		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->cap = cap;
	}
	b->used = 0;
	b->next = m->blocks;
	m->blocks = b;
	return b;
}

/* Everything carved so far becomes spare room (a pooled snapshot made
 * anew). */
static void mem_reset(struct snap_mem *m)
{
	while (m->blocks) {
		struct memblk *b = m->blocks;
		m->blocks = b->next;
		b->next = m->spare;
		m->spare = b;
	}
}

/* The spare blocks this snapshot did not need (the host has fewer
 * cgroups than before): the pool keeps no more than one snapshot used. */
void cgsi_snap_mem_trim(struct snap_mem *m)
{
	for (struct memblk *b = m->spare, *nb; b; b = nb) {
		nb = b->next;
		free(b);
	}
	m->spare = NULL;
}

void cgsi_snap_mem_free(struct snap_mem *m)
{
	mem_reset(m);
	cgsi_snap_mem_trim(m);
}

static void *big_alloc(size_t bytes, size_t *mapped)
{
	*mapped = 0;
	if (bytes < BIG_BYTES)
		return malloc(bytes ? bytes : 1);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	*mapped = bytes;
	return p;
}

static void big_free(void *p, size_t mapped)
{
	if (mapped)
		munmap(p, mapped);
	else
		free(p);
}

/* At least `bytes` of b (uninitialised), NULL on ENOMEM. A new buffer
 * gets an eighth more, so that a host that grows slowly does not map a
 * new one for every snapshot; one more than twice too big (beyond
 * BIG_BYTES of slack) is made anew, so that the pool does not keep the
 * size of a host's busiest moment. */
void *cgsi_sbuf_get(struct sbuf *b, size_t bytes)
{
	if (b->p && b->cap >= bytes && b->cap - bytes <= bytes + BIG_BYTES)
		return b->p;
	if (b->p)
		big_free(b->p, b->mapped);
	size_t cap = bytes + bytes / 8 + 64;
	b->p = big_alloc(cap, &b->mapped);
	b->cap = b->p ? cap : 0;
	return b->p;
}

/* cgsi_sbuf_get() keeping the first `keep` bytes (realloc). */
void *cgsi_sbuf_grow(struct sbuf *b, size_t bytes, size_t keep)
{
	if (b->p && b->cap >= bytes)
		return b->p;
	struct sbuf nb = { 0 };
	if (!cgsi_sbuf_get(&nb, bytes))
		return NULL;
	if (keep)
		memcpy(nb.p, b->p, keep);
	if (b->p)
		big_free(b->p, b->mapped);
	*b = nb;
	return b->p;
}

void cgsi_sbuf_free(struct sbuf *b)
{
	if (b->p)
		big_free(b->p, b->mapped);
	*b = (struct sbuf){ 0 };
}

/* The buffers of a scratch or of a snapshot. */
static void sbufs_free(struct sbuf *const *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cgsi_sbuf_free(b[i]);
}

static void scratch_free(struct snap_scratch *sc)
{
	if (!sc)
		return;
	struct sbuf *const b[] = { &sc->ents, &sc->runs,  &sc->tmp,
				   &sc->cnt,  &sc->stack, &sc->parent };
	sbufs_free(b, CGS_ARRAY_SIZE(b));
	free(sc);
}

struct cgsi_snap_pool *cgsi_snap_pool_new(void)
{
	struct cgsi_snap_pool *p = calloc(1, sizeof(*p));
	if (p) {
		pthread_mutex_init(&p->lock, NULL);
		p->refs = 1; /* the rollup's */
	}
	return p;
}

static void snap_destroy(struct cgs_snapshot *s)
{
	if (!s)
		return;
	struct sbuf *const b[] = { &s->vb, &s->xvb, &s->avb };
	sbufs_free(b, CGS_ARRAY_SIZE(b));
	for (unsigned i = 0; s->cvs && i < s->ncvs; i++)
		cgsi_sbuf_free(&s->cvs[i]);
	free(s->cvs);
	cgsi_snap_mem_free(&s->mem);
	free(s);
}

/* Drop a reference (lock held by none): the last one frees the pool. */
static void pool_unref(struct cgsi_snap_pool *p, bool closing)
{
	pthread_mutex_lock(&p->lock);
	struct cgs_snapshot *spare = NULL;
	struct snap_scratch *sc = NULL;
	if (closing) {
		p->closed = true;
		spare = p->spare;
		sc = p->scratch;
		p->spare = NULL;
		p->scratch = NULL;
	}
	bool last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	snap_destroy(spare);
	scratch_free(sc);
	if (last) {
		pthread_mutex_destroy(&p->lock);
		free(p);
	}
}

void cgsi_snap_pool_close(struct cgsi_snap_pool *p)
{
	if (p)
		pool_unref(p, true);
}

/*
 * A snapshot to fill, and scratch buffers: the pool's (its buffers
 * reused, their contents stale) or new ones. The snapshot holds a
 * reference to the pool until freed. NULL on ENOMEM.
 */
struct cgs_snapshot *cgsi_snap_take(struct cgs_rollup *r,
				    struct snap_scratch **scp)
{
	struct cgsi_snap_pool *p = r->snap_pool;
	struct cgs_snapshot *s = NULL;
	struct snap_scratch *sc = NULL;
	if (p) {
		pthread_mutex_lock(&p->lock);
		s = p->spare;
		sc = p->scratch;
		p->spare = NULL;
		p->scratch = NULL;
		pthread_mutex_unlock(&p->lock);
	}
	if (s && s->ncvs != r->nshards) { /* not expected: one rollup */
		snap_destroy(s);
		s = NULL;
	}
	if (s) {
		mem_reset(&s->mem);
		s->n = s->xn = 0;
		s->v = NULL;
		s->xv = NULL;
		s->av = NULL;
		s->cm = NULL;
		s->ex = NULL;
		s->totals = (struct cgs_rollup_totals){ 0 };
	} else if ((s = calloc(1, sizeof(*s)))) {
		s->cvs = calloc(r->nshards, sizeof(*s->cvs));
		s->ncvs = s->cvs ? r->nshards : 0;
	}
	if (!sc)
		sc = calloc(1, sizeof(*sc));
	if (!s || !s->cvs || !sc) {
		snap_destroy(s);
		scratch_free(sc);
		return NULL;
	}
	if (p) {
		pthread_mutex_lock(&p->lock);
		p->refs++;
		pthread_mutex_unlock(&p->lock);
	}
	s->pool = p;
	*scp = sc;
	return s;
}

/* The scratch buffers back to the pool, unless it holds some already. */
void cgsi_snap_scratch_put(struct cgsi_snap_pool *p, struct snap_scratch *sc)
{
	if (p) {
		pthread_mutex_lock(&p->lock);
		if (!p->closed && !p->scratch) {
			p->scratch = sc;
			sc = NULL;
		}
		pthread_mutex_unlock(&p->lock);
	}
	scratch_free(sc);
}

/* Its buffers go to the pool when that is open and empty (the first
 * of two snapshots alive freed is kept, the other one freed). */
void cgs_snapshot_free(struct cgs_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->cm && i < s->xn; i++) {
		free(s->cm[i].v[0]);
		free(s->cm[i].v[1]);
	}
	free(s->cm);
	s->cm = NULL;
	for (size_t i = 0; s->ex && i < s->xn; i++) {
		for (unsigned r = 0; r < CGSI_NEXE; r++)
			free(s->ex[i].v[r]);
		cgsi_tops_free(s->ex[i].t, CGSI_NEXE);
	}
	free(s->ex);
	s->ex = NULL;
	struct cgsi_snap_pool *p = s->pool;
	if (p) {
		pthread_mutex_lock(&p->lock);
		bool keep = !p->closed && !p->spare;
		if (keep)
			p->spare = s;
		pthread_mutex_unlock(&p->lock);
		pool_unref(p, false);
		if (keep)
			return;
	}
	snap_destroy(s);
}
