/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Kernel-side attribution: for every exiting task, the cgroup2 id it was in
 * when it exited, plus what the library needs to prove which taskstats
 * record an entry belongs to (tid, tgid, start time, lifetime to a tick,
 * run time to the nanosecond, run-queue wait and CPU slices, context
 * switches, minor faults).
 *
 * Entries go to a ring per CPU (struct cgsk_ctl): the program runs in the
 * exiting task with preemption off, so each ring has one writer, and the
 * listener shard that owns the CPU is its one reader (through mmap: no
 * syscall). Per exit: two inlined array lookups, the field loads, the
 * clock to a tick, the cgroup id, the publishing store. A full ring is counted
 * in its `lost`, exactly. cgroup_mkdir/rmdir events (rare) go through a
 * BPF ring buffer.
 *
 * Needs Linux 5.12 with BTF: tp_btf (5.5), mmapable arrays (5.5), atomic
 * fetch-and-add (5.12, the ordered publish of head).
 */
#include "core_min.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "exitcg_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 nslots = 4096; /* per CPU, a power of two */
/* write each entry's process command to `comms` (off: the verifier drops
 * the code, nothing is read or written) */
const volatile bool want_comm = 0;

/* The hierarchy in use: its id, when known at load (else -1, cgroup2
 * only: every hierarchy's events, told apart in user space): on a hybrid
 * host each v1 hierarchy's mkdir (a systemd unit gets one per controller)
 * would share the ring */
const volatile __s64 only_hier = -1;
/* CGSK_HOW_DFL or CGSK_HOW_CSS (cgs_exit_v1k: CGSK_HOW_KFUNC) */
const volatile __u32 cg_how = CGSK_HOW_DFL;
/* CGSK_HOW_CSS: the controller's subsystem id (enum cgroup_subsys_id) */
const volatile __u32 v1_ssid = 0;

/* Linux 6.8+: the task's cgroup in v1 hierarchy hierarchy_id, acquired */
extern struct cgroup *bpf_task_get_cgroup1(struct task_struct *task,
					   int hierarchy_id) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym __weak;
/* Linux 6.2+: obj as a read-only (untrusted) pointer to BTF type btf_id */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* CGSK_HOW_KFUNC: where the hierarchy's link sits in a css_set's
 * cgrp_links, learnt by the first full walk (lk_n links, ours the lk_pos-th
 * from the head, 0-based). Every css_set lists one link per hierarchy in
 * the same order: a new css_set copies the order of the one it is made
 * from, a new hierarchy is appended to every css_set (link_css_set()). A
 * stale or torn hint costs a full walk, never a wrong id: the link found
 * is checked against only_hier. */
__u32 lk_pos = 0;
__u32 lk_n = 0;

__u64 cg_lost = 0; /* cgroup events dropped: ring full */
/* set by user space while something waits for new cgroups (workload
 * identity): each mkdir wakes the reader, rare enough to cost nothing */
bool wake_mkdir = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* possible CPUs, set before loading */
	__type(key, __u32);
	__type(value, struct cgsk_ctl);
} ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* CPUs * nslots, set before loading */
	__type(key, __u32);
	__type(value, struct cgsk_exit);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* as slots when want_comm, else 1 */
	__type(key, __u32);
	__type(value, struct cgsk_comm);
} comms SEC(".maps");

#define CG_RING_BYTES (2 << 20) /* ~3,900 events of 536 bytes */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CG_RING_BYTES);
} cgring SEC(".maps");

/* The cgroup id of exiting task t in the hierarchy in use. `how` is a
 * constant of the program (CGSK_HOW_*): the verifier drops the others.
 * The exiting task's css_set is pinned (it holds a reference until it is
 * freed), and so are its cgroups: by plain BTF loads, the v1 css and the
 * cgroup2 dfl_cgrp alike (what bpf_get_current_cgroup_id() reads, without
 * its call: 50-75 ns less per exit measured on a quiet host, bench/README
 * "Quiet-host figures"). */
#define LINKS_MAX 64 /* hierarchies a walk passes at most */

/* the cgroup of the link whose cgrp_link is at p (untrusted: every load
 * from it is fault-safe) */
static __always_inline struct cgroup *link_cgrp(struct list_head *p)
{
	struct cgrp_cset_link *l = bpf_rdonly_cast(
		(void *)p - bpf_core_field_offset(struct cgrp_cset_link,
						  cgrp_link),
		bpf_core_type_id_kernel(struct cgrp_cset_link));
	return l->cgrp;
}

static __always_inline bool ours(struct cgroup *cg)
{
	return cg && cg->root->hierarchy_id == (int)only_hier;
}

