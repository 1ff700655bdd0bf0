/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The collector's own series (taskstat_collector_*), defined once: name,
 * type and help for the Prometheus text (and so the protobuf exposition,
 * converted from it), the key of the JSON snapshot line, and where the
 * value lives in struct snap_info. Each output walks a group in table
 * order; where the JSON line orders a group otherwise (its "attribution"
 * object) it lists the ids in its own order, never the definitions.
 */
#ifndef TSC_SELFMETRIC_H
#define TSC_SELFMETRIC_H

#include <stddef.h>

#include "buf.h"
#include "output.h"

enum tsc_sm_group {
	TSC_SMG_RECORDS,     /* records, drops, malformed messages */
	TSC_SMG_VIA,         /* records by how they found their cgroup */
	TSC_SMG_ATTRIBUTION, /* inferred, the kernel source's misses */
	TSC_SMG_KERNEL,      /* the kernel source's own (with kernel_on) */
	TSC_SMG_FORKS,       /* fork tracking */
	TSC_SMG_HEALTH,      /* size, limits, retirement */
	TSC_SMG_WORKLOADS,   /* the workload view (cgs_workloads_counts) */
	TSC_SMG_ID_FAILURES, /* identity: files that named nothing */
	TSC_SMG_ID_EARLY,    /* identity: look-ups at cgroup mkdir */
	TSC_SMG_HTTP,        /* the scrape server (struct tsc_sm_http) */
	TSC_SMG_HELD,        /* exits held for names (struct tsc_sm_held) */
	TSC_SMG_EXE,         /* the exe map, JSON (struct exe_counts) */
	TSC_SMG_NONE,        /* in no group: JSON by id only */
};

enum tsc_sm_id {
	TSC_SM_RECORDS, TSC_SM_DROPPED, TSC_SM_UNATTRIBUTED, TSC_SM_REFUSED,
	TSC_SM_MALFORMED, TSC_SM_ENOBUFS, TSC_SM_TRUNCATED, TSC_SM_VERSION0,
	TSC_SM_VIA_CACHE, TSC_SM_VIA_PROC, TSC_SM_VIA_PARENT,
	TSC_SM_VIA_ANCESTOR, TSC_SM_VIA_FORK_PARENT, TSC_SM_VIA_KERNEL,
	TSC_SM_INFERRED, TSC_SM_KERNEL_UNMATCHED, TSC_SM_KERNEL_LOST,
	TSC_SM_KERNEL_EXPIRED, TSC_SM_KERNEL_RINGBUF, TSC_SM_KERNEL_IDS,
	TSC_SM_KERNEL_WAITS,
	TSC_SM_K_UNRESOLVED, TSC_SM_K_CG_LOST, TSC_SM_K_RING_QUEUED,
	TSC_SM_K_RING_PEAK, TSC_SM_K_RING_SLOTS, TSC_SM_K_WALKS,
	TSC_SM_K_WALK_MS, TSC_SM_K_BPF_STATS,
	TSC_SM_FORK_TRACKING, TSC_SM_FORK_DROPS,
	TSC_SM_SHARDS, TSC_SM_CGROUPS, TSC_SM_CGROUPS_FILTERED,
	TSC_SM_RETIRED_UNSERVED, TSC_SM_RETIRED_FORCED,
	TSC_SM_REMOVED_WAITING, TSC_SM_PROM_MAX_SERIES,
	TSC_SM_WORKLOADS, TSC_SM_WL_UNNAMED, TSC_SM_WL_OVER_LIMIT,
	TSC_SM_IDF_TOO_BIG, TSC_SM_IDF_NOT_REGULAR, TSC_SM_IDF_LOOP,
	TSC_SM_IDF_IO_ERROR, TSC_SM_IDF_BAD_JSON, TSC_SM_IDF_BAD_VALUE,
	TSC_SM_IDF_DIR_TRUNCATED,
	TSC_SM_IDE_NAMED, TSC_SM_IDE_UNNAMED, TSC_SM_IDE_GONE_BEFORE,
	TSC_SM_IDE_QUEUE_FULL,
	TSC_SM_HTTP_CONNS, TSC_SM_HTTP_LIMIT, TSC_SM_HTTP_CUT_DEADLINE,
	TSC_SM_HTTP_CUT_SHED, TSC_SM_HTTP_CUT_MEMORY, TSC_SM_HTTP_SENDING,
	TSC_SM_HTTP_CUT_BYTES, TSC_SM_HTTP_REFUSED, TSC_SM_HTTP_AUTH,
	TSC_SM_HTTP_TRIMS, TSC_SM_HTTP_LOG_RATE, TSC_SM_HTTP_LOG_BLOCKED,
	TSC_SM_HELD_NAMED, TSC_SM_HELD_UNNAMED, TSC_SM_HELD_TIMEOUT,
	TSC_SM_HELD_FULL,
	TSC_SM_EXE_KNOWN, TSC_SM_EXE_UNKNOWN, TSC_SM_EXE_ENTRIES,
	TSC_SM_EXE_FULL, TSC_SM_EXE_BYTES, TSC_SM_EXE_DELETED,
	TSC_SM_EXE_REPLACED, TSC_SM_EXE_EXEC, TSC_SM_EXE_LOST,
	TSC_SM_EXE_EXEC_ON,
	TSC_SM__COUNT
};

/* The scrape server's counts, as of a request (http/http_metrics.c). The
 * help texts name its limits: http_metrics.c checks they agree. */
struct tsc_sm_http {
	uint64_t conns, limit;
	uint64_t cut_deadline, cut_shed, cut_memory;
	uint64_t sending, cut_bytes; /* bytes of answers */
	uint64_t refused_memory, auth_failed, trims;
	uint64_t log_rate, log_blocked;
};

/* Exits held for their cgroup's names (sink/hold.c), summed over the
 * shards, by how they were written. The help texts name hold.h's limits:
 * workloads.c checks they agree. */
struct tsc_sm_held {
	uint64_t named, unnamed, timeout, full;
};

/* The Prometheus text of group g: for each of its metrics that the text
 * has, HELP and TYPE (once a family) and its series. s: the snapshot (the
 * cgroup count), may be NULL. */
void tsc_sm_prom(struct buf *b, enum tsc_sm_group g,
		 const struct snap_info *in, const struct cgs_snapshot *s);
/* The same for a group whose values live elsewhere than in a snap_info:
 * base points to its struct (TSC_SMG_WORKLOADS: struct
 * cgs_workloads_counts; TSC_SMG_ID_*: struct cgs_identity_counts;
 * TSC_SMG_HTTP: struct tsc_sm_http;
 * TSC_SMG_HELD: struct tsc_sm_held). */
void tsc_sm_prom_of(struct buf *b, enum tsc_sm_group g, const void *base);
/* ,"key":value for each metric of group g that the JSON line has. */
void tsc_sm_json(struct buf *b, enum tsc_sm_group g,
		 const struct snap_info *in, const struct cgs_snapshot *s);
/* "key":value,... of the n metrics ids, in that order (a JSON object's
 * members: no leading comma). */
/* The JSON members of group g, comma separated (no leading comma), of the
 * struct at base (TSC_SMG_EXE: struct exe_counts). */
void tsc_sm_json_of(struct buf *b, enum tsc_sm_group g, const void *base);
void tsc_sm_json_ids(struct buf *b, const enum tsc_sm_id *ids, size_t n,
		     const struct snap_info *in);

#endif
