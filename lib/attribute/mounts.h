/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where the cgroup hierarchy used for attribution is mounted. */
#ifndef CGS_ATTRIBUTE_MOUNTS_H
#define CGS_ATTRIBUTE_MOUNTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cgsi_cg_mount {
	char hier[64];        /* "v2" or a v1 controller ("cpu", "name=x") */
	bool mounted;         /* a mount of it was found */
	char mnt[PATH_MAX];   /* mount point, unescaped */
	char root[PATH_MAX];  /* root of the mount inside the hierarchy */
};

/*
 * Parse a mountinfo file and pick the hierarchy: `want` NULL means cgroup2
 * if mounted, else the first v1 controller mounted, else "v2" unmounted
 * (the "0::" line exists even then). Returns 0, -ENOENT when an explicit
 * v1 controller is not mounted, or -errno reading the file (only fatal
 * when a v1 controller was asked for).
 */
int cgsi_cg_mount_find(const char *mountinfo, const char *want,
		       struct cgsi_cg_mount *out);

/*
 * Directory of cgroup `path` (as /proc/<pid>/cgroup shows it) under the
 * mount. Returns the length written to buf, or -ENOENT when not mounted or
 * the path lies outside the mount's root, -ENAMETOOLONG.
 */
int cgsi_cg_dir(const struct cgsi_cg_mount *m, const char *path, char *buf,
		size_t len);

/* Directory inode of a cgroup path, 0 if it cannot be stat'ed; *gone is
 * set when the directory does not exist (ENOENT/ENOTDIR). dirbuf receives
 * the directory. */
uint64_t cgsi_cg_ino(const struct cgsi_cg_mount *m, const char *path,
		     char *dirbuf, size_t dirlen, bool *gone);

#endif
