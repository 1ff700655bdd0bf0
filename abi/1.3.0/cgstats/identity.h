/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/identity.h>: workload identity from the node's own runtime
 * state (namespace, pod, container, image), without API server
 * credentials. Part of <cgstats.h>.
 */
#ifndef CGSTATS_IDENTITY_H
#define CGSTATS_IDENTITY_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CGS_ID_NAME_LEN 256   /* Kubernetes names: at most 253 bytes */
#define CGS_ID_IMAGE_LEN 512  /* an image reference, with its digest */
#define CGS_ID_SOURCE_LEN 16  /* "containerd", "cri-o", "docker", ... */
#define CGS_ID_UID_LEN 48     /* a pod UID: 36 bytes */
#define CGS_ID_CID_LEN 80     /* a container id: 64 hex digits */

/*
 * Who a cgroup's tasks belong to, as the node's runtime state says. Every
 * string member is NUL-terminated, "" when no source said; values are
 * valid UTF-8 without control bytes (a value that is not is dropped and
 * counted, never passed on).
 */
struct cgs_identity {
	size_t sz;                           /* sizeof(struct cgs_identity) */
	char k8s_namespace[CGS_ID_NAME_LEN]; /* the pod's namespace */
	char pod[CGS_ID_NAME_LEN];           /* the pod's name */
	char container[CGS_ID_NAME_LEN];     /* Kubernetes: the container's
					      * name in the pod spec; Docker:
					      * the container's name */
	char image[CGS_ID_IMAGE_LEN];        /* the image as the spec names it */
	char pod_uid[CGS_ID_UID_LEN];        /* with dashes */
	char container_id[CGS_ID_CID_LEN];   /* 64 hex digits */
	char project[CGS_ID_NAME_LEN];       /* Docker Compose project */
	char service[CGS_ID_NAME_LEN];       /* Docker Compose service */
	char source[CGS_ID_SOURCE_LEN];      /* which source named it:
					      * "containerd", "cri-o",
					      * "docker", "kubelet" or "" */
	uint32_t sandbox;                    /* 1: the pod's sandbox (pause)
					      * container, not a workload */
};

/* Where the runtimes keep their state; NULL or "" takes the default. */
struct cgs_identity_opts {
	size_t sz;                  /* sizeof(struct cgs_identity_opts) */
	const char *containerd_state; /* default "/run/containerd" */
	const char *crio_storage;     /* default "/run/containers/storage" */
	const char *docker_root;      /* default "/var/lib/docker" */
	const char *kubelet_logs;     /* default "/var/log" (its pods/ and
				       * containers/ folders) */
	size_t max_file_bytes;      /* the largest state file read; 0: 1 MiB */
	size_t max_dir_entries;     /* entries scanned per log folder look-up;
				     * 0: 65,536 */
	/* since 1.3: the cache of names (cgs_identity_src_peek()) */
	unsigned readers;     /* threads calling cgs_identity_src_peek() at
			       * once, one table each; 0: 1 */
	size_t max_cached;    /* cgroups whose names are kept; 0: 16,384
			       * (about 2.3 KiB each) */
	size_t queue_len;     /* new cgroups waiting for their look-up
			       * (cgs_rollup_set_identity()); 0: 256 */
	uint64_t keep_ms;     /* names are kept this long after their cgroup
			       * went (late records, the next snapshot);
			       * 0: 300,000 */
};

/* What the look-ups found, by source and by reason (monotonic). */
struct cgs_identity_counts {
	size_t sz;              /* sizeof(struct cgs_identity_counts) */
	uint64_t lookups;       /* cgs_identity_src_resolve() calls */
	uint64_t named;         /* ... that returned a name */
	uint64_t unnamed;       /* ... that found no source naming the cgroup */
	uint64_t by_source[5];  /* named by: containerd, cri-o, docker,
				 * kubelet (log folders), pod (the pod's
				 * folder only) */
	uint64_t too_big;       /* files over max_file_bytes */
	uint64_t not_regular;   /* FIFOs, devices, symlinked state files,
				 * symlink loops on their way */
	uint64_t loop;          /* log folders behind a symlink loop, paths
				 * too long */
	uint64_t io_error;      /* other read errors (EACCES among them) */
	uint64_t bad_json;      /* not JSON, not UTF-8, or nested too deep */
	uint64_t bad_value;     /* names too long or with control bytes */
	uint64_t dir_truncated; /* log folders larger than max_dir_entries */
	/* since 1.3: looking up cgroups when they appear
	 * (cgs_rollup_set_identity()) and the cache */
	uint64_t queued;        /* new container/pod cgroups queued at their
				 * mkdir */
	uint64_t queue_full;    /* ... not queued, the queue full: looked up
				 * at their first snapshot, if still there */
	uint64_t early_named;   /* named from the queue */
	uint64_t early_unnamed; /* looked up from the queue, no source named
				 * them (not a runtime's, or its state not
				 * written yet: the snapshot asks again) */
	uint64_t gone_before;   /* removed before their look-up came (their
				 * rmdir was queued behind the mkdir) and no
				 * source named them: unknown for good */
	uint64_t cached;        /* names kept now */
	uint64_t cache_full;    /* names not kept: max_cached reached */
	uint64_t retired;       /* names dropped keep_ms after their cgroup */
	uint64_t cache_hits;    /* cgs_identity_src_resolve() answered from the
				 * cache (no file read) */
	uint64_t existing;      /* container/pod cgroups there when the
				 * hook was set (cgs_rollup_set_identity(): at
				 * start, again on each call), queued */
	uint64_t retried;       /* look-ups that named nothing, made again
				 * (50 ms, 250 ms, 1 s later; then
				 * early_unnamed) */
	uint64_t retry_named;   /* ... named at a retry */
	uint64_t pods_named;    /* pods' own cgroups named by their first
				 * container named (the CRI's sandbox-*
				 * annotations) */
};

