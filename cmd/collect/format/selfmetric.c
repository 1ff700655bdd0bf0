/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The collector's own series, defined once (selfmetric.h). */
#include <stdbool.h>
#include <stdint.h>

#include "exe_cache.h"
#include "prom_family.h"
#include "selfmetric.h"

enum sm_kind {
	SM_U64,   /* uint64_t */
	SM_UINT,  /* unsigned */
	SM_BOOL,  /* bool: JSON true/false, Prometheus 0/1 */
	SM_MILLI, /* uint64_t thousandths: Prometheus as units, 3 decimals */
	SM_COUNT, /* the snapshot's cgroups (no field) */
	SM_U64_NZ, /* uint64_t, in JSON only when not 0 */
};

struct sm {
	unsigned char group; /* enum tsc_sm_group */
	unsigned char kind;  /* enum sm_kind */
	const char *prom;    /* name after taskstat_; NULL: not in the text */
	const char *type;    /* NULL: a further series of the family above */
	const char *help;
	const char *label;   /* the series' label pair, or NULL */
	const char *json;    /* key in the snapshot line; NULL: none */
	size_t off;          /* in struct snap_info */
};

#define INFO(f) offsetof(struct snap_info, f)
#define KTOT(f) (offsetof(struct snap_info, ktot) + \
		 offsetof(struct cgs_rollup_totals, f))
#define C "counter"
#define G "gauge"
#define AT "collector_attributed_total"
#define LEFT_OUT "collector_workload_cgroups_left_out_total"
#define IDF "collector_identity_failures_total"
#define IDE "collector_identity_early_total"
#define HTTP(f) offsetof(struct tsc_sm_http, f)
#define HC "collector_http_connections_cut_total"
#define HA "collector_http_answer_bytes"
#define HL "collector_http_log_suppressed_total"
#define EH "collector_events_held_total"
#define HELD(f) offsetof(struct tsc_sm_held, f)
#define EXE(f) offsetof(struct exe_counts, f)
#define WLC(f) offsetof(struct cgs_workloads_counts, f)
#define IDC(f) offsetof(struct cgs_identity_counts, f)

