/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The family table's distributions as Prometheus native histograms
 * (promproto.h): schema 0, the library's own buckets (powers of 2 of a
 * second, cgs_hist.fine): one series per cgroup and distribution instead
 * of one per bucket, sum and count. The labels are the text's: cgroup,
 * then the workload labels as out_prom.c writes them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "metrics.pb-c.h"
#include "prom_family.h"
#include "promproto.h"

typedef Io__Prometheus__Client__Metric M;
typedef Io__Prometheus__Client__LabelPair LP;
typedef Io__Prometheus__Client__Histogram H;
typedef Io__Prometheus__Client__BucketSpan SPAN;

/* client_golang's zero threshold (2^-128): the zero bucket holds the
 * observations of 0 (the lowest bucket, index -19, also the few below
 * 2^-20 s: only CPU delays of under 954 ns) */
#define ZERO_THRESHOLD 2.938735877055719e-39

bool prom_native_name(const char *name, size_t n)
{
	size_t nf, pl = strlen(PROM_PREFIX);
	const struct prom_family *f = prom_families(&nf);
	if (n <= pl || memcmp(name, PROM_PREFIX, pl))
		return false;
	for (size_t k = 0; f && k < nf; k++)
		if (f[k].native_hist && strlen(f[k].name) == n - pl &&
		    !memcmp(f[k].name, name + pl, n - pl))
			return true;
	return false;
}

/* An exported cgroup's labels; their values in v (NUL-separated, at
 * off[]), reused from one cgroup to the next. */
struct cgl {
	struct cgs_workload w;
	LP lp[6];
	LP *p[6];
	size_t off[6];
	size_t n;
	struct buf t, v;
};

/* The text's value: the reversible escape of v (\\, \xNN: what
 * esc_prom_label() writes, read back from the exposition's escapes), so
 * that both formats name a cgroup alike and the value is valid UTF-8. */
static void label(struct cgl *l, const char *k, const char *v)
{
	if (!*v)
		return;
	buf_reset(&l->t);
	esc_prom_label(&l->t, v, strlen(v));
	l->off[l->n] = l->v.len;
	for (size_t i = 0; i < l->t.len; i++) {
		char c = l->t.p[i];
		if (c == '\\' && i + 1 < l->t.len) {
			c = l->t.p[++i];
			if (c == 'n')
				c = '\n';
		}
		buf_putc(&l->v, c);
	}
	buf_putc(&l->v, '\0');
	io__prometheus__client__label_pair__init(&l->lp[l->n]);
	l->lp[l->n].name = (char *)k;
	l->p[l->n] = &l->lp[l->n];
	l->n++;
}

/* The values' pointers, once v holds them all. */
static void labels_done(struct cgl *l)
{
	for (size_t i = 0; i < l->n; i++)
		l->lp[i].value = l->v.oom ? (char *)"" : l->v.p + l->off[i];
}

/* As out_prom.c's cglabels_make(): without --prom-workload-labels the
 * cgroup; lean, its unit if not a container's; full, all of them. */
static void labels_make(struct cgl *l, const struct snap_info *in,
			const char *path)
{
	l->n = 0;
	buf_reset(&l->v);
	l->w.sz = sizeof(l->w);
	label(l, "cgroup", path);
	if (in->workload_labels && cgs_workload_from_path(path, &l->w) > 0) {
		if (!in->prom_lean || !*l->w.container_id)
			label(l, "unit", l->w.unit);
		if (!in->prom_lean) {
			label(l, "slice", l->w.slice);
			label(l, "container_id", l->w.container_id);
			label(l, "pod_uid", l->w.pod_uid);
			label(l, "qos_class", l->w.qos_class);
		}
	}
	labels_done(l);
}

/* One histogram's native form in h, its spans and deltas in sp and d
 * (room for h's nfine each). */