/* every link of the css_set whose cgrp_links is h: learns the hint */
static __always_inline struct cgroup *links_walk(struct list_head *h)
{
	struct list_head *p = h->next;
	struct cgroup *found = 0;
	__u32 i, at = 0;
	for (i = 0; i < LINKS_MAX && p && p != h; i++) {
		struct cgroup *cg = link_cgrp(p);
		if (!found && ours(cg)) {
			found = cg;
			at = i;
		}
		p = p->next;
	}
	if (found && p == h) {
		lk_pos = at;
		lk_n = i;
	}
	return found;
}

/* The exiting task's cgroup in a v1 hierarchy, named ones too, without
 * css_set_lock: the exiting task holds its css_set, and a css_set's
 * links live as long as it does (made before it is published, torn down
 * at its last put). Straight to the hinted link from the nearer end (one
 * or two links on the usual layouts: a named hierarchy mounted first or
 * last), else a full walk. */
static __always_inline __u64 links_cgid(struct task_struct *t)
{
	struct list_head *h = bpf_rdonly_cast(&t->cgroups->cgrp_links,
		bpf_core_type_id_kernel(struct list_head));
	__u32 pos = lk_pos, n = lk_n;
	struct cgroup *cg = 0;
	if (n && pos < n) {
		struct list_head *p = h;
		if (pos < n - pos) {
			for (__u32 i = 0; i < LINKS_MAX; i++) {
				p = p->next;
				if (i == pos)
					break;
			}
		} else {
			for (__u32 i = 0; i < LINKS_MAX; i++) {
				p = p->prev;
				if (i == n - 1 - pos)
					break;
			}
		}
		if (p && p != h) {
			cg = link_cgrp(p);
			if (!ours(cg))
				cg = 0;
		}
	}
	if (!cg)
		cg = links_walk(h);
	return cg ? cg->kn->id : 0;
}

static __always_inline __u64 task_cgid(struct task_struct *t, __u32 how)
{
	if (how == CGSK_HOW_KFUNC) {
		__u64 id = links_cgid(t);
		if (id)
			return id;
		/* not found lockless: takes css_set_lock; the cgroup comes
		 * referenced */
		struct cgroup *cg = bpf_task_get_cgroup1(bpf_get_current_task_btf(),
							 (int)only_hier);
		if (cg) {
			id = cg->kn->id;
			bpf_cgroup_release(cg);
		}
		return id;
	}
	if (how == CGSK_HOW_CSS)
		return t->cgroups->subsys[v1_ssid]->cgroup->kn->id;
	return t->cgroups->dfl_cgrp->kn->id;
}

/* Make the entry at h visible to the reader: after every store to the
 * slot. x86 keeps stores in order (TSO) and the JIT emits them in program
 * order, so a compiler barrier and a plain store suffice; a locked
 * instruction would wait for the slot's cache line (a miss: the reader
 * had it) on every exit. Elsewhere, a fetching atomic is fully ordered on
 * every JIT. */
static __always_inline void publish(struct cgsk_ctl *c, __u64 h)
{
#if defined(__TARGET_ARCH_x86)
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&c->head = h + 1;
#else
	__sync_fetch_and_add(&c->head, 1);
#endif
}

/* CLOCK_MONOTONIC to a tick, without the clock read (35-60 ns here):
 * the first exit on a CPU in each jiffy reads the clock, the others of
 * that jiffy take its time, which is at most a tick (plus however late
 * the tick runs) before their own; never after it. jiffies is one load
 * (the verifier inlines the helper). */
static __always_inline __u64 exit_clock(struct cgsk_ctl *c)
{
	__u64 j = bpf_jiffies64();
	if (j != c->clk_jiffies || !c->clk_ns) {
		c->clk_ns = bpf_ktime_get_ns();
		c->clk_jiffies = j;
	}
	return c->clk_ns;
}

/* The tracepoint's second argument where the kernel has it, group_dead
 * (the value taskstats_exit() was given: the exit whose record carries
 * AGROUP). Its event records the argument (TP_fast_assign), so the field
 * in the event's struct says the argument is there. Else true: any exit
 * may be its process's last. */
static __always_inline bool may_be_group_dead(__u64 *ctx)
{
	if (bpf_core_field_exists(struct trace_event_raw_sched_process_exit,
				  group_dead))
		return (bool)ctx[1];
	return 1;
}

