/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Exit outcomes per cgroup, against ground truth: in a scratch cgroup2
 * cgroup (<cgroup2>/cgs-outcomes-<pid>-<mode>/w), children that exit(0)
 * x3, exit(1) x2, exit(42), die by SIGTERM x2, SIGKILL, SIGUSR1 (all sent
 * by the parent), SIGSEGV (a real fault, no core), a 4-thread process
 * killed by SIGKILL (one process exit), and abort() with a core dump (to
 * a pipe that discards it: core_pattern is changed for the while and
 * restored, also at exit and on SIGINT/SIGTERM). Each child's wait status
 * is checked first (waitid WNOWAIT: the children stay zombies until their
 * records are accounted, so /proc/<pid>/cgroup still answers), then the
 * leaf's self counters and its parent's subtree must be exactly:
 * 13 processes (16 task records), 3 clean, 3 non-zero, 7 signaled, 1 core
 * dumped, SIGTERM 2, SIGKILL 2, SIGSEGV 1, SIGUSR1 1, SIGABRT 1, no OOM
 * kill.
 *
 * Cases: kernel (the kernel attribution source) and proc (the /proc
 * fallback; children are moved into the cgroup while held, before they
 * run). Skips (77) without taskstats, CAP_NET_ADMIN, cgroup2, or (kernel)
 * where the kernel source cannot load, saying why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/cgtest.h"
#include "support/clock.h"
#include "support/pipeline.h"
#include "support/skip.h"

#define CORE_PATTERN "/proc/sys/kernel/core_pattern"
#define DISCARD_CORE "|/bin/dd of=/dev/null"
#define MT_THREADS 4 /* the main thread and 3 more */

enum what {
	W_EXIT,  /* _exit(arg) */
	W_PAUSE, /* ready, then waits for the parent's signal arg */
	W_SEGV,  /* a write to a PROT_NONE page, not dumpable: no core */
	W_MT,    /* MT_THREADS threads, ready, then the parent's signal arg */
	W_ABORT, /* RLIMIT_CORE unlimited, abort(): core dumped */
};

static const struct plan {
	enum what w;
	int arg;
} plan[] = {
	{ W_EXIT, 0 },        { W_EXIT, 0 },        { W_EXIT, 0 },
	{ W_EXIT, 1 },        { W_EXIT, 1 },        { W_EXIT, 42 },
	{ W_PAUSE, SIGTERM }, { W_PAUSE, SIGTERM }, { W_PAUSE, SIGKILL },
	{ W_PAUSE, SIGUSR1 }, { W_SEGV, 0 },        { W_MT, SIGKILL },
	{ W_ABORT, 0 },
};
#define NKIDS (sizeof(plan) / sizeof(plan[0]))
#define WANT_TASKS (NKIDS + MT_THREADS - 1)

static const struct plan *cur; /* the child's entry, set before its fork */
static int ready[2];           /* a byte from each W_PAUSE and W_MT child */

static void *idle_thread(void *a)
{
	(void)a;
	for (;;)
		pause();
	return NULL;
}

static void say_ready(void)
{
	if (write(ready[1], "r", 1) != 1)
		_exit(6);
}

static void child(void)
{
	/* the test's handlers (cmocka's, cgtest's) are not the child's */
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	switch (cur->w) {
	case W_EXIT:
		_exit(cur->arg);
	case W_PAUSE:
		say_ready();
		for (;;)
			pause();
	case W_SEGV: {
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		volatile int *p = mmap(NULL, 4096, PROT_NONE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(7);
		*p = 1;
		_exit(8);
	}
	case W_MT:
		for (int i = 1; i < MT_THREADS; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, idle_thread, NULL))
				_exit(3);
		}
		say_ready();
		for (;;)
			pause();
	case W_ABORT: {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
		if (setrlimit(RLIMIT_CORE, &rl) < 0)
			_exit(9);
		abort();
	}
	}
	_exit(10);
}

