// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The workload view: per-cgroup self deltas of each snapshot added to the
 * workload the cgroup belongs to, so a container's successive cgroups (a
 * restart is a new cgroup) add up. Cgroups are named when first seen
 * (identity.c), a container or pod no source named yet again at the next
 * NAME_TRIES snapshots; the view lives off the record path entirely.
 *
 * A workload's counters are those of its cgroups in the same snapshot,
 * from the first one that shows it: the per-cgroup series and the
 * workload series of one scrape agree (issue 40: a new workload used to
 * show zeros until a scrape had served it, so the scrape that showed a
 * crash-looping container's three cgroups with a crash each showed its
 * workload with none).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "identity/identity.h"
#include "rollup/counters.h"
#include "snapshot/snap_int.h" /* a cgroup's executables' summaries */
#include "util/common.h"

struct wl {
	enum cgs_workload_kind kind;
	char *key;   /* kind, namespace, pod, container, unit: NUL-separated */
	size_t klen;
	char *ns, *pod, *ctr, *unit; /* into key */
	char *image;
	struct cgs_counters total;
	uint64_t *signals;
	struct cgs_delay_peaks *peaks; /* NULL: none yet */
	uint64_t seen, live, first_ms, last_ms;
	/* executables (cgs_rollup_opts.exes), [CGSI_NEXE] summaries each,
	 * NULL: none: its removed cgroups' last ones merged (xgone), that
	 * and its live cgroups' merged at the update (xcur), listed (xl) */
	struct cgsi_topk *xgone, *xcur;
	struct snap_exes xl;
};

/* Snapshots at which a container or pod cgroup no source named is looked
 * up again (its runtime's state may come after its first exits). */
#define NAME_TRIES 3

struct cg {
	char *path;
	int32_t wl;       /* index into workloads, -1: none (not a workload) */
	uint8_t tries;    /* look-ups left for an unnamed container or pod */
	uint64_t gen;     /* the update that saw it last */
	struct cgsi_topk *ex; /* [CGSI_NEXE] its executables' summaries as
			       * last seen (in a workload); NULL: none */
};

struct cgs_workloads {
	struct cgs_workloads_opts o;
	struct wl *w;
	size_t nw, capw;
	struct cg *c;     /* open addressing by path; path NULL: free */
	size_t capc, nc;
	uint64_t gen;
	bool peeked;      /* the last update was a peek (see peek()) */
	bool advanced;    /* a snapshot that advanced the baseline folded */
	size_t seen;      /* cgroups of this update (all of them: no sweep) */
	uint32_t *order;  /* sorted indices into w, nw of them */
	uint32_t *wh;     /* open addressing by key: index + 1, 0 free */
	size_t capwh;
	struct cgs_workloads_counts n;
	bool exes;        /* a cgroup had executables' summaries */
};

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

int cgsi_workloads_new_1_3(struct cgs_workloads **out,
			   const struct cgs_workloads_opts *opts);
int cgsi_workloads_new_1_2(const struct cgs_workloads_opts *opts,
			   struct cgs_workloads **out);

/* cgs_workloads_new() of 1.3 (out first): the default symbol version */
CGSI_VERSIONED(cgs_workloads_new, CGSTATS_1.3)
int cgsi_workloads_new_1_3(struct cgs_workloads **out,
			   const struct cgs_workloads_opts *opts)
{
	if (!out)
		return -EINVAL;
	/* the options checked before *out is written: a call of 1.2's
	 * argument order built against 1.3 fails here, writing nothing */
	struct cgs_workloads_opts o = { .sz = sizeof(o) };
	if (opts) {
		int e = cgsi_opts_copy(&o, sizeof(o), opts, opts->sz);
		if (e < 0)
			return e;
	}
	*out = NULL;
	struct cgs_workloads *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->o = o;
	if (!w->o.retire_after_ms)
		w->o.retire_after_ms = 15 * 60 * 1000;
	if (!w->o.max_workloads)
		w->o.max_workloads = 16384;
	if (!w->o.max_cgroups)
		w->o.max_cgroups = 262144;
	w->n.sz = sizeof(w->n);
	*out = w;
	return 0;
}

/* 1.2's argument order (options first), for programs linked against it */
CGSI_COMPAT(cgs_workloads_new, CGSTATS_1.2)
int cgsi_workloads_new_1_2(const struct cgs_workloads_opts *opts,
			   struct cgs_workloads **out)
{
	return cgsi_workloads_new_1_3(out, opts);
}

