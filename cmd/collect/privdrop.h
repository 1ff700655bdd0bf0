/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --user: switch to an unprivileged user and shed every capability. */
#ifndef TSC_PRIVDROP_H
#define TSC_PRIVDROP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct priv_user {
	uid_t uid;
	gid_t gid;
	char *name; /* owned */
};

/* Look up a user name (or a numeric uid). 0, or -ENOENT with err set. */
int priv_lookup(const char *name, struct priv_user *u, char *err,
		size_t errlen);
void priv_user_free(struct priv_user *u);

/*
 * Drop to u in this process: supplementary groups, gid, uid (real, effective
 * and saved), then clear the bounding, ambient, inheritable, permitted and
 * effective capability sets and set no_new_privs. Must run before any
 * thread is started (credentials and capabilities are per thread in the
 * kernel). Verifies the result; returns 0 or -errno with err set.
 */
int priv_drop(const struct priv_user *u, char *err, size_t errlen);

/*
 * Without --user: keep the uid, clear the ambient, inheritable, permitted
 * and effective capability sets (and the bounding set where CAP_SETPCAP
 * allows) once the listeners are registered, so that a collector started
 * with ambient CAP_NET_ADMIN (a systemd unit) does not keep it for months.
 * With keep_read (the caller's choice: workload names on, a uid other than
 * the state's owner), CAP_DAC_READ_SEARCH stays permitted and effective if it
 * was permitted (granted for the runtimes' state, workload names: *kept
 * says whether it was); nothing else stays. Must run before any thread is
 * started. Returns 0 or -errno with err set.
 */
int priv_shed_caps(bool keep_read, bool *kept, char *err, size_t errlen);

/*
 * Run fn(arg) in a forked child that has switched to u (or in a child with
 * unchanged credentials when u is NULL) and return its result: fn returns
 * 0 or a negative errno, and so does this. Used to check, before registering anything, that the
 * dropped user will be able to write where it is asked to.
 */
int priv_run_as(const struct priv_user *u, int (*fn)(void *), void *arg);

#endif
