/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "options.h"
#include "privdrop.h"

int priv_lookup(const char *name, struct priv_user *u, char *err,
		size_t errlen)
{
	struct passwd *pw;

	memset(u, 0, sizeof(*u));
	errno = 0;
	pw = getpwnam(name);
	if (!pw) {
		unsigned long long v;
		if (tsc_parse_uint(name, 0, 0xfffffffeu, &v) == 0) {
			pw = getpwuid((uid_t)v);
			if (!pw) { /* a bare uid without a passwd entry */
				u->uid = (uid_t)v;
				u->gid = (gid_t)v;
				u->name = NULL;
				return 0;
			}
		}
	}
	if (!pw) {
		snprintf(err, errlen, "no such user '%s'", name);
		return -ENOENT;
	}
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->name = strdup(pw->pw_name);
	if (!u->name) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

void priv_user_free(struct priv_user *u)
{
	free(u->name);
	u->name = NULL;
}

static int set_ids(const struct priv_user *u)
{
	if (u->name) {
		if (initgroups(u->name, u->gid) < 0)
			return -errno;
	} else if (setgroups(1, &u->gid) < 0) {
		return -errno;
	}
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return -errno;
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return -errno;
	return 0;
}

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int v = CAP_LAST_CAP;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = CAP_LAST_CAP;
		fclose(f);
	}
	return v;
}

int priv_drop(const struct priv_user *u, char *err, size_t errlen)
{
	int r;

	/* The bounding set can only shrink while CAP_SETPCAP is still held,
	 * i.e. before the uid change clears the permitted set. */
	for (int cap = 0; cap <= last_cap(); cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) {
			snprintf(err, errlen, "cannot drop capability %d from "
				 "the bounding set: %s (needs CAP_SETPCAP)",
				 cap, strerror(errno));
			return -errno;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL) {
		snprintf(err, errlen, "cannot clear ambient capabilities: %s",
			 strerror(errno));
		return -errno;
	}
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0) {
		snprintf(err, errlen, "PR_SET_KEEPCAPS: %s", strerror(errno));
		return -errno;
	}
	r = set_ids(u);
	if (r < 0) {
		snprintf(err, errlen, "cannot switch to uid %u gid %u: %s",
			 (unsigned)u->uid, (unsigned)u->gid, strerror(-r));
		return r;
	}
	cap_t none = cap_init(); /* all three sets empty */
	if (!none || cap_set_proc(none) < 0) {
		r = -errno;
		cap_free(none);
		snprintf(err, errlen, "cannot clear capabilities: %s",
			 strerror(-r));
		return r;
	}
	cap_free(none);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -errno;
	}

	/* Verify rather than trust. */
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 ||
	    ru != u->uid || eu != u->uid || su != u->uid || rg != u->gid ||
	    eg != u->gid || sg != u->gid) {
		snprintf(err, errlen, "credentials did not change as asked");
		return -EPERM;
	}
	if (u->uid != 0 && setuid(0) == 0) {
		snprintf(err, errlen, "could regain root after dropping it");
		return -EPERM;
	}
	cap_t now = cap_get_proc();
	cap_t empty = cap_init();
	bool leftover = !now || !empty || cap_compare(now, empty) != 0;
	cap_free(now);
	cap_free(empty);
	for (int cap = 0; !leftover && cap <= last_cap(); cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 ||
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1)
			leftover = true;
	if (leftover) {
		snprintf(err, errlen, "capabilities remain after dropping them");
		return -EPERM;
	}
	return 0;
}

/* Whether this thread's permitted set holds cap. */
static bool permitted(cap_value_t cap)
{
	cap_t now = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;
	if (now)
		cap_get_flag(now, cap, CAP_PERMITTED, &v);
	cap_free(now);
	return v == CAP_SET;
}

int priv_shed_caps(bool keep_read, bool *kept, char *err, size_t errlen)
{
	cap_value_t read = CAP_DAC_READ_SEARCH;

	*kept = keep_read && permitted(read);
	/* best effort: only a holder of CAP_SETPCAP can shrink it */
	for (int cap = 0; cap <= last_cap(); cap++)
		if ((!*kept || cap != read) &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			break;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL) {
		snprintf(err, errlen, "cannot clear ambient capabilities: %s",
			 strerror(errno));
		return -errno;
	}
	cap_t left = cap_init(); /* all three sets empty */
	if (left && *kept &&
	    (cap_set_flag(left, CAP_PERMITTED, 1, &read, CAP_SET) < 0 ||
	     cap_set_flag(left, CAP_EFFECTIVE, 1, &read, CAP_SET) < 0)) {
		cap_free(left);
		left = NULL;
	}
	if (!left || cap_set_proc(left) < 0) {
		int r = left ? -errno : -ENOMEM;
		cap_free(left);
		snprintf(err, errlen, "cannot clear capabilities: %s",
			 strerror(-r));
		return r;
	}
	cap_free(left);
	return 0;
}

int priv_run_as(const struct priv_user *u, int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) { /* the errno travels as the exit code */
		if (u && set_ids(u) < 0)
			_exit(EPERM);
		_exit(-fn(arg) & 0xff);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? -WEXITSTATUS(st) : -EIO;
}
