/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "exe_cache.h"
#include "output.h"
#include "prom_family.h"

#define C(m) offsetof(struct cgs_counters, m)

const struct cfield tsc_fields[] = {
	{ "tasks", C(tasks), U_COUNT, F_SUBTREE | F_DELTA, "task_exits_total",
	  "Task (thread) exit records attributed to the cgroup itself." },
	{ "processes", C(processes), U_COUNT, F_SUBTREE | F_DELTA,
	  "process_exits_total",
	  "Process exits (last thread of a process) in the cgroup itself." },
	{ "tgid_records", C(tgid_records), U_COUNT, 0, NULL, NULL },
	{ "utime_s", C(utime_us), U_US, F_SUBTREE | F_DELTA,
	  "user_cpu_seconds_total", "User CPU time of exited tasks." },
	{ "stime_s", C(stime_us), U_US, F_SUBTREE | F_DELTA,
	  "system_cpu_seconds_total", "System CPU time of exited tasks." },
	{ "cpu_run_real_s", C(cpu_run_real_ns), U_NS, F_SUBTREE,
	  "cpu_run_real_seconds_total",
	  "CPU time of exited tasks as the scheduler accounted it (real)." },
	{ "cpu_run_virtual_s", C(cpu_run_virtual_ns), U_NS, 0,
	  "cpu_run_virtual_seconds_total",
	  "CPU time of exited tasks as the scheduler accounted it (virtual)." },
	{ "minflt", C(minflt), U_COUNT, 0, "minor_page_faults_total",
	  "Minor page faults of exited tasks." },
	{ "majflt", C(majflt), U_COUNT, 0, "major_page_faults_total",
	  "Major page faults of exited tasks." },
	{ "read_char_bytes", C(read_char), U_COUNT, 0, "io_read_bytes_total",
	  "Bytes exited tasks read with read-like syscalls (rchar)." },
	{ "write_char_bytes", C(write_char), U_COUNT, 0,
	  "io_write_bytes_total",
	  "Bytes exited tasks wrote with write-like syscalls (wchar)." },
	{ "read_syscalls", C(read_syscalls), U_COUNT, 0, "read_syscalls_total",
	  "Read syscalls of exited tasks." },
	{ "write_syscalls", C(write_syscalls), U_COUNT, 0,
	  "write_syscalls_total", "Write syscalls of exited tasks." },
	{ "read_bytes", C(read_bytes), U_COUNT, F_SUBTREE,
	  "storage_read_bytes_total",
	  "Bytes exited tasks caused to be read from storage." },
	{ "write_bytes", C(write_bytes), U_COUNT, F_SUBTREE,
	  "storage_write_bytes_total",
	  "Bytes exited tasks caused to be written to storage." },
	{ "cancelled_write_bytes", C(cancelled_write_bytes), U_COUNT, 0,
	  "storage_cancelled_write_bytes_total",
	  "Storage write bytes exited tasks cancelled (truncated pages)." },
	{ "nvcsw", C(nvcsw), U_COUNT, 0, "voluntary_context_switches_total",
	  "Voluntary context switches of exited tasks." },
	{ "nivcsw", C(nivcsw), U_COUNT, 0,
	  "involuntary_context_switches_total",
	  "Involuntary context switches of exited tasks." },
	{ "coremem_mb_us", C(coremem_mbus), U_COUNT, 0, NULL, NULL },
	{ "virtmem_mb_us", C(virtmem_mbus), U_COUNT, 0, NULL, NULL },
	{ "hiwater_rss_bytes_max", C(hiwater_rss_kb_max), U_KB, F_PEAK,
	  "peak_rss_bytes",
	  "Largest peak resident set size of an exited task." },
	{ "hiwater_vm_bytes_max", C(hiwater_vm_kb_max), U_KB, F_PEAK,
	  "peak_virtual_memory_bytes",
	  "Largest peak virtual memory size of an exited task." },
};
const size_t tsc_nfields = sizeof(tsc_fields) / sizeof(tsc_fields[0]);

const struct ofield tsc_outcomes[] = {
	{ "clean", C(exit_clean) },
	{ "exit_nonzero", C(exit_nonzero) },
	{ "signaled", C(exit_signaled) },
	{ "core_dumped", C(exit_core_dumped) },
	{ "oom_kills", C(oom_kills) },
};
const size_t tsc_noutcomes = sizeof(tsc_outcomes) / sizeof(tsc_outcomes[0]);

