/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/workloads.h>: the workload view. Per-cgroup totals folded by
 * workload (Kubernetes namespace/pod/container, Docker Compose service or
 * container, systemd unit), so a container's successive cgroups (one per
 * restart) add up in one set of counters. Part of <cgstats.h>.
 */
#ifndef CGSTATS_WORKLOADS_H
#define CGSTATS_WORKLOADS_H

#include "identity.h"
#include "snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a workload is. */
enum cgs_workload_kind {
	CGS_WLK_CONTAINER = 0, /* a Kubernetes container (namespace, pod,
				* container) */
	CGS_WLK_POD = 1,       /* a Kubernetes pod's own cgroup and its
				* sandbox (namespace, pod) */
	CGS_WLK_DOCKER = 2,    /* a Docker container: its Compose project and
				* service, else its name (container) */
	CGS_WLK_UNIT = 3,      /* a systemd unit (unit) */
};

struct cgs_workloads_opts {
	size_t sz;            /* sizeof(struct cgs_workloads_opts) */
	/* names containers and pods; borrowed (the caller keeps it alive and
	 * uses it from no other thread meanwhile); NULL: units only */
	struct cgs_identity_src *identity;
	uint64_t retire_after_ms; /* a workload is dropped this long after its
				   * last cgroup went; 0: 15 minutes */
	uint64_t hold_ms;     /* ignored since 1.3 (a new workload shows its
			       * counts at once, as its cgroups' series
			       * do); kept for the ABI */
	size_t max_workloads; /* 0: 16,384; more are counted, not kept */
	size_t max_cgroups;   /* cgroups remembered; 0: 262,144 */
};

/* One workload, as of the last cgs_workloads_update(). */
struct cgs_workload_view {
	size_t sz;            /* bytes the library filled */
	enum cgs_workload_kind kind;
	/* "" when not part of the key; valid UTF-8, no control bytes */
	const char *k8s_namespace, *pod, *container, *unit;
	const char *image;    /* of its latest cgroup; not part of the key */
	/* cumulative since the workload was first seen: its cgroups' own
	 * (self) counters, every cgroup it ever had, each as of the last
	 * snapshot folded in (removed cgroups included until retired, and
	 * after, once) */
	const struct cgs_counters *total;
	/* process exits by terminating signal (slot = signal number), the
	 * same way; NULL when none */
	const uint64_t *signals; /* CGS_SIGNAL_SLOTS entries */
	uint64_t cgroups_seen;   /* cgroups it has had (restarts + 1) */
	uint64_t cgroups_live;   /* in the last snapshot */
	uint64_t first_seen_ms, last_seen_ms; /* caller's clock */
	uint32_t held;           /* always 0 since 1.3 (see hold_ms) */
	/* From 1.3: the longest delay of each class over its cgroups' task
	 * records since the workload was first seen (the largest of its
	 * cgroups' own cgs_snapshot_get_delay_peaks()); NULL when none */
	const struct cgs_delay_peaks *peaks;
};

/* The view's own counters. */
struct cgs_workloads_counts {
	size_t sz;                /* sizeof(struct cgs_workloads_counts) */
	uint64_t workloads;       /* kept now */
	uint64_t cgroups;         /* cgroups remembered now */
	uint64_t retired;         /* workloads dropped after retire_after_ms */
	uint64_t unnamed_cgroups; /* containers and pods no source named,
				   * also at the next 3 snapshots (or before
				   * they left): their exits are in no
				   * workload (they are in the per-cgroup
				   * totals) */
	uint64_t over_limit;      /* cgroups left out: max_workloads or
				   * max_cgroups reached */
};

struct cgs_workloads;

/**
 * cgs_workloads_new() - Make a workload view.
 * @out: Receives the view (NULL on failure); free it with
 *	cgs_workloads_free().
 * @opts: Options (NULL: defaults); copied.
 *
 * Since 1.3 @out comes first, as in every constructor; a program built
 * against 1.2 (options first) keeps its own symbol version.
 *
 * Context: Any thread; allocates.
 * Return: 0, -EINVAL, -E2BIG (options this library does not know),
 * -ENOMEM.
 */
CGS_EXPORT int cgs_workloads_new(struct cgs_workloads **out,
				 const struct cgs_workloads_opts *opts);

/**
 * cgs_workloads_free() - Free a view (NULL is a no-op).
 * @w: The view; views returned by cgs_workloads_get() die with it.
 */
CGS_EXPORT void cgs_workloads_free(struct cgs_workloads *w);

/**
 * cgs_workloads_update() - Fold one snapshot in.
 * @w: The view.
 * @snap: The next snapshot of one rollup, taken without folding (feed
 *	every snapshot, in order: the view adds a cgroup's self counters when
 *	it first sees it, then its self_delta, so a snapshot skipped is lost
 *	to it). A no_delta snapshot folded into an empty view is undone at
 *	the next update (whose deltas include it); one after others is not
 *	folded (since 1.3). Not kept.
 * @now_ms: The caller's clock (monotonic ms), for retirement and holds.
 *
 * A cgroup seen for the first time is named (the identity source's
 * files are read here, never per record); a container or pod no source
 * named is asked again at the next 3 updates, and once named all its
 * counts join its workload; cgroups gone from @snap leave
 * their workload, which is dropped retire_after_ms after its last one.
 * O(cgroups in @snap). Pointers from cgs_workloads_get() become invalid.
 *
 * Context: One thread at a time per view.
 * Return: 0, -EINVAL, -ENOMEM (the view is unchanged but for counts).
 */
