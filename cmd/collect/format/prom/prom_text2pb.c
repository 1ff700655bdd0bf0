/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A Prometheus text (0.0.4) as protobuf MetricFamily messages (promproto.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.pb-c.h"
#include "promproto.h"

typedef Io__Prometheus__Client__MetricFamily MF;
typedef Io__Prometheus__Client__Metric M;
typedef Io__Prometheus__Client__LabelPair LP;

void pb_put_family(struct buf *b, const MF *mf)
{
	size_t n = protobuf_c_message_get_packed_size(&mf->base);
	uint8_t v[10];
	size_t k = 0;
	for (size_t x = n; ; x >>= 7) {
		v[k++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
		if (x <= 0x7f)
			break;
	}
	if (!buf_reserve(b, k + n))
		return;
	buf_add(b, v, k);
	b->len += protobuf_c_message_pack(&mf->base, (uint8_t *)b->p + b->len);
}

/* --- an arena per family: what its messages point to ------------------- */

struct blk {
	struct blk *next;
	size_t used, cap;
	max_align_t data[];
};

struct arena {
	struct blk *head;
	bool oom;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	struct blk *b = a->head;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		b = malloc(sizeof(*b) + cap);
		if (!b) {
			a->oom = true;
			return NULL;
		}
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

static void arena_free(struct arena *a)
{
	while (a->head) {
		struct blk *n = a->head->next;
		free(a->head);
		a->head = n;
	}
}

/* --- the family being read ----------------------------------------------- */

struct fam {
	MF mf;
	size_t cap;
	bool skip;   /* a table histogram: native from the snapshot */
	struct arena a;
};

static char *dup_n(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* An escaped text (\\, \n, and with quoted \") until end or an unescaped
 * quote (quoted); *end past it. */
static char *unescape(struct arena *a, const char *s, const char *lim,
		      bool quoted, const char **end)
{
	char *p = arena_alloc(a, (size_t)(lim - s) + 1), *o = p;
	while (s < lim && !(quoted && *s == '"')) {
		char ch = *s++;
		if (ch == '\\' && s < lim) {
			ch = *s++;
			if (ch == 'n')
				ch = '\n';
		}
		if (o)
			*o++ = ch;
	}
	if (o)
		*o = '\0';
	*end = s;
	return p;
}

static void fam_flush(struct buf *pb, struct fam *f)
{
	if (f->mf.name && !f->skip && f->mf.n_metric)
		pb_put_family(pb, &f->mf);
	if (f->a.oom)
		pb->oom = true;
	free(f->mf.metric);
	arena_free(&f->a);
	memset(f, 0, sizeof(*f));
	io__prometheus__client__metric_family__init(&f->mf);
}

static int type_of(const char *t, size_t n)
{
	static const struct { const char *s; int v; } k[] = {
		{ "counter", IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER },
		{ "gauge", IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE },
		{ "histogram", IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM },
		{ "summary", IO__PROMETHEUS__CLIENT__METRIC_TYPE__SUMMARY },
	};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (strlen(k[i].s) == n && !memcmp(t, k[i].s, n))
			return k[i].v;
	return IO__PROMETHEUS__CLIENT__METRIC_TYPE__UNTYPED;
}

/* A new family called name[0..n) unless it is the current one. */
static void fam_name(struct buf *pb, struct fam *f, const char *name,
		     size_t n)
{
	if (f->mf.name && strlen(f->mf.name) == n &&
	    !memcmp(f->mf.name, name, n))
		return;
	fam_flush(pb, f);
	f->mf.name = dup_n(&f->a, name, n);
	f->mf.has_type = true;
	f->mf.type = IO__PROMETHEUS__CLIENT__METRIC_TYPE__UNTYPED;
}

/* "# HELP name text" or "# TYPE name type" */
static void comment(struct buf *pb, struct fam *f, const char *s,
		    const char *lim)
{
	bool help = lim - s > 7 && !memcmp(s, "# HELP ", 7);
	if (!help && !(lim - s > 7 && !memcmp(s, "# TYPE ", 7)))
		return;
	s += 7;
	const char *sp = memchr(s, ' ', (size_t)(lim - s));
	if (!sp)
		return;
	fam_name(pb, f, s, (size_t)(sp - s));
	if (help) {
		f->mf.help = unescape(&f->a, sp + 1, lim, false, &s);
		return;
	}
	f->mf.type = type_of(sp + 1, (size_t)(lim - sp - 1));
	f->skip = f->mf.type == IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM &&
		  prom_native_name(f->mf.name, strlen(f->mf.name));
}

/* name="value",... up to the closing brace; *end past it. -1: bad. */
static int labels(struct fam *f, M *m, const char *s, const char *lim,
		  const char **end)
{
	size_t cap = 0;
	while (s < lim && *s != '}') {
		const char *eq = memchr(s, '=', (size_t)(lim - s));
		if (!eq || eq + 1 >= lim || eq[1] != '"')
			return -1;
		if (m->n_label == cap) {
			size_t nc = cap ? 2 * cap : 8;
			LP **v = arena_alloc(&f->a, nc * sizeof(*v));
			if (!v)
				return -1;
			if (cap)
				memcpy(v, m->label, cap * sizeof(*v));
			m->label = v;
			cap = nc;
		}
		LP *l = arena_alloc(&f->a, sizeof(*l));
		if (!l)
			return -1;
		io__prometheus__client__label_pair__init(l);
		l->name = dup_n(&f->a, s, (size_t)(eq - s));
		l->value = unescape(&f->a, eq + 2, lim, true, &s);
		if (s >= lim || !l->name || !l->value)
			return -1;
		m->label[m->n_label++] = l;
		s++; /* the quote */
		if (s < lim && *s == ',')
			s++;
	}
	if (s >= lim)
		return -1;
	*end = s + 1;
	return 0;
}

static bool has_suffix_of(const char *fam, const char *s, size_t n)
{
	static const char *const sfx[] = { "_bucket", "_sum", "_count" };
	size_t fl = strlen(fam);
	if (n <= fl || memcmp(s, fam, fl))
		return false;
	for (size_t i = 0; i < 3; i++)
		if (strlen(sfx[i]) == n - fl && !memcmp(s + fl, sfx[i], n - fl))
			return true;
	return false;
}

static M *metric_new(struct fam *f)
{
	if (f->mf.n_metric == f->cap) {
		size_t nc = f->cap ? 2 * f->cap : 64;
		M **v = realloc(f->mf.metric, nc * sizeof(*v));
		if (!v) {
			f->a.oom = true;
			return NULL;
		}
		f->mf.metric = v;
		f->cap = nc;
	}
	M *m = arena_alloc(&f->a, sizeof(*m));
	if (!m)
		return NULL;
	io__prometheus__client__metric__init(m);
	f->mf.metric[f->mf.n_metric++] = m;
	return m;
}

static void set_value(struct fam *f, M *m, double v)
{
	switch (f->mf.type) {
	case IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER: {
		Io__Prometheus__Client__Counter *c =
			arena_alloc(&f->a, sizeof(*c));
		if (!c)
			return;
		io__prometheus__client__counter__init(c);
		c->has_value = true;
		c->value = v;
		m->counter = c;
		break;
	}
	case IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE: {
		Io__Prometheus__Client__Gauge *g = arena_alloc(&f->a, sizeof(*g));
		if (!g)
			return;
		io__prometheus__client__gauge__init(g);
		g->has_value = true;
		g->value = v;
		m->gauge = g;
		break;
	}
	default: {
		Io__Prometheus__Client__Untyped *u =
			arena_alloc(&f->a, sizeof(*u));
		if (!u)
			return;
		io__prometheus__client__untyped__init(u);
		u->has_value = true;
		u->value = v;
		m->untyped = u;
	}
	}
}

/* name{labels} value [timestamp] */
static void sample(struct buf *pb, struct fam *f, const char *s,
		   const char *lim)
{
	const char *e = s;
	while (e < lim && *e != '{' && *e != ' ')
		e++;
	size_t n = (size_t)(e - s);
	if (f->mf.name && f->skip && has_suffix_of(f->mf.name, s, n))
		return;
	bool own = f->mf.name && strlen(f->mf.name) == n &&
		   !memcmp(f->mf.name, s, n) &&
		   f->mf.type != IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM &&
		   f->mf.type != IO__PROMETHEUS__CLIENT__METRIC_TYPE__SUMMARY;
	if (!own) {
		fam_flush(pb, f); /* a sample of no family of its own: untyped */
		fam_name(pb, f, s, n);
	}
	M *m = metric_new(f);
	if (!m)
		return;
	if (e < lim && *e == '{' && labels(f, m, e + 1, lim, &e) < 0) {
		f->mf.n_metric--; /* not ours: left out */
		return;
	}
	while (e < lim && *e == ' ')
		e++;
	char num[64];
	const char *ve = memchr(e, ' ', (size_t)(lim - e));
	size_t vl = (size_t)((ve ? ve : lim) - e);
	if (!vl || vl >= sizeof(num)) {
		f->mf.n_metric--;
		return;
	}
	memcpy(num, e, vl);
	num[vl] = '\0';
	set_value(f, m, strtod(num, NULL));
	if (ve) {
		m->has_timestamp_ms = true;
		m->timestamp_ms = strtoll(ve + 1, NULL, 10);
	}
}

void prom_text2pb(struct buf *pb, const char *text, size_t len)
{
	struct fam f;
	memset(&f, 0, sizeof(f));
	io__prometheus__client__metric_family__init(&f.mf);
	const char *s = text, *end = text + len;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *lim = nl ? nl : end;
		if (lim > s && *s == '#')
			comment(pb, &f, s, lim);
		else if (lim > s)
			sample(pb, &f, s, lim);
		s = lim + 1;
	}
	fam_flush(pb, &f);
}
