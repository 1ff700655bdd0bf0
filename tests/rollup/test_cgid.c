/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel source's cgroup id -> path table (lib/attribute/cgid.c):
 * how long a removed cgroup's path is kept for its late records, and the
 * cap that keeps the table bounded under heavy cgroup churn, and the
 * memory of purged ids.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "attribute/cgid.h"

static void set_n(struct cgsi_cgid *m, uint64_t first, unsigned n)
{
	char p[64];
	for (unsigned i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "/churn/c%u", (unsigned)(first + i));
		assert_int_equal(cgsi_cgid_set(m, first + i, p), 0);
	}
}

static unsigned known(const struct cgsi_cgid *m, uint64_t first, unsigned n)
{
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++)
		k += cgsi_cgid_get(m, first + i) != NULL;
	return k;
}

/* A removed cgroup keeps its path CGSI_CGID_KEEP_MS, not a moment more. */
static void test_keep(void **state)
{
	(void)state;
	struct cgsi_cgid m;
	assert_int_equal(cgsi_cgid_init(&m, NULL), 0);
	set_n(&m, 100, 50);
	for (unsigned i = 0; i < 50; i++)
		cgsi_cgid_removed(&m, 100 + i, 1000 + i);
	assert_int_equal(m.count, 50);
	assert_true(cgsi_cgid_is_removed(&m, 100));
	/* a removal of an unknown id purges what is due, nothing else */
	cgsi_cgid_removed(&m, 9999, 1000 + CGSI_CGID_KEEP_MS);
	assert_int_equal(known(&m, 100, 50), 50);
	cgsi_cgid_removed(&m, 9999, 1000 + CGSI_CGID_KEEP_MS + 10);
	/* removed at 1000..1009: gone; 1010..1049: kept */
	assert_int_equal(known(&m, 100, 10), 0);
	assert_int_equal(known(&m, 110, 40), 40);
	assert_int_equal(m.count, 40);
	assert_int_equal(m.purged_early, 0);
	/* a live cgroup is never purged */
	set_n(&m, 5000, 3);
	cgsi_cgid_removed(&m, 9999, 10 * CGSI_CGID_KEEP_MS);
	assert_int_equal(known(&m, 5000, 3), 3);
	assert_int_equal(m.count, 3);
	cgsi_cgid_fini(&m);
}

/* More than CGSI_CGID_REMOVED_MAX removed: the oldest go once
 * CGSI_CGID_KEEP_MIN_MS old, the table stays bounded, the rest stay. */
static void test_cap(void **state)
{
	(void)state;
	struct cgsi_cgid m;
	const unsigned over = 300, n = CGSI_CGID_REMOVED_MAX + over;
	assert_int_equal(cgsi_cgid_init(&m, NULL), 0);
	set_n(&m, 1, n);
	for (unsigned i = 0; i < n; i++)
		cgsi_cgid_removed(&m, 1 + i, 10);
	/* too young to go early */
	cgsi_cgid_removed(&m, 0xfffff, 10 + CGSI_CGID_KEEP_MIN_MS);
	assert_int_equal(m.count, n);
	cgsi_cgid_removed(&m, 0xfffff, 11 + CGSI_CGID_KEEP_MIN_MS);
	assert_int_equal(m.count, CGSI_CGID_REMOVED_MAX);
	assert_int_equal(m.purged_early, over);
	assert_int_equal(known(&m, 1, over), 0);
	assert_int_equal(known(&m, 1 + over, CGSI_CGID_REMOVED_MAX),
			 CGSI_CGID_REMOVED_MAX);
	/* churn goes on: 20 rounds of 2,000 cgroups, each removed 3 s after
	 * the previous round; the table never holds much more than the cap
	 * plus what was removed in the last CGSI_CGID_KEEP_MIN_MS */
	uint64_t id = 100000, t = 20 + CGSI_CGID_KEEP_MIN_MS;
	for (int r = 0; r < 20; r++, t += 3000) {
		set_n(&m, id, 2000);
		for (unsigned i = 0; i < 2000; i++)
			cgsi_cgid_removed(&m, id + i, t);
		assert_true(m.count <= CGSI_CGID_REMOVED_MAX + 2000);
		/* the youngest are all there */
		assert_int_equal(known(&m, id, 2000), 2000);
		id += 2000;
	}
	cgsi_cgid_fini(&m);
}

/* A purged entry's id says so (a late record: cgroup_purged, not
 * "never learnt"); an id never set, or set again, does not. */
static void test_purged(void **state)
{
	(void)state;
	struct cgsi_cgid m;
	assert_int_equal(cgsi_cgid_init(&m, NULL), 0);
	set_n(&m, 100, 10);
	for (unsigned i = 0; i < 10; i++)
		cgsi_cgid_removed(&m, 100 + i, 1000);
	assert_false(cgsi_cgid_was_purged(&m, 100));
	cgsi_cgid_removed(&m, 9999, 1001 + CGSI_CGID_KEEP_MS);
	assert_int_equal(known(&m, 100, 10), 0);
	for (unsigned i = 0; i < 10; i++)
		assert_true(cgsi_cgid_was_purged(&m, 100 + i));
	assert_false(cgsi_cgid_was_purged(&m, 555));
	assert_false(cgsi_cgid_was_purged(&m, 0));
	set_n(&m, 105, 1); /* a walk found it again: live */
	assert_false(cgsi_cgid_was_purged(&m, 105));
	cgsi_cgid_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_purged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
