// SPDX-License-Identifier: LGPL-2.1-or-later
/* Names looked up when cgroups appear, and their cache; see id_cache.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attribute/ksrc.h"
#include "identity/id_cache.h"
#include "util/common.h"

#define QPATH 512 /* CGSK_PATH_MAX: what a mkdir event carries */
#define SWEEP_MS 1000u

struct ent {
	char *path;
	uint64_t h;
	uint64_t gone_ms; /* 0: live */
	struct cgs_identity id;
};

struct ptab { /* open addressing by path, backward-shift deletion */
	struct ent **s;
	size_t cap, n;
};

struct rtab {
	pthread_mutex_t mu;
	struct ptab t;
} __attribute__((aligned(64)));

struct qent {
	int type;
	char path[QPATH];
};

struct cgsi_idcache {
	/* the queue (qmu) */
	pthread_mutex_t qmu;
	pthread_cond_t qcv;
	struct qent *q;
	size_t qlen;
	uint64_t head, tail;
	uint64_t queued, queue_full;
	bool stop;
	/* the resolver (its lock, *lk) */
	pthread_t th;
	bool started;
	pthread_mutex_t *lk;
	cgsi_idcache_resolve_fn *fn;
	void *ctx;
	struct ptab all;
	size_t max;
	uint64_t keep_ms, gone, last_sweep;
	uint64_t early_named, early_unnamed, gone_before, cache_full,
		retired;
	/* the readers' copies */
	unsigned nr;
	struct rtab *r;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ (h >> 29);
}

static struct ent **pt_slot(const struct ptab *t, const char *path,
			    uint64_t h)
{
	size_t m = t->cap - 1;
	for (size_t i = h & m;; i = (i + 1) & m)
		if (!t->s[i] || (t->s[i]->h == h && !strcmp(t->s[i]->path, path)))
			return &t->s[i];
}

static struct ent *pt_get(const struct ptab *t, const char *path, uint64_t h)
{
	return t->cap ? *pt_slot(t, path, h) : NULL;
}

static int pt_put(struct ptab *t, struct ent *e)
{
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct ptab n = { calloc(cap, sizeof(*n.s)), cap, t->n };
		if (!n.s)
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++)
			if (t->s[i])
				*pt_slot(&n, t->s[i]->path, t->s[i]->h) = t->s[i];
		free(t->s);
		*t = n;
	}
	struct ent **s = pt_slot(t, e->path, e->h);
	t->n += !*s;
	*s = e;
	return 0;
}

static void pt_del(struct ptab *t, const struct ent *e)
{
	if (!t->cap)
		return;
	size_t m = t->cap - 1;
	struct ent **s = pt_slot(t, e->path, e->h);
	if (!*s)
		return;
	size_t i = (size_t)(s - t->s);
	t->s[i] = NULL;
	t->n--;
	/* backward shift: move up what probed past the hole */
	for (size_t j = (i + 1) & m; t->s[j]; j = (j + 1) & m) {
		size_t home = t->s[j]->h & m;
		if (((j - home) & m) >= ((j - i) & m)) {
			t->s[i] = t->s[j];
			t->s[j] = NULL;
			i = j;
		}
	}
}

int cgsi_idcache_new(struct cgsi_idcache **out, unsigned readers,
		     size_t max_entries, size_t queue_len, uint64_t keep_ms)
{
	struct cgsi_idcache *c = calloc(1, sizeof(*c));
	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->nr = readers ? readers : 1;
	c->max = max_entries ? max_entries : 16384;
	c->qlen = queue_len ? queue_len : 256;
	c->keep_ms = keep_ms ? keep_ms : 300000;
	c->r = aligned_alloc(64, sizeof(*c->r) * c->nr);
	if (!c->r) {
		free(c);
		return -ENOMEM;
	}
	memset(c->r, 0, sizeof(*c->r) * c->nr);
	for (unsigned i = 0; i < c->nr; i++)
		pthread_mutex_init(&c->r[i].mu, NULL);
	pthread_mutex_init(&c->qmu, NULL);
	pthread_cond_init(&c->qcv, NULL);
	*out = c;
	return 0;
}