void hist_le_put(struct buf *b, uint64_t le_ns)
{
	if (le_ns == UINT64_MAX) {
		buf_puts(b, "+Inf");
		return;
	}
	/* the library's bounds are powers of 2 of a second (rounded down
	 * to ns): those exactly, as Prometheus writes them */
	for (int e = -30; e < 24; e++) {
		double v = e >= 0 ? (double)(1ull << e)
				  : 1.0 / (double)(1ull << -e);
		if ((uint64_t)(v * 1e9) == le_ns) {
			prom_pow2_put(b, e);
			return;
		}
	}
	/* other bounds: exact in decimal, without trailing zeros */
	char t[32];
	unsigned long long s = le_ns / 1000000000u, f = le_ns % 1000000000u;
	int n = 9;
	while (n > 0 && f % 10 == 0) {
		f /= 10;
		n--;
	}
	if (n)
		snprintf(t, sizeof(t), "%llu.%0*llu", s, n, f);
	else
		snprintf(t, sizeof(t), "%llu", s);
	buf_puts(b, t);
}

const char *hist_prom_name(enum cgs_hist_kind k)
{
	switch (k) {
	case CGS_HIST_LIFETIME: return "task_lifetime_seconds";
	case CGS_HIST_PROC_LIFETIME: return "process_lifetime_seconds";
	case CGS_HIST_CPU: return "task_cpu_seconds";
	case CGS_HIST_CPU_DELAY: return "task_cpu_delay_seconds";
	default: return NULL;
	}
}

const char *hist_prom_help(enum cgs_hist_kind k)
{
	switch (k) {
	case CGS_HIST_LIFETIME:
		return "Lifetime of exited tasks (threads and processes).";
	case CGS_HIST_PROC_LIFETIME:
		return "Lifetime of exited processes (whole thread group).";
	case CGS_HIST_CPU:
		return "User plus system CPU time per exited task.";
	case CGS_HIST_CPU_DELAY:
		return "Time each exited task waited for a CPU (run queue).";
	default: return NULL;
	}
}

/* The uint64_t at byte offset off of *c. */
static uint64_t counter_at(const struct cgs_counters *c, size_t off)
{
	uint64_t v;
	memcpy(&v, (const char *)c + off, sizeof(v));
	return v;
}

uint64_t field_get(const struct cgs_counters *c, const struct cfield *f)
{
	return counter_at(c, f->off);
}

uint64_t ofield_get(const struct cgs_counters *c, const struct ofield *f)
{
	return counter_at(c, f->off);
}

void field_put(struct buf *b, uint64_t v, enum funit u)
{
	switch (u) {
	case U_US: buf_fixed(b, v, 6); break;
	case U_NS: buf_fixed(b, v, 9); break;
	case U_KB: buf_u64(b, v * 1024); break;
	default: buf_u64(b, v); break;
	}
}

int exit_code_of(uint32_t status)
{
	return WIFEXITED(status) ? (int)WEXITSTATUS(status) : -1;
}

int exit_signal_of(uint32_t status)
{
	return WIFSIGNALED(status) ? (int)WTERMSIG(status) : 0;
}

/* The wait status's core bit, as the outcome core_dumped counts it (the
 * kernel's ac_flag ACORE is set for a core dump begun, written or not:
 * RLIMIT_CORE 0 writes none; it stays in "flag"). */
bool exit_core_of(uint32_t status)
{
	return WIFSIGNALED(status) && WCOREDUMP(status);
}

const char *kind_name(enum cgs_kind k)
{
	switch (k) {
	case CGS_KIND_THREAD: return "thread";
	case CGS_KIND_PROCESS: return "process";
	case CGS_KIND_TGID: return "tgid";
	default: return "unknown";
	}
}

void tsc_exe_dev(char *out, size_t n, uint64_t dev)
{
	/* the kernel's huge_encode_dev(): what glibc's macros decode */
	snprintf(out, n, "%u:%u", major((dev_t)dev), minor((dev_t)dev));
}

bool tsc_exe_name(const struct snap_info *in, const struct cgs_exe *x,
		  char *out, size_t n)
{
	if (x->other) {
		snprintf(out, n, "%s", TSC_OTHER_EXES);
		return false;
	}
	if (!x->dev && !x->inode) {
		snprintf(out, n, "%s", TSC_NO_EXE);
		return false;
	}
	if (in->exe_map && exe_cache_get(in->exe_map, x->dev, x->inode, out, n))
		return true;
	char d[32];
	tsc_exe_dev(d, sizeof(d), x->dev);
	snprintf(out, n, "unknown %s %llu", d, (unsigned long long)x->inode);
	return false;
}
