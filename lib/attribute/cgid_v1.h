/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel source on a cgroup v1 hierarchy: which one (its hierarchy
 * id, as /proc/self/cgroup shows it), and how the BPF program finds an
 * exiting task's cgroup in it:
 *
 *  - a controller's hierarchy ("cpu", "memory", ...): the task's css of
 *    that controller (task->cgroups->subsys[ssid]->cgroup), a CO-RE read
 *    that needs Linux 5.12 with BTF like the cgroup2 mode, and no lock;
 *  - a named hierarchy without controllers ("name=systemd") has no css:
 *    only the kfunc bpf_task_get_cgroup1() (Linux 6.8) serves it.
 *
 * The ids are the v1 mount's kernfs ids, which are the inode numbers of
 * its directories (64-bit ino_t): cgid.h's walk of the v1 mount and the
 * hierarchy's cgroup_mkdir events map them to paths as for cgroup2.
 */
#ifndef CGS_ATTRIBUTE_CGID_V1_H
#define CGS_ATTRIBUTE_CGID_V1_H

#include <stdbool.h>
#include <stddef.h>

#include "attribute/mounts.h"

struct cgsi_cgv1 {
	int hier;    /* hierarchy id */
	int ssid;    /* subsystem id of the controller, -1: named */
	bool kfunc;  /* the kernel has bpf_task_get_cgroup1 */
	unsigned how; /* CGSK_HOW_CSS or CGSK_HOW_KFUNC (exitcg_abi.h) */
};

/*
 * Decide for the v1 hierarchy of mount m (m->hier a controller or
 * "name=..."), reading proc_self_cgroup and proc_cgroups (NULL: the
 * real /proc files) and the kernel's BTF (btf_path NULL:
 * /sys/kernel/btf/vmlinux). Returns 0 and *p, or -errno and a sentence
 * in err saying why the kernel source cannot answer there.
 */
int cgsi_cgv1_plan(const struct cgsi_cg_mount *m, const char *proc_self_cgroup,
		   const char *proc_cgroups, const char *btf_path,
		   struct cgsi_cgv1 *p, char *err, size_t errlen);

/* The hierarchy id of `hier` ("v2": the "0::" line, or a v1 controller or
 * "name=..." in a line's list) in the /proc/<pid>/cgroup text at path;
 * -1 when absent or unreadable. */
int cgsi_cgv1_hier_id(const char *path, const char *hier);

/* The subsystem id of v1 controller `ctrl`: its line's index in
 * /proc/cgroups (the kernel lists the subsystems in id order) at path;
 * -1 when absent. *hier_out (if not NULL): the hierarchy it is on. */
int cgsi_cgv1_ssid(const char *path, const char *ctrl, int *hier_out);

#endif