void cgsi_idcache_free(struct cgsi_idcache *c)
{
	if (!c)
		return;
	if (c->started) {
		pthread_mutex_lock(&c->qmu);
		c->stop = true;
		pthread_cond_signal(&c->qcv);
		pthread_mutex_unlock(&c->qmu);
		pthread_join(c->th, NULL);
	}
	for (size_t i = 0; i < c->all.cap; i++)
		if (c->all.s[i]) {
			free(c->all.s[i]->path);
			free(c->all.s[i]);
		}
	free(c->all.s);
	for (unsigned i = 0; i < c->nr; i++) {
		free(c->r[i].t.s);
		pthread_mutex_destroy(&c->r[i].mu);
	}
	free(c->r);
	free(c->q);
	pthread_mutex_destroy(&c->qmu);
	pthread_cond_destroy(&c->qcv);
	free(c);
}

void cgsi_idcache_event(void *arg, int type, uint64_t id, const char *path)
{
	struct cgsi_idcache *c = arg;
	struct cgs_workload w = { .sz = sizeof(w) };
	(void)id;
	if (strlen(path) >= QPATH)
		return;
	cgs_workload_from_path(path, &w);
	if (!w.container[0] && !w.pod_uid[0])
		return; /* names nothing any source knows */
	pthread_mutex_lock(&c->qmu);
	if (c->q && c->head - c->tail < c->qlen) {
		struct qent *e = &c->q[c->head++ % c->qlen];
		e->type = type;
		strcpy(e->path, path);
		c->queued++;
		pthread_cond_signal(&c->qcv);
	} else {
		c->queue_full++;
	}
	pthread_mutex_unlock(&c->qmu);
}

/* Publish e to the reader tables (the all table has it already). */
static void publish(struct cgsi_idcache *c, struct ent *e, bool add)
{
	for (unsigned i = 0; i < c->nr; i++) {
		pthread_mutex_lock(&c->r[i].mu);
		if (add)
			pt_put(&c->r[i].t, e); /* ENOMEM: that reader lacks it */
		else
			pt_del(&c->r[i].t, e);
		pthread_mutex_unlock(&c->r[i].mu);
	}
}

static void drop(struct cgsi_idcache *c, struct ent *e)
{
	publish(c, e, false);
	pt_del(&c->all, e);
	free(e->path);
	free(e);
}

void cgsi_idcache_put(struct cgsi_idcache *c, const char *path,
		      const struct cgs_identity *id)
{
	uint64_t h = hash(path);
	struct ent *old = pt_get(&c->all, path, h);
	if (old)
		drop(c, old); /* a new cgroup of that path */
	if (c->all.n >= c->max) {
		c->cache_full++;
		return;
	}
	struct ent *e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		free(e);
		return;
	}
	e->h = h;
	memcpy(&e->id, id, sizeof(e->id));
	e->id.sz = sizeof(e->id);
	if (pt_put(&c->all, e) < 0) {
		free(e->path);
		free(e);
		return;
	}
	publish(c, e, true);
}

bool cgsi_idcache_find(struct cgsi_idcache *c, const char *path,
		       struct cgs_identity *out)
{
	const struct ent *e = pt_get(&c->all, path, hash(path));
	if (!e)
		return false;
	cgsi_out_copy(out, &e->id, sizeof(e->id));
	return true;
}

int cgsi_idcache_read(struct cgsi_idcache *c, unsigned reader,
		      const char *path, struct cgs_identity *out)
{
	struct rtab *r = &c->r[reader % c->nr];
	uint64_t h = hash(path);
	int rc = -ENOENT;
	pthread_mutex_lock(&r->mu);
	const struct ent *e = pt_get(&r->t, path, h);
	if (e)
		rc = cgsi_out_copy(out, &e->id, sizeof(e->id));
	pthread_mutex_unlock(&r->mu);
	return rc;
}

/* Retire names keep_ms after their cgroup went. */
static void sweep(struct cgsi_idcache *c, uint64_t now)
{
	c->last_sweep = now;
	if (!c->gone)
		return;
	for (size_t i = 0; i < c->all.cap;) {
		struct ent *e = c->all.s[i];
		if (e && e->gone_ms && now - e->gone_ms >= c->keep_ms) {
			drop(c, e); /* shifts a later entry into slot i */
			c->gone--;
			c->retired++;
			continue;
		}
		i++;
	}
}

