/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Kernel-side attribution: for every exiting task, the cgroup2 id it was in
 * when it exited, plus what the library needs to prove which taskstats
 * record an entry belongs to (tid, tgid, start time, lifetime, run-queue
 * wait and CPU slices, context switches, minor faults).
 *
 * One ring buffer per listener shard (cpu_shard[] routes the CPU a task
 * exits on to the shard that receives that CPU's taskstats events), so no
 * two shards consume the same ring. Nothing but the entry is written per
 * exit; a full ring is counted per shard in `lost` (read by user space
 * from the mmapped .bss, no syscall).
 */
#include "core_min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "exitcg_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 cpu_shard[CGSK_MAX_CPUS] = {};
const volatile __u32 nshards = 1;

__u64 lost[CGSK_MAX_SHARDS] = {};  /* exit entries dropped: ring full */
__u64 noring = 0;                  /* shard without a ring (never, unless
				    * user space failed to install it) */
__u64 cg_lost = 0;                 /* cgroup events dropped: ring full */

struct inner_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, CGSK_MAX_SHARDS);
	__type(key, __u32);
	__array(values, struct inner_ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} cgring SEC(".maps");

SEC("tp_btf/sched_process_exit")
int cgs_exit(__u64 *ctx)
{
	struct task_struct *t = (struct task_struct *)ctx[0];
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 shard = cpu_shard[cpu & (CGSK_MAX_CPUS - 1)];
	void *rb = bpf_map_lookup_elem(&rings, &shard);
	if (!rb) {
		__sync_fetch_and_add(&noring, 1);
		return 0;
	}
	struct cgsk_exit *e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost[shard & (CGSK_MAX_SHARDS - 1)], 1);
		return 0;
	}
	e->type = CGSK_EV_EXIT;
	e->tid = t->pid;
	e->tgid = t->tgid;
	e->cgid = bpf_get_current_cgroup_id();
	e->now_ns = bpf_ktime_get_ns();
	e->start_ns = t->start_time;
	e->csw = (__u32)(t->nvcsw + t->nivcsw);
	e->minflt = t->min_flt;
	if (bpf_core_field_exists(t->sched_info)) { /* CONFIG_SCHED_INFO */
		e->pcount = t->sched_info.pcount;
		e->run_delay = t->sched_info.run_delay;
	} else {
		e->pcount = e->run_delay = ~0ull;
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline int cg_event(__u64 *ctx, __u32 type)
{
	struct cgroup *cg = (struct cgroup *)ctx[0];
	const char *path = (const char *)ctx[1];
	struct cgsk_cgev *e = bpf_ringbuf_reserve(&cgring, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&cg_lost, 1);
		return 0;
	}
	e->type = type;
	e->hier = (__u32)BPF_CORE_READ(cg, root, hierarchy_id);
	e->id = BPF_CORE_READ(cg, kn, id);
	e->level = (__u32)BPF_CORE_READ(cg, level);
	e->len = bpf_probe_read_kernel_str(e->path, sizeof(e->path), path);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("raw_tp/cgroup_mkdir")
int cgs_mkdir(__u64 *ctx)
{
	return cg_event(ctx, CGSK_EV_MKDIR);
}

SEC("raw_tp/cgroup_rmdir")
int cgs_rmdir(__u64 *ctx)
{
	return cg_event(ctx, CGSK_EV_RMDIR);
}
