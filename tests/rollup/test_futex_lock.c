/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The futex lock (lib/util/futex_lock.h): mutual exclusion when every
 * thread contends (counters updated in two steps, checked whole), and a
 * holder that sleeps, so that the others block on the futex and are
 * woken.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "util/futex_lock.h"

#define THREADS 4
#define ROUNDS 200000

static struct cgsi_flock lock;
static volatile uint64_t a, b;
static int sleepy;

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	struct timespec nap = { 0, 200000 };
	for (unsigned i = 0; i < ROUNDS; i++) {
		cgsi_flock_lock(&lock);
		uint64_t x = a;
		a = x + 1;
		if (sleepy && id == 0 && i % 1000 == 0)
			nanosleep(&nap, NULL); /* the others wait on the futex */
		b = b + 1;
		if (a != b)
			sleepy = -1; /* seen torn: a failure */
		cgsi_flock_unlock(&lock);
	}
	return NULL;
}

static void run(int sleep_too)
{
	pthread_t t[THREADS];
	a = b = 0;
	sleepy = sleep_too;
	for (unsigned i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker,
						(void *)(uintptr_t)i), 0);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_not_equal(sleepy, -1);
	assert_int_equal(a, (uint64_t)THREADS * ROUNDS);
	assert_int_equal(b, (uint64_t)THREADS * ROUNDS);
	assert_int_equal(atomic_load(&lock.v), 0); /* free at the end */
}

static void test_exclusion(void **state)
{
	(void)state;
	run(0);
}

static void test_sleeping_holder(void **state)
{
	(void)state;
	run(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exclusion),
		cmocka_unit_test(test_sleeping_holder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