static void native(H *o, const struct cgs_hist *h, SPAN *sp, SPAN **spp,
		   int64_t *d)
{
	io__prometheus__client__histogram__init(o);
	o->has_sample_count = o->has_sample_sum = true;
	o->sample_count = h->count;
	o->sample_sum = (double)h->sum_ns / 1e9;
	o->has_schema = o->has_zero_threshold = o->has_zero_count = true;
	o->schema = h->schema;
	o->zero_threshold = ZERO_THRESHOLD;
	o->zero_count = h->zero_count;
	o->positive_span = spp;
	o->positive_delta = d;
	int64_t prev = 0;
	int end = 0; /* index after the last span */
	for (unsigned b = 0; b < h->nfine && b < CGS_HIST_FINE_SLOTS; b++) {
		if (!h->fine[b])
			continue;
		int i = h->fine_first + (int)b;
		if (!o->n_positive_span || i != end) {
			SPAN *s = &sp[o->n_positive_span];
			io__prometheus__client__bucket_span__init(s);
			s->has_offset = s->has_length = true;
			s->offset = o->n_positive_span ? i - end : i;
			spp[o->n_positive_span++] = s;
		}
		spp[o->n_positive_span - 1]->length++;
		d[o->n_positive_delta++] = (int64_t)h->fine[b] - prev;
		prev = (int64_t)h->fine[b];
		end = i + 1;
	}
}

/* Room for one cgroup's histogram of one family. */
struct hslot {
	M m;
	H h;
	SPAN sp[CGS_HIST_FINE_SLOTS];
	SPAN *spp[CGS_HIST_FINE_SLOTS];
	int64_t d[CGS_HIST_FINE_SLOTS];
};

static void put_varint(struct buf *b, uint64_t x)
{
	uint8_t v[10];
	size_t k = 0;
	do {
		v[k++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
		x >>= 7;
	} while (x);
	buf_add(b, v, k);
}

/* Appends message m to b as field 4 (MetricFamily.metric). */
static void put_metric(struct buf *b, const M *m)
{
	size_t n = protobuf_c_message_get_packed_size(&m->base);
	buf_putc(b, (char)((4 << 3) | 2));
	put_varint(b, n);
	if (!buf_reserve(b, n))
		return;
	b->len += protobuf_c_message_pack(&m->base, (uint8_t *)b->p + b->len);
}

/* A family's message made metric by metric (the repeated field 4 after the
 * name, help and type; one metric's room at a time), then length-prefixed
 * into pb. */
static void family(struct buf *pb, struct buf *t, const struct prom_family *f,
		   const struct snap_info *in, const struct cgs_snapshot *s,
		   const size_t *keep, size_t n)
{
	struct cgl L;
	buf_init(&L.t);
	buf_init(&L.v);
	Io__Prometheus__Client__MetricFamily mf =
		IO__PROMETHEUS__CLIENT__METRIC_FAMILY__INIT;
	char name[128];
	struct hslot o;
	size_t nm = 0;
	snprintf(name, sizeof(name), PROM_PREFIX "%s", f->name);
	mf.name = name;
	mf.help = (char *)f->help;
	mf.has_type = true;
	mf.type = IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM;
	buf_reset(t);
	size_t hn = protobuf_c_message_get_packed_size(&mf.base);
	if (!buf_reserve(t, hn))
		return;
	t->len += protobuf_c_message_pack(&mf.base, (uint8_t *)t->p);
	for (size_t x = 0; x < n; x++) {
		CGS_OPTS(cgs_hist, h);
		if (cgs_snapshot_get_hist(s, keep[x], CGS_SET_SELF,
				      (enum cgs_hist_kind)f->arg, &h) < 0)
			continue;
		labels_make(&L, in, cgs_snapshot_get_cgroup(s, keep[x])->path);
		io__prometheus__client__metric__init(&o.m);
		o.m.label = L.p;
		o.m.n_label = L.n;
		native(&o.h, &h, o.sp, o.spp, o.d);
		o.m.histogram = &o.h;
		put_metric(t, &o.m);
		nm++;
	}
	buf_free(&L.t);
	buf_free(&L.v);
	if (!nm || t->oom) {
		pb->oom |= t->oom;
		return;
	}
	put_varint(pb, t->len);
	buf_add(pb, t->p, t->len);
}

void out_promproto(struct buf *pb, const struct snap_info *in,
		   const struct cgs_snapshot *s)
{
	size_t *keep = NULL, n = 0, cut, nf;
	uint64_t cut_series;
	const struct prom_family *fam = prom_families(&nf);
	if (!fam || !s || prom_keep(in, s, &keep, &n, &cut, &cut_series) < 0) {
		pb->oom = true;
		return;
	}
	struct buf t;
	buf_init(&t);
	for (size_t k = 0; k < nf; k++)
		if (fam[k].native_hist && prom_family_on(&fam[k], in))
			family(pb, &t, &fam[k], in, s, keep, n);
	buf_free(&t);
	free(keep);
}
