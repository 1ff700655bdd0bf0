/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup2 id -> path. Filled by a walk of the cgroup2 mount (at start, and
 * again, at most every CGSI_CGID_WALK_MS, when an id nobody announced
 * appears) and by the kernel's cgroup_mkdir events, so a cgroup created
 * and removed between two walks still has its path. A removed cgroup's
 * entry is kept CGSI_CGID_KEEP_MS after its rmdir event (its last records
 * may still be queued), then dropped: memory follows the live cgroups.
 * Under heavy churn at most CGSI_CGID_REMOVED_MAX removed entries are
 * kept that long: past that the oldest go once CGSI_CGID_KEEP_MIN_MS old
 * (a record later than that finds no path: counted, kernel_unresolved).
 * Not thread-safe: the caller locks.
 */
#ifndef CGS_ATTRIBUTE_CGID_H
#define CGS_ATTRIBUTE_CGID_H

#include <stddef.h>
#include <stdint.h>

#include "attribute/mounts.h"

#define CGSI_CGID_WALK_MS 200u
#define CGSI_CGID_KEEP_MS 60000u
#define CGSI_CGID_KEEP_MIN_MS 2000u
#define CGSI_CGID_REMOVED_MAX 8192u
/* A walk is not started again before CGSI_CGID_WALK_COST times its own
 * length has passed since it ended (at least CGSI_CGID_WALK_MS): walks
 * take at most ~1/CGSI_CGID_WALK_COST of the time, whatever the number of
 * cgroups (a walk of 20,000 sibling cgroups takes ~0.1 s here). */
#define CGSI_CGID_WALK_COST 10u
/* Ids of dropped removed entries remembered (direct-mapped), so that a
 * late record's unknown id says "purged" rather than "never learnt". */
#define CGSI_CGID_PURGED_SLOTS 1024u
/* The walk calls tick(tick_ctx) every this many directories (the kernel
 * source reads its cgroup event ring there, so that a long walk cannot
 * let it overflow). */
#define CGSI_CGID_TICK_DIRS 256u

struct cgsi_cgid_ent {
	uint64_t id;        /* 0: free */
	uint64_t removed_ms; /* 0: not known to be removed */
	char *path;         /* as /proc/<pid>/cgroup shows it */
};

/* A removal, in the order of the rmdir events (so oldest first). */
struct cgsi_cgid_rm {
	uint64_t id, ms;
};

struct cgsi_cgid {
	const struct cgsi_cg_mount *mount;
	struct cgsi_cgid_ent *slot;
	uint32_t mask, count, tombs;
	struct cgsi_cgid_rm *rq;  /* removed entries still held, a ring */
	uint64_t rq_head, rq_tail;
	uint32_t rq_mask;
	uint64_t last_walk_ms;    /* when the last walk started */
	uint64_t next_walk_ms;    /* no walk before this (unless forced) */
	uint64_t walk_ms_last;    /* how long the last walk took */
	uint64_t walks, events, unresolved;
	uint64_t rmdirs;          /* rmdir events applied (only grows) */
	uint64_t rm_unknown;      /* ... of ids the table did not hold */
	uint64_t purged_early;    /* removed entries dropped before
				   * CGSI_CGID_KEEP_MS (the cap) */
	uint64_t purged_id[CGSI_CGID_PURGED_SLOTS]; /* 0: none */
	void (*tick)(void *ctx);  /* during walks, or NULL */
	void *tick_ctx;
	unsigned tick_n;
};

int cgsi_cgid_init(struct cgsi_cgid *m, const struct cgsi_cg_mount *mount);
void cgsi_cgid_fini(struct cgsi_cgid *m);

/* Path of id, NULL if unknown. Owned by m until the entry is dropped. */
const char *cgsi_cgid_get(const struct cgsi_cgid *m, uint64_t id);

/* Record a path for id (mkdir event, walk). 0 or -ENOMEM. */
int cgsi_cgid_set(struct cgsi_cgid *m, uint64_t id, const char *path);

/* The cgroup was removed at now_ms (rmdir event; now_ms never goes
 * back). Removed entries past their time are purged here too, oldest
 * first, O(1) each, so that a host creating and removing cgroups without
 * ever showing an unknown id (no walk) holds only the live ones and the
 * recently removed. */
void cgsi_cgid_removed(struct cgsi_cgid *m, uint64_t id, uint64_t now_ms);

/* 1 if id has an rmdir event (and is not purged yet), else 0. */
int cgsi_cgid_is_removed(const struct cgsi_cgid *m, uint64_t id);

/* Whether id's entry was dropped (purged) lately: 1, else 0. */
int cgsi_cgid_was_purged(const struct cgsi_cgid *m, uint64_t id);

/* fn(ctx, type, id, path) for every entry not known to be removed. */
void cgsi_cgid_each_live(const struct cgsi_cgid *m,
			 void (*fn)(void *ctx, int type, uint64_t id,
				    const char *path),
			 void *ctx, int type);

/* Walk the mount (unless the last one is too recent: CGSI_CGID_WALK_MS,
 * CGSI_CGID_WALK_COST; or force), adding every directory; purges entries
 * removed long ago. A directory without subdirectories (nlink 2) is
 * stat'ed, not opened. Returns the number of directories seen (0: no
 * walk) or -errno. */
int cgsi_cgid_walk(struct cgsi_cgid *m, uint64_t now_ms, int force);

#endif
