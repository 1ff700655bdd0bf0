/*
 * /proc/<n>/cgroup also answers for thread ids. When a reaped process's pid
 * is reused by another process's thread, attribution must not read that
 * thread's cgroup as the process's: only thread-group leaders count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attribute/proc_cgroup.h"
#include "support/skip.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t tid;

static void *thread_fn(void *arg)
{
	(void)arg;
	tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(&mu); /* held by main until checked */
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void test_threads_are_not_processes(void **state)
{
	(void)state;
	/* without pidfd_open (kernel < 5.3, or valgrind 3.19 which does not
	 * know the syscall) the library cannot tell a thread from a leader
	 * and accepts the read: nothing to check */
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0u);
	if (pfd < 0 && errno == ENOSYS)
		cgt_skip("pidfd_open: ENOSYS (kernel < 5.3 or valgrind): "
			 "leadership cannot be checked");
	if (pfd >= 0)
		close(pfd);
	char scratch[4096], path[4096];
	bool del, exited = true;
	int n = cgsi_proc_cgroup_read("/proc", (uint32_t)getpid(), "v2",
				      scratch, sizeof(scratch), path,
				      sizeof(path), &del, &exited);
	assert_true(n > 0);
	assert_int_equal(path[0], '/');
	assert_false(exited); /* alive */

	/* a zombie child: read, and said to have exited */
	pid_t z = fork();
	assert_true(z >= 0);
	if (z == 0)
		_exit(0);
	siginfo_t si;
	assert_int_equal(waitid(P_PID, (id_t)z, &si, WEXITED | WNOWAIT), 0);
	n = cgsi_proc_cgroup_read("/proc", (uint32_t)z, "v2", scratch,
				  sizeof(scratch), path, sizeof(path), &del,
				  &exited);
	assert_true(n > 0);
	assert_true(exited);
	assert_int_equal(waitpid(z, NULL, 0), z);

	pthread_t t;
	pthread_mutex_lock(&mu);
	assert_int_equal(pthread_create(&t, NULL, thread_fn, NULL), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/cgroup", (int)tid);
	assert_int_equal(access(fn, R_OK), 0); /* the trap exists */
	int r = cgsi_proc_cgroup_read("/proc", (uint32_t)tid, "v2", scratch,
				      sizeof(scratch), path, sizeof(path),
				      &del, NULL);
	assert_int_equal(r, -ENOENT);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_are_not_processes),
	};
	return CGT_RUN(argc, argv, tests);
}
