/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* struct cgs_counters arithmetic: sums everywhere except the two peaks. */
#ifndef CGS_ROLLUP_COUNTERS_H
#define CGS_ROLLUP_COUNTERS_H

#include "cgstats.h"
#include "rollup/wstatus.h"

/* Add one task record (thread or process kind). Hot path: inline. */
static inline void cgsi_counters_account(struct cgs_counters *c,
					 const struct cgs_record *r)
{
	c->tasks++;
	c->processes += r->kind == CGS_KIND_PROCESS;
	c->utime_us += r->utime_us;
	c->stime_us += r->stime_us;
	c->cpu_run_real_ns += r->cpu_run_real_ns;
	c->cpu_run_virtual_ns += r->cpu_run_virtual_ns;
	for (int i = 0; i < CGS_DELAY__COUNT; i++) {
		c->delay[i].count += r->delay[i].count;
		c->delay[i].total_ns += r->delay[i].total_ns;
	}
	c->minflt += r->minflt;
	c->majflt += r->majflt;
	c->read_char += r->read_char;
	c->write_char += r->write_char;
	c->read_syscalls += r->read_syscalls;
	c->write_syscalls += r->write_syscalls;
	c->read_bytes += r->read_bytes;
	c->write_bytes += r->write_bytes;
	c->cancelled_write_bytes += r->cancelled_write_bytes;
	c->nvcsw += r->nvcsw;
	c->nivcsw += r->nivcsw;
	c->coremem_mbus += r->coremem_mbus;
	c->virtmem_mbus += r->virtmem_mbus;
	if (r->hiwater_rss_kb > c->hiwater_rss_kb_max)
		c->hiwater_rss_kb_max = r->hiwater_rss_kb;
	if (r->hiwater_vm_kb > c->hiwater_vm_kb_max)
		c->hiwater_vm_kb_max = r->hiwater_vm_kb;
	if (r->kind == CGS_KIND_PROCESS) {
		unsigned sig;
		enum cgs_exit_outcome o = cgsi_wstatus(r->exit_status, &sig);
		c->exit_clean += o == CGS_EXIT_CLEAN;
		c->exit_nonzero += o == CGS_EXIT_NONZERO;
		c->exit_signaled += o >= CGS_EXIT_SIGNALED; /* core dumps too */
		c->exit_core_dumped += o == CGS_EXIT_CORE_DUMPED;
	}
}

/* dst += src (peaks: max). */
void cgsi_counters_add(struct cgs_counters *dst,
		       const struct cgs_counters *src);
/* dst = a - b for the sums; peaks copied from a. */
void cgsi_counters_sub(struct cgs_counters *dst, const struct cgs_counters *a,
		       const struct cgs_counters *b);

#endif