CGS_EXPORT int cgs_workloads_update(struct cgs_workloads *w,
				    const struct cgs_snapshot *snap, uint64_t now_ms);

/**
 * cgs_workloads_served() - Say the current view was served to a scraper.
 * @w: The view.
 *
 * Does nothing since 1.3: a new workload is no longer shown as zeros
 * until served (its series disagreed with its cgroups' in the same
 * scrape); kept for the ABI.
 *
 * Context: The view's thread.
 */
CGS_EXPORT void cgs_workloads_served(struct cgs_workloads *w);

/**
 * cgs_workloads_count() - Workloads in the view.
 * @w: The view.
 * Return: The count (0 for NULL).
 */
CGS_EXPORT size_t cgs_workloads_count(const struct cgs_workloads *w);

/**
 * cgs_workloads_get() - One workload.
 * @w: The view.
 * @i: 0 <= @i < cgs_workloads_count(); the order is stable between
 *	updates, sorted by kind, then namespace, pod, container, unit.
 * @out: Receives it (sz set by the caller); its pointers are valid until
 *	the next cgs_workloads_update() or cgs_workloads_free().
 *
 * Return: 0, -EINVAL.
 */
CGS_EXPORT int cgs_workloads_get(const struct cgs_workloads *w, size_t i,
				 struct cgs_workload_view *out);

/**
 * cgs_workloads_find() - The workload a cgroup belongs to.
 * @w: The view.
 * @cgroup_path: A cgroup path of the last snapshot folded in.
 * @out: Receives its workload (sz set by the caller), as
 *	cgs_workloads_get() gives it.
 *
 * One hash look-up, no file read: for naming a snapshot's rows.
 *
 * Context: The view's thread.
 * Return: 0; -ENOENT when the cgroup is not in the view or belongs to no
 *	workload; -EINVAL.
 */
CGS_EXPORT int
cgs_workloads_find(const struct cgs_workloads *w, const char *cgroup_path,
		   struct cgs_workload_view *out);

/**
 * cgs_workloads_exe_count() - Entries of an executables' ranking of one
 *	workload.
 * @w: The view.
 * @i: 0 <= @i < cgs_workloads_count(), as for cgs_workloads_get().
 * @by: The ranking.
 *
 * Since 1.4. A workload's ranking is that of every cgroup it ever had
 * (cgs_rollup_opts.exes on): its removed cgroups' summaries as last
 * seen, merged into one of the same capacity, and its live cgroups'
 * current ones merged at the update (Space-Saving summaries merged: an
 * executable's true value lies in [value, value + error], error adds up
 * over the merged summaries, each at most its total / opts.exes; an
 * executable above the bound is listed; exact while the workload saw at
 * most opts.exes executables). Every counter held is listed (up to
 * opts.exes), then (other) when something is not listed, as in
 * cgs_snapshot_get_exe(). Memory per workload: up to 3 x (2 + its live
 * cgroups) summaries of opts.exes counters (about 100 bytes a counter;
 * a ranking nothing counted by has none), and the listing. Nothing with
 * executables off.
 *
 * Context: The view's thread.
 * Return: The number of entries; 0 when executables are off, for a
 *	ranking nothing was counted by, or out of range.
 */
CGS_EXPORT size_t cgs_workloads_exe_count(const struct cgs_workloads *w,
					  size_t i, enum cgs_exe_rank by);

/**
 * cgs_workloads_get_exe() - One entry of a workload's executables' ranking.
 * @w: The view.
 * @i: The workload, as for cgs_workloads_exe_count().
 * @by: The ranking.
 * @j: 0 <= @j < cgs_workloads_exe_count(), largest value first.
 *
 * Since 1.4.
 *
 * Context: The view's thread.
 * Return: The entry, valid until the next cgs_workloads_update() or
 *	cgs_workloads_free(); NULL out of range.
 */
CGS_EXPORT const struct cgs_exe *
cgs_workloads_get_exe(const struct cgs_workloads *w, size_t i,
		      enum cgs_exe_rank by, size_t j);

/**
 * cgs_workloads_get_counts() - The view's own counters.
 * @w: The view.
 * @out: Receives them (sz set by the caller).
 * Return: 0, -EINVAL.
 */
CGS_EXPORT int cgs_workloads_get_counts(const struct cgs_workloads *w,
					struct cgs_workloads_counts *out);

/**
 * cgs_workload_kind_name() - "container", "pod", "docker", "unit".
 * @k: The kind.
 * Return: A static string; "unknown" out of range.
 */
CGS_EXPORT const char *cgs_workload_kind_name(enum cgs_workload_kind k);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_WORKLOADS_H */