static void xl_free(struct snap_exes *l)
{
	for (unsigned r = 0; r < CGSI_NEXE; r++)
		free(l->v[r]);
	memset(l, 0, sizeof(*l));
}

static void wl_free(struct wl *x)
{
	free(x->key);
	free(x->image);
	free(x->signals);
	free(x->peaks);
	cgsi_tops_free(x->xgone, CGSI_NEXE);
	cgsi_tops_free(x->xcur, CGSI_NEXE);
	xl_free(&x->xl);
}

/* src's summaries (CGSI_NEXE) into *dst (made at first use, each of its
 * src's capacity): merged, or copied (then skipped when the totals say
 * nothing was added: the summaries are cumulative and every add weighs).
 * 0 or -ENOMEM. */
static int tops_into(struct cgsi_topk **dst, const struct cgsi_topk *src,
		     bool merge)
{
	if (!*dst && !(*dst = cgsi_tops_new(CGSI_NEXE)))
		return -ENOMEM;
	for (unsigned r = 0; r < CGSI_NEXE; r++) {
		struct cgsi_topk *d = &(*dst)[r];
		if (!src[r].slots) /* never made: nothing counted by it */
			continue;
		if (!d->slots && cgsi_topk_init(d, src[r].cap) < 0)
			return -ENOMEM;
		if (merge)
			cgsi_topk_merge(d, &src[r]);
		else if (d->total != src[r].total || d->size != src[r].size)
			cgsi_topk_copy(d, &src[r]);
	}
	return 0;
}

void cgs_workloads_free(struct cgs_workloads *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nw; i++)
		wl_free(&w->w[i]);
	for (size_t i = 0; i < w->capc; i++) {
		free(w->c[i].path);
		cgsi_tops_free(w->c[i].ex, CGSI_NEXE);
	}
	free(w->w);
	free(w->c);
	free(w->order);
	free(w->wh);
	free(w);
}

/* The slot of path (found, or the free one it would take). */
static struct cg *cg_slot(struct cgs_workloads *w, const char *path)
{
	size_t mask = w->capc - 1;
	for (size_t i = hash(path, strlen(path)) & mask;; i = (i + 1) & mask)
		if (!w->c[i].path || !strcmp(w->c[i].path, path))
			return &w->c[i];
}

static int cg_grow(struct cgs_workloads *w)
{
	size_t cap = w->capc ? w->capc * 2 : 1024;
	struct cg *old = w->c;
	size_t ocap = w->capc;
	w->c = calloc(cap, sizeof(*w->c));
	if (!w->c) {
		w->c = old;
		return -ENOMEM;
	}
	w->capc = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].path)
			*cg_slot(w, old[i].path) = old[i];
	free(old);
	return 0;
}

/* The workload key of a named cgroup; false: not a workload. */
static bool key_of(const struct cgs_identity *id, const struct cgs_workload *p,
		   enum cgs_workload_kind *k, const char *f[4])
{
	f[0] = f[1] = f[2] = f[3] = "";
	if (id->k8s_namespace[0] && id->pod[0]) {
		f[0] = id->k8s_namespace;
		f[1] = id->pod;
		f[2] = id->sandbox ? "" : id->container;
		*k = f[2][0] ? CGS_WLK_CONTAINER : CGS_WLK_POD;
		return true;
	}
	if (!strcmp(id->source, "docker")) {
		*k = CGS_WLK_DOCKER;
		f[0] = id->project;
		f[2] = id->service[0] ? id->service : id->container;
		return f[2][0] != '\0';
	}
	if (!p->container[0] && !p->pod_uid[0] && p->unit[0]) {
		*k = CGS_WLK_UNIT;
		f[3] = p->unit;
		return true;
	}
	return false;
}

static char *make_key(enum cgs_workload_kind k, const char *f[4], size_t *len)
{
	size_t l[4], n = 2;
	for (int i = 0; i < 4; i++)
		n += (l[i] = strlen(f[i])) + 1;
	char *s = malloc(n);
	if (!s)
		return NULL;
	s[0] = (char)('0' + k);
	s[1] = '\0';
	size_t o = 2;
	for (int i = 0; i < 4; i++) {
		memcpy(s + o, f[i], l[i] + 1);
		o += l[i] + 1;
	}
	*len = n;
	return s;
}

