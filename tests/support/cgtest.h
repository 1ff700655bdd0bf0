/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared support for tests that use real cgroups: find the cgroup2 mount
 * and the cgroup v1 mounts,
 * make a scratch tree under it that is removed at exit (also on SIGINT and
 * SIGTERM), move processes into its cgroups.
 */
#ifndef CGS_TESTS_CGTEST_H
#define CGS_TESTS_CGTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Mount point of cgroup2 ("/sys/fs/cgroup/unified" on a hybrid host), or
 * NULL when there is none. Static storage. */
const char *cgt_cgroup2_mount(void);

/* Mount point of the cgroup v1 hierarchy with `controller` ("cpu",
 * "memory", "name=systemd"), or NULL. Static storage, one per call: copy
 * it before the next call. */
const char *cgt_cgroup1_mount(const char *controller);

/*
 * Create cgroup `rel` ("/x/y", as /proc/<pid>/cgroup shows it, relative to
 * the mount) and register it for removal at exit (children are removed
 * before parents). Writes its directory into dir. Returns 0, or -errno
 * after printing what failed.
 */
int cgt_mkdir(const char *rel, char *dir, size_t dirlen);

/* The same under another mount `mnt` (a cgroup v1 hierarchy's, from
 * cgt_cgroup1_mount()), also removed at exit. */
int cgt_mkdir_at(const char *mnt, const char *rel, char *dir, size_t dirlen);

/* Write text into <dir>/<file> (memory.limit_in_bytes, ...). 0, or -errno
 * after printing what failed. */
int cgt_write(const char *dir, const char *file, const char *text);

/*
 * Write text into the file at path (a sysctl: /proc/sys/kernel/
 * core_pattern) after saving what it held, which cgt_restore_files()
 * writes back: at exit, on SIGINT/SIGTERM (with cgt_cleanup()), or
 * earlier when called. 0, or -errno after printing what failed.
 */
int cgt_set_file(const char *path, const char *text);
/* Write back what cgt_set_file() changed, newest first. Idempotent. */
void cgt_restore_files(void);

/* Restore the files cgt_set_file() changed, then remove every cgroup made
 * by cgt_mkdir or cgt_mkdir_at, deepest first. Idempotent; installed with
 * atexit and for SIGINT/SIGTERM by the first of those calls. */
void cgt_cleanup(void);

/* Write pid (0: the caller) into <dir>/cgroup.procs. 0, or -errno after
 * printing what failed. */
int cgt_move(const char *dir, pid_t pid);

/*
 * Fork a child held until the go: it waits for a byte on go[0] (of a
 * pipe; EOF makes it exit 5), then runs fn, which ends it with _exit().
 * Meanwhile the caller moves it into cgroup dir, so that all it does
 * after the go happens there (a supervisor's launch). Fork it while
 * single-threaded. Returns its pid, or -1 after printing what failed.
 */
pid_t cgt_fork_held(const int go[2], const char *dir, void (*fn)(void));

#endif
