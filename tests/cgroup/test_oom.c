/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OOM kills per cgroup, against ground truth: a child limited by a cgroup
 * v1 memory cgroup (memory.limit_in_bytes 32 MiB, memsw too where swap is
 * accounted, swappiness 0) touches memory until the OOM killer kills it
 * (SIGKILL); another child of the same cgroup killed by a plain kill -9
 * must not count as an OOM kill. Each child first runs a thread to its
 * end, on one CPU (see seen_alive(): how the /proc source can know a
 * process on a v1 hierarchy, whose zombies show the root cgroup).
 *
 *  kernel     the kernel source (exact, from the victim's oom_mm): the
 *             child is in a cgroup2 cgroup for the attribution and in the
 *             v1 memory one of the same name for the limit; oom_kills 1
 *             after the OOM kill and still 1 after the kill -9, SIGKILL
 *             1 then 2, totals.oom_source CGS_OOM_KERNEL.
 *  proc_new   the /proc source on the "memory" hierarchy (the cgroup's
 *             own memory.oom_control oom_kill, CGS_OOM_CGROUP): the
 *             rollup is made before the cgroup, whose baseline is then 0.
 *  proc_old   the same where the cgroup pre-exists with an OOM kill made
 *             before the rollup: the baseline excludes it.
 *
 * Skips (77) without taskstats, CAP_NET_ADMIN, cgroup2 (kernel), a
 * mounted v1 memory controller, the kernel source (kernel), or where the
 * OOM killer cannot be provoked, saying why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/cgtest.h"
#include "support/pipeline.h"
#include "support/skip.h"

#define LIMIT "33554432" /* 32 MiB */
#define TOUCH_MAX_MB 1024
#define EXIT_SURVIVED 3

static int ready[2], cont[2];

static void *nothing(void *a)
{
	return a;
}

/*
 * A thread that exits first: its record makes the /proc source read the
 * process's cgroup while it is alive (on a v1 hierarchy the kernel shows
 * a zombie, or any exiting task, in the root cgroup); pinned to one CPU
 * so that its exit record reaches the same listener shard, whose cache
 * has the answer. Then a byte on ready, and on with a byte on cont.
 */
static void seen_alive(void)
{
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	cpu_set_t cpus;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &cpus)) {
				CPU_ZERO(&cpus);
				CPU_SET(c, &cpus);
				sched_setaffinity(0, sizeof(cpus), &cpus);
				break;
			}
	pthread_t t;
	char c;
	if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
		_exit(2);
	if (write(ready[1], "r", 1) != 1 || read(cont[0], &c, 1) != 1)
		_exit(6);
}

/* Touches memory until killed; exits EXIT_SURVIVED if it never is. */
static void hog(void)
{
	seen_alive();
	for (int i = 0; i < TOUCH_MAX_MB; i++) {
		char *p = malloc(1u << 20);
		if (!p)
			_exit(4);
		memset(p, i | 1, 1u << 20);
	}
	_exit(EXIT_SURVIVED);
}

static void idler(void)
{
	seen_alive();
	for (;;)
		pause();
}

static const char *memory_mount(void)
{
	static char m[4096];
	const char *v1 = cgt_cgroup1_mount("memory");
	if (!v1)
		cgt_skip("no cgroup v1 memory controller mounted");
	snprintf(m, sizeof(m), "%s", v1);
	return m;
}

/* A v1 memory cgroup `rel` limited to LIMIT, without swap. */
static void memory_cgroup(const char *rel, char *dir, size_t len)
{
	assert_int_equal(cgt_mkdir_at(memory_mount(), rel, dir, len), 0);
	assert_int_equal(cgt_write(dir, "memory.swappiness", "0"), 0);
	assert_int_equal(cgt_write(dir, "memory.limit_in_bytes", LIMIT), 0);
	char p[4700];
	snprintf(p, sizeof(p), "%s/memory.memsw.limit_in_bytes", dir);
	if (access(p, F_OK) == 0) /* swap accounted: no swapping out either */
		assert_int_equal(cgt_write(dir, "memory.memsw.limit_in_bytes",
					   LIMIT), 0);
}