struct cgs_identity_src;

/**
 * cgs_identity_src_new() - Make a resolver of workload names.
 * @out: Receives the resolver (NULL on failure); the caller frees it with
 *	cgs_identity_src_free().
 * @opts: Roots and bounds (may be NULL: all defaults); copied, its strings
 *	too, so the caller may free them on return.
 *
 * Reads nothing yet. A root that does not exist is not an error: that
 * runtime is not on this node. Since 1.3; before, cgs_identity_new()
 * with the arguments the other way round (<cgstats/deprecated.h>).
 *
 * Context: Any thread; allocates.
 * Return: 0, -EINVAL (NULL @out, @opts->sz too small), -E2BIG (options
 * this library does not know), -ENOMEM.
 */
CGS_EXPORT int cgs_identity_src_new(struct cgs_identity_src **out,
				    const struct cgs_identity_opts *opts);

/**
 * cgs_identity_src_free() - Free a resolver.
 * @src: From cgs_identity_src_new(); NULL is a no-op.
 */
CGS_EXPORT void cgs_identity_src_free(struct cgs_identity_src *src);

/**
 * cgs_identity_src_resolve() - Name the workload a cgroup belongs to.
 * @src: The resolver.
 * @cgroup_path: The cgroup's path as /proc/PID/cgroup shows it.
 * @out: Receives the names (sz set by the caller); cleared first.
 *
 * Takes the container id and pod UID from the path
 * (cgs_workload_from_path()), then asks the first source that knows, in
 * this order: containerd's CRI (the container's OCI spec in its task
 * state), CRI-O (its userdata/config.json), Docker (config.v2.json), the
 * kubelet's /var/log/containers link of the container id, and for the pod
 * the kubelet's /var/log/pods folder of its UID. Reads at most a few files
 * of at most max_file_bytes each, opened without following a final
 * symlink and without blocking; scans at most max_dir_entries per folder.
 * Call it when the cgroup appears (the runtimes delete their state when a
 * container ends), never per record.
 *
 * A name found (here, or by the resolver thread when the cgroup
 * appeared) is cached: asked again, it is answered without reading, also
 * after the runtime deleted its state, until keep_ms after the cgroup went.
 *
 * Context: Any thread (since 1.3 a lock serialises look-ups); reads files.
 * Return: The number of non-empty names in @out (0: nothing known, which
 *	is also the answer for cgroups that are not containers or pods),
 *	-EINVAL (NULL argument, @out->sz too small).
 */
CGS_EXPORT int cgs_identity_src_resolve(struct cgs_identity_src *src,
					const char *cgroup_path,
					struct cgs_identity *out);

/**
 * cgs_identity_src_get_counts() - What the resolver's look-ups found.
 * @src: The resolver.
 * @out: Receives the counts (sz set by the caller).
 *
 * Context: Any thread.
 * Return: 0, -EINVAL.
 */
CGS_EXPORT int cgs_identity_src_get_counts(const struct cgs_identity_src *src,
					   struct cgs_identity_counts *out);

/**
 * cgs_identity_src_peek() - The names of a cgroup, from the cache only.
 * @src: The resolver.
 * @reader: The caller's reader slot (0 <= @reader < opts.readers; larger
 *	values wrap): one thread per slot at a time, e.g. a listener shard.
 * @cgroup_path: The cgroup's path.
 * @out: Receives the names (sz set by the caller).
 *
 * Reads no file and waits for no look-up: answers what
 * cgs_identity_src_resolve() found before, or what the resolver thread
 * found when the cgroup appeared (cgs_rollup_set_identity()). O(1); the
 * slot's lock is shared with nothing but the resolver's publishing. For a
 * record's names on the hot path.
 *
 * Since 1.3 a cgroup whose look-up is still to come (queued at its mkdir,
 * there when cgs_rollup_set_identity() was called, or asked again after a
 * look-up that named nothing: 50 ms, 250 ms and 1 s later) answers
 * -EAGAIN: a caller that writes names with each record holds the record
 * (bounded) and asks again, so that no exit of a container goes out
 * unnamed because it came before its look-up. A pending cgroup shares a
 * counter slot (4,096 slots by path hash) with others: a rare collision
 * makes another cgroup answer -EAGAIN as long.
 *
 * Context: Any thread, one per @reader slot.
 * Return: 0 (@out filled), -ENOENT when none is cached
 *	(not a container, not named, or retired), -EAGAIN (its look-up is
 *	pending: ask again soon), -EINVAL.
 */
CGS_EXPORT int
cgs_identity_src_peek(struct cgs_identity_src *src, unsigned reader,
		      const char *cgroup_path, struct cgs_identity *out);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_IDENTITY_H */
