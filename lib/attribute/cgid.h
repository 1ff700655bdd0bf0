/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup2 id -> path. Filled by a walk of the cgroup2 mount (at start, and
 * again, at most every CGSI_CGID_WALK_MS, when an id nobody announced
 * appears) and by the kernel's cgroup_mkdir events, so a cgroup created
 * and removed between two walks still has its path. A removed cgroup's
 * entry is kept CGSI_CGID_KEEP_MS after its rmdir event (its last records
 * may still be queued), then dropped: memory follows the live cgroups.
 * Not thread-safe: the caller locks.
 */
#ifndef CGS_ATTRIBUTE_CGID_H
#define CGS_ATTRIBUTE_CGID_H

#include <stddef.h>
#include <stdint.h>

#include "attribute/mounts.h"

#define CGSI_CGID_WALK_MS 200u
#define CGSI_CGID_KEEP_MS 60000u

struct cgsi_cgid_ent {
	uint64_t id;        /* 0: free */
	uint64_t removed_ms; /* 0: not known to be removed */
	char *path;         /* as /proc/<pid>/cgroup shows it */
};

struct cgsi_cgid {
	const struct cgsi_cg_mount *mount;
	struct cgsi_cgid_ent *slot;
	uint32_t mask, count, tombs;
	uint64_t last_walk_ms, last_purge_ms;
	uint64_t walks, events, unresolved;
};

int cgsi_cgid_init(struct cgsi_cgid *m, const struct cgsi_cg_mount *mount);
void cgsi_cgid_fini(struct cgsi_cgid *m);

/* Path of id, NULL if unknown. Owned by m until the entry is dropped. */
const char *cgsi_cgid_get(const struct cgsi_cgid *m, uint64_t id);

/* Record a path for id (mkdir event, walk). 0 or -ENOMEM. */
int cgsi_cgid_set(struct cgsi_cgid *m, uint64_t id, const char *path);

/* The cgroup was removed at now_ms (rmdir event). Entries removed more
 * than CGSI_CGID_KEEP_MS ago are purged here too (a scan at most every
 * CGSI_CGID_KEEP_MS / 4), so that a host creating and removing cgroups
 * without ever showing an unknown id (no walk) holds only the live ones
 * and those of the last minute. */
void cgsi_cgid_removed(struct cgsi_cgid *m, uint64_t id, uint64_t now_ms);

/* 1 if id has an rmdir event (and is not purged yet), else 0. */
int cgsi_cgid_is_removed(const struct cgsi_cgid *m, uint64_t id);

/* Walk the mount (unless one ran less than CGSI_CGID_WALK_MS ago, or
 * force), adding every directory; purges entries removed long ago.
 * Returns the number of directories seen or -errno. */
int cgsi_cgid_walk(struct cgsi_cgid *m, uint64_t now_ms, int force);

#endif
