/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The protobuf exposition (cmd/collect/format/prom/promproto.h), decoded with protobuf-c: the
 * families are the text's (each once, none of a table histogram's
 * _bucket/_sum/_count), values equal, the distributions native histograms
 * of schema 0 whose spans and deltas are those of known lifetimes, the
 * cgroups --prom-max-series keeps the text's; and the Accept negotiation.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "buf.h"
#include "http_gzip.h"
#include "metrics.pb-c.h"
#include "output.h"
#include "prom_family.h"
#include "promproto.h"
#include "support/add.h"
#include "support/fakeproc.h"

typedef Io__Prometheus__Client__MetricFamily MF;

static struct fakeproc F;

/* Decoded families of a delimited stream (NULL-terminated, unpacked). */
static MF **decode(const struct buf *b, size_t *n)
{
	MF **v = calloc(4096, sizeof(*v));
	size_t k = 0, at = 0;
	assert_non_null(v);
	while (at < b->len) {
		uint64_t len = 0;
		unsigned sh = 0;
		uint8_t c;
		do {
			assert_true(at < b->len);
			c = (uint8_t)b->p[at++];
			len |= (uint64_t)(c & 0x7f) << sh;
			sh += 7;
		} while (c & 0x80);
		assert_true(at + len <= b->len);
		v[k] = io__prometheus__client__metric_family__unpack(
			NULL, len, (const uint8_t *)b->p + at);
		assert_non_null(v[k]);
		k++;
		assert_true(k < 4096);
		at += len;
	}
	*n = k;
	return v;
}

static const MF *family(MF **v, size_t n, const char *name)
{
	const MF *f = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i]->name, name)) {
			if (f)
				fail_msg("family %s twice", name);
			f = v[i];
		}
	return f;
}

static const char *label(const Io__Prometheus__Client__Metric *m,
			 const char *k)
{
	for (size_t i = 0; i < m->n_label; i++)
		if (!strcmp(m->label[i]->name, k))
			return m->label[i]->value;
	return NULL;
}

static const Io__Prometheus__Client__Metric *of_cgroup(const MF *f,
						       const char *cg)
{
	for (size_t i = 0; f && i < f->n_metric; i++)
		if (!strcmp(label(f->metric[i], "cgroup"), cg))
			return f->metric[i];
	return NULL;
}

/* Process exits of known lifetimes (us) into path. */
static void exits(struct cgs_rollup *r, const char *path, const uint64_t *us,
		  size_t n, uint32_t *pid)
{
	fp_mkdir(&F, path);
	for (size_t i = 0; i < n; i++, (*pid)++) {
		struct cgs_record rec = fp_record(CGS_KIND_PROCESS, *pid, *pid,
						  1, *pid);
		rec.fields |= CGS_HAS_TGID;
		rec.tgetime_us = us[i];
		rec.etime_us = us[i];
		rec.exit_status = 0;
		assert_int_equal(cgt_add_path(r, 0, &rec, path), 0);
	}
}

static struct cgs_snapshot *known(struct cgs_rollup **r)
{
	/* 0; 3 x 100 ms in (2^-4, 2^-3]; 1.5 s in (2^0, 2^1] */
	static const uint64_t a[] = { 0, 100000, 100000, 100000, 1500000 };
	/* 2 x 100 ms, 200 ms in (2^-3, 2^-2]: one span */
	static const uint64_t g[] = { 100000, 200000, 100000 };
	static const uint64_t one[] = { 7 };
	uint32_t pid = 100;
	*r = fp_rollup(&F, 1, CGS_ROLLUP_HISTOGRAMS);
	exits(*r, "/k/a", a, 5, &pid);
	exits(*r, "/k/gap", g, 3, &pid);
	exits(*r, "/k/we\"ird \xfe", one, 1, &pid); /* not UTF-8 */
	for (int i = 0; i < 30; i++) {
		char p[32];
		snprintf(p, sizeof(p), "/k/small%d", i);
		exits(*r, p, one, 1, &pid);
	}
	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(*r, NULL, &s), 0);
	return s;
}

static void info(struct snap_info *in, const struct cgs_snapshot *s)
{
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	memset(in, 0, sizeof(*in));
	in->seq = 1;
	in->records = t->records;
	in->histograms = t->histograms;
	in->oom_source = "kernel";
	in->prom_lean = true;
	for (int k = 0; k < 3; k++)
		in->output_errors[k] = -1;
}

