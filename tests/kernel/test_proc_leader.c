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
#include <unistd.h>

#include "attribute/proc_cgroup.h"

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
	char scratch[4096], path[4096];
	bool del;
	int n = cgsi_proc_cgroup_read("/proc", (uint32_t)getpid(), "v2",
				      scratch, sizeof(scratch), path,
				      sizeof(path), &del);
	assert_true(n > 0);
	assert_int_equal(path[0], '/');

	pthread_t t;
	pthread_mutex_lock(&mu);
	assert_int_equal(pthread_create(&t, NULL, thread_fn, NULL), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/cgroup", (int)tid);
	assert_int_equal(access(fn, R_OK), 0); /* the trap exists */
	/* without pidfd_open (kernel < 5.3, or valgrind 3.19 which does not
	 * know the syscall) the library cannot tell and accepts the read */
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0u);
	bool can_tell = pfd >= 0 || errno != ENOSYS;
	if (pfd >= 0)
		close(pfd);
	int r = cgsi_proc_cgroup_read("/proc", (uint32_t)tid, "v2", scratch,
				      sizeof(scratch), path, sizeof(path),
				      &del);
	if (can_tell)
		assert_int_equal(r, -ENOENT);
	else
		fprintf(stderr, "pidfd_open unavailable: leadership not "
			"checked (read gave %d)\n", r);
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_are_not_processes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
