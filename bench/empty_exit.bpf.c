/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The baseline of run-bpfcost.py: a program on the kernel source's
 * tracepoint that does nothing, so that what the stats' own clock reads
 * and the dispatch cost can be taken off the kernel source's figure. */
#include "core_min.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("raw_tp/sched_process_exit")
int cgs_empty_exit(void *ctx)
{
	return 0;
}
