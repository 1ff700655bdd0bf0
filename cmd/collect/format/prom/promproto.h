/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Prometheus protobuf exposition (application/vnd.google.protobuf;
 * proto=io.prometheus.client.MetricFamily; encoding=delimited): each
 * MetricFamily message prefixed by its length as a varint.
 *
 * The per-cgroup distributions are native histograms of schema 0 made from
 * the snapshot (out_promproto.c, driven by the family table of
 * prom_family.c, for the cgroups prom_keep() keeps: the text's); every
 * other family is the text's own (the same table wrote it), converted
 * (prom_text2pb.c).
 */
#ifndef TSC_PROMPROTO_H
#define TSC_PROMPROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "output.h"

#define PROMPROTO_TYPE                                               \
	"application/vnd.google.protobuf; "                          \
	"proto=io.prometheus.client.MetricFamily; encoding=delimited"

struct Io__Prometheus__Client__MetricFamily;

/* Appends *mf to b, prefixed by its packed length (varint). */
void pb_put_family(struct buf *b,
		   const struct Io__Prometheus__Client__MetricFamily *mf);

/*
 * The native histograms of the family table's distributions (those on in
 * this run) for the cgroups the text exports: one MetricFamily each,
 * appended to pb. Made per snapshot only once a scraper asked for
 * protobuf. b->oom on allocation failure.
 */
void out_promproto(struct buf *pb, const struct snap_info *in,
		   const struct cgs_snapshot *s);

/*
 * The families of a Prometheus text (format 0.0.4) as protobuf, appended to
 * pb; the histogram families of the family table are left out (their
 * native form comes from out_promproto()). Counters, gauges and untyped
 * samples; a sample outside its family's type is sent untyped. Lines it
 * cannot read are skipped (the text is ours). b->oom on allocation
 * failure.
 */
void prom_text2pb(struct buf *pb, const char *text, size_t len);

/* Whether name[0..n) is a histogram of the family table (with PROM_PREFIX). */
bool prom_native_name(const char *name, size_t n);

#endif
