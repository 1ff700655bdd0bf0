/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cgroup path <-> collectd plugin_instance. collectd keeps each part of an
 * identifier in DATA_MAX_NAME_LEN (128) bytes with the NUL and splits
 * identifiers at '/', so a path cannot be used as it is. The mapping
 * (docs/collectd.md, "Plugin instance names"):
 *  - CGS_UNKNOWN_CGROUP becomes "unknown" (a path always maps to a name
 *    starting with '_', so this one cannot clash);
 *  - every '/' of the path becomes '_'; the bytes A-Z a-z 0-9 '.' '-'
 *    stay; every other byte, '_' '%' '~' included, becomes %XX (two
 *    upper-case hex digits): "/system.slice/a_b" -> "_system.slice_a%5Fb";
 *  - a result longer than TSCD_NAME_MAX - 1 bytes keeps its first
 *    TSCD_NAME_PREFIX bytes (never cut inside a %XX), then '~' and the
 *    16 lower-case hex digits of the FNV-1a 64-bit hash of the whole path.
 *    '~' appears in no other name, so such a name is known to be hashed.
 * Names that are not hashed map back to their path exactly.
 */
#ifndef TSCD_NAME_H
#define TSCD_NAME_H

#include <stddef.h>
#include <stdint.h>

#define TSCD_NAME_MAX 128     /* collectd's DATA_MAX_NAME_LEN, NUL included */
#define TSCD_NAME_PREFIX 110  /* kept of an escaped name that is too long */
#define TSCD_NAME_UNKNOWN "unknown"

/**
 * tscd_path_hash() - FNV-1a (64 bit) of a path, as in hashed names.
 * @path: NUL-terminated bytes.
 *
 * Return: The hash.
 */
uint64_t tscd_path_hash(const char *path);

/**
 * tscd_instance_name() - The plugin_instance of a cgroup path.
 * @path: "/a/b", "/" or CGS_UNKNOWN_CGROUP; any bytes but NUL.
 * @buf: Receives the NUL-terminated name (at most TSCD_NAME_MAX bytes).
 * @len: Size of @buf, at least TSCD_NAME_MAX.
 *
 * Return: The name's length (> 0) when it can be mapped back, or
 * -EDOM after writing a hashed name; -EINVAL for a NULL argument, a
 * @len below TSCD_NAME_MAX, or a path that neither starts with '/' nor is
 * CGS_UNKNOWN_CGROUP.
 */
int tscd_instance_name(const char *path, char *buf, size_t len);

/**
 * tscd_instance_path() - The cgroup path of a plugin_instance.
 * @name: A name tscd_instance_name() made.
 * @buf: Receives the NUL-terminated path.
 * @len: Size of @buf.
 *
 * Return: The path's length; -EDOM for a hashed name (not reversible);
 * -EINVAL for a NULL argument or a name no path maps to (a byte outside
 * the mapping's set, a bad or lower-case %XX, %00, an escape of a byte
 * that is kept as it is, not starting with '_'); -ENAMETOOLONG when @buf
 * is too small.
 */
int tscd_instance_path(const char *name, char *buf, size_t len);

#endif