/* The hash slot of a key (its workload's, or the free one it would take). */
static uint32_t *wh_slot(struct cgs_workloads *w, const char *key, size_t len)
{
	size_t mask = w->capwh - 1;
	for (size_t i = hash(key, len) & mask;; i = (i + 1) & mask) {
		uint32_t v = w->wh[i];
		if (!v || (w->w[v - 1].klen == len &&
			   !memcmp(w->w[v - 1].key, key, len)))
			return &w->wh[i];
	}
}

/* The key index rebuilt for nw workloads, room for want (at most half
 * full); in place when it is large enough, so a shrink cannot fail. */
static int wh_build(struct cgs_workloads *w, size_t want)
{
	size_t cap = 64;
	while (cap < 2 * want)
		cap *= 2;
	if (cap > w->capwh) {
		uint32_t *n = calloc(cap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		free(w->wh);
		w->wh = n;
		w->capwh = cap;
	} else {
		memset(w->wh, 0, w->capwh * sizeof(*w->wh));
	}
	for (size_t i = 0; i < w->nw; i++)
		*wh_slot(w, w->w[i].key, w->w[i].klen) = (uint32_t)i + 1;
	return 0;
}

static int32_t wl_find(struct cgs_workloads *w, const char *key, size_t len)
{
	if (!w->capwh)
		return -1;
	uint32_t v = *wh_slot(w, key, len);
	return v ? (int32_t)v - 1 : -1;
}

static int32_t wl_add(struct cgs_workloads *w, enum cgs_workload_kind k,
		      char *key, size_t len, const char *image, uint64_t now)
{
	if (2 * (w->nw + 1) > w->capwh && wh_build(w, w->nw + 1) < 0)
		return -1;
	if (w->nw == w->capw) {
		size_t cap = w->capw ? w->capw * 2 : 64;
		struct wl *n = realloc(w->w, cap * sizeof(*n));
		if (!n)
			return -1;
		w->w = n;
		w->capw = cap;
	}
	struct wl *x = &w->w[w->nw];
	memset(x, 0, sizeof(*x));
	x->kind = k;
	x->key = key;
	x->klen = len;
	x->ns = key + 2;
	x->pod = x->ns + strlen(x->ns) + 1;
	x->ctr = x->pod + strlen(x->pod) + 1;
	x->unit = x->ctr + strlen(x->ctr) + 1;
	x->image = strdup(image);
	x->total.sz = sizeof(x->total);
	x->first_ms = now;
	*wh_slot(w, key, len) = (uint32_t)w->nw + 1;
	return (int32_t)w->nw++;
}

/* Name a cgroup: its workload (made if new); -1 and *unnamed set for a
 * container or pod no source named (yet). */
static int32_t name_cgroup(struct cgs_workloads *w, const char *path,
			   uint64_t now, bool *unnamed)
{
	struct cgs_identity id = { .sz = sizeof(id) };
	struct cgs_workload p = { .sz = sizeof(p) };
	cgs_workload_from_path(path, &p);
	if (w->o.identity && (p.container[0] || p.pod_uid[0]))
		cgs_identity_src_resolve(w->o.identity, path, &id);
	enum cgs_workload_kind k;
	const char *f[4];
	*unnamed = false;
	if (!key_of(&id, &p, &k, f)) {
		*unnamed = p.container[0] || p.pod_uid[0];
		return -1;
	}
	size_t len;
	char *key = make_key(k, f, &len);
	if (!key)
		return -1;
	int32_t i = wl_find(w, key, len);
	if (i >= 0) {
		free(key);
		if (id.image[0] && strcmp(w->w[i].image, id.image)) {
			char *im = strdup(id.image);
			if (im) {
				free(w->w[i].image);
				w->w[i].image = im;
			}
		}
	} else if (w->nw >= w->o.max_workloads ||
		   (i = wl_add(w, k, key, len, id.image, now)) < 0) {
		free(key);
		w->n.over_limit++;
		return -1;
	}
	w->w[i].seen++;
	return i;
}

static void add_signals(struct wl *x, const struct cgs_snapshot *s, size_t i,
			enum cgs_counter_set set)
{
	struct cgs_signal_counts sc = { .sz = sizeof(sc) };
	if (cgs_snapshot_get_signals(s, i, set, &sc) < 0)
		return;
	if (!x->signals) {
		x->signals = calloc(CGS_SIGNAL_SLOTS, sizeof(uint64_t));
		if (!x->signals)
			return;
	}
	for (size_t k = 0; k < CGS_SIGNAL_SLOTS; k++)
		x->signals[k] += sc.n[k];
}

/* The cgroup's workload, looked up at its first sight and, while no
 * source named it, at the next NAME_TRIES snapshots; true when it was
 * named now (then all its counts go in: they were in no workload). */
static bool name_now(struct cgs_workloads *w, struct cg *c, bool first,
		     uint64_t now)
{
	if (!first && (c->wl >= 0 || !c->tries))
		return false;
	bool unnamed;
	c->wl = name_cgroup(w, c->path, now, &unnamed);
	if (c->wl >= 0) {
		c->tries = 0;
		return true;
	}
	c->tries = unnamed ? (uint8_t)(first ? NAME_TRIES : c->tries - 1) : 0;
	if (unnamed && !c->tries) /* left out for good */
		w->n.unnamed_cgroups++;
	return false;
}

/* The cgroup's peaks of set `set` into the workload's: the larger per
 * class, with its time. */
static void add_peaks(struct wl *x, const struct cgs_snapshot *s, size_t i,
		      enum cgs_counter_set set)
{
	struct cgs_delay_peaks p = { .sz = sizeof(p) };
	if (cgs_snapshot_get_delay_peaks(s, i, set, &p) < 0)
		return;
	for (unsigned c = 0; c < CGS_DELAY__COUNT; c++) {
		if (!p.c[c].max_ns ||
		    (x->peaks && p.c[c].max_ns <= x->peaks->c[c].max_ns))
			continue;
		if (!x->peaks && !(x->peaks = calloc(1, sizeof(*x->peaks))))
			return;
		x->peaks->sz = sizeof(*x->peaks);
		x->peaks->nclasses = CGS_DELAY__COUNT;
		x->peaks->c[c] = p.c[c];
	}
}

static int fold(struct cgs_workloads *w, const struct cgs_snapshot *s,
		size_t i, uint64_t now)
{
	const struct cgs_cgroup_stats *st = cgs_snapshot_get_cgroup(s, i);
	if (!st || !st->path || st->path[0] != '/')
		return 0;
	struct cg *c = w->capc ? cg_slot(w, st->path) : NULL;
	bool first = !c || !c->path;
	if (first) {
		if (w->nc >= w->o.max_cgroups) {
			w->n.over_limit++;
			return 0;
		}
		if (w->nc + 1 > w->capc / 2) {
			if (cg_grow(w) < 0)
				return -ENOMEM;
		}
		c = cg_slot(w, st->path);
		c->path = strdup(st->path);
		if (!c->path)
			return -ENOMEM;
		w->nc++;
	}
	bool all = name_now(w, c, first, now);
	c->gen = w->gen;
	w->seen++;
	if (c->wl < 0)
		return 0;
	struct wl *x = &w->w[c->wl];
	x->live++;
	x->last_ms = now;
	/* its executables' summaries, cumulative: the last ones kept */
	if (s->ex && i < s->xn && s->ex[i].t) {
		w->exes = true;
		if (tops_into(&c->ex, s->ex[i].t, false) < 0)
			return -ENOMEM;
	}
	/* named now: everything the cgroup has (it is new, the view came
	 * after it, or its name came late); then what each snapshot added */
	const struct cgs_counters *d = all ? st->self : st->self_delta;
	if (d) {
		cgsi_counters_add(&x->total, d);
		if (d->exit_signaled)
			add_signals(x, s, i, all ? CGS_SET_SELF
					       : CGS_SET_SELF_DELTA);
		if (d->tasks)
			add_peaks(x, s, i, all ? CGS_SET_SELF
					       : CGS_SET_SELF_DELTA);
	}
	return 0;
}

/* Drop cgroups not in this snapshot (rehashing the rest), then workloads
 * retired; workload indices are kept stable by remapping. */
static bool retires(const struct cgs_workloads *w, const struct wl *x,
		    uint64_t now)
{
	return !x->live && now - x->last_ms >= w->o.retire_after_ms;
}

static void sweep(struct cgs_workloads *w, uint64_t now)
{
	size_t gone = 0;
	for (size_t i = 0; i < w->nw; i++)
		gone += retires(w, &w->w[i], now);
	if (!gone && w->seen == w->nc) /* the common case: nothing to do */
		return;
	int32_t *map = malloc((w->nw ? w->nw : 1) * sizeof(*map));
	size_t nw = 0;
	if (!map)
		return;
	for (size_t i = 0; i < w->nw; i++) {
		struct wl *x = &w->w[i];
		if (retires(w, x, now)) {
			wl_free(x);
			w->n.retired++;
			map[i] = -1;
			continue;
		}
		map[i] = (int32_t)nw;
		w->w[nw++] = *x;
	}
	w->nw = nw;
	if (gone && w->capwh)
		wh_build(w, w->nw); /* in place: fewer than before */
	if (w->seen == w->nc) { /* no cgroup left: the table stands */
		for (size_t i = 0; i < w->capc; i++)
			if (w->c[i].path && w->c[i].wl >= 0)
				w->c[i].wl = map[w->c[i].wl];
		free(map);
		return;
	}
	struct cg *old = w->c;
	size_t ocap = w->capc;
	w->c = calloc(ocap, sizeof(*w->c));
	if (!w->c) { /* keep everything; try again next time */
		w->c = old;
		free(map);
		return;
	}
	w->nc = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].path)
			continue;
		if (old[i].gen != w->gen) {
			/* gone while still unnamed: left out */
			w->n.unnamed_cgroups += old[i].wl < 0 && old[i].tries;
			/* its cached names go keep_ms later */
			cgsi_identity_forget(w->o.identity, old[i].path);
			free(old[i].path);
			/* its executables: its workload's for good (an
			 * allocation failure loses them) */
			if (old[i].ex && old[i].wl >= 0 && map[old[i].wl] >= 0)
				tops_into(&w->w[map[old[i].wl]].xgone,
					  old[i].ex, true);
			cgsi_tops_free(old[i].ex, CGSI_NEXE);
			continue;
		}
		if (old[i].wl >= 0)
			old[i].wl = map[old[i].wl];
		*cg_slot(w, old[i].path) = old[i];
		w->nc++;
	}
	free(old);
	free(map);
}