/* text + protobuf of one snapshot */
static MF **both(const struct snap_info *in, const struct cgs_snapshot *s,
		 struct buf *t, size_t *n)
{
	struct buf pb;
	buf_init(t);
	buf_init(&pb);
	out_prom(t, in, s);
	out_promproto(&pb, in, s);
	prom_text2pb(&pb, t->p, t->len);
	assert_false(pb.oom);
	buf_putc(t, '\0');
	MF **v = decode(&pb, n);
	buf_free(&pb);
	return v;
}

static void check_native(const Io__Prometheus__Client__Metric *m,
			 uint64_t count, double sum, uint64_t zeros,
			 const int *span, size_t nspan, const int64_t *delta,
			 size_t ndelta)
{
	assert_non_null(m);
	const Io__Prometheus__Client__Histogram *h = m->histogram;
	assert_non_null(h);
	assert_true(h->has_schema && h->schema == 0);
	assert_true(h->zero_threshold > 0 && h->zero_threshold < 1e-30);
	assert_int_equal(h->sample_count, count);
	assert_true(fabs(h->sample_sum - sum) < 1e-9);
	assert_int_equal(h->zero_count, zeros);
	assert_int_equal(h->n_bucket, 0); /* native only */
	assert_int_equal(h->n_positive_span, nspan / 2);
	for (size_t i = 0; i < nspan / 2; i++) {
		assert_int_equal(h->positive_span[i]->offset, span[2 * i]);
		assert_int_equal(h->positive_span[i]->length, span[2 * i + 1]);
	}
	assert_int_equal(h->n_positive_delta, ndelta);
	for (size_t i = 0; i < ndelta; i++)
		assert_int_equal(h->positive_delta[i], delta[i]);
}

