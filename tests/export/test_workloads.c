/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the workload view (cgs_workloads_*): a Kubernetes
 * container crashing in three successive cgroups (three container ids, as
 * restarts are, its CRI state laid out as containerd writes it) folds into
 * one workload whose signal count is 3, counted in the same update as its
 * cgroups (no hold: issue 40); a systemd unit is a workload of its own; a
 * container no source names is asked again at the next 3 updates, then
 * counted, not invented, and one whose state came late joins with all its
 * counts; a workload goes retire_after_ms after its last cgroup. Real
 * rollup, synthetic records (fake /proc).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/fakeproc.h"
#include "support/files.h"
#include "support/skip.h"

#define UID "0b5c1d6e-7f80-4a91-b2c3-d4e5f6a7b8c9"
#define UID_ "0b5c1d6e_7f80_4a91_b2c3_d4e5f6a7b8c9"
#define POD "/kubepods.slice/kubepods-burstable.slice/" \
	"kubepods-burstable-pod" UID_ ".slice"

static const char *const ids[] = {
	"1111111111111111111111111111111111111111111111111111111111111111",
	"2222222222222222222222222222222222222222222222222222222222222222",
	"3333333333333333333333333333333333333333333333333333333333333333",
	"4444444444444444444444444444444444444444444444444444444444444444",
};

struct fx {
	struct fakeproc *f;
	struct cgs_rollup *r;
	struct cgs_identity_src *id;
	struct cgs_workloads *w;
	uint64_t now;
};

/* containerd's CRI task state for container cid of the pod, named name. */
static void cri_state(struct fx *x, const char *cid, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/ctrd/io.containerd.runtime.v2.task/k8s.io/"
		 "%s/config.json", x->f->root, cid);
	char j[1024];
	int n = snprintf(j, sizeof(j), "{\"annotations\":{"
		"\"io.kubernetes.cri.container-type\":\"container\","
		"\"io.kubernetes.cri.container-name\":\"%s\","
		"\"io.kubernetes.cri.sandbox-name\":\"shop-7d9f\","
		"\"io.kubernetes.cri.sandbox-namespace\":\"prod\","
		"\"io.kubernetes.cri.sandbox-uid\":\"" UID "\","
		"\"io.kubernetes.cri.image-name\":\"shop:1.%c\"}}", name,
		cid[0]);
	assert_true(n > 0 && (size_t)n < sizeof(j));
	cgt_write_file(p, j, (size_t)n);
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	x->f = calloc(1, sizeof(*x->f));
	assert_non_null(x->f);
	assert_int_equal(fp_init(x->f), 0);
	x->r = fp_rollup(x->f, 1, 0);
	char c[PATH_MAX], l[PATH_MAX];
	snprintf(c, sizeof(c), "%s/ctrd", x->f->root);
	snprintf(l, sizeof(l), "%s/log", x->f->root);
	struct cgs_identity_opts io = { .sz = sizeof(io),
		.containerd_state = c, .kubelet_logs = l,
		.crio_storage = l, .docker_root = l };
	assert_int_equal(cgs_identity_src_new(&x->id, &io), 0);
	struct cgs_workloads_opts wo = { .sz = sizeof(wo), .identity = x->id,
		.retire_after_ms = 10000, .hold_ms = 5000 };
	assert_int_equal(cgs_workloads_new(&x->w, &wo), 0);
	x->now = 1000;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	cgs_workloads_free(x->w);
	cgs_identity_src_free(x->id);
	cgs_rollup_free(x->r);
	fp_fini(x->f);
	free(x->f);
	free(x);
	return 0;
}

static void exit_in(struct fx *x, const char *path, uint32_t status)
{
	CGS_OPTS(cgs_record, r);
	r.kind = CGS_KIND_PROCESS;
	r.version = 16;
	r.fields = CGS_HAS_DELAY | CGS_HAS_BASIC;
	r.pid = r.tgid = 4242;
	r.ppid = 1;
	r.utime_us = 1000;
	r.exit_status = status;
	fp_mkdir(x->f, path);
	assert_int_equal(cgt_add_path(x->r, 0, &r, path), 0);
}

/* A snapshot folded into the view at x->now. */
static void update(struct fx *x)
{
	struct cgs_snapshot_opts o = { .sz = sizeof(o) };
	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(x->r, &o, &s), 0);
	assert_int_equal(cgs_workloads_update(x->w, s, x->now), 0);
	cgs_snapshot_free(s);
}

/* The workload of that kind and container (or unit); fails if absent. */
static struct cgs_workload_view find(struct fx *x, enum cgs_workload_kind k,
				     const char *name)
{
	struct cgs_workload_view v = { .sz = sizeof(v) };
	for (size_t i = 0; i < cgs_workloads_count(x->w); i++) {
		assert_int_equal(cgs_workloads_get(x->w, i, &v), 0);
		const char *n = k == CGS_WLK_UNIT ? v.unit : v.container;
		if (v.kind == k && !strcmp(n, name))
			return v;
	}
	fail_msg("no workload %s", name);
	return v;
}

