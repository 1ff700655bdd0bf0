/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workload identity from the node's own runtime state: the parsers (one
 * per file shape a runtime or the kubelet writes) and the bounded reader.
 * Every parser takes bytes and never touches the file system, so the fuzz
 * target feeds them directly; lib/identity/identity.c decides which file to
 * read for a cgroup.
 */
#ifndef CGS_EXPORT_IDENTITY_H
#define CGS_EXPORT_IDENTITY_H

#include <stddef.h>

#include "cgstats.h"

/* Why a source gave no name (the counters of struct cgs_identity_counts). */
enum cgsi_id_reason {
	CGSI_ID_OK = 0,
	CGSI_ID_ABSENT,      /* no such file: not this runtime's container */
	CGSI_ID_TOO_BIG,     /* larger than the read bound */
	CGSI_ID_NOT_REGULAR, /* a FIFO, device or directory, a symlinked file
			      * or a symlink loop on the way (one ELOOP) */
	CGSI_ID_LOOP,        /* a log folder behind a symlink loop, or a
			      * path too long */
	CGSI_ID_IO,          /* any other read error (EACCES counted here) */
	CGSI_ID_BAD_JSON,    /* not JSON, not UTF-8, nested too deep */
	CGSI_ID_BAD_VALUE,   /* a name too long or with control bytes */
	CGSI_ID_NO_NAMES,    /* valid, but it names nothing we know */
	CGSI_ID__REASONS
};

/*
 * cgsi_id_read() - Read a regular file of at most @max bytes.
 * @path: The file; its final component must not be a symlink.
 * @max: The bound (bytes); a larger file is CGSI_ID_TOO_BIG, also one
 *	that grows past it while read.
 * @out: Receives a malloc'ed NUL-terminated copy (caller frees) on OK.
 * @len: Receives its length.
 *
 * Opens with O_NOFOLLOW | O_NONBLOCK, so a FIFO or a device never blocks.
 * Return: a reason (CGSI_ID_OK on success).
 */
enum cgsi_id_reason cgsi_id_read(const char *path, size_t max, char **out,
				 size_t *len);

/*
 * The OCI runtime spec a CRI runtime wrote (containerd's CRI plugin or
 * CRI-O): names from its annotations. Fills only what it finds.
 */
enum cgsi_id_reason cgsi_id_parse_oci(const char *buf, size_t len,
				      struct cgs_identity *id);

/* Docker's config.v2.json: Name, Config.Image, Config.Labels. */
enum cgsi_id_reason cgsi_id_parse_docker(const char *buf, size_t len,
					 struct cgs_identity *id);

/*
 * The kubelet's /var/log/containers/<pod>_<namespace>_<container>-<id>.log
 * link name: namespace, pod and container if its id is @cid (64 hex).
 */
enum cgsi_id_reason cgsi_id_parse_log_link(const char *name, const char *cid,
					   struct cgs_identity *id);

/*
 * The kubelet's /var/log/pods/<namespace>_<pod>_<uid> directory name:
 * namespace and pod if its uid is @uid.
 */
enum cgsi_id_reason cgsi_id_parse_pod_dir(const char *name, const char *uid,
					  struct cgs_identity *id);

/* The workload view's cgroup @path left: its cached names are retired
 * later (id_cache.c). */
void cgsi_identity_forget(struct cgs_identity_src *s, const char *path);

/* Start the resolver thread; *hook_ctx gets the cgsi_idcache_event()
 * context. 0 or -errno. */
int cgsi_identity_watch(struct cgs_identity_src *s, void **hook_ctx);

/* The counter name of a reason ("too_big", ...), for outputs and tests. */
const char *cgsi_id_reason_name(enum cgsi_id_reason r);

#endif