static void t_encode(void **st)
{
	(void)st;
	struct cgs_rollup *r;
	struct cgs_snapshot *s = known(&r);
	struct snap_info in;
	struct buf t;
	size_t n;
	info(&in, s);
	MF **v = both(&in, s, &t, &n);

	/* every family of the text with a sample once, the table's
	 * histograms native */
	size_t types = 0;
	for (const char *p = t.p; (p = strstr(p, "# TYPE ")); p++) {
		char name[128], first[140];
		assert_int_equal(sscanf(p + 7, "%127s", name), 1);
		const char *nl = strchr(p, '\n');
		if (!nl || sscanf(nl + 1, "%139[^{ ]", first) != 1 ||
		    strncmp(first, name, strlen(name)))
			continue; /* no sample (the next line is not one) */
		if (!family(v, n, name))
			fail_msg("family %s not in the protobuf", name);
		types++;
	}
	assert_int_equal(n, types);
	for (size_t i = 0; i < n; i++) {
		const char *nm = v[i]->name;
		size_t l = strlen(nm);
		assert_false(l > 7 && !strcmp(nm + l - 7, "_bucket"));
		if (prom_native_name(nm, l))
			assert_int_equal(v[i]->type,
				IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
	}
	const MF *pl = family(v, n, "taskstat_process_lifetime_seconds");
	assert_non_null(pl);
	assert_string_equal(pl->help, hist_prom_help(CGS_HIST_PROC_LIFETIME));
	/* (2^-4, 2^-3] is index -3, (1, 2] index 1 */
	const int sa[] = { -3, 1, 3, 1 };
	const int64_t da[] = { 3, -2 };
	check_native(of_cgroup(pl, "/k/a"), 5, 1.8, 1, sa, 4, da, 2);
	const int sg[] = { -3, 2 };
	const int64_t dg[] = { 2, -1 };
	check_native(of_cgroup(pl, "/k/gap"), 3, 0.4, 0, sg, 2, dg, 2);
	/* 7 us in (2^-18, 2^-17] */
	const int ss[] = { -17, 1 };
	const int64_t ds[] = { 1 };
	check_native(of_cgroup(pl, "/k/small3"), 1, 7e-6, 0, ss, 2, ds, 1);
	/* the text's label value (the reversible escape): valid UTF-8 */
	check_native(of_cgroup(pl, "/k/we\"ird \\xfe"), 1, 7e-6, 0, ss, 2,
		     ds, 1);
	/* a counter: the text's value, labels and all */
	const MF *ex = family(v, n, "taskstat_process_exits_total");
	assert_non_null(ex);
	assert_int_equal(ex->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
	bool seen = false;
	for (size_t i = 0; i < ex->n_metric; i++) {
		const Io__Prometheus__Client__Metric *m = ex->metric[i];
		if (strcmp(label(m, "cgroup"), "/k/a") ||
		    strcmp(label(m, "outcome"), "clean"))
			continue;
		assert_non_null(m->counter);
		assert_true(m->counter->value == 5);
		seen = true;
	}
	assert_true(seen);
	/* a gauge without labels */
	const MF *cg = family(v, n, "taskstat_collector_cgroups");
	assert_int_equal(cg->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE);
	assert_true(cg->metric[0]->gauge->value ==
		    (double)cgs_snapshot_count(s));
	for (size_t i = 0; i < n; i++)
		io__prometheus__client__metric_family__free_unpacked(v[i], NULL);
	free(v);
	buf_free(&t);

	/* --prom-max-series: the text's cgroups, no other */
	in.prom_max_series = 40;
	v = both(&in, s, &t, &n);
	pl = family(v, n, "taskstat_process_lifetime_seconds");
	size_t kept = 0;
	for (size_t i = 0; i < cgs_snapshot_count(s); i++) {
		const char *p = cgs_snapshot_get_cgroup(s, i)->path;
		char key[96];
		snprintf(key, sizeof(key),
			 "taskstat_process_lifetime_seconds_count{cgroup=\"%s\"}",
			 p);
		bool in_text = strstr(t.p, key) != NULL;
		assert_int_equal(in_text, of_cgroup(pl, p) != NULL);
		kept += in_text;
	}
	assert_true(kept > 0 && kept < 32);
	assert_int_equal(pl->n_metric, kept);
	for (size_t i = 0; i < n; i++)
		io__prometheus__client__metric_family__free_unpacked(v[i], NULL);
	free(v);
	buf_free(&t);
	cgs_snapshot_free(s);
	cgs_rollup_free(r);
}

static void t_accept(void **st)
{
	(void)st;
	static const char P[] = "application/vnd.google.protobuf;"
				"proto=io.prometheus.client.MetricFamily;"
				"encoding=delimited";
	char a[512];
	/* what Prometheus 2.42 sends with native histograms on */
	snprintf(a, sizeof(a), "%s;q=0.7,text/plain;version=0.0.4;q=0.3,"
		 "*/*;q=0.1", P);
	assert_true(http_wants_protobuf(a));
	assert_true(http_wants_protobuf(P));
	assert_true(http_wants_protobuf(
		"application/vnd.google.protobuf; proto=\"io.prometheus.client."
		"MetricFamily\"; encoding=delimited, text/plain; q=0.5"));
	/* text: none, text only, q=0, text preferred or equal */
	assert_false(http_wants_protobuf(NULL));
	assert_false(http_wants_protobuf(""));
	assert_false(http_wants_protobuf("text/plain;version=0.0.4"));
	assert_false(http_wants_protobuf("*/*"));
	snprintf(a, sizeof(a), "%s;q=0", P);
	assert_false(http_wants_protobuf(a));
	snprintf(a, sizeof(a), "%s;q=0.3,text/plain;q=0.7", P);
	assert_false(http_wants_protobuf(a));
	snprintf(a, sizeof(a), "%s;q=0.5,*/*;q=0.5", P);
	assert_false(http_wants_protobuf(a));
	/* bad q, unknown parameters or values, other types */
	snprintf(a, sizeof(a), "%s;q=2", P);
	assert_false(http_wants_protobuf(a));
	snprintf(a, sizeof(a), "%s;q=x", P);
	assert_false(http_wants_protobuf(a));
	snprintf(a, sizeof(a), "%s;charset=utf-8", P);
	assert_false(http_wants_protobuf(a));
	assert_false(http_wants_protobuf("application/vnd.google.protobuf;"
		"proto=io.prometheus.client.MetricFamily;encoding=text"));
	assert_false(http_wants_protobuf("application/vnd.google.protobuf;"
		"proto=other.Thing;encoding=delimited"));
	assert_false(http_wants_protobuf("application/vnd.google.protobuf"));
	assert_false(http_wants_protobuf(
		"application/openmetrics-text;version=1.0.0,image/png"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		fp_unit_test(t_encode, &F),
		cmocka_unit_test(t_accept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
