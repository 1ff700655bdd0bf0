/*
 * Force the kernel to drop events (tiny buffer, nobody draining) and check
 * that the loss is counted exactly: on a one-CPU shard every event carries
 * the CPU's sequence number, so the gaps we see must equal the socket's own
 * drop counter, and what we received plus what was dropped must cover the
 * workload.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/skip.h"

static void *noop(void *a) { return a; }

static void pin0(void)
{
	cpu_set_t cs;
	CPU_ZERO(&cs);
	CPU_SET(0, &cs);
	sched_setaffinity(0, sizeof(cs), &cs);
}

static pid_t churn_on_cpu0(int k)
{
	pid_t p = fork();
	if (p)
		return p;
	pin0();
	for (int i = 0; i < k; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, noop, NULL))
			_exit(9);
		pthread_join(t, NULL);
	}
	_exit(0);
}

struct cnt {
	uint32_t tgid;
	unsigned ours, all;
};

static int count(const struct cgs_exit *ev, void *arg)
{
	struct cnt *c = arg;
	c->all++;
	if (ev->task && ev->task->tgid == c->tgid)
		c->ours++;
	return 0;
}

static void test_exact_drop_count(void **state)
{
	(void)state;
	const int K = 3000;
	struct cgs_listener *l;
	struct cgs_listener_opts o = { .sz = sizeof(o), .cpus = "0",
				       .rcvbuf = 64 * 1024,
				       .log = NULL };
	assert_int_equal(cgs_listener_open(&l, &o), 0);
	assert_true(cgs_listener_shard_rcvbuf(l, 0) < 1024 * 1024);

	pid_t c = churn_on_cpu0(K);
	assert_int_equal(waitpid(c, NULL, 0), c);
	struct cnt n = { .tgid = (uint32_t)c };
	assert_true(cgs_listener_drain(l, 0, count, &n) >= 0);
	/* one more exit on CPU 0 so the last gap becomes visible */
	pid_t t = fork();
	if (t == 0) {
		pin0();
		_exit(0);
	}
	waitpid(t, NULL, 0);
	for (int i = 0; i < 100; i++) {
		unsigned before = n.all;
		assert_true(cgs_listener_drain(l, 0, count, &n) >= 0);
		if (n.all > before)
			break;
		usleep(10000);
	}

	struct cgs_loss loss = { .sz = sizeof(loss) };
	assert_int_equal(cgs_listener_get_loss(l, 0, &loss), 0);
	fprintf(stderr, "received %u (%u ours of %d), dropped %llu, "
		"seq gaps %llu, ENOBUFS episodes %llu\n", n.all, n.ours, K + 1,
		(unsigned long long)loss.dropped,
		(unsigned long long)loss.seq_gaps,
		(unsigned long long)loss.enobufs);
	assert_true(loss.dropped > 0);
	assert_true(loss.enobufs >= 1);
	assert_true(loss.enobufs <= loss.dropped);
	assert_int_equal(loss.seq_gaps, loss.dropped);
	assert_true(n.ours < (unsigned)K + 1);
	assert_true(n.ours + loss.dropped >= (unsigned)K + 1);
	cgs_listener_close(l);
}

int main(void)
{
	cgt_require_taskstats();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_drop_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
