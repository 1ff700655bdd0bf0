/* Live pid/tgid queries and cgroupstats against the real kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/cgtest.h"
#include "support/skip.h"

static void test_pid_query(void **state)
{
	(void)state;
	prctl(PR_SET_NAME, "cgs-query");
	volatile uint64_t x = 0;
	for (int i = 0; i < 20000000; i++)
		x += (uint64_t)i; /* some CPU time to see */
	struct cgs_query *q;
	assert_int_equal(cgs_query_open(&q, NULL), 0);
	CGS_OPTS(cgs_record, r);
	assert_int_equal(cgs_query_pid(q, (uint32_t)getpid(), &r), 0);
	assert_int_equal(r.pid, (uint32_t)getpid());
	assert_int_equal(r.tgid, (uint32_t)getpid());
	assert_int_equal(r.ppid, (uint32_t)getppid());
	assert_int_equal(r.uid, (uint32_t)getuid());
	assert_string_equal(r.comm, "cgs-query");
	assert_int_equal(r.kind, CGS_KIND_THREAD);
	assert_true(r.version >= 1);
	assert_int_equal(r.payload_len, cgs_taskstats_size(r.layout));
	assert_true(r.utime_us + r.stime_us > 0);
	assert_true(r.cpu_run_real_ns > 0);
	fprintf(stderr, "kernel sends taskstats v%u, %u bytes\n", r.version,
		r.payload_len);

	CGS_OPTS(cgs_record, g);
	assert_int_equal(cgs_query_tgid(q, (uint32_t)getpid(), &g), 0);
	assert_int_equal(g.kind, CGS_KIND_TGID);
	assert_int_equal(g.tgid, (uint32_t)getpid());

	/* pid_max is at most 4194304: this one cannot exist */
	assert_int_equal(cgs_query_pid(q, 4194304 + 17, &r), -ESRCH);
	cgs_query_close(q);
}

static void test_cgroupstats(void **state)
{
	(void)state;
	struct cgs_query *q;
	assert_int_equal(cgs_query_open(&q, NULL), 0);
	CGS_OPTS(cgs_task_states, cs);
	const char *ctl[] = { "cpu", "memory", "pids" };
	int tried = 0;
	for (size_t i = 0; i < 3; i++) {
		const char *m = cgt_cgroup1_mount(ctl[i]);
		if (!m)
			continue;
		tried++;
		assert_int_equal(cgs_query_cgroup(q, m, &cs), 0);
		/* we are running, somewhere in that hierarchy's root */
		assert_true(cs.nr_running + cs.nr_sleeping >= 1);
	}
	const char *m2 = cgt_cgroup2_mount();
	if (m2) {
		assert_int_equal(cgs_query_cgroup(q, m2, &cs),
				 -CGS_ERR_CGROUP2);
		tried++;
	}
	assert_int_equal(cgs_query_cgroup(q, "/nonexistent-cgs", &cs),
			 -ENOENT);
	assert_int_equal(cgs_query_cgroup(q, "/tmp", &cs), -ENOTDIR);
	assert_true(tried > 0);
	cgs_query_close(q);
}

/* 1.0's name and struct (<cgstats/deprecated.h>) answer as before */
static void test_cgroupstats_old_name(void **state)
{
	(void)state;
	struct cgs_query *q;
	assert_int_equal(cgs_query_open(&q, NULL), 0);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	CGS_OPTS(cgs_cgroupstats, old);
	const char *m = cgt_cgroup1_mount("cpu");
	if (m) {
		assert_int_equal(cgs_query_cgroupstats(q, m, &old), 0);
		assert_int_equal(old.sz, sizeof(old));
		assert_true(old.nr_running + old.nr_sleeping >= 1);
	}
	const char *m2 = cgt_cgroup2_mount();
	if (m2)
		assert_int_equal(cgs_query_cgroupstats(q, m2, &old),
				 -EOPNOTSUPP);
	assert_int_equal(cgs_query_cgroupstats(q, "/tmp", &old), -ENOTDIR);
	assert_int_equal(cgs_query_cgroupstats(NULL, "/tmp", &old), -EINVAL);
#pragma GCC diagnostic pop
	cgs_query_close(q);
}

int main(void)
{
	cgt_require_taskstats();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pid_query),
		cmocka_unit_test(test_cgroupstats),
		cmocka_unit_test(test_cgroupstats_old_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
