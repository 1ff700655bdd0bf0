// SPDX-License-Identifier: LGPL-2.1-or-later
/* Names looked up when cgroups appear, and their cache; see id_cache.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attribute/ksrc.h"
#include "identity/id_cache.h"
#include "util/common.h"

#define QPATH 512 /* CGSK_PATH_MAX: what a mkdir event carries */
#define SWEEP_MS 1000u
/* Pending look-ups by path hash (a counting filter): a reader that misses
 * a path whose slot is not 0 answers -EAGAIN (a look-up may name it
 * soon); a collision only makes another cgroup's record wait as long. */
#define PEND_SLOTS 4096u
/* A look-up that named nothing is made again this long after the last
 * (state written after the cgroup, a pod's own cgroup before its first
 * container named it): its records wait meanwhile, at most ~1.3 s. */
static const uint32_t retry_ms[] = { 50, 250, 1000 };
#define RETRIES (sizeof(retry_ms) / sizeof(*retry_ms))

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
	unsigned tries;  /* look-ups made before (a retry: > 0) */
	char path[QPATH];
};

struct rent { /* a look-up to make again */
	char *path;
	uint64_t due_ms;
	unsigned tries;
};

struct cgsi_idcache {
	/* the queue (qmu) */
	pthread_mutex_t qmu;
	pthread_cond_t qcv;
	struct qent *q;
	size_t qlen;
	uint64_t head, tail;
	uint64_t queued, queue_full;
	char **walk;     /* cgroups there before the hook (existing) */
	size_t nwalk, walk_at, walk_cap;
	struct rent *rq; /* look-ups to make again, at most qlen */
	size_t nrq;
	uint64_t existing, retried, retry_named;
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
		retired, pods_named;
	/* the readers' copies */
	unsigned nr;
	struct rtab *r;
	uint64_t pub_gen; /* publishes so far (atomic) */
	uint32_t pend[PEND_SLOTS]; /* pending look-ups by hash (atomic) */
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
	for (size_t i = c->walk_at; i < c->nwalk; i++)
		free(c->walk[i]);
	free(c->walk);
	for (size_t i = 0; i < c->nrq; i++)
		free(c->rq[i].path);
	free(c->rq);
	pthread_mutex_destroy(&c->qmu);
	pthread_cond_destroy(&c->qcv);
	free(c);
}

static uint32_t *pend_slot(struct cgsi_idcache *c, const char *path)
{
	return &c->pend[hash(path) & (PEND_SLOTS - 1)];
}

/* A cgroup there before the hook: to the walk list (qmu held). */
static bool walk_push(struct cgsi_idcache *c, const char *path)
{
	if (c->nwalk - c->walk_at >= c->max)
		return false;
	if (c->nwalk == c->walk_cap) {
		size_t cap = c->walk_cap ? c->walk_cap * 2 : 64;
		char **n = realloc(c->walk, cap * sizeof(*n));
		if (!n)
			return false;
		c->walk = n;
		c->walk_cap = cap;
	}
	if (!(c->walk[c->nwalk] = strdup(path)))
		return false;
	c->nwalk++;
	c->existing++;
	return true;
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
	bool ok = false;
	if (type == CGSI_KSRC_EXISTING) {
		ok = c->q && walk_push(c, path);
	} else if (c->q && c->head - c->tail < c->qlen) {
		struct qent *e = &c->q[c->head++ % c->qlen];
		e->type = type;
		e->tries = 0;
		strcpy(e->path, path);
		c->queued++;
		ok = true;
	}
	if (ok && type != CGSI_KSRC_RMDIR) /* its records wait for it */
		__atomic_add_fetch(pend_slot(c, path), 1, __ATOMIC_RELEASE);
	if (ok)
		pthread_cond_signal(&c->qcv);
	else
		c->queue_full++;
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
	__atomic_add_fetch(&c->pub_gen, 1, __ATOMIC_RELEASE);
}

static void drop(struct cgsi_idcache *c, struct ent *e)
{
	publish(c, e, false);
	pt_del(&c->all, e);
	free(e->path);
	free(e);
}

