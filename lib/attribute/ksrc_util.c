/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel source's stateless helpers; see ksrc_util.h. */
#include <linux/capability.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attribute/ksrc_util.h"
#include "attribute/proc_stat.h"
#include "util/common.h"

uint64_t cgsi_ksrc_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t cgsi_ksrc_real_off_ns(void)
{
	return (int64_t)cgsi_now_real_ns() - (int64_t)cgsi_ksrc_mono_ns();
}

bool cgsi_ksrc_have_cap(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

bool cgsi_ksrc_task_done(uint32_t tid)
{
	char b[512];
	struct cgsi_proc_stat st;
	return cgsi_proc_stat_read("/proc", tid, b, sizeof(b), &st) < 0 ||
	       strchr("ZXx", st.state);
}

size_t cgsi_ksrc_page_round(size_t n)
{
	size_t p = (size_t)sysconf(_SC_PAGESIZE);
	return (n + p - 1) / p * p;
}

#ifdef CGS_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>

#include "attribute/bpf/exitcg_abi.h"

void *cgsi_ksrc_mmap(struct bpf_map *m, size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, bpf_map__fd(m), 0);
	return p == MAP_FAILED ? NULL : p;
}

bool cgsi_ksrc_charge_lost(const struct cgsk_ctl *ctl, unsigned ncpu,
			   _Atomic uint64_t *charged)
{
	uint64_t lost = 0;
	for (unsigned c = 0; c < ncpu; c++)
		lost += __atomic_load_n(&ctl[c].lost, __ATOMIC_RELAXED);
	uint64_t ch = atomic_load(charged);
	while (ch < lost)
		if (atomic_compare_exchange_weak(charged, &ch, ch + 1))
			return true;
	return false;
}

uint64_t cgsi_ksrc_queued(const struct cgsk_ctl *ctl, unsigned ncpu)
{
	uint64_t n = 0;
	for (unsigned c = 0; c < ncpu; c++) {
		uint64_t h = __atomic_load_n(&ctl[c].head, __ATOMIC_ACQUIRE);
		uint64_t t = __atomic_load_n(&ctl[c].tail, __ATOMIC_RELAXED);
		n += h > t ? h - t : 0;
	}
	return n;
}

void cgsi_ksrc_prog_stats(const struct bpf_object *obj,
			  struct cgsi_ksrc_stats *out)
{
	char b[16];
	bool on = cgsi_read_file("/proc/sys/kernel/bpf_stats_enabled", b,
				 sizeof(b)) > 0 && b[0] == '1';
	struct bpf_program *p;
	bpf_object__for_each_program(p, obj) {
		struct bpf_prog_info info;
		__u32 il = sizeof(info);
		memset(&info, 0, sizeof(info));
		int fd = bpf_program__fd(p);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &il) < 0)
			continue;
		if (!strcmp(bpf_program__name(p), "cgs_exec")) {
			out->bpf_exec_ns += info.run_time_ns;
			out->bpf_exec_cnt += info.run_cnt;
			continue;
		}
		bool ex = strstr(bpf_program__name(p), "exit") != NULL;
		*(ex ? &out->bpf_exit_ns : &out->bpf_cg_ns) += info.run_time_ns;
		*(ex ? &out->bpf_exit_cnt : &out->bpf_cg_cnt) += info.run_cnt;
	}
	/* the sysctl, or BPF_ENABLE_STATS held by some process (the sysctl
	 * does not show that one): counts exist only while either is on */
	out->bpf_stats = on || out->bpf_exit_cnt || out->bpf_cg_cnt ||
			 out->bpf_exec_cnt;
	if (!out->bpf_stats)
		out->bpf_exit_ns = out->bpf_cg_ns = out->bpf_exec_ns = 0;
}
#endif
