/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names of cgroups looked up when they appeared (issue 24): a bounded
 * queue of new cgroups, filled by the kernel source's cgroup events
 * (cgsi_ksrc_set_cg_hook(), with the source's id lock held: a push is a
 * copy under a mutex, never a file read), emptied by one resolver thread
 * that reads the runtimes' state files at once, before a short container's
 * bundle is deleted; and a cache of what it found, keyed by cgroup path,
 * retired keep_ms after the cgroup went.
 *
 * Readers (the listener shards formatting --events records) each have a
 * table of their own, under a lock of their own that only the resolver
 * takes besides them (when it publishes or retires a name): no lock or
 * line shared between shards, no file read, O(1). Entries are immutable
 * once published and freed only after every reader table dropped them.
 */
#ifndef CGS_EXPORT_ID_CACHE_H
#define CGS_EXPORT_ID_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cgstats.h"

struct cgsi_idcache;

/* The resolver's one call: names of @path into @out (cleared first), as
 * cgs_identity_src_resolve() does it but without the cache; made with the
 * resolver's lock held. */
typedef int cgsi_idcache_resolve_fn(void *ctx, const char *path,
				    struct cgs_identity *out);

int cgsi_idcache_new(struct cgsi_idcache **out, unsigned readers,
		     size_t max_entries, size_t queue_len, uint64_t keep_ms);
void cgsi_idcache_free(struct cgsi_idcache *c);

/* Start the resolver thread (once; later calls do nothing): it takes
 * @lock around each look-up and calls @fn. Its credentials are the
 * caller's. 0 or -errno. */
int cgsi_idcache_start(struct cgsi_idcache *c, pthread_mutex_t *lock,
		       cgsi_idcache_resolve_fn *fn, void *ctx);

/* The kernel source's hook (cgsi_ksrc_cg_fn): queue a container or pod
 * cgroup's mkdir/rmdir; other cgroups are ignored. */
void cgsi_idcache_event(void *c, int type, uint64_t id, const char *path);

/* With the resolver's lock held: the cached names of @path (true), for
 * cgs_identity_src_resolve(); and a name found by it, published. */
bool cgsi_idcache_find(struct cgsi_idcache *c, const char *path,
		       struct cgs_identity *out);
void cgsi_idcache_put(struct cgsi_idcache *c, const char *path,
		      const struct cgs_identity *id);

/* With the resolver's lock held: @path's cgroup left (the workload view
 * no longer sees it): its names are retired keep_ms later. */
void cgsi_idcache_gone(struct cgsi_idcache *c, const char *path);

/* A reader's look-up (reader < readers, else reader % readers). */
int cgsi_idcache_read(struct cgsi_idcache *c, unsigned reader,
		      const char *path, struct cgs_identity *out);

/* Its counters into the appended fields of @out (resolver's lock held). */
void cgsi_idcache_counts(struct cgsi_idcache *c,
			 struct cgs_identity_counts *out);

#endif