static void put_one(struct cgsi_idcache *c, const char *path,
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

/*
 * A container's names name its pod too: its parent cgroup, when that is
 * the pod's own (kubepods-...-pod<uid>.slice, or pod<uid> with cgroupfs)
 * and has no name yet, gets namespace, pod and uid (the CRI's sandbox-*
 * annotations; the sandbox is the pod's first container): the pod's
 * cgroup is named without the kubelet's log folders.
 */
static void put_pod(struct cgsi_idcache *c, const char *path,
		    const struct cgs_identity *id)
{
	const char *sl = strrchr(path, '/');
	if (!id->k8s_namespace[0] || !id->pod[0] || !id->pod_uid[0] || !sl ||
	    sl == path || (size_t)(sl - path) >= QPATH)
		return;
	char parent[QPATH];
	memcpy(parent, path, (size_t)(sl - path));
	parent[sl - path] = '\0';
	struct cgs_workload w = { .sz = sizeof(w) };
	cgs_workload_from_path(parent, &w);
	if (w.container[0] || strcmp(w.pod_uid, id->pod_uid))
		return;
	const struct ent *e = pt_get(&c->all, parent, hash(parent));
	if (e && e->id.k8s_namespace[0])
		return;
	struct cgs_identity p = { .sz = sizeof(p) };
	memcpy(p.k8s_namespace, id->k8s_namespace, sizeof(p.k8s_namespace));
	memcpy(p.pod, id->pod, sizeof(p.pod));
	memcpy(p.pod_uid, id->pod_uid, sizeof(p.pod_uid));
	memcpy(p.source, id->source, sizeof(p.source));
	put_one(c, parent, &p);
	c->pods_named++;
}

void cgsi_idcache_put(struct cgsi_idcache *c, const char *path,
		      const struct cgs_identity *id)
{
	put_one(c, path, id);
	put_pod(c, path, id);
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
	uint64_t g = __atomic_load_n(&c->pub_gen, __ATOMIC_ACQUIRE);
	for (int again = 0; again < 2; again++) {
		pthread_mutex_lock(&r->mu);
		const struct ent *e = pt_get(&r->t, path, h);
		if (e)
			rc = cgsi_out_copy(out, &e->id, sizeof(e->id));
		pthread_mutex_unlock(&r->mu);
		if (rc != -ENOENT)
			return rc;
		/* a look-up pending: its answer is published before its
		 * slot goes down, so a slot seen 0 after a publish is
		 * looked up again */
		if (__atomic_load_n(&c->pend[h & (PEND_SLOTS - 1)],
				    __ATOMIC_ACQUIRE))
			return -EAGAIN;
		if (__atomic_load_n(&c->pub_gen, __ATOMIC_ACQUIRE) == g)
			break;
	}
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

/* A look-up's end (after its answer was published): records of the
 * cgroup wait for it no longer. */
static void finish(struct cgsi_idcache *c, const char *path)
{
	uint32_t *p = pend_slot(c, path);
	if (__atomic_load_n(p, __ATOMIC_RELAXED))
		__atomic_sub_fetch(p, 1, __ATOMIC_RELEASE);
}

/* Look @q up (c->lk held); true: no name yet, make it again later. */
static bool handle(struct cgsi_idcache *c, const struct qent *q, bool gone)
{
	uint64_t now = cgsi_now_mono_ms();
	uint64_t h = hash(q->path);
	struct ent *e = pt_get(&c->all, q->path, h);
	if (q->type == CGSI_KSRC_RMDIR) {
		if (e && !e->gone_ms) {
			e->gone_ms = now;
			c->gone++;
		}
		return false;
	}
	/* a retry or a cgroup of the walk named meanwhile (its pod by a
	 * container, a snapshot's look-up): done; a mkdir is a new cgroup
	 * of the path, looked up anew */
	if (e && q->type != CGSI_KSRC_MKDIR)
		return false;
	struct cgs_identity id = { .sz = sizeof(id) };
	if (c->fn(c->ctx, q->path, &id) > 0 &&
	    (id.source[0] || id.k8s_namespace[0])) {
		cgsi_idcache_put(c, q->path, &id);
		c->early_named++;
		c->retry_named += q->tries > 0;
		return false;
	}
	if (gone) {
		c->gone_before++;
		return false;
	}
	if (q->tries < RETRIES)
		return true;
	c->early_unnamed++;
	return false;
}

/* An rmdir: the path's retries go next, as gone (qmu held). */
static void retries_gone(struct cgsi_idcache *c, const char *path)
{
	for (size_t i = 0; i < c->nrq; i++)
		if (!strcmp(c->rq[i].path, path))
			c->rq[i].due_ms = 0;
}

/* The next look-up (qmu held): an event, a retry due, a cgroup of the
 * walk, in that order; false: none now, *wait_ms until a retry is due. */
static bool next(struct cgsi_idcache *c, struct qent *q, bool *gone,
		 uint64_t now, uint64_t *wait_ms)
{
	*gone = false;
	*wait_ms = 1000;
	if (c->head != c->tail) {
		*q = c->q[c->tail++ % c->qlen];
		*gone = q->type == CGSI_KSRC_MKDIR && rmdir_queued(c, q->path);
		if (q->type == CGSI_KSRC_RMDIR)
			retries_gone(c, q->path);
		return true;
	}
	size_t b = SIZE_MAX;
	for (size_t i = 0; i < c->nrq; i++)
		if (b == SIZE_MAX || c->rq[i].due_ms < c->rq[b].due_ms)
			b = i;
	char *p = NULL;
	if (b != SIZE_MAX && c->rq[b].due_ms <= now) {
		*gone = c->rq[b].due_ms == 0;
		q->type = CGSI_KSRC_EXISTING;
		q->tries = c->rq[b].tries;
		p = c->rq[b].path;
		c->rq[b] = c->rq[--c->nrq];
	} else if (c->walk_at < c->nwalk) {
		q->type = CGSI_KSRC_EXISTING;
		q->tries = 0;
		p = c->walk[c->walk_at++];
		if (c->walk_at == c->nwalk)
			c->walk_at = c->nwalk = 0;
	} else {
		if (b != SIZE_MAX)
			*wait_ms = c->rq[b].due_ms - now;
		return false;
	}
	snprintf(q->path, sizeof(q->path), "%s", p);
	free(p);
	return true;
}

/* After a look-up (qmu held): made again later, or done. */
static void after(struct cgsi_idcache *c, const struct qent *q, bool again,
		  uint64_t now)
{
	if (q->type == CGSI_KSRC_RMDIR)
		return;
	if (again && c->nrq < c->qlen &&
	    (c->rq[c->nrq].path = strdup(q->path))) {
		c->rq[c->nrq].due_ms = now + retry_ms[q->tries];
		c->rq[c->nrq++].tries = q->tries + 1;
		c->retried++;
		return;
	}
	if (again)
		c->queue_full++; /* no room to ask again: unnamed */
	finish(c, q->path);
}

static void *run(void *arg)
{
	struct cgsi_idcache *c = arg;
	pthread_mutex_lock(&c->qmu);
	while (!c->stop) {
		struct qent q;
		bool gone, again = false;
		uint64_t wait;
		bool have = next(c, &q, &gone, cgsi_now_mono_ms(), &wait);
		if (!have) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			wait = wait ? wait : 1;
			ts.tv_sec += (time_t)(wait / 1000);
			ts.tv_nsec += (long)(wait % 1000) * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&c->qcv, &c->qmu, &ts);
		}
		pthread_mutex_unlock(&c->qmu);
		pthread_mutex_lock(c->lk);
		if (have)
			again = handle(c, &q, gone);
		uint64_t now = cgsi_now_mono_ms();
		if (now - c->last_sweep >= SWEEP_MS)
			sweep(c, now);
		pthread_mutex_unlock(c->lk);
		pthread_mutex_lock(&c->qmu);
		if (have)
			after(c, &q, again, now);
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
		c->rq = calloc(c->qlen, sizeof(*c->rq));
		rc = -ENOMEM;
		if (c->q && c->rq) {
			sigset_t all, old;
			sigfillset(&all);
			pthread_sigmask(SIG_SETMASK, &all, &old);
			rc = -pthread_create(&c->th, NULL, run, c);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			c->started = rc == 0;
		}
		if (rc) {
			free(c->q);
			free(c->rq);
			c->q = NULL;
			c->rq = NULL;
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
	out->existing = c->existing;
	out->retried = c->retried;
	pthread_mutex_unlock(&c->qmu);
	out->retry_named = c->retry_named;
	out->pods_named = c->pods_named;
	out->early_named = c->early_named;
	out->early_unnamed = c->early_unnamed;
	out->gone_before = c->gone_before;
	out->cached = c->all.n;
	out->cache_full = c->cache_full;
	out->retired = c->retired;
}
