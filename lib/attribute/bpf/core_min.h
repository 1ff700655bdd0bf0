/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * The few kernel types exitcg.bpf.c reads, declared with
 * preserve_access_index: libbpf relocates every access against the running
 * kernel's BTF (CO-RE), so the object builds without the build host's
 * kernel headers or a vmlinux.h and loads on any kernel with BTF whose
 * structs have these members, wherever they are.
 */
#ifndef CGS_CORE_MIN_H
#define CGS_CORE_MIN_H

typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;

enum bpf_map_type {
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_RINGBUF = 27,
};

#define BPF_ANY 0

#define BPF_F_MMAPABLE (1U << 10)

#define BPF_RB_NO_WAKEUP (1ULL << 0)
#define BPF_RB_FORCE_WAKEUP (1ULL << 1)
#define BPF_RB_AVAIL_DATA 0 /* bpf_ringbuf_query(): bytes not consumed */

struct sched_info {
	unsigned long pcount;
	unsigned long long run_delay;
} __attribute__((preserve_access_index));

struct mm_struct;

struct signal_struct {
	struct mm_struct *oom_mm;
} __attribute__((preserve_access_index));

struct cgroup;
struct css_set;

struct list_head {
	struct list_head *next;
	struct list_head *prev;
} __attribute__((preserve_access_index));

/* kernel/cgroup/cgroup-internal.h: links a css_set and one cgroup per
 * hierarchy (css_set.cgrp_links, through cgrp_link) */
struct cgrp_cset_link {
	struct cgroup *cgrp;
	struct list_head cgrp_link;
} __attribute__((preserve_access_index));

struct sched_entity {
	__u64 sum_exec_runtime;
} __attribute__((preserve_access_index));

struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct mnt_namespace {
	struct ns_common ns;
} __attribute__((preserve_access_index));

struct nsproxy {
	struct mnt_namespace *mnt_ns;
} __attribute__((preserve_access_index));

struct task_struct {
	struct nsproxy *nsproxy;
	struct css_set *cgroups;
	struct sched_entity se;
	int pid;
	int tgid;
	struct task_struct *group_leader;
	struct signal_struct *signal;
	char comm[16];
	struct sched_info sched_info;
	unsigned long min_flt;
	__u64 start_time;
	unsigned long nvcsw;
	unsigned long nivcsw;
} __attribute__((preserve_access_index));

/* the event sched_process_exit records (only its presence is read) */
struct trace_event_raw_sched_process_exit {
	bool group_dead;
} __attribute__((preserve_access_index));

struct kernfs_node {
	__u64 id;
} __attribute__((preserve_access_index));

struct cgroup_root {
	int hierarchy_id;
} __attribute__((preserve_access_index));

struct cgroup {
	struct kernfs_node *kn;
	struct cgroup_root *root;
	int level;
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
	struct cgroup *cgroup;
} __attribute__((preserve_access_index));

/* subsys[] has CGROUP_SUBSYS_COUNT elements in the kernel: the index is a
 * constant of the loaded program (rodata), checked by the verifier */
struct css_set {
	struct cgroup_subsys_state *subsys[1];
	struct cgroup *dfl_cgrp;
	struct list_head cgrp_links;
} __attribute__((preserve_access_index));

/* the executable at exec (cgs_exec): the file, its inode and the walk of
 * its path up the dentries and mounts (fs/d_path.c prepend_path()) */
struct super_block {
	__u32 s_dev; /* dev_t: major << 20 | minor */
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
	__u32 i_generation;
	unsigned int i_nlink;
} __attribute__((preserve_access_index));

struct qstr {
	__u32 len;
	const unsigned char *name;
} __attribute__((preserve_access_index));

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
} __attribute__((preserve_access_index));

struct vfsmount {
	struct dentry *mnt_root;
} __attribute__((preserve_access_index));

/* fs/mount.h: the vfsmount is its member mnt */
struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
} __attribute__((preserve_access_index));

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
} __attribute__((preserve_access_index));

struct file {
	struct path f_path;
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct linux_binprm {
	struct file *file;
} __attribute__((preserve_access_index));

#endif
