/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * What the kernel-side attribution program (exitcg.bpf.c) shares with the
 * library: its per-CPU rings of exit entries and the records of its
 * cgroup event ring buffer. Fixed-size, 8-byte aligned; the first member
 * of a record says which kind.
 */
#ifndef CGS_EXITCG_ABI_H
#define CGS_EXITCG_ABI_H

#define CGSK_MAX_CPUS 4096   /* cpu -> shard table size (power of two) */
#define CGSK_MAX_SHARDS 64
#define CGSK_PATH_MAX 512    /* cgroup path bytes carried by mkdir events */

#define CGSK_EV_EXIT 1
#define CGSK_EV_MKDIR 2
#define CGSK_EV_RMDIR 3

/* How the exit program finds the task's cgroup (rodata cg_how). */
#define CGSK_HOW_DFL 0   /* cgroup2: task->cgroups->dfl_cgrp */
#define CGSK_HOW_CSS 1   /* a v1 controller's hierarchy: the css of the
			  * controller (task->cgroups->subsys[ssid]) */
#define CGSK_HOW_KFUNC 2 /* any v1 hierarchy, named ones too, in the
			  * program cgs_exit_v1k (loaded on Linux 6.8+):
			  * a lockless walk of the css_set's cgrp_links
			  * (bpf_rdonly_cast, 6.2), else
			  * bpf_task_get_cgroup1() (6.8) */

/* Flags in the upper half of an exit entry's type. */
#define CGSK_EV_TYPE_MASK 0xffffu
#define CGSK_F_OOM (1u << 16) /* the process was an OOM victim */
#define CGSK_F_NOSCHED (1u << 17) /* no sched_info (!CONFIG_SCHED_INFO):
				   * pcount and run_delay are not there */
#define CGSK_COMM_LEN 16      /* TASK_COMM_LEN */

/* One exiting task, written by sched_process_exit in the task itself,
 * right after taskstats_exit() queued its record. One 64-byte line. */
struct cgsk_exit {
	__u32 type;       /* CGSK_EV_EXIT | CGSK_F_* */
	__u32 tid;        /* ac_pid (initial pid namespace) */
	__u32 tgid;       /* ac_tgid */
	__u32 csw;        /* nvcsw + nivcsw, mod 2^32 */
	__u64 cgid;       /* cgroup id (kernfs id = directory inode) at
			   * exit, in the hierarchy in use */
	__u64 start_ns;   /* task->start_time, CLOCK_MONOTONIC ns */
	__u64 now_ns;     /* CLOCK_MONOTONIC ns, to a tick: the precise
			   * time of an exit on this CPU in the same jiffy
			   * (this one or an earlier one; the precise clock
			   * cost 35-60 ns an exit) */
	__u64 runtime_ns; /* se.sum_exec_runtime: the record's
			   * cpu_run_virtual_total when taskstats read it,
			   * grown by what the task ran since */
	__u64 run_delay;  /* sched_info.run_delay (cpu_delay_total), ns */
	__u32 pcount;     /* sched_info.pcount (cpu_count), mod 2^32 */
	__u32 minflt;     /* min_flt (ac_minflt), mod 2^32 */
};

/* The process's command (its group leader's comm), in the array map
 * `comms` at the same index as the entry in `slots`: written only when the
 * library asked for it (rodata want_comm), else the map has one element. */
struct cgsk_comm {
	char comm[CGSK_COMM_LEN];
};

/*
 * Per-CPU ring control (array map `ctl`, one element per possible CPU,
 * mmapped by the library): the program on that CPU is the only writer of
 * head and lost, the shard that owns the CPU the only writer of tail; the
 * two sides live on cache lines of their own. Entries are slots[cpu *
 * nslots + (pos & (nslots - 1))] of the array map `slots`; head is
 * published after the slot is written (a plain store on x86, a fully
 * ordered atomic add elsewhere: exitcg.bpf.c publish()).
 */
struct cgsk_ctl {
	__u64 head;     /* entries written */
	__u64 lost;     /* entries dropped: the ring was full */
	__u64 on;       /* set by the library before attaching: a shard
			 * listens to this CPU (else nothing is written) */
	__u64 tail_seen; /* the program's copy of tail, read again only
			  * when the ring looks full */
	__u64 clk_jiffies; /* the exit clock (exitcg.bpf.c exit_clock()):
			    * jiffies when clk_ns was read on this CPU */
	__u64 clk_ns;
	__u64 pad0[2];
	__u64 tail;     /* entries consumed */
	__u64 pad1[7];
};

/* A cgroup created or removed on the hierarchy in use. */
struct cgsk_cgev {
	__u32 type;       /* CGSK_EV_MKDIR or CGSK_EV_RMDIR */
	__u32 hier;       /* cgroup_root.hierarchy_id */
	__u64 id;         /* kernfs id == directory inode */
	__s32 len;        /* bytes of path incl. NUL; <= 0: unreadable */
	__u32 level;
	char path[CGSK_PATH_MAX]; /* full path inside the hierarchy */
};

/*
 * Executables (issue 39), with rodata exe_on: the program on
 * sched_process_exec keeps the executables it has seen in the LRU hash
 * `exes` ((dev, inode) -> generation) and sends each one not there (or
 * there with another generation: the inode number was reused) through the
 * ring buffer `exering` as a struct cgsk_exe. dev and inode are encoded as
 * the kernel fills ac_exe_dev and ac_exe_inode (kernel/taskstats.c
 * exe_add_tsk(): huge_encode_dev(i_sb->s_dev), i_ino of the mm's exe_file,
 * which is the linux_binprm's file: the interpreter of a script).
 */
#define CGSK_EXE_NAMES 1024  /* bytes of names carried (a power of two) */
#define CGSK_EXE_NAME_MAX 256 /* NAME_MAX + 1 */
#define CGSK_EXE_DEPTH 48    /* path components and mount crossings */
#define CGSK_EXE_F_TRUNC 1u  /* the walk stopped before the root: the
			      * names are the path's last ones */
#define CGSK_EXE_F_UNLINKED 2u /* the inode had no link left at exec */
#define CGSK_EXE_F_FOREIGN 4u /* exec'd in another mount namespace than
			       * the loader's: the path is that one's */

struct cgsk_exe_key {
	__u64 dev;
	__u64 ino;
};

/* The path's names leaf first, each NUL-terminated (n of them, len bytes):
 * the walk goes up from the file to the root of the exec'ing task's mount
 * namespace, as /proc/PID/exe shows it from there. */
struct cgsk_exe {
	__u64 dev;
	__u64 ino;
	__u32 gen;        /* i_generation */
	__u16 len;        /* bytes of names */
	__u8 n;           /* names */
	__u8 flags;       /* CGSK_EXE_F_* */
	char names[CGSK_EXE_NAMES + CGSK_EXE_NAME_MAX];
};
#define CGSK_EXE_HDR 24   /* bytes before names */

#endif