static __always_inline int exit_entry(struct task_struct *t, bool gdead,
				      __u32 how)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cgsk_ctl *c = bpf_map_lookup_elem(&ctl, &cpu);
	if (!c)
		return 0;
	if (!c->on) /* no listener reads this CPU's records */
		return 0;
	/* the reader's tail (its cache line, written per record) is read
	 * only when the copy seen last says the ring may be full: once per
	 * ring's worth of entries while the reader keeps up */
	__u64 h = c->head;
	if (h - c->tail_seen >= nslots) {
		c->tail_seen = *(volatile __u64 *)&c->tail;
		if (h - c->tail_seen >= nslots) {
			c->lost++;
			return 0;
		}
	}
	__u32 idx = cpu * nslots + (__u32)(h & (nslots - 1));
	struct cgsk_exit *e = bpf_map_lookup_elem(&slots, &idx);
	if (!e)
		return 0;
	__u32 type = CGSK_EV_EXIT;
	/* an OOM victim's signal_struct keeps the mm it was chosen for
	 * (mark_oom_victim()) until the process is freed. Read for a
	 * process's last exit only (user space counts it on CGS_KIND_PROCESS
	 * records, the AGROUP ones): a thread's exit does not touch the
	 * signal_struct's line. */
	if (bpf_core_field_exists(t->signal->oom_mm) && gdead &&
	    t->signal->oom_mm)
		type |= CGSK_F_OOM;
	e->type = type;
	if (want_comm) {
		struct cgsk_comm *cm = bpf_map_lookup_elem(&comms, &idx);
		if (cm)
			bpf_probe_read_kernel(cm->comm, sizeof(cm->comm),
					      t->group_leader->comm);
	}
	e->tid = t->pid;
	e->tgid = t->tgid;
	e->cgid = task_cgid(t, how);
	/* to a tick: the join's precise proof of a match is the task's
	 * run time (se.sum_exec_runtime), to the nanosecond */
	e->now_ns = exit_clock(c);
	e->start_ns = t->start_time;
	e->runtime_ns = t->se.sum_exec_runtime;
	e->csw = (__u32)(t->nvcsw + t->nivcsw);
	e->minflt = (__u32)t->min_flt;
	if (bpf_core_field_exists(t->sched_info)) { /* CONFIG_SCHED_INFO */
		e->pcount = (__u32)t->sched_info.pcount;
		e->run_delay = t->sched_info.run_delay;
	} else {
		type |= CGSK_F_NOSCHED;
		e->type = type;
	}
	publish(c, h);
	return 0;
}

/* cgroup2, or a v1 controller's hierarchy (cg_how) */
SEC("tp_btf/sched_process_exit")
int cgs_exit(__u64 *ctx)
{
	return exit_entry((struct task_struct *)ctx[0], may_be_group_dead(ctx),
			  cg_how == CGSK_HOW_CSS ? CGSK_HOW_CSS : CGSK_HOW_DFL);
}

/* any v1 hierarchy through the kfunc: loaded instead of cgs_exit only
 * where the kernel has it (ksrc.c), so that older kernels load the
 * object */
SEC("tp_btf/sched_process_exit")
int cgs_exit_v1k(__u64 *ctx)
{
	return exit_entry((struct task_struct *)ctx[0], may_be_group_dead(ctx),
			  CGSK_HOW_KFUNC);
}

static __always_inline int cg_event(__u64 *ctx, __u32 type)
{
	struct cgroup *cg = (struct cgroup *)ctx[0];
	const char *path = (const char *)ctx[1];
	__u32 hier = (__u32)BPF_CORE_READ(cg, root, hierarchy_id);
	if (only_hier >= 0 && hier != (__u32)only_hier)
		return 0;
	struct cgsk_cgev *e = bpf_ringbuf_reserve(&cgring, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&cg_lost, 1);
		return 0;
	}
	e->type = type;
	e->hier = hier;
	e->id = BPF_CORE_READ(cg, kn, id);
	e->level = (__u32)BPF_CORE_READ(cg, level);
	e->len = bpf_probe_read_kernel_str(e->path, sizeof(e->path), path);
	/* no wakeup as a rule: lookups read the ring as records come; a
	 * ring a quarter full wakes the reader thread (ksrc.c), so that a
	 * storm of cgroups with no exit in between cannot overflow it */
	__u64 queued = bpf_ringbuf_query(&cgring, BPF_RB_AVAIL_DATA);
	bool wake = queued > CG_RING_BYTES / 4 ||
		    (wake_mkdir && type == CGSK_EV_MKDIR);
	bpf_ringbuf_submit(e, wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
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

/* Executables (exitcg_abi.h, cgsk_exe): loaded only when the library asks
 * (cgs_rollup_opts.exe_paths); else neither the program nor its maps
 * exist. */
__u64 exe_lost = 0; /* new executables not sent: exering full */
/* the loader's mount namespace (its ns inode), 0: unknown */
const volatile __u32 own_mntns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* exe_paths, set before loading */
	__type(key, struct cgsk_exe_key);
	__type(value, __u32); /* i_generation */
} exes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cgsk_exe);
} exescratch SEC(".maps");