static const struct sm sm[TSC_SM__COUNT] = {
	[TSC_SM_RECORDS] = { TSC_SMG_RECORDS, SM_U64,
		"collector_records_total", C, "Task exit records accounted.",
		NULL, "records", INFO(records) },
	[TSC_SM_DROPPED] = { TSC_SMG_RECORDS, SM_U64,
		"collector_dropped_total", C, "Exit events the kernel dropped "
		"(listener queue full).", NULL, "dropped", INFO(dropped) },
	[TSC_SM_UNATTRIBUTED] = { TSC_SMG_RECORDS, SM_U64,
		"collector_unattributed_total", C, "Records accounted to the "
		"(unknown) cgroup.", NULL, "unattributed",
		INFO(unattributed) },
	[TSC_SM_REFUSED] = { TSC_SMG_RECORDS, SM_U64,
		"collector_refused_total", C, "Records the rollup could not "
		"take (not accounted; 0 unless the library is misused).", NULL,
		"refused", INFO(refused) },
	[TSC_SM_MALFORMED] = { TSC_SMG_RECORDS, SM_U64,
		"collector_malformed_total", C, "Netlink messages rejected as "
		"malformed.", NULL, "malformed", INFO(malformed) },
	[TSC_SM_ENOBUFS] = { TSC_SMG_RECORDS, SM_U64,
		"collector_enobufs_total", C, "Receive queue overrun episodes "
		"reported with ENOBUFS.", NULL, "enobufs", INFO(enobufs) },
	/* of malformed: messages larger than the receive slot; records of
	 * version 0 (old kernels' group records, decoded by their size) */
	[TSC_SM_TRUNCATED] = { TSC_SMG_RECORDS, SM_U64_NZ, NULL, NULL, NULL,
		NULL, "truncated", INFO(truncated) },
	[TSC_SM_VERSION0] = { TSC_SMG_RECORDS, SM_U64_NZ, NULL, NULL, NULL,
		NULL, "version0_records", INFO(version0) },

	[TSC_SM_VIA_CACHE] = { TSC_SMG_VIA, SM_U64, AT, C, "Records "
		"attributed to a cgroup, by how it was found.",
		"via=\"cache\"", "cache", INFO(via_cache) },
	[TSC_SM_VIA_PROC] = { TSC_SMG_VIA, SM_U64, AT, NULL, NULL,
		"via=\"proc\"", "proc", INFO(via_proc) },
	[TSC_SM_VIA_PARENT] = { TSC_SMG_VIA, SM_U64, AT, NULL, NULL,
		"via=\"parent\"", "parent", INFO(via_parent) },
	[TSC_SM_VIA_ANCESTOR] = { TSC_SMG_VIA, SM_U64, AT, NULL, NULL,
		"via=\"ancestor\"", "ancestor", INFO(via_ancestor) },
	[TSC_SM_VIA_FORK_PARENT] = { TSC_SMG_VIA, SM_U64, AT, NULL, NULL,
		"via=\"fork_parent\"", "fork_parent", INFO(via_fork_parent) },
	[TSC_SM_VIA_KERNEL] = { TSC_SMG_VIA, SM_U64, AT, NULL, NULL,
		"via=\"kernel\"", "kernel", INFO(via_kernel) },

	[TSC_SM_INFERRED] = { TSC_SMG_ATTRIBUTION, SM_U64,
		"collector_inferred_total", C, "Records whose cgroup was "
		"inferred, not known.", NULL, "inferred", INFO(inferred) },
	[TSC_SM_KERNEL_UNMATCHED] = { TSC_SMG_ATTRIBUTION, SM_U64,
		"collector_kernel_unmatched_total", C, "Records the kernel "
		"source had no verified entry for (attributed by the /proc "
		"fallback).", NULL, "kernel_unmatched",
		INFO(kernel_unmatched) },
	[TSC_SM_KERNEL_LOST] = { TSC_SMG_ATTRIBUTION, SM_U64,
		"collector_kernel_lost_total", C, "Kernel-side entries dropped "
		"because their CPU's ring was full (exact).", NULL,
		"kernel_lost", INFO(kernel_lost) },
	[TSC_SM_KERNEL_EXPIRED] = { TSC_SMG_ATTRIBUTION, SM_U64,
		"collector_kernel_expired_total", C, "Kernel-side entries no "
		"record claimed (their record was dropped or went "
		"elsewhere).", NULL, "kernel_expired", INFO(kernel_expired) },
	[TSC_SM_KERNEL_RINGBUF] = { TSC_SMG_ATTRIBUTION, SM_U64,
		"collector_kernel_ringbuf_bytes", G, "Kernel source ring bytes "
		"per shard, 0 without it.", NULL, NULL, INFO(kernel_ringbuf) },
	[TSC_SM_KERNEL_IDS] = { TSC_SMG_ATTRIBUTION, SM_U64,
		"collector_kernel_cgroup_ids", G, "Cgroup ids the kernel "
		"source holds a path for (live, and removed in the last "
		"minute, or past 8192 of those the last 2 s), 0 without it.",
		NULL, NULL, INFO(kernel_cgroup_ids) },
	[TSC_SM_KERNEL_WAITS] = { TSC_SMG_NONE, SM_U64, NULL, NULL, NULL,
		NULL, "kernel_waits", INFO(kernel_waits) },

	[TSC_SM_K_UNRESOLVED] = { TSC_SMG_KERNEL, SM_U64,
		"collector_kernel_unresolved_total", C, "Lookups of a cgroup "
		"id without a known path.", NULL, "unresolved",
		KTOT(kernel_unresolved) },
	[TSC_SM_K_CG_LOST] = { TSC_SMG_KERNEL, SM_U64,
		"collector_kernel_cgroup_events_lost_total", C, "Cgroup "
		"mkdir/rmdir events the BPF program could not queue (their "
		"ring full).", NULL, "cgroup_events_lost",
		KTOT(kernel_cg_lost) },
	[TSC_SM_K_RING_QUEUED] = { TSC_SMG_KERNEL, SM_U64,
		"collector_kernel_ring_queued_entries", G, "Exit entries in "
		"the kernel source's rings, not read yet.", NULL,
		"ring_queued", KTOT(kernel_ring_queued) },
	[TSC_SM_K_RING_PEAK] = { TSC_SMG_KERNEL, SM_U64,
		"collector_kernel_ring_peak_entries", G, "Most entries one "
		"CPU's ring held when read (of collector_kernel_ring_slots).",
		NULL, "ring_peak", KTOT(kernel_ring_peak) },
	[TSC_SM_K_RING_SLOTS] = { TSC_SMG_KERNEL, SM_U64,
		"collector_kernel_ring_slots", G, "Entries each CPU's ring "
		"holds.", NULL, "ring_slots", KTOT(kernel_ring_slots) },
	[TSC_SM_K_WALKS] = { TSC_SMG_KERNEL, SM_U64,
		"collector_kernel_cgroup_walks_total", C, "Walks of the "
		"cgroup2 mount (start, unknown ids).", NULL, "cgroup_walks",
		KTOT(kernel_walks) },
	[TSC_SM_K_WALK_MS] = { TSC_SMG_KERNEL, SM_MILLI,
		"collector_kernel_cgroup_walk_seconds", G, "How long the last "
		"walk of the cgroup2 mount took.", NULL, "cgroup_walk_ms",
		KTOT(kernel_walk_ms) },
	[TSC_SM_K_BPF_STATS] = { TSC_SMG_KERNEL, SM_U64,
		"collector_kernel_bpf_stats_enabled", G, "1 if the kernel "
		"counts BPF run time (kernel.bpf_stats_enabled 1): the BPF run "
		"time and count series are there (else absent).", NULL, NULL,
		KTOT(kernel_bpf_stats) },

	[TSC_SM_FORK_TRACKING] = { TSC_SMG_FORKS, SM_BOOL,
		"collector_fork_tracking", G, "1 if fork events from the proc "
		"connector are used.", NULL, "fork_tracking",
		INFO(fork_tracking) },
	[TSC_SM_FORK_DROPS] = { TSC_SMG_FORKS, SM_U64,
		"collector_fork_events_dropped_total", C, "Fork events the "
		"kernel dropped (attribution of reaped processes may fall "
		"back to their parent).", NULL, "fork_drops",
		INFO(fork_drops) },

	[TSC_SM_SHARDS] = { TSC_SMG_HEALTH, SM_UINT, "collector_shards", G,
		"Listener sockets.", NULL, "shards", INFO(shards) },
	[TSC_SM_CGROUPS] = { TSC_SMG_HEALTH, SM_COUNT, "collector_cgroups", G,
		"Cgroups tracked.", NULL, "ncgroups", 0 },
	[TSC_SM_CGROUPS_FILTERED] = { TSC_SMG_HEALTH, SM_U64,
		"collector_cgroups_filtered", G, "Cgroups left out of every "
		"output by --cgroup and --exclude-cgroup (the totals count "
		"them).", NULL, "cgroups_filtered", INFO(cgroups_filtered) },
	[TSC_SM_RETIRED_UNSERVED] = { TSC_SMG_HEALTH, SM_U64,
		"collector_retired_unserved_total", C, "Removed cgroups "
		"forgotten before a scrape fetched their final counts "
		"(--retire-after, --retire-max).", NULL, "retired_unserved",
		INFO(retired_unserved) },
	[TSC_SM_RETIRED_FORCED] = { TSC_SMG_HEALTH, SM_U64,
		"collector_retired_forced_total", C, "Of those, forgotten "
		"early: over --retire-max.", NULL, "retired_forced",
		INFO(retired_forced) },
	[TSC_SM_REMOVED_WAITING] = { TSC_SMG_HEALTH, SM_U64,
		"collector_removed_waiting", G, "Removed cgroups kept for a "
		"scrape of their final counts.", NULL, "removed_waiting",
		INFO(removed_waiting) },
	[TSC_SM_PROM_MAX_SERIES] = { TSC_SMG_HEALTH, SM_U64,
		"collector_prom_max_series", G, "Per-cgroup series at most "
		"(--prom-max-series), 0: no limit.", NULL, NULL,
		INFO(prom_max_series) },

	[TSC_SM_WORKLOADS] = { TSC_SMG_WORKLOADS, SM_U64,
		"collector_workloads", G, "Workloads in the view now.", NULL,
		NULL, WLC(workloads) },
	[TSC_SM_WL_UNNAMED] = { TSC_SMG_WORKLOADS, SM_U64, LEFT_OUT, C,
		"Cgroups in no workload: unnamed containers and pods, and "
		"those past the view's bounds.", "reason=\"unnamed\"", NULL,
		WLC(unnamed_cgroups) },
	[TSC_SM_WL_OVER_LIMIT] = { TSC_SMG_WORKLOADS, SM_U64, LEFT_OUT, NULL,
		NULL, "reason=\"over_limit\"", NULL, WLC(over_limit) },

	[TSC_SM_IDF_TOO_BIG] = { TSC_SMG_ID_FAILURES, SM_U64, IDF, C,
		"Runtime state files or folders that named nothing, by "
		"reason.", "reason=\"too_big\"", NULL, IDC(too_big) },
	[TSC_SM_IDF_NOT_REGULAR] = { TSC_SMG_ID_FAILURES, SM_U64, IDF, NULL,
		NULL, "reason=\"not_regular\"", NULL, IDC(not_regular) },
	[TSC_SM_IDF_LOOP] = { TSC_SMG_ID_FAILURES, SM_U64, IDF, NULL, NULL,
		"reason=\"loop\"", NULL, IDC(loop) },
	[TSC_SM_IDF_IO_ERROR] = { TSC_SMG_ID_FAILURES, SM_U64, IDF, NULL, NULL,
		"reason=\"io_error\"", NULL, IDC(io_error) },
	[TSC_SM_IDF_BAD_JSON] = { TSC_SMG_ID_FAILURES, SM_U64, IDF, NULL, NULL,
		"reason=\"bad_json\"", NULL, IDC(bad_json) },
	[TSC_SM_IDF_BAD_VALUE] = { TSC_SMG_ID_FAILURES, SM_U64, IDF, NULL,
		NULL, "reason=\"bad_value\"", NULL, IDC(bad_value) },
	[TSC_SM_IDF_DIR_TRUNCATED] = { TSC_SMG_ID_FAILURES, SM_U64, IDF, NULL,
		NULL, "reason=\"dir_truncated\"", NULL, IDC(dir_truncated) },

	[TSC_SM_IDE_NAMED] = { TSC_SMG_ID_EARLY, SM_U64, IDE, C, "Container "
		"and pod cgroups looked up when they appeared (cgroup mkdir), "
		"by result; gone_before and queue_full stay unnamed unless "
		"their first snapshot finds their state.",
		"result=\"named\"", NULL, IDC(early_named) },
	[TSC_SM_IDE_UNNAMED] = { TSC_SMG_ID_EARLY, SM_U64, IDE, NULL, NULL,
		"result=\"unnamed\"", NULL, IDC(early_unnamed) },
	[TSC_SM_IDE_GONE_BEFORE] = { TSC_SMG_ID_EARLY, SM_U64, IDE, NULL,
		NULL, "result=\"gone_before\"", NULL, IDC(gone_before) },
	[TSC_SM_IDE_QUEUE_FULL] = { TSC_SMG_ID_EARLY, SM_U64, IDE, NULL, NULL,
		"result=\"queue_full\"", NULL, IDC(queue_full) },

	[TSC_SM_HTTP_CONNS] = { TSC_SMG_HTTP, SM_U64,
		"collector_http_connections", G, "Open HTTP connections.",
		NULL, NULL, HTTP(conns) },
	[TSC_SM_HTTP_LIMIT] = { TSC_SMG_HTTP, SM_U64,
		"collector_http_connection_limit", G, "Most HTTP connections "
		"served at once (64 per client address).", NULL, NULL,
		HTTP(limit) },
	[TSC_SM_HTTP_CUT_DEADLINE] = { TSC_SMG_HTTP, SM_U64, HC, C, "HTTP "
		"connections closed by the collector: request not done within "
		"10 s (deadline), the oldest one without a request when the "
		"table was full (shed), or the oldest answer still being sent "
		"after 1000 ms when the answers in flight filled their budget "
		"(memory).", "reason=\"deadline\"", NULL, HTTP(cut_deadline) },
	[TSC_SM_HTTP_CUT_SHED] = { TSC_SMG_HTTP, SM_U64, HC, NULL, NULL,
		"reason=\"shed\"", NULL, HTTP(cut_shed) },
	[TSC_SM_HTTP_CUT_MEMORY] = { TSC_SMG_HTTP, SM_U64, HC, NULL, NULL,
		"reason=\"memory\"", NULL, HTTP(cut_memory) },
	[TSC_SM_HTTP_SENDING] = { TSC_SMG_HTTP, SM_U64, HA, G, "Bytes of "
		"answers being sent (each holds its own copy; this one not "
		"counted), and of those of connections cut until freed.",
		"state=\"sending\"", NULL, HTTP(sending) },
	[TSC_SM_HTTP_CUT_BYTES] = { TSC_SMG_HTTP, SM_U64, HA, NULL, NULL,
		"state=\"cut\"", NULL, HTTP(cut_bytes) },
	[TSC_SM_HTTP_REFUSED] = { TSC_SMG_HTTP, SM_U64,
		"collector_http_requests_refused_total", C, "Scrapes answered "
		"503: the answers in flight filled their budget (at least 64 "
		"MiB, or 8 answers of the size asked) and none was slow enough "
		"to cut.", "reason=\"memory\"", NULL, HTTP(refused_memory) },
	[TSC_SM_HTTP_AUTH] = { TSC_SMG_HTTP, SM_U64,
		"collector_http_auth_failures_total", C, "Requests refused for "
		"a missing or wrong user name or password, or a client "
		"certificate missing or not valid (mTLS).", NULL, NULL,
		HTTP(auth_failed) },
	[TSC_SM_HTTP_TRIMS] = { TSC_SMG_HTTP, SM_U64,
		"collector_http_memory_trims_total", C, "Times the heap was "
		"given back to the system after a burst of connections.", NULL,
		NULL, HTTP(trims) },
	[TSC_SM_HTTP_LOG_RATE] = { TSC_SMG_HTTP, SM_U64, HL, C,
		"libmicrohttpd messages not printed: over the rate limit (1 a "
		"second after a burst of 5), or stderr had no room (its reader "
		"lags).", "reason=\"rate\"", NULL, HTTP(log_rate) },
	[TSC_SM_HTTP_LOG_BLOCKED] = { TSC_SMG_HTTP, SM_U64, HL, NULL, NULL,
		"reason=\"blocked\"", NULL, HTTP(log_blocked) },

	[TSC_SM_HELD_NAMED] = { TSC_SMG_HELD, SM_U64, EH, C, "Exit events "
		"whose cgroup's name look-up was pending, held until it "
		"answered, by how they were written: named, unnamed (no "
		"source named the cgroup), timeout (still pending after "
		"2 s), full (not held: the shard held 256 already).",
		"result=\"named\"", NULL, HELD(named) },
	[TSC_SM_HELD_UNNAMED] = { TSC_SMG_HELD, SM_U64, EH, NULL, NULL,
		"result=\"unnamed\"", NULL, HELD(unnamed) },
	[TSC_SM_HELD_TIMEOUT] = { TSC_SMG_HELD, SM_U64, EH, NULL, NULL,
		"result=\"timeout\"", NULL, HELD(timeout) },
	[TSC_SM_HELD_FULL] = { TSC_SMG_HELD, SM_U64, EH, NULL, NULL,
		"result=\"full\"", NULL, HELD(full) },

	/* --events live: what the exit events could name (exe_cache.h) */
	[TSC_SM_EXE_KNOWN] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL, NULL,
		"known", EXE(known) },
	[TSC_SM_EXE_UNKNOWN] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL, NULL,
		"unknown", EXE(unknown) },
	[TSC_SM_EXE_ENTRIES] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL, NULL,
		"entries", EXE(entries) },
	[TSC_SM_EXE_FULL] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL, NULL,
		"full", EXE(full) },
	[TSC_SM_EXE_BYTES] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL, NULL,
		"bytes", EXE(bytes) },
	[TSC_SM_EXE_DELETED] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL, NULL,
		"deleted", EXE(deleted) },
	[TSC_SM_EXE_REPLACED] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL,
		NULL, "replaced", EXE(replaced) },
	[TSC_SM_EXE_EXEC] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL, NULL,
		"exec", EXE(exec) },
	[TSC_SM_EXE_LOST] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL, NULL,
		"lost", EXE(lost) },
	[TSC_SM_EXE_EXEC_ON] = { TSC_SMG_EXE, SM_U64, NULL, NULL, NULL, NULL,
		"exec_on", EXE(exec_on) },
};