/* Is an rmdir of @path queued behind its mkdir (qmu held)? */
static bool rmdir_queued(const struct cgsi_idcache *c, const char *path)
{
	for (uint64_t i = c->tail; i != c->head; i++) {
		const struct qent *e = &c->q[i % c->qlen];
		if (e->type == CGSI_KSRC_RMDIR && !strcmp(e->path, path))
			return true;
	}
	return false;
}

static void handle(struct cgsi_idcache *c, const struct qent *q, bool gone)
{
	uint64_t now = cgsi_now_mono_ms();
	uint64_t h = hash(q->path);
	struct ent *e = pt_get(&c->all, q->path, h);
	if (q->type == CGSI_KSRC_RMDIR) {
		if (e && !e->gone_ms) {
			e->gone_ms = now;
			c->gone++;
		}
		return;
	}
	struct cgs_identity id = { .sz = sizeof(id) };
	if (c->fn(c->ctx, q->path, &id) > 0 &&
	    (id.source[0] || id.k8s_namespace[0])) {
		cgsi_idcache_put(c, q->path, &id);
		c->early_named++;
	} else if (gone) {
		c->gone_before++;
	} else {
		c->early_unnamed++;
	}
}

static void *run(void *arg)
{
	struct cgsi_idcache *c = arg;
	pthread_mutex_lock(&c->qmu);
	while (!c->stop) {
		if (c->head == c->tail) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&c->qcv, &c->qmu, &ts);
		}
		struct qent q;
		bool have = c->head != c->tail, gone = false;
		if (have) {
			q = c->q[c->tail % c->qlen];
			c->tail++;
			gone = q.type == CGSI_KSRC_MKDIR &&
			       rmdir_queued(c, q.path);
		}
		pthread_mutex_unlock(&c->qmu);
		pthread_mutex_lock(c->lk);
		if (have)
			handle(c, &q, gone);
		uint64_t now = cgsi_now_mono_ms();
		if (now - c->last_sweep >= SWEEP_MS)
			sweep(c, now);
		pthread_mutex_unlock(c->lk);
		pthread_mutex_lock(&c->qmu);
	}
	pthread_mutex_unlock(&c->qmu);
	return NULL;
}

int cgsi_idcache_start(struct cgsi_idcache *c, pthread_mutex_t *lock,
		       cgsi_idcache_resolve_fn *fn, void *ctx)
{
	pthread_mutex_lock(&c->qmu);
	int rc = 0;
	if (!c->started) {
		c->lk = lock;
		c->fn = fn;
		c->ctx = ctx;
		c->q = calloc(c->qlen, sizeof(*c->q));
		rc = -ENOMEM;
		if (c->q) {
			sigset_t all, old;
			sigfillset(&all);
			pthread_sigmask(SIG_SETMASK, &all, &old);
			rc = -pthread_create(&c->th, NULL, run, c);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			c->started = rc == 0;
		}
		if (rc) {
			free(c->q);
			c->q = NULL;
		}
	}
	pthread_mutex_unlock(&c->qmu);
	return rc;
}

/* Mark @path gone (its cgroup left): retired keep_ms later. */
void cgsi_idcache_gone(struct cgsi_idcache *c, const char *path)
{
	struct ent *e = pt_get(&c->all, path, hash(path));
	if (e && !e->gone_ms) {
		e->gone_ms = cgsi_now_mono_ms();
		c->gone++;
	}
	uint64_t now = cgsi_now_mono_ms();
	if (now - c->last_sweep >= SWEEP_MS)
		sweep(c, now);
}

void cgsi_idcache_counts(struct cgsi_idcache *c,
			 struct cgs_identity_counts *out)
{
	pthread_mutex_lock(&c->qmu);
	out->queued = c->queued;
	out->queue_full = c->queue_full;
	pthread_mutex_unlock(&c->qmu);
	out->early_named = c->early_named;
	out->early_unnamed = c->early_unnamed;
	out->gone_before = c->gone_before;
	out->cached = c->all.n;
	out->cache_full = c->cache_full;
	out->retired = c->retired;
}
