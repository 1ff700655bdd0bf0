/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "util/common.h"

CGS_EXPORT const char *cgs_version(void)
{
	return CGS_VERSION_STRING;
}

CGS_EXPORT const char *cgs_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case CGS_ERR_NO_TASKSTATS:
		return "the kernel has no TASKSTATS generic netlink family "
		       "(built without CONFIG_TASKSTATS?)";
	case CGS_ERR_PERM:
		return "registering a taskstats listener needs CAP_NET_ADMIN "
		       "in the initial user namespace (run as root or grant "
		       "CAP_NET_ADMIN)";
	case CGS_ERR_NETNS:
		return "not in the initial network namespace: the kernel sends "
		       "taskstats exit events only there (run with the host "
		       "network, no PrivateNetwork=/--net=none)";
	case CGS_ERR_PIDNS:
		return "not in the initial pid namespace: the kernel refuses "
		       "taskstats listeners there (run with the host pid "
		       "namespace)";
	case CGS_ERR_CGROUP2:
		return "cgroupstats supports only cgroup v1 directories";
	case ETIMEDOUT:
		return "no exit event arrived in time: events are not reaching "
		       "this process";
	case EBADMSG:
		return "malformed taskstats message";
	default:
		return strerror(err);
	}
}