static uint64_t value(const struct sm *m, const void *base,
		      const struct cgs_snapshot *s)
{
	const char *p = (const char *)base + m->off;
	switch (m->kind) {
	case SM_UINT: return *(const unsigned *)p;
	case SM_BOOL: return *(const bool *)p;
	case SM_COUNT: return s ? cgs_snapshot_count(s) : 0;
	default: return *(const uint64_t *)p;
	}
}

static void prom_group(struct buf *b, enum tsc_sm_group g, const void *in,
		       const struct cgs_snapshot *s)
{
	for (size_t i = 0; i < TSC_SM__COUNT; i++) {
		const struct sm *m = &sm[i];
		if (m->group != g || !m->prom)
			continue;
		if (m->type)
			prom_head(b, m->prom, m->type, m->help);
		buf_puts(b, PROM_PREFIX);
		buf_puts(b, m->prom);
		if (m->label)
			buf_printf(b, "{%s}", m->label);
		buf_putc(b, ' ');
		if (m->kind == SM_MILLI)
			buf_fixed(b, value(m, in, s), 3);
		else
			buf_u64(b, value(m, in, s));
		buf_putc(b, '\n');
	}
}

void tsc_sm_prom(struct buf *b, enum tsc_sm_group g,
		 const struct snap_info *in, const struct cgs_snapshot *s)
{
	prom_group(b, g, in, s);
}

