/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* struct cgs_counters arithmetic: sums everywhere except the two peaks. */
#ifndef CGS_ROLLUP_COUNTERS_H
#define CGS_ROLLUP_COUNTERS_H

#include "cgstats.h"

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
		/* the wait status: exit code in bits 8..15, else the signal
		 * in bits 0..6 (0x7f: stopped) and the core bit 0x80 */
		uint32_t st = r->exit_status, sig = st & 0x7f;
		c->exit_clean += st == 0;
		c->exit_nonzero += st && (sig == 0 || sig == 0x7f);
		c->exit_signaled += sig && sig != 0x7f;
		c->exit_core_dumped += sig && sig != 0x7f && (st & 0x80);
	}
}

/* dst += src (peaks: max). */
void cgsi_counters_add(struct cgs_counters *dst,
		       const struct cgs_counters *src);
/* dst = a - b for the sums; peaks copied from a. */
void cgsi_counters_sub(struct cgs_counters *dst, const struct cgs_counters *a,
		       const struct cgs_counters *b);
/* Just the peaks: dst = max(dst, src). */
void cgsi_counters_peak(struct cgs_counters *dst,
			const struct cgs_counters *src);

#endif