/*
 * Start fn held, in dir and (if not NULL) dir2 too, release it; once its
 * first thread is gone, with a pipeline pl, account until rel has `tasks`
 * records (that thread's included), then let it go on.
 */
static pid_t start(void (*fn)(void), const char *dir, const char *dir2,
		   struct cgt_pipeline *pl, const char *rel, uint64_t tasks)
{
	int go[2];
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(cont), 0);
	pid_t p = cgt_fork_held(go, dir, fn);
	assert_true(p > 0);
	if (dir2)
		assert_int_equal(cgt_move(dir2, p), 0);
	close(go[0]);
	close(ready[1]);
	close(cont[0]);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	if (pl)
		assert_int_equal(cgt_pump_until(pl, rel, tasks, 10000), 0);
	assert_int_equal(write(cont[1], "c", 1), 1);
	close(cont[1]);
	return p;
}

/* The hog's fate, left a zombie: skips unless the OOM killer killed it. */
static void hog_killed(pid_t p)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)p, &si, WEXITED | WNOWAIT), 0);
	if (si.si_code == CLD_EXITED && si.si_status == EXIT_SURVIVED) {
		waitpid(p, NULL, 0);
		cgt_skip("touched %d MiB under a %s byte limit and was not "
			 "OOM-killed", TOUCH_MAX_MB, LIMIT);
	}
	if (si.si_code != CLD_KILLED || si.si_status != SIGKILL)
		fail_msg("hog: si_code %d status %d, want killed by SIGKILL",
			 si.si_code, si.si_status);
}

/* An idler killed by a plain kill -9, left a zombie. */
static void kill9(pid_t p)
{
	assert_int_equal(kill(p, SIGKILL), 0);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)p, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(si.si_code, CLD_KILLED);
	assert_int_equal(si.si_status, SIGKILL);
}

static uint64_t oom_kill_counter(const char *dir)
{
	char p[4700], buf[512];
	snprintf(p, sizeof(p), "%s/memory.oom_control", dir);
	FILE *f = fopen(p, "re");
	assert_non_null(f);
	unsigned long long v = UINT64_MAX;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "oom_kill %llu", &v) == 1)
			break;
	fclose(f);
	assert_true(v != UINT64_MAX);
	return v;
}

/* Account until rel has the records of `procs` processes (each a thread
 * and itself); then its self counters must be exactly these. */
static void expect(struct cgt_pipeline *pl, const char *rel, uint64_t procs,
		   uint64_t oom, uint64_t sigkill, enum cgs_oom_source src)
{
	uint64_t tasks = 2 * procs;
	assert_int_equal(cgt_pump_until(pl, rel, tasks, 10000), 0);
	assert_true(cgt_pipeline_pump(pl, 200) >= 0);
	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(pl->r, NULL, &s), 0);
	ssize_t i = cgt_snapshot_find(s, rel);
	assert_true(i >= 0);
	const struct cgs_cgroup_stats *c = cgs_snapshot_get_cgroup(s, (size_t)i);
	struct cgs_signal_counts sc = { .sz = sizeof(sc) };
	assert_int_equal(cgs_snapshot_get_signals(s, (size_t)i, CGS_SET_SELF, &sc),
			 0);
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	printf("%s: tasks %llu processes %llu signaled %llu SIGKILL %llu "
	       "oom_kills %llu; oom_source %llu, oom_unreadable %llu\n", rel,
	       (unsigned long long)c->self->tasks,
	       (unsigned long long)c->self->processes,
	       (unsigned long long)c->self->exit_signaled,
	       (unsigned long long)sc.n[SIGKILL],
	       (unsigned long long)c->self->oom_kills,
	       (unsigned long long)t->oom_source,
	       (unsigned long long)t->oom_unreadable);
	assert_int_equal(t->oom_source, src);
	assert_int_equal(t->oom_unreadable, 0);
	assert_int_equal(c->self->tasks, tasks);
	assert_int_equal(c->self->processes, procs);
	assert_int_equal(c->inferred, 0);
	assert_int_equal(c->self->exit_signaled, sigkill);
	assert_int_equal(sc.n[SIGKILL], sigkill);
	assert_int_equal(c->self->oom_kills, oom);
	assert_int_equal(c->subtree->oom_kills, oom);
	cgs_snapshot_free(s);
}