void tsc_sm_prom_of(struct buf *b, enum tsc_sm_group g, const void *base)
{
	prom_group(b, g, base, NULL);
}

static void json_member(struct buf *b, const struct sm *m,
			const void *in, const struct cgs_snapshot *s)
{
	buf_putc(b, '"');
	buf_puts(b, m->json);
	buf_puts(b, "\":");
	if (m->kind == SM_BOOL)
		buf_puts(b, value(m, in, s) ? "true" : "false");
	else
		buf_u64(b, value(m, in, s));
}

void tsc_sm_json(struct buf *b, enum tsc_sm_group g,
		 const struct snap_info *in, const struct cgs_snapshot *s)
{
	for (size_t i = 0; i < TSC_SM__COUNT; i++) {
		if (sm[i].group != g || !sm[i].json)
			continue;
		if (sm[i].kind == SM_U64_NZ && !value(&sm[i], in, s))
			continue;
		buf_putc(b, ',');
		json_member(b, &sm[i], in, s);
	}
}

void tsc_sm_json_of(struct buf *b, enum tsc_sm_group g, const void *base)
{
	bool first = true;
	for (size_t i = 0; i < TSC_SM__COUNT; i++) {
		if (sm[i].group != g || !sm[i].json)
			continue;
		if (!first)
			buf_putc(b, ',');
		first = false;
		json_member(b, &sm[i], base, NULL);
	}
}

void tsc_sm_json_ids(struct buf *b, const enum tsc_sm_id *ids, size_t n,
		     const struct snap_info *in)
{
	for (size_t k = 0; k < n; k++) {
		if (k)
			buf_putc(b, ',');
		json_member(b, &sm[ids[k]], in, NULL);
	}
}
