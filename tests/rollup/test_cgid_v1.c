/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel source's choice of a cgroup v1 hierarchy
 * (lib/attribute/cgid_v1.c), on /proc/self/cgroup and /proc/cgroups texts
 * laid out in a temp dir: the hierarchy id of a controller, of a named
 * hierarchy and of cgroup2; the subsystem id and the hierarchy a
 * controller is on; lines the kernel never writes; and the plan (css or
 * kfunc) against the running kernel's BTF.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "attribute/cgid_v1.h"
#include "support/files.h"

#ifdef CGS_HAVE_BPF
#include <linux/types.h>

#include "attribute/bpf/exitcg_abi.h"
#endif

/* A host like the CI machines: every controller on v1, cgroup2 beside. */
static const char self_cgroup[] =
	"13:misc:/\n"
	"12:pids:/user.slice/user-0.slice/session-1.scope\n"
	"11:name=systemd:/user.slice/user-0.slice/session-1.scope\n"
	"4:cpu,cpuacct:/user.slice\n"
	"3:memory:/user.slice/user-0.slice/session-1.scope\n"
	"0::/user.slice/user-0.slice/session-1.scope\n";

/* /proc/cgroups: subsystems in id order, a header line first. */
static const char proc_cgroups[] =
	"#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
	"cpuset\t2\t1\t1\n"
	"cpu\t4\t90\t1\n"
	"cpuacct\t4\t90\t1\n"
	"blkio\t5\t90\t1\n"
	"memory\t3\t120\t1\n"
	"devices\t6\t90\t1\n"
	"freezer\t7\t1\t1\n"
	"net_cls\t8\t1\t1\n"
	"perf_event\t9\t1\t1\n"
	"net_prio\t8\t1\t1\n"
	"hugetlb\t10\t1\t1\n"
	"pids\t12\t95\t1\n"
	"rdma\t0\t1\t1\n"
	"misc\t13\t1\t1\n";

struct fx {
	char root[64];
	char self[PATH_MAX];
	char cgroups[PATH_MAX];
};

static void put(const char *path, const char *txt)
{
	cgt_write_file(path, txt, strlen(txt));
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "/tmp/cgs-cgv1-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->self, sizeof(f->self), "%s/self_cgroup", f->root);
	snprintf(f->cgroups, sizeof(f->cgroups), "%s/cgroups", f->root);
	put(f->self, self_cgroup);
	put(f->cgroups, proc_cgroups);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	cgt_rm_rf(f->root);
	free(f);
	return 0;
}

/* Controllers sharing a mount, named hierarchies and cgroup2's line. */
static void test_hier_id(void **state)
{
	struct fx *f = *state;
	assert_int_equal(cgsi_cgv1_hier_id(f->self, "cpu"), 4);
	assert_int_equal(cgsi_cgv1_hier_id(f->self, "cpuacct"), 4);
	assert_int_equal(cgsi_cgv1_hier_id(f->self, "memory"), 3);
	assert_int_equal(cgsi_cgv1_hier_id(f->self, "name=systemd"), 11);
	assert_int_equal(cgsi_cgv1_hier_id(f->self, "v2"), 0);
	/* a name is matched whole, never as a prefix or a part */
	assert_int_equal(cgsi_cgv1_hier_id(f->self, "cpuset"), -1);
	assert_int_equal(cgsi_cgv1_hier_id(f->self, "systemd"), -1);
	assert_int_equal(cgsi_cgv1_hier_id(f->self, "mem"), -1);
	assert_int_equal(cgsi_cgv1_hier_id(f->self, "pid"), -1);
	char gone[PATH_MAX];
	snprintf(gone, sizeof(gone), "%s/absent", f->root);
	assert_int_equal(cgsi_cgv1_hier_id(gone, "cpu"), -1);
}

/* Lines the kernel does not write are skipped, the good ones still read;
 * a v1-only host (no "0::" line) has no cgroup2 id. */
static void test_hier_id_bad_lines(void **state)
{
	struct fx *f = *state;
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/bad", f->root);
	put(p, "\n"
	       "x:cpu:/\n"            /* no number */
	       "-3:cpu:/\n"           /* negative */
	       "99999999999:cpu:/\n"  /* beyond an int */
	       "7cpu:/\n"             /* no colon after the id */
	       "8:cpu\n"              /* no second colon */
	       "9:,,memory,:/a:b\n"   /* empty names around it */
	       "5:blkio:/\n");
	assert_int_equal(cgsi_cgv1_hier_id(p, "cpu"), -1);
	assert_int_equal(cgsi_cgv1_hier_id(p, "memory"), 9);
	assert_int_equal(cgsi_cgv1_hier_id(p, "blkio"), 5);
	assert_int_equal(cgsi_cgv1_hier_id(p, "v2"), -1);
	/* a line longer than any path is not the kernel's: skipped whole,
	 * and its rest (blanks, then what looks like a line) is not read as
	 * a line of its own */
	size_t n = PATH_MAX + 1000;
	char *big = malloc(n + 64);
	assert_non_null(big);
	int o = snprintf(big, n + 64, "6:devices:/");
	memset(big + o, ' ', n - (size_t)o);
	snprintf(big + n, 64, "1:freezer:/\n2:cpuset:/\n");
	put(p, big);
	free(big);
	assert_int_equal(cgsi_cgv1_hier_id(p, "devices"), -1);
	assert_int_equal(cgsi_cgv1_hier_id(p, "freezer"), -1);
	assert_int_equal(cgsi_cgv1_hier_id(p, "cpuset"), 2);
}

