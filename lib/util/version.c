/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "util/common.h"

const char *cgs_version(void)
{
	return CGS_VERSION_STRING;
}

static const char *const cgs_errors[CGS_ERRNO__END - CGS_ERRNO__START] = {
	[CGS_ERR_NO_TASKSTATS - CGS_ERRNO__START] =
		"the kernel has no TASKSTATS generic netlink family "
		"(built without CONFIG_TASKSTATS?)",
	[CGS_ERR_PERM - CGS_ERRNO__START] =
		"registering a taskstats listener needs CAP_NET_ADMIN in the "
		"initial user namespace (run as root or grant CAP_NET_ADMIN)",
	[CGS_ERR_NETNS - CGS_ERRNO__START] =
		"not in the initial network namespace: the kernel sends "
		"taskstats exit events only there (run with the host "
		"network, no PrivateNetwork=/--net=none)",
	[CGS_ERR_PIDNS - CGS_ERRNO__START] =
		"not in the initial pid namespace: the kernel refuses "
		"taskstats listeners there (run with the host pid namespace)",
	[CGS_ERR_CGROUP2 - CGS_ERRNO__START] =
		"cgroupstats supports only cgroup v1 directories",
	[CGS_ERR_NO_KSRC - CGS_ERRNO__START] =
		"the rollup has no kernel attribution source (cgroup events "
		"come only from it)",
};

const char *cgsi_strerror_1_3(int err);
const char *cgsi_strerror_1_0(int err);

/* 1.3: the library's own codes exactly, any other as the errno it is */
CGSI_VERSIONED(cgs_strerror, CGSTATS_1.3)
const char *cgsi_strerror_1_3(int err)
{
	if (err < 0)
		err = -err;
	if (err >= CGS_ERRNO__START && err < CGS_ERRNO__END)
		return cgs_errors[err - CGS_ERRNO__START];
	if (err >= CGS_ERRNO__END && err < CGS_ERRNO__START + 1000)
		return "unknown libcgstats error";
	return strerror(err);
}

/* 1.0 .. 1.2: the plain errnos those releases returned for the library's
 * meanings get its texts, as they did */
CGSI_COMPAT(cgs_strerror, CGSTATS_1.0)
const char *cgsi_strerror_1_0(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EPROTONOSUPPORT: return cgsi_strerror_1_3(CGS_ERR_NO_TASKSTATS);
	case EPERM: return cgsi_strerror_1_3(CGS_ERR_PERM);
	case ENETUNREACH: return cgsi_strerror_1_3(CGS_ERR_NETNS);
	case EXDEV: return cgsi_strerror_1_3(CGS_ERR_PIDNS);
	case EOPNOTSUPP: return cgsi_strerror_1_3(CGS_ERR_CGROUP2);
	case ETIMEDOUT:
		return "no exit event arrived in time: events are not reaching "
		       "this process";
	case EBADMSG:
		return "malformed taskstats message";
	default:
		return cgsi_strerror_1_3(err);
	}
}

/* What 1.0 .. 1.2 returned for each of the library's own codes. */

int cgsi_err_compat(int rc)
{
	switch (rc) {
	case -CGS_ERR_NO_TASKSTATS: return -EPROTONOSUPPORT;
	case -CGS_ERR_PERM: return -EPERM;
	case -CGS_ERR_NETNS: return -ENETUNREACH;
	case -CGS_ERR_PIDNS: return -EXDEV;
	case -CGS_ERR_CGROUP2: return -EOPNOTSUPP;
	default: return rc;
	}
}