/* The rollup's cgroups retired, gone from the snapshots. */
static void retire_all(struct fx *x)
{
	update(x); /* the removal seen */
	x->f->now_ms += 3000; /* the rollup's grace (2 s) */
	assert_true(cgs_rollup_retire_removed(x->r) >= 0);
	update(x);
	x->f->now_ms += 3000;
	assert_true(cgs_rollup_retire_removed(x->r) >= 0);
}

static bool in_snapshot(struct fx *x, const char *path)
{
	struct cgs_snapshot_opts o = { .sz = sizeof(o) };
	struct cgs_snapshot *s = NULL;
	bool found = false;
	assert_int_equal(cgs_rollup_snapshot(x->r, &o, &s), 0);
	for (size_t i = 0; i < cgs_snapshot_count(s); i++)
		found |= !strcmp(cgs_snapshot_get_cgroup(s, i)->path, path);
	cgs_snapshot_free(s);
	return found;
}

static void container_path(char *p, size_t n, int i)
{
	snprintf(p, n, POD "/cri-containerd-%s.scope", ids[i]);
}

static void crash_loop(void **state)
{
	struct fx *x = *state;
	char p[PATH_MAX];
	for (int i = 0; i < 3; i++) { /* three restarts, three cgroups */
		cri_state(x, ids[i], "web");
		container_path(p, sizeof(p), i);
		exit_in(x, p, SIGSEGV); /* killed by SIGSEGV */
		update(x);
		/* the update that shows the cgroup's crash shows the
		 * workload's: no hold until a scrape served it */
		struct cgs_workload_view v = find(x, CGS_WLK_CONTAINER, "web");
		assert_int_equal(v.held, 0);
		assert_string_equal(v.k8s_namespace, "prod");
		assert_string_equal(v.pod, "shop-7d9f");
		assert_int_equal(v.total->exit_signaled, i + 1);
		assert_int_equal(v.total->processes, i + 1);
		assert_int_equal(v.total->utime_us, 1000 * (i + 1));
		assert_non_null(v.signals);
		assert_int_equal(v.signals[SIGSEGV], i + 1);
		assert_int_equal(v.cgroups_seen, i + 1);
		struct cgs_workload_view f = { .sz = sizeof(f) };
		assert_int_equal(cgs_workloads_find(x->w, p, &f), 0);
		assert_ptr_equal(f.total, v.total);
		/* the pod's own cgroup: named by its container (its
		 * CRI annotations), a workload of its own */
		if (i > 0) { /* looked up before the container at first */
			assert_int_equal(cgs_workloads_find(x->w, POD, &f), 0);
			assert_int_equal(f.kind, CGS_WLK_POD);
			assert_string_equal(f.pod, "shop-7d9f");
		}
		fp_rmdir(x->f, p); /* the container's cgroup goes */
		x->now += 1000;
		retire_all(x);
		assert_false(in_snapshot(x, p));
	}
	/* the same container name in another pod's cgroup is another
	 * workload only if the pod differs: here it is the same pod (and
	 * the pod's own cgroup is the pod's workload) */
	assert_int_equal(cgs_workloads_count(x->w), 2);
}

static void units_and_unnamed(void **state)
{
	struct fx *x = *state;
	char p[PATH_MAX];
	exit_in(x, "/system.slice/cron.service", 0);
	exit_in(x, "/system.slice/cron.service/sub", 256);
	container_path(p, sizeof(p), 3); /* no state: came and went */
	exit_in(x, p, 0);
	update(x);
	struct cgs_workload_view v = find(x, CGS_WLK_UNIT, "cron.service");
	assert_int_equal(v.total->processes, 2);
	assert_int_equal(v.total->exit_nonzero, 1);
	assert_int_equal(v.cgroups_seen, 2);
	struct cgs_workloads_counts c = { .sz = sizeof(c) };
	/* asked again at the next three updates, then left out */
	for (int k = 0; k < 3; k++) {
		assert_int_equal(cgs_workloads_get_counts(x->w, &c), 0);
		assert_int_equal(c.unnamed_cgroups, 0);
		update(x);
	}
	assert_int_equal(cgs_workloads_get_counts(x->w, &c), 0);
	assert_int_equal(c.unnamed_cgroups, 2); /* the container, its pod */
	assert_int_equal(c.workloads, 1);
	update(x); /* counted once */
	assert_int_equal(cgs_workloads_get_counts(x->w, &c), 0);
	assert_int_equal(c.unnamed_cgroups, 2);
}