/* The subsystem id is the line's index after the header; the hierarchy
 * a controller is on comes with it. */
static void test_ssid(void **state)
{
	struct fx *f = *state;
	int hier = -7;
	assert_int_equal(cgsi_cgv1_ssid(f->cgroups, "cpuset", &hier), 0);
	assert_int_equal(hier, 2);
	assert_int_equal(cgsi_cgv1_ssid(f->cgroups, "cpu", &hier), 1);
	assert_int_equal(hier, 4);
	assert_int_equal(cgsi_cgv1_ssid(f->cgroups, "memory", &hier), 4);
	assert_int_equal(hier, 3);
	assert_int_equal(cgsi_cgv1_ssid(f->cgroups, "misc", NULL), 13);
	/* a controller not mounted anywhere (hierarchy 0) still has an id */
	assert_int_equal(cgsi_cgv1_ssid(f->cgroups, "rdma", &hier), 12);
	assert_int_equal(hier, 0);
	hier = -7;
	assert_int_equal(cgsi_cgv1_ssid(f->cgroups, "name=systemd", &hier), -1);
	assert_int_equal(cgsi_cgv1_ssid(f->cgroups, "cpuac", &hier), -1);
	assert_int_equal(hier, -7);
	char gone[PATH_MAX];
	snprintf(gone, sizeof(gone), "%s/absent", f->root);
	assert_int_equal(cgsi_cgv1_ssid(gone, "cpu", NULL), -1);
}

#ifdef CGS_HAVE_BPF
static void mount_of(struct cgsi_cg_mount *m, const char *hier)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->hier, sizeof(m->hier), "%s", hier);
	m->mounted = true;
	snprintf(m->mnt, sizeof(m->mnt), "/sys/fs/cgroup/%s", hier);
	snprintf(m->root, sizeof(m->root), "/");
}

/* The plan against the running kernel's BTF: a controller's hierarchy
 * reads its css; a named one needs the kfunc; a hierarchy absent from
 * the task's cgroup file is refused with a reason. */
static void test_plan(void **state)
{
	struct fx *f = *state;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		skip(); /* no kernel BTF here: the plan cannot be made */
	struct cgsi_cg_mount m;
	struct cgsi_cgv1 p;
	char err[256] = "";

	mount_of(&m, "memory");
	assert_int_equal(cgsi_cgv1_plan(&m, f->self, f->cgroups, NULL, &p,
					err, sizeof(err)), 0);
	assert_int_equal(p.hier, 3);
	assert_int_equal(p.ssid, 4);
	assert_int_equal(p.how, CGSK_HOW_CSS);

	mount_of(&m, "cpuacct"); /* shares hierarchy 4 with cpu */
	assert_int_equal(cgsi_cgv1_plan(&m, f->self, f->cgroups, NULL, &p,
					err, sizeof(err)), 0);
	assert_int_equal(p.hier, 4);
	assert_int_equal(p.ssid, 2);
	assert_int_equal(p.how, CGSK_HOW_CSS);

	mount_of(&m, "name=systemd");
	int rc = cgsi_cgv1_plan(&m, f->self, f->cgroups, NULL, &p, err,
				sizeof(err));
	assert_int_equal(p.hier, 11);
	assert_int_equal(p.ssid, -1);
	if (p.kfunc) {
		assert_int_equal(rc, 0);
		assert_int_equal(p.how, CGSK_HOW_KFUNC);
	} else {
		assert_int_equal(rc, -EOPNOTSUPP);
		assert_non_null(strstr(err, "bpf_task_get_cgroup1"));
	}

	/* /proc/cgroups says cpuset is on hierarchy 2, but the task's file
	 * has no hierarchy 2: refused, named in the reason */
	mount_of(&m, "cpuset");
	err[0] = '\0';
	assert_int_equal(cgsi_cgv1_plan(&m, f->self, f->cgroups, NULL, &p,
					err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cpuset"));

	/* a controller listed on another hierarchy than the task's line: no
	 * css to read there (the kfunc, where the kernel has it) */
	char other[PATH_MAX];
	snprintf(other, sizeof(other), "%s/cgroups-other", f->root);
	put(other, "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
		   "cpuset\t2\t1\t1\n"
		   "cpu\t4\t1\t1\n"
		   "cpuacct\t4\t1\t1\n"
		   "blkio\t5\t1\t1\n"
		   "memory\t30\t1\t1\n");
	mount_of(&m, "memory");
	rc = cgsi_cgv1_plan(&m, f->self, other, NULL, &p, err, sizeof(err));
	assert_int_equal(p.ssid, -1);
	assert_int_equal(rc, p.kfunc ? 0 : -EOPNOTSUPP);

	/* unreadable BTF: refused, and it says so */
	char nobtf[PATH_MAX];
	snprintf(nobtf, sizeof(nobtf), "%s/absent-btf", f->root);
	mount_of(&m, "memory");
	err[0] = '\0';
	assert_int_equal(cgsi_cgv1_plan(&m, f->self, f->cgroups, nobtf, &p,
					err, sizeof(err)), -EOPNOTSUPP);
	assert_non_null(strstr(err, "BTF"));
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hier_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hier_id_bad_lines, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ssid, setup, teardown),
#ifdef CGS_HAVE_BPF
		cmocka_unit_test_setup_teardown(test_plan, setup, teardown),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
