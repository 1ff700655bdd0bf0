/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * What the kernel-side attribution program (exitcg.bpf.c) writes into its
 * ring buffers, shared by the BPF object and the library. Fixed-size,
 * 8-byte aligned records; the first member says which kind.
 */
#ifndef CGS_EXITCG_ABI_H
#define CGS_EXITCG_ABI_H

#define CGSK_MAX_CPUS 4096   /* cpu -> shard table size (power of two) */
#define CGSK_MAX_SHARDS 64   /* rings (power of two) */
#define CGSK_PATH_MAX 512    /* cgroup path bytes carried by mkdir events */

#define CGSK_EV_EXIT 1
#define CGSK_EV_MKDIR 2
#define CGSK_EV_RMDIR 3

/* One exiting task, written by sched_process_exit in the task itself,
 * right after taskstats_exit() queued its record. */
struct cgsk_exit {
	__u32 type;       /* CGSK_EV_EXIT */
	__u32 tid;        /* ac_pid (initial pid namespace) */
	__u32 tgid;       /* ac_tgid */
	__u32 csw;        /* nvcsw + nivcsw */
	__u64 cgid;       /* cgroup2 id (directory inode) at exit */
	__u64 start_ns;   /* task->start_time, CLOCK_MONOTONIC ns */
	__u64 now_ns;     /* CLOCK_MONOTONIC ns at the tracepoint */
	__u64 pcount;     /* sched_info.pcount (cpu_count) */
	__u64 run_delay;  /* sched_info.run_delay (cpu_delay_total), ns */
	__u64 minflt;     /* min_flt (ac_minflt) */
};

/* A cgroup created or removed on the cgroup2 hierarchy. */
struct cgsk_cgev {
	__u32 type;       /* CGSK_EV_MKDIR or CGSK_EV_RMDIR */
	__u32 hier;       /* cgroup_root.hierarchy_id */
	__u64 id;         /* kernfs id == directory inode */
	__s32 len;        /* bytes of path incl. NUL; <= 0: unreadable */
	__u32 level;
	char path[CGSK_PATH_MAX]; /* full path inside the hierarchy */
};

#endif