/* A no_delta snapshot first (the collector's before its first interval)
 * is undone at the next: the cgroup it showed is not counted twice (the
 * next one's deltas include it); after others one is not folded. */
static void no_delta_first(void **state)
{
	struct fx *x = *state;
	struct cgs_snapshot_opts o = { .sz = sizeof(o), .no_delta = true };
	struct cgs_snapshot *s = NULL;
	exit_in(x, "/system.slice/p.service", 0);
	assert_int_equal(cgs_rollup_snapshot(x->r, &o, &s), 0);
	assert_int_equal(cgs_snapshot_get_totals(s)->no_delta, 1);
	assert_int_equal(cgs_workloads_update(x->w, s, x->now), 0);
	cgs_snapshot_free(s);
	assert_int_equal(find(x, CGS_WLK_UNIT, "p.service").total->processes,
			 1);
	exit_in(x, "/system.slice/p.service", 0);
	update(x);
	struct cgs_workload_view v = find(x, CGS_WLK_UNIT, "p.service");
	assert_int_equal(v.total->processes, 2);
	assert_int_equal(v.cgroups_seen, 1);
	exit_in(x, "/system.slice/p.service", 0);
	assert_int_equal(cgs_rollup_snapshot(x->r, &o, &s), 0);
	assert_int_equal(cgs_workloads_update(x->w, s, x->now), 0);
	cgs_snapshot_free(s);
	update(x);
	v = find(x, CGS_WLK_UNIT, "p.service");
	assert_int_equal(v.total->processes, 3);
}

/* A container whose runtime state was written after its first exits were
 * in a snapshot: named at the next update, with every count it has. */
static void named_late(void **state)
{
	struct fx *x = *state;
	char p[PATH_MAX];
	container_path(p, sizeof(p), 1);
	exit_in(x, p, SIGSEGV);
	update(x);
	assert_int_equal(cgs_workloads_count(x->w), 0);
	exit_in(x, p, 0);
	cri_state(x, ids[1], "late");
	update(x);
	struct cgs_workload_view v = find(x, CGS_WLK_CONTAINER, "late");
	assert_int_equal(v.total->processes, 2);
	assert_int_equal(v.total->exit_signaled, 1);
	assert_int_equal(v.signals[SIGSEGV], 1);
	assert_int_equal(v.cgroups_seen, 1);
	update(x); /* nothing added twice */
	v = find(x, CGS_WLK_CONTAINER, "late");
	assert_int_equal(v.total->processes, 2);
	struct cgs_workloads_counts c = { .sz = sizeof(c) };
	assert_int_equal(cgs_workloads_get_counts(x->w, &c), 0);
	assert_int_equal(c.unnamed_cgroups, 0);
}

static void retirement(void **state)
{
	struct fx *x = *state;
	exit_in(x, "/system.slice/a.service", 0);
	update(x);
	assert_int_equal(cgs_workloads_count(x->w), 1);
	fp_rmdir(x->f, "/system.slice/a.service");
	retire_all(x);
	assert_false(in_snapshot(x, "/system.slice/a.service"));
	update(x);
	/* kept, with its last counts, until retire_after_ms (10 s) */
	x->now += 9999;
	update(x);
	struct cgs_workload_view v = find(x, CGS_WLK_UNIT, "a.service");
	assert_int_equal(v.cgroups_live, 0);
	assert_int_equal(v.total->processes, 1);
	x->now += 1;
	exit_in(x, "/system.slice/b.service", 0);
	update(x);
	struct cgs_workloads_counts c = { .sz = sizeof(c) };
	assert_int_equal(cgs_workloads_get_counts(x->w, &c), 0);
	assert_int_equal(c.retired, 1);
	assert_int_equal(cgs_workloads_count(x->w), 1);
	find(x, CGS_WLK_UNIT, "b.service");
}

static void api(void **state)
{
	struct fx *x = *state;
	struct cgs_workloads *w;
	struct cgs_workloads_opts o = { .sz = 1 };
	assert_int_equal(cgs_workloads_new(&w, &o), -EINVAL);
	assert_int_equal(cgs_workloads_new(NULL, NULL), -EINVAL);
	assert_int_equal(cgs_workloads_update(x->w, NULL, 0), -EINVAL);
	struct cgs_workload_view v = { .sz = sizeof(v) };
	assert_int_equal(cgs_workloads_get(x->w, 0, &v), -EINVAL);
	assert_int_equal(cgs_workloads_count(NULL), 0);
	assert_string_equal(cgs_workload_kind_name(CGS_WLK_POD), "pod");
	assert_string_equal(cgs_workload_kind_name(99), "unknown");
	cgs_workloads_free(NULL);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		T(crash_loop),
		T(units_and_unnamed),
		T(named_late),
		T(no_delta_first),
		T(retirement),
		T(api),
	};
	return CGT_RUN(argc, argv, tests);
}