/* Whether kid i's wait status is what its plan says; prints it if not. */
static bool status_ok(size_t i, const siginfo_t *si)
{
	const struct plan *p = &plan[i];
	int code = CLD_KILLED, st = p->arg;
	if (p->w == W_EXIT)
		code = CLD_EXITED;
	else if (p->w == W_SEGV)
		st = SIGSEGV;
	else if (p->w == W_ABORT)
		code = CLD_DUMPED, st = SIGABRT;
	if (si->si_code == code && si->si_status == st)
		return true;
	fprintf(stderr, "child %zu (pid %d): si_code %d status %d, want "
		"si_code %d status %d\n", i, (int)si->si_pid, si->si_code,
		si->si_status, code, st);
	return false;
}

static void assert_outcomes(const struct cgs_snapshot *s, size_t i,
			    enum cgs_counter_set set,
			    const struct cgs_counters *c)
{
	const struct cgs_cgroup_stats *g = cgs_snapshot_get_cgroup(s, i);
	printf("%s (%s): tasks %llu processes %llu clean %llu nonzero %llu "
	       "signaled %llu core %llu oom %llu inferred %llu\n", g->path,
	       set == CGS_SET_SELF ? "self" : "subtree",
	       (unsigned long long)c->tasks, (unsigned long long)c->processes,
	       (unsigned long long)c->exit_clean,
	       (unsigned long long)c->exit_nonzero,
	       (unsigned long long)c->exit_signaled,
	       (unsigned long long)c->exit_core_dumped,
	       (unsigned long long)c->oom_kills,
	       (unsigned long long)g->inferred);
	assert_int_equal(c->tasks, WANT_TASKS);
	assert_int_equal(c->processes, NKIDS);
	assert_int_equal(c->exit_clean, 3);
	assert_int_equal(c->exit_nonzero, 3);
	assert_int_equal(c->exit_signaled, 7);
	assert_int_equal(c->exit_core_dumped, 1);
	assert_int_equal(c->oom_kills, 0);

	struct cgs_signal_counts sc = { .sz = sizeof(sc) };
	assert_int_equal(cgs_snapshot_get_signals(s, i, set, &sc), 0);
	static const struct {
		const char *name;
		uint64_t n;
	} want[] = { { "SIGTERM", 2 }, { "SIGKILL", 2 }, { "SIGSEGV", 1 },
		     { "SIGUSR1", 1 }, { "SIGABRT", 1 } };
	uint64_t sum = 0, named[5] = { 0 };
	for (int sig = 1; sig < CGS_SIGNAL_SLOTS; sig++) {
		if (!sc.n[sig])
			continue;
		const char *name = cgs_signal_name(sig);
		assert_non_null(name);
		printf("  %s %llu\n", name, (unsigned long long)sc.n[sig]);
		sum += sc.n[sig];
		size_t k = 0;
		while (k < 5 && strcmp(want[k].name, name))
			k++;
		if (k == 5)
			fail_msg("%s: %llu exits by %s, want none", g->path,
				 (unsigned long long)sc.n[sig], name);
		named[k] = sc.n[sig];
	}
	for (size_t k = 0; k < 5; k++)
		if (named[k] != want[k].n)
			fail_msg("%s: %s %llu, want %llu", g->path,
				 want[k].name, (unsigned long long)named[k],
				 (unsigned long long)want[k].n);
	assert_int_equal(sum, c->exit_signaled);
}

