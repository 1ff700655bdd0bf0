// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The workload view's options (--no-identity, the runtimes' state roots,
 * --no-workloads, --workload-retire): parsed here so options.c only
 * lists them.
 */
#include <stdint.h>

#include "options.h"

int tsc_identity_option(int c, const char *arg, struct tsc_opts *o)
{
	struct tsc_ident_opts *i = &o->ident;

	switch (c) {
	case TSC_OPT_NO_IDENTITY:
		i->off = true;
		return 0;
	case TSC_OPT_NO_WORKLOADS:
		i->no_workloads = true;
		return 0;
	case TSC_OPT_CONTAINERD_STATE:
		return tsc_opt_name("--containerd-state", arg, "directory",
				    &i->containerd);
	case TSC_OPT_CRIO_STORAGE:
		return tsc_opt_name("--crio-storage", arg, "directory",
				    &i->crio);
	case TSC_OPT_DOCKER_ROOT:
		return tsc_opt_name("--docker-root", arg, "directory",
				    &i->docker);
	case TSC_OPT_KUBELET_LOGS:
		return tsc_opt_name("--kubelet-logs", arg, "directory",
				    &i->kubelet_logs);
	case TSC_OPT_WORKLOAD_RETIRE:
		return tsc_opt_seconds("--workload-retire", arg, 1000000000ull,
				       86400ull * 1000000000ull,
				       "1 to 86400 seconds", &i->retire_ns);
	}
	return -1;
}
