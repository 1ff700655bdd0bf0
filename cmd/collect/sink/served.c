/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The texts of the kept snapshot that others fetch: the Prometheus text
 * and native histograms (a scrape, --textfile), the JSON line
 * (/snapshot), made lazily under prom_lock. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "output.h"
#include "promproto.h"
#include "sink.h"
#include "workloads.h"

/*
 * The texts of the kept snapshot, made when first asked for (a scrape,
 * /snapshot, --textfile) and kept until the next snapshot: two scrapes of
 * one snapshot format it once, a snapshot nobody fetches formats nothing.
 * Under prom_lock.
 */
void tsc_prom_make_locked(struct tsc *c)
{
	if (c->srv.prom_made || !c->srv.kept)
		return;
	buf_reset(&c->srv.prom);
	size_t cut = out_prom(&c->srv.prom, c->srv.kept_in, c->srv.kept);
	tsc_workloads_prom(&c->srv.prom, c);
	buf_fit(&c->srv.prom);
	c->srv.prom_made = true;
	if (cut && !c->srv.prom_cut_said) {
		tsc_warn("--prom-max-series %llu: %zu of %zu cgroups left out "
			"of the Prometheus text (the fewest task exits first), "
			"counted in taskstat_collector_cgroups_not_exported\n",
			(unsigned long long)c->srv.kept_in->prom_max_series, cut,
			snap_shown(c->srv.kept_in, c->srv.kept));
		c->srv.prom_cut_said = true;
	}
}

/* The native histograms of the kept snapshot (protobuf), made when a
 * scraper first asks for them, as the text. Under prom_lock. */
static void pb_make_locked(struct tsc *c)
{
	if (c->srv.pb_made || !c->srv.kept)
		return;
	buf_reset(&c->srv.pb);
	out_promproto(&c->srv.pb, c->srv.kept_in, c->srv.kept);
	buf_fit(&c->srv.pb);
	c->srv.pb_made = !c->srv.pb.oom;
}

/* /snapshot's line is full, whatever --stream (it says "full" with
 * --stream changes, as the main output's full lines do). */
static void json_make_locked(struct tsc *c)
{
	if (c->srv.json_made || !c->srv.kept)
		return;
	struct snap_info in = *c->srv.kept_in;
	in.stream = c->io.stream.on ? TSC_STREAM_FULL : TSC_STREAM_NONE;
	buf_reset(&c->srv.json);
	out_jsonl_ops.snapshot(&c->srv.json, &in, c->srv.kept);
	buf_fit(&c->srv.json);
	c->srv.json_made = true;
}

/* The kept snapshot and its texts go (before the next one is made: the
 * library's pool reuses its memory). */
void tsc_kept_free_locked(struct tsc *c)
{
	cgs_snapshot_free(c->srv.kept);
	c->srv.kept = NULL;
	free(c->srv.kept_idx);
	c->srv.kept_idx = NULL;
	c->srv.prom_made = c->srv.json_made = c->srv.pb_made = false;
	buf_free(&c->srv.prom);
	buf_free(&c->srv.json);
	buf_free(&c->srv.pb);
}

void tsc_sink_free(struct tsc *c)
{
	exe_cache_free(c->names.exe);
	c->names.exe = NULL;
	pthread_mutex_lock(&c->srv.prom_lock);
	tsc_kept_free_locked(c);
	pthread_mutex_unlock(&c->srv.prom_lock);
	free(c->srv.kept_in);
	c->srv.kept_in = NULL;
	tsc_stream_free(&c->io.stream);
}

static char *copy_locked(struct tsc *c, bool json, size_t *len)
{
	char *p = NULL;
	pthread_mutex_lock(&c->srv.prom_lock);
	if (json)
		json_make_locked(c);
	else
		tsc_prom_make_locked(c);
	const struct buf *b = json ? &c->srv.json : &c->srv.prom;
	*len = b->len;
	p = malloc(b->len + 1);
	if (p) {
		memcpy(p, b->p ? b->p : "", b->len);
		p[b->len] = '\0';
		c->srv.served_gen = c->srv.text_gen;
	}
	pthread_mutex_unlock(&c->srv.prom_lock);
	return p;
}

char *tsc_prom_copy(struct tsc *c, size_t *len)
{
	return copy_locked(c, false, len);
}

/* The text and the native histograms of one kept snapshot (one lock). */
char *tsc_prom_copy_pb(struct tsc *c, size_t *len, char **pb, size_t *pblen)
{
	*pb = NULL;
	*pblen = 0;
	pthread_mutex_lock(&c->srv.prom_lock);
	tsc_prom_make_locked(c);
	pb_make_locked(c);
	char *t = malloc(c->srv.prom.len + 1);
	if (t) {
		memcpy(t, c->srv.prom.p ? c->srv.prom.p : "", c->srv.prom.len);
		t[c->srv.prom.len] = '\0';
		*len = c->srv.prom.len;
		c->srv.served_gen = c->srv.text_gen;
		if (c->srv.pb_made && (*pb = malloc(c->srv.pb.len ? c->srv.pb.len : 1))) {
			memcpy(*pb, c->srv.pb.p, c->srv.pb.len);
			*pblen = c->srv.pb.len;
		}
	}
	pthread_mutex_unlock(&c->srv.prom_lock);
	return t;
}

char *tsc_json_copy(struct tsc *c, size_t *len)
{
	return copy_locked(c, true, len);
}