/* The hog OOM-killed, then an idler killed by kill -9, both in d1 (and
 * d2): one OOM kill, two SIGKILLs. */
static void oom_then_kill9(struct cgt_pipeline *pl, const char *rel,
			   const char *d1, const char *d2,
			   enum cgs_oom_source src)
{
	pid_t h = start(hog, d1, d2, pl, rel, 1);
	hog_killed(h);
	expect(pl, rel, 1, 1, 1, src);
	pid_t k = start(idler, d1, d2, pl, rel, 3);
	kill9(k);
	expect(pl, rel, 2, 1, 2, src);
	assert_int_equal(waitpid(h, NULL, 0), h);
	assert_int_equal(waitpid(k, NULL, 0), k);
}

static void test_oom_kernel(void **state)
{
	(void)state;
	memory_mount();
	if (!cgt_cgroup2_mount())
		cgt_skip("no cgroup2 mount");
	struct cgt_pipeline pl;
	int rc = cgt_pipeline_open(&pl, 16u << 20, CGS_ATTRIBUTION_KERNEL, 0,
				   0);
	if (rc == 77)
		cgt_skip("no kernel source pipeline (see above)");
	assert_int_equal(rc, 0);
	char rel[128], v2[4608], v1[4608];
	snprintf(rel, sizeof(rel), "/cgs-oom-%d-kernel", (int)getpid());
	assert_int_equal(cgt_mkdir(rel, v2, sizeof(v2)), 0);
	memory_cgroup(rel, v1, sizeof(v1));

	oom_then_kill9(&pl, rel, v2, v1, CGS_OOM_KERNEL);
	cgt_pipeline_close(&pl);
	cgt_cleanup();
}

static void open_memory_pipeline(struct cgt_pipeline *pl)
{
	struct cgs_rollup_opts ro = {
		.sz = sizeof(ro), .attribution = CGS_ATTRIBUTION_PROC,
		.hierarchy = "memory",
		/* what it read of a live process holds until its exit */
		.revalidate_ms = 60000,
	};
	CGS_OPTS(cgs_listener_opts, lo, .rcvbuf = 16u << 20);
	int rc = cgt_pipeline_open_opts(pl, &lo, &ro);
	if (rc == 77)
		cgt_skip("no pipeline (see above)");
	assert_int_equal(rc, 0);
	assert_string_equal(cgs_rollup_hierarchy(pl->r), "memory");
}

static void test_oom_proc_new(void **state)
{
	(void)state;
	memory_mount();
	struct cgt_pipeline pl;
	open_memory_pipeline(&pl);
	char rel[128], v1[4608];
	snprintf(rel, sizeof(rel), "/cgs-oom-%d-new", (int)getpid());
	memory_cgroup(rel, v1, sizeof(v1)); /* after the rollup */

	oom_then_kill9(&pl, rel, v1, NULL, CGS_OOM_CGROUP);
	assert_int_equal(oom_kill_counter(v1), 1);
	cgt_pipeline_close(&pl);
	cgt_cleanup();
}

static void test_oom_proc_old(void **state)
{
	(void)state;
	memory_mount();
	char rel[128], v1[4608];
	snprintf(rel, sizeof(rel), "/cgs-oom-%d-old", (int)getpid());
	memory_cgroup(rel, v1, sizeof(v1));
	/* an OOM kill before the rollup: in its baseline, not counted */
	pid_t h0 = start(hog, v1, NULL, NULL, NULL, 0);
	hog_killed(h0);
	assert_int_equal(waitpid(h0, NULL, 0), h0);
	assert_int_equal(oom_kill_counter(v1), 1);

	struct cgt_pipeline pl;
	open_memory_pipeline(&pl);
	oom_then_kill9(&pl, rel, v1, NULL, CGS_OOM_CGROUP);
	assert_int_equal(oom_kill_counter(v1), 2);
	cgt_pipeline_close(&pl);
	cgt_cleanup();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_kernel),
		cmocka_unit_test(test_oom_proc_new),
		cmocka_unit_test(test_oom_proc_old),
	};
	return CGT_RUN(argc, argv, tests);
}