static int cmp_wl(const void *a, const void *b, void *base)
{
	const struct wl *ws = base;
	const char *p = ws[*(const uint32_t *)a].key;
	const char *q = ws[*(const uint32_t *)b].key;
	for (int f = 0; f < 5; f++) {
		int c = strcmp(p, q);
		if (c)
			return c;
		p += strlen(p) + 1;
		q += strlen(q) + 1;
	}
	return 0;
}

/* The order cgs_workloads_get() answers in (the storage is not moved:
 * the cgroups point into it). */
static int sort_order(struct cgs_workloads *w)
{
	uint32_t *o = realloc(w->order, (w->nw ? w->nw : 1) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	w->order = o;
	for (size_t i = 0; i < w->nw; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, w->nw, sizeof(*o), cmp_wl, w->w);
	return 0;
}

/* Everything folded so far goes (the counts stay). */
static void forget_all(struct cgs_workloads *w)
{
	for (size_t i = 0; i < w->nw; i++)
		wl_free(&w->w[i]);
	w->nw = 0;
	for (size_t i = 0; i < w->capc; i++) {
		free(w->c[i].path);
		cgsi_tops_free(w->c[i].ex, CGSI_NEXE);
	}
	if (w->capc)
		memset(w->c, 0, w->capc * sizeof(*w->c));
	w->nc = 0;
	if (w->capwh)
		memset(w->wh, 0, w->capwh * sizeof(*w->wh));
}

/*
 * A snapshot taken with no_delta (the collector's before its first
 * interval) does not advance the deltas: the next snapshot's deltas
 * include what it showed. Folded into an empty view it is a peek, undone
 * at the next snapshot (else its first cgroups were counted twice: issue
 * 40's "nothing counted twice"); after others it is not folded (the view
 * stays as of the last one). True: skip this snapshot.
 */
static bool peek(struct cgs_workloads *w, const struct cgs_snapshot *s)
{
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	bool nd = t && t->sz >= offsetof(struct cgs_rollup_totals, no_delta) +
			       sizeof(t->no_delta) && t->no_delta;
	if (nd && w->advanced)
		return true;
	if (w->peeked) /* the last peek undone */
		forget_all(w);
	w->peeked = nd;
	w->advanced |= !nd;
	return false;
}

/* Each workload's executables: its removed cgroups' summaries and its
 * live ones' merged, then listed (every counter held, then (other), as
 * the snapshot lists a cgroup's). O(cgroups in workloads x summary). */
static int list_exes(struct cgs_workloads *w)
{
	int err = 0;
	for (size_t i = 0; i < w->nw; i++) {
		struct wl *x = &w->w[i];
		for (unsigned r = 0; x->xcur && r < CGSI_NEXE; r++)
			if (x->xcur[r].slots)
				cgsi_topk_reset(&x->xcur[r]);
		if (x->xgone && tops_into(&x->xcur, x->xgone, true) < 0)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < w->capc; i++) {
		const struct cg *c = &w->c[i];
		if (c->path && c->wl >= 0 && c->ex &&
		    tops_into(&w->w[c->wl].xcur, c->ex, true) < 0)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < w->nw; i++) {
		struct wl *x = &w->w[i];
		xl_free(&x->xl);
		if (x->xcur && cgsi_snap_list_exes(&x->xl, x->xcur, 0) < 0)
			err = -ENOMEM;
	}
	return err;
}

int cgs_workloads_update(struct cgs_workloads *w,
			 const struct cgs_snapshot *s,
			 uint64_t now_ms)
{
	if (!w || !s)
		return -EINVAL;
	if (peek(w, s))
		return 0;
	w->gen++;
	w->seen = 0;
	for (size_t i = 0; i < w->nw; i++)
		w->w[i].live = 0;
	size_t n = cgs_snapshot_count(s);
	int err = 0;
	for (size_t i = 0; i < n && !err; i++)
		err = fold(w, s, i, now_ms);
	if (!err)
		sweep(w, now_ms);
	if (!err && w->exes)
		err = list_exes(w);
	int e2 = sort_order(w);
	w->n.workloads = w->nw;
	w->n.cgroups = w->nc;
	/* -ENOMEM: what was folded stays, the rest comes next time */
	return err ? err : e2;
}

/* Kept for the ABI: no workload is held any longer (see the top). */
void cgs_workloads_served(struct cgs_workloads *w)
{
	(void)w;
}

size_t cgs_workloads_count(const struct cgs_workloads *w)
{
	return w && w->order ? w->nw : 0;
}

static int view_of(const struct cgs_workloads *w, const struct wl *x,
		   struct cgs_workload_view *out)
{
	struct cgs_workload_view v = {
		.sz = sizeof(v), .kind = x->kind, .k8s_namespace = x->ns,
		.pod = x->pod, .container = x->ctr, .unit = x->unit,
		.image = x->image ? x->image : "",
		.total = &x->total, .signals = x->signals,
		.cgroups_seen = x->seen, .cgroups_live = x->live,
		.first_seen_ms = x->first_ms, .last_seen_ms = x->last_ms,
		.peaks = x->peaks,
	};
	return cgsi_out_copy(out, &v, sizeof(v));
}

int cgs_workloads_get(const struct cgs_workloads *w, size_t i,
		      struct cgs_workload_view *out)
{
	if (!w || !out || i >= cgs_workloads_count(w))
		return -EINVAL;
	return view_of(w, &w->w[w->order[i]], out);
}

int cgs_workloads_find(const struct cgs_workloads *w,
		       const char *path,
		       struct cgs_workload_view *out)
{
	if (!w || !path || !out)
		return -EINVAL;
	if (!w->capc)
		return -ENOENT;
	const struct cg *c = cg_slot((struct cgs_workloads *)w, path);
	if (!c->path || c->wl < 0)
		return -ENOENT;
	return view_of(w, &w->w[c->wl], out);
}

size_t cgs_workloads_exe_count(const struct cgs_workloads *w, size_t i,
			       enum cgs_exe_rank by)
{
	if (!w || i >= cgs_workloads_count(w) || (unsigned)by >= CGSI_NEXE)
		return 0;
	return w->w[w->order[i]].xl.n[by];
}

const struct cgs_exe *cgs_workloads_get_exe(const struct cgs_workloads *w,
					    size_t i, enum cgs_exe_rank by,
					    size_t j)
{
	if (j >= cgs_workloads_exe_count(w, i, by))
		return NULL;
	return &w->w[w->order[i]].xl.v[by][j];
}

int cgs_workloads_get_counts(const struct cgs_workloads *w,
			     struct cgs_workloads_counts *out)
{
	if (!w || !out)
		return -EINVAL;
	return cgsi_out_copy(out, &w->n, sizeof(w->n));
}

const char *cgs_workload_kind_name(enum cgs_workload_kind k)
{
	static const char *const names[] = { "container", "pod", "docker",
					     "unit" };
	return (unsigned)k < 4 ? names[k] : "unknown";
}
