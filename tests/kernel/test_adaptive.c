/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runner's adaptive receive path on the real kernel: at the defaults
 * one thread drains every shard; a burst that one thread cannot drain (a
 * callback that takes 300 us per record of the burst) makes it add a
 * thread, and once the burst is drained it returns to one. Every record of
 * the burst arrives, none is dropped. An explicit shards count pins a
 * thread per shard (the pre-1.3 behaviour). Needs 2 CPUs (2 shards).
 *
 * The burst must outrun one thread whatever the machine: where threads
 * are made slower than one per 300 us (seen on a CI machine: 3,000 in
 * 2 s), one thread would keep up and rightly stay alone. So the first
 * record of the burst holds its callback until the burst's child has
 * made BACKLOG threads: a backlog of BACKLOG x 300 us of callbacks is
 * queued (under 4 MiB of the 16 MiB buffer), whatever the rate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/skip.h"

#define BURST 3000
#define COMM "cgs-adapt-burst"
#define SPIN_NS 300000
#define BACKLOG 1500 /* records queued before the callbacks start */

struct count {
	unsigned tasks;
} __attribute__((aligned(64)));

static struct count counts[64];
/* the burst child's threads made so far (shared memory) */
static unsigned *made;
static bool gate_open;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Slow for the burst's records only: one thread cannot keep up. */
static int on_ev(const struct cgs_exit *ev, void *u)
{
	(void)u;
	if (!ev->task || strcmp(ev->task->comm, COMM))
		return 0;
	__atomic_add_fetch(&counts[ev->shard % 64].tasks, 1, __ATOMIC_RELAXED);
	uint64_t until = now_ns() + 10000000000ull;
	while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(made, __ATOMIC_RELAXED) < BACKLOG &&
	       now_ns() < until)
		usleep(1000);
	__atomic_store_n(&gate_open, true, __ATOMIC_RELEASE);
	until = now_ns() + SPIN_NS;
	while (now_ns() < until) {
	}
	return 0;
}

static unsigned burst_seen(void)
{
	unsigned n = 0;
	for (int i = 0; i < 64; i++)
		n += __atomic_load_n(&counts[i].tasks, __ATOMIC_RELAXED);
	return n;
}

static void *nop(void *a)
{
	return a;
}

static pid_t burst(void)
{
	pid_t p = fork();
	if (p)
		return p;
	prctl(PR_SET_NAME, COMM);
	for (int i = 0; i < BURST; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, nop, NULL))
			_exit(3);
		pthread_join(t, NULL);
		__atomic_add_fetch(made, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

static void one_exit(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	if (p > 0)
		waitpid(p, NULL, 0);
}

static struct cgs_listener *open_default(void)
{
	struct cgs_listener *l = NULL;
	int r = cgs_listener_open(&l, NULL);
	cgt_skip_if_forbidden(r);
	assert_int_equal(r, 0);
	if (cgs_listener_shards(l) < 2) {
		cgs_listener_close(l);
		cgt_skip_exit("one CPU: one shard, nothing to add");
	}
	return l;
}

static void test_grows_and_shrinks(void **state)
{
	(void)state;
	struct cgs_listener *l = open_default();
	assert_int_equal(cgs_listener_run(l, on_ev, NULL, NULL), 0);
	usleep(100000);
	assert_int_equal(cgs_listener_get_threads(l), 1);

	memset(counts, 0, sizeof(counts));
	*made = 0;
	gate_open = false;
	uint64_t t0 = now_ns();
	pid_t c = burst();
	assert_true(c > 0);
	unsigned most = 1;
	/* the burst's records take BURST * 300 us = 0.9 s of callbacks */
	while (burst_seen() < BURST + 1 && now_ns() - t0 < 20000000000ull) {
		unsigned n = cgs_listener_get_threads(l);
		most = n > most ? n : most;
		usleep(5000);
		int st;
		waitpid(c, &st, WNOHANG);
	}
	waitpid(c, NULL, 0);
	uint64_t t1 = now_ns();
	fprintf(stderr, "burst: %u of %d records in %.2f s, up to %u "
		"threads\n", burst_seen(), BURST + 1, (t1 - t0) / 1e9, most);
	assert_int_equal(burst_seen(), BURST + 1);
	assert_true(most >= 2);

	/* quiet again (an exit every 20 ms): back to one thread */
	unsigned n = cgs_listener_get_threads(l);
	while (n > 1 && now_ns() - t1 < 10000000000ull) {
		one_exit();
		usleep(20000);
		n = cgs_listener_get_threads(l);
	}
	fprintf(stderr, "back to %u thread(s) %.2f s after the burst\n", n,
		(now_ns() - t1) / 1e9);
	assert_int_equal(n, 1);

	struct cgs_loss loss = { .sz = sizeof(loss) };
	assert_int_equal(cgs_listener_stop(l), 0);
	assert_int_equal(cgs_listener_get_loss(l, CGS_ALL_SHARDS, &loss), 0);
	assert_int_equal(loss.dropped, 0);
	assert_int_equal(cgs_listener_get_threads(l), 0);
	cgs_listener_close(l);
}

static void test_explicit_shards_pin(void **state)
{
	(void)state;
	struct cgs_listener *l = open_default();
	unsigned n = cgs_listener_shards(l);
	cgs_listener_close(l);
	struct cgs_listener_opts o = { .sz = sizeof(o), .shards = n };
	assert_int_equal(cgs_listener_open(&l, &o), 0);
	assert_int_equal(cgs_listener_run(l, NULL, NULL, NULL), 0);
	for (int i = 0; i < 20; i++) {
		one_exit();
		usleep(10000);
		assert_int_equal(cgs_listener_get_threads(l), n);
	}
	assert_int_equal(cgs_listener_stop(l), 0);
	cgs_listener_close(l);
}

int main(void)
{
	cgt_require_taskstats();
	made = mmap(NULL, sizeof(*made), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (made == MAP_FAILED)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grows_and_shrinks),
		cmocka_unit_test(test_explicit_shards_pin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