static void run_outcomes(enum cgs_attribution a, const char *mode)
{
	cgt_require_cgroup2();
	if (access("/bin/dd", X_OK) < 0)
		cgt_skip("no /bin/dd to discard a core dump");
	struct cgt_pipeline pl;
	int rc = cgt_pipeline_open(&pl, 16u << 20, a, 0, 0);
	if (rc == 77)
		cgt_skip("no pipeline for mode %s (see above)", mode);
	assert_int_equal(rc, 0);

	char base[128], leaf[160], bdir[4608], ldir[4608];
	snprintf(base, sizeof(base), "/cgs-outcomes-%d-%s", (int)getpid(),
		 mode);
	snprintf(leaf, sizeof(leaf), "%s/w", base);
	assert_int_equal(cgt_mkdir(base, bdir, sizeof(bdir)), 0);
	assert_int_equal(cgt_mkdir(leaf, ldir, sizeof(ldir)), 0);
	assert_int_equal(cgt_set_file(CORE_PATTERN, DISCARD_CORE), 0);

	/* all forked from this single-threaded process, held, moved */
	int go[2];
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid_t pid[NKIDS];
	size_t nready = 0;
	for (size_t i = 0; i < NKIDS; i++) {
		cur = &plan[i];
		pid[i] = cgt_fork_held(go, ldir, child);
		assert_true(pid[i] > 0);
		nready += plan[i].w == W_PAUSE || plan[i].w == W_MT;
	}
	close(go[0]);
	close(ready[1]);
	char bytes[NKIDS];
	memset(bytes, 'g', sizeof(bytes));
	assert_int_equal(write(go[1], bytes, NKIDS), (ssize_t)NKIDS);
	close(go[1]);
	for (size_t k = 0; k < nready; k++)
		assert_int_equal(read(ready[0], bytes, 1), 1);
	close(ready[0]);
	for (size_t i = 0; i < NKIDS; i++)
		if (plan[i].w == W_PAUSE || plan[i].w == W_MT)
			assert_int_equal(kill(pid[i], plan[i].arg), 0);

	/* the ground truth, the children left zombies */
	bool all_ok = true;
	for (size_t i = 0; i < NKIDS; i++) {
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		assert_int_equal(waitid(P_PID, (id_t)pid[i], &si,
					WEXITED | WNOWAIT), 0);
		all_ok &= status_ok(i, &si);
	}
	cgt_restore_files();
	assert_true(all_ok);

	assert_int_equal(cgt_pump_until(&pl, leaf, WANT_TASKS, 10000), 0);
	assert_true(cgt_pipeline_pump(&pl, 300) >= 0); /* anything extra */
	for (size_t i = 0; i < NKIDS; i++)
		assert_int_equal(waitpid(pid[i], NULL, 0), pid[i]);

	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(pl.r, NULL, &s), 0);
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	printf("mode %s: records %llu, via kernel %llu, unmatched %llu, "
	       "via proc %llu, inferred %llu, oom_source %llu\n", mode,
	       (unsigned long long)t->records,
	       (unsigned long long)t->via_kernel,
	       (unsigned long long)t->kernel_unmatched,
	       (unsigned long long)t->via_proc,
	       (unsigned long long)t->inferred,
	       (unsigned long long)t->oom_source);
	if (a == CGS_ATTRIBUTION_KERNEL)
		assert_int_equal(t->oom_source, CGS_OOM_KERNEL);
	ssize_t li = cgt_snapshot_find(s, leaf), bi = cgt_snapshot_find(s, base);
	assert_true(li >= 0);
	assert_true(bi >= 0);
	const struct cgs_cgroup_stats *lc = cgs_snapshot_get_cgroup(s, (size_t)li);
	const struct cgs_cgroup_stats *bc = cgs_snapshot_get_cgroup(s, (size_t)bi);
	/* seen in their cgroup: nothing inferred */
	assert_int_equal(lc->inferred, 0);
	assert_outcomes(s, (size_t)li, CGS_SET_SELF, lc->self);
	assert_int_equal(bc->self->tasks, 0);
	assert_outcomes(s, (size_t)bi, CGS_SET_SUBTREE, bc->subtree);
	cgs_snapshot_free(s);
	cgt_pipeline_close(&pl);
	cgt_cleanup();
}

static void test_outcomes_kernel(void **state)
{
	(void)state;
	run_outcomes(CGS_ATTRIBUTION_KERNEL, "kernel");
}

static void test_outcomes_proc(void **state)
{
	(void)state;
	run_outcomes(CGS_ATTRIBUTION_PROC, "proc");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcomes_kernel),
		cmocka_unit_test(test_outcomes_proc),
	};
	return CGT_RUN(argc, argv, tests);
}