#define EXE_RING_BYTES (256 << 10) /* ~2,000 paths of 100 bytes */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EXE_RING_BYTES);
} exering SEC(".maps");

/* include/linux/kdev_t.h new_encode_dev() (= huge_encode_dev()): what
 * taskstats puts in ac_exe_dev, and stat(2) in st_dev */
static __always_inline __u64 exe_dev(__u32 kdev)
{
	__u32 major = kdev >> 20, minor = kdev & 0xfffff;
	return (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12);
}

/* The names from the file up to the root of its mount namespace, leaf
 * first (fs/d_path.c prepend_path() without the locks: a rename or
 * unmount at the same moment may give a stale name, never a fault). */
static __always_inline void exe_walk(struct cgsk_exe *e, struct file *f)
{
	struct dentry *d = BPF_CORE_READ(f, f_path.dentry);
	struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
	struct mount *m = (void *)vm - bpf_core_field_offset(struct mount, mnt);
	struct dentry *root = BPF_CORE_READ(vm, mnt_root);
	__u32 off = 0, n = 0, i;
	e->flags = CGSK_EXE_F_TRUNC;
	for (i = 0; i < CGSK_EXE_DEPTH; i++) {
		struct dentry *up = BPF_CORE_READ(d, d_parent);
		if (d == root || d == up) {
			struct mount *mp = BPF_CORE_READ(m, mnt_parent);
			if (d != root || !mp || mp == m) { /* the root */
				e->flags = 0;
				break;
			}
			d = BPF_CORE_READ(m, mnt_mountpoint);
			m = mp;
			root = BPF_CORE_READ(m, mnt.mnt_root);
			continue;
		}
		if (off >= CGSK_EXE_NAMES)
			break;
		const unsigned char *name = BPF_CORE_READ(d, d_name.name);
		long r = bpf_probe_read_kernel_str(
			&e->names[off & (CGSK_EXE_NAMES - 1)],
			CGSK_EXE_NAME_MAX, name);
		if (r <= 0)
			break;
		off += (__u32)r;
		n++;
		d = up;
	}
	e->len = (__u16)(off < CGSK_EXE_NAMES + CGSK_EXE_NAME_MAX
			 ? off : CGSK_EXE_NAMES + CGSK_EXE_NAME_MAX);
	e->n = (__u8)n;
}

/* Per exec: the file's inode, one hash look-up; for an executable not
 * seen yet (or evicted) the walk and one ring buffer record. */
SEC("tp_btf/sched_process_exec")
int cgs_exec(__u64 *ctx)
{
	struct linux_binprm *bprm = (struct linux_binprm *)ctx[2];
	struct file *f = bprm->file;
	if (!f)
		return 0;
	struct inode *ino = f->f_inode;
	if (!ino)
		return 0;
	struct cgsk_exe_key k = { .dev = exe_dev(ino->i_sb->s_dev),
				  .ino = ino->i_ino };
	__u32 gen = ino->i_generation;
	__u32 *seen = bpf_map_lookup_elem(&exes, &k);
	if (seen && *seen == gen)
		return 0;
	__u32 zero = 0;
	struct cgsk_exe *e = bpf_map_lookup_elem(&exescratch, &zero);
	if (!e)
		return 0;
	e->dev = k.dev;
	e->ino = k.ino;
	e->gen = gen;
	exe_walk(e, f);
	if (!ino->i_nlink)
		e->flags |= CGSK_EXE_F_UNLINKED;
	struct task_struct *t = (struct task_struct *)ctx[0];
	if (own_mntns && BPF_CORE_READ(t, nsproxy, mnt_ns, ns.inum) != own_mntns)
		e->flags |= CGSK_EXE_F_FOREIGN;
	__u64 size = CGSK_EXE_HDR + (__u64)e->len;
	if (size > sizeof(*e))
		size = sizeof(*e);
	/* no wakeup: the library reads the ring when it resolves */
	if (bpf_ringbuf_output(&exering, e, size, BPF_RB_NO_WAKEUP)) {
		__sync_fetch_and_add(&exe_lost, 1);
		return 0; /* not marked seen: the next exec sends it */
	}
	bpf_map_update_elem(&exes, &k, &gen, BPF_ANY);
	return 0;
}
