/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc fallback's parts (fallback.c: the cache and /proc;
 * fallback_kin.c: parents and fork ancestors; fallback_peers.c: other
 * shards and pid reuse) and the helpers they share. Slow path only. */
#ifndef CGS_ATTRIBUTE_FALLBACK_INT_H
#define CGS_ATTRIBUTE_FALLBACK_INT_H

#include <errno.h>
#include <string.h>

#include "attribute/attr.h"
#include "attribute/mounts.h"
#include "attribute/proc_cgroup.h"
#include "attribute/proc_stat.h"
#include "util/common.h"

/*
 * cgroup v1 shows an exiting task (a zombie too) in the root cgroup: on a
 * v1 hierarchy a "/" read for an exiting process, or one that would move a
 * cached process to the root, says nothing of where it ran. (cgroup2
 * keeps the real path, " (deleted)" once removed.)
 */
static inline bool v1_exit_root(const struct cgsi_attr *a,
				const struct cgsi_ashard *s, int n)
{
	return n == 1 && s->path[0] == '/' && strcmp(a->mount->hier, "v2");
}

/* The owner's node of cgroup s->path (len bytes): by its id (inode)
 * when known, else by path with CGSI_INTERN_* flags. */
static inline void *intern(struct cgsi_attr *a, struct cgsi_ashard *s,
			   size_t len, uint64_t ino, unsigned flags,
			   uint64_t now)
{
	return ino ? a->ops->intern_id(a->ctx, s->idx, s->path, len, ino, now)
		   : a->ops->intern(a->ctx, s->idx, s->path, len, flags, now);
}

/* Node of the path cgsi_fb_read_proc() just left in s->path (n bytes). */
static inline void *intern_read(struct cgsi_attr *a,
				struct cgsi_ashard *s, int n, uint64_t now)
{
	return intern(a, s, (size_t)n, 0,
		      CGSI_INTERN_PROC |
			      (s->deleted ? CGSI_INTERN_DELETED : 0),
		      now);
}

static inline void mark_exit(struct cgsi_attr *a, struct cgsi_pentry *e,
			     uint32_t key, uint64_t now)
{
	e->dead_ms = now;
	e->reaped = 0;
	cgsi_deaths_mark(&a->deaths, key, now);
}

/*
 * Whether a dead entry (within grace) must look at /proc again before it
 * answers: not if /proc/<tgid> was already seen gone; yes if it was last
 * read before the death was known, or more than CGSI_DEAD_RECHECK_MS ago.
 * A pid comes round again only after the pid allocator wrapped (about a
 * second under the heaviest churn), so a process that reused the pid is
 * found in /proc by the re-read, while the late records of the dead one
 * cost at most one read per shard per CGSI_DEAD_RECHECK_MS.
 */
static inline bool dead_recheck(const struct cgsi_pentry *e, uint64_t now)
{
	return !e->gone && (e->resolved_ms <= e->dead_ms ||
			    now >= e->resolved_ms + CGSI_DEAD_RECHECK_MS);
}

/* Lifetime of the task of rec in ms, for the fork-time check (forks.c):
 * the thread group's for a process exit, the thread's otherwise. */
static inline uint64_t life_ms(const struct cgs_record *rec)
{
	uint64_t us = rec->kind == CGS_KIND_PROCESS && rec->tgetime_us
			      ? rec->tgetime_us
			      : rec->etime_us;
	return us / 1000u;
}

/* Age in ms of rec's thread group when the record was made: a process
 * exit's life (life_ms()), else the group's age the record carries
 * (ac_tgetime, v12+); 0 when the record tells none. */
static inline uint64_t group_age_ms(const struct cgs_record *rec)
{
	return rec->kind == CGS_KIND_PROCESS ? life_ms(rec)
					     : rec->tgetime_us / 1000u;
}

/* fallback.c */
int cgsi_fb_read_proc(struct cgsi_attr *a, struct cgsi_ashard *s,
		      uint32_t pid);
void *cgsi_fb_revalidate(struct cgsi_attr *a, struct cgsi_ashard *s,
			 struct cgsi_pentry *e, uint32_t key,
			 const struct cgs_record *rec, uint64_t now,
			 bool count);
/* fallback_kin.c: a reaped process's parent or fork ancestors (steps 3
 * and 4), fast attribution by the fork parent */
void *cgsi_fb_parent_cg(struct cgsi_attr *a, struct cgsi_ashard *s,
			uint32_t ppid, uint64_t now, bool *dropped);
void cgsi_fb_note_parent(struct cgsi_attr *a, struct cgsi_ashard *s,
			 uint32_t ppid, uint64_t now);
void *cgsi_fb_ancestors_cg(struct cgsi_attr *a, struct cgsi_ashard *s,
			   struct cgsi_fork_hop *hop, int n, uint64_t now);
void *cgsi_fb_fork_parent_cg(struct cgsi_attr *a, struct cgsi_ashard *s,
			     const struct cgs_record *rec, uint32_t key,
			     uint64_t now);
/* fallback_peers.c: what the other shards saw, and pid reuse */
void *cgsi_fb_seen_elsewhere(struct cgsi_attr *a, struct cgsi_ashard *s,
			     const struct cgs_record *rec, uint32_t key,
			     uint64_t now, bool *dropped, uint64_t *dead_ms);
bool cgsi_fb_pid_reused(struct cgsi_attr *a, struct cgsi_ashard *s,
			const struct cgs_record *rec, uint32_t key,
			bool pexit);
bool cgsi_fb_group_started_after(const struct cgs_record *rec,
				 uint64_t death_ms, uint64_t now);
bool cgsi_fb_started_by(const struct cgs_record *rec, uint64_t t,
			uint64_t now);

#endif
