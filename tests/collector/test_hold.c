/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the hold queue (cmd/hold.c): exit records whose cgroup's
 * name look-up is pending wait there, in order, until the look-up
 * answers (written named, or unnamed when no source named the cgroup) or
 * their time passed (written as they are, counted timeout); at most
 * max records (the next one is refused, counted full); everything is
 * written at the end with all.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hold.h"
#include "support/skip.h"

/* The look-ups' answers by cgroup name ("a": 0, "p": -EAGAIN, else
 * -ENOENT), switched by the test, and what was written. */
struct fake {
	int answer_a, answer_p;
	char out[64][16];
	bool named[64];
	uint32_t pid[64];
	unsigned n;
};

static int lookup(void *ctx, const char *cg, struct cgs_identity *id)
{
	struct fake *f = ctx;
	int r = cg[0] == 'a' ? f->answer_a : cg[0] == 'p' ? f->answer_p
			     : -ENOENT;
	if (r == 0)
		snprintf(id->pod, sizeof(id->pod), "pod-%s", cg);
	return r;
}

static void write_rec(void *ctx, const struct tsc_hold_ent *e,
		      const struct cgs_identity *id)
{
	struct fake *f = ctx;
	assert_true(f->n < 64);
	snprintf(f->out[f->n], sizeof(f->out[0]), "%s", e->cgroup);
	f->named[f->n] = id && !strncmp(id->pod, "pod-", 4);
	f->pid[f->n++] = e->rec.pid;
}

static struct cgs_record rec(uint32_t pid)
{
	struct cgs_record r = { .sz = sizeof(r), .pid = pid };
	return r;
}

static void order_and_answers(void **state)
{
	(void)state;
	struct tsc_hold h;
	struct fake f = { .answer_a = -EAGAIN, .answer_p = -EAGAIN };
	tsc_hold_init(&h, 8, 1000);
	struct cgs_record r1 = rec(1), r2 = rec(2), r3 = rec(3);
	assert_int_equal(tsc_hold_push(&h, &r1, "a1", "kernel", 11, 100), 0);
	assert_int_equal(tsc_hold_push(&h, &r2, "p2", "kernel", 12, 100), 0);
	assert_int_equal(tsc_hold_push(&h, &r3, "a3", "kernel", 13, 100), 0);
	assert_false(tsc_hold_due(&h, 100)); /* not before 1 ms */
	assert_true(tsc_hold_due(&h, 100 + TSC_HOLD_CHECK_NS));
	/* still pending: nothing written, nothing lost */
	assert_int_equal(tsc_hold_release(&h, 200, false, lookup, write_rec,
					  &f), 3);
	assert_int_equal(f.n, 0);
	/* a's look-up named it: a1 and a3 go, in order; p2 stays */
	f.answer_a = 0;
	assert_int_equal(tsc_hold_release(&h, 300, false, lookup, write_rec,
					  &f), 1);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.pid[0], 1);
	assert_int_equal(f.pid[1], 3);
	assert_true(f.named[0] && f.named[1]);
	/* held after: behind p2 */
	struct cgs_record r4 = rec(4);
	assert_int_equal(tsc_hold_push(&h, &r4, "p4", "kernel", 14, 400), 0);
	/* p's look-up named nothing: written unnamed, in order */
	f.answer_p = -ENOENT;
	assert_int_equal(tsc_hold_release(&h, 500, false, lookup, write_rec,
					  &f), 0);
	assert_int_equal(f.n, 4);
	assert_int_equal(f.pid[2], 2);
	assert_int_equal(f.pid[3], 4);
	assert_false(f.named[2] || f.named[3]);
	assert_int_equal(h.held, 4);
	assert_int_equal(h.out[TSC_HOLD_NAMED], 2);
	assert_int_equal(h.out[TSC_HOLD_UNNAMED], 2);
	assert_false(tsc_hold_due(&h, UINT64_MAX)); /* nothing held */
	tsc_hold_free(&h);
}

/* Bounded in memory (max records, the next refused and counted) and in
 * time (past hold_ns written as they are, counted). */
static void bounded(void **state)
{
	(void)state;
	struct tsc_hold h;
	struct fake f = { .answer_a = -EAGAIN, .answer_p = -EAGAIN };
	tsc_hold_init(&h, 4, 1000);
	for (uint32_t i = 0; i < 4; i++) {
		struct cgs_record r = rec(i);
		assert_int_equal(tsc_hold_push(&h, &r, "p", "kernel", i,
					       100 + i), 0);
	}
	struct cgs_record r = rec(9);
	assert_int_equal(tsc_hold_push(&h, &r, "p", "kernel", 9, 104),
			 -ENOSPC);
	assert_int_equal(h.out[TSC_HOLD_FULL], 1);
	assert_int_equal(h.n, 4);
	/* at 1101 the first two (held at 100, 101) are past their time */
	assert_int_equal(tsc_hold_release(&h, 1101, false, lookup, write_rec,
					  &f), 2);
	assert_int_equal(f.n, 2);
	assert_int_equal(h.out[TSC_HOLD_TIMEOUT], 2);
	/* the ring wraps: two more fit, in order behind the two kept */
	for (uint32_t i = 10; i < 12; i++) {
		struct cgs_record q = rec(i);
		assert_int_equal(tsc_hold_push(&h, &q, "p", "kernel", i, 1200),
				 0);
	}
	assert_int_equal(tsc_hold_push(&h, &r, "p", "kernel", 9, 1200),
			 -ENOSPC);
	/* the end: all, as they are, in order */
	assert_int_equal(tsc_hold_release(&h, 1300, true, lookup, write_rec,
					  &f), 0);
	assert_int_equal(f.n, 6);
	uint32_t want[] = { 0, 1, 2, 3, 10, 11 };
	for (int i = 0; i < 6; i++)
		assert_int_equal(f.pid[i], want[i]);
	assert_int_equal(h.out[TSC_HOLD_TIMEOUT], 6);
	assert_int_equal(h.out[TSC_HOLD_FULL], 2);
	assert_int_equal(h.held, 6);
	tsc_hold_free(&h);
}

/* Freed with records still held: nothing leaks (ASan). */
static void free_held(void **state)
{
	(void)state;
	struct tsc_hold h;
	tsc_hold_init(&h, 0, 0);
	assert_int_equal(h.max, TSC_HOLD_MAX);
	assert_int_equal(h.hold_ns, TSC_HOLD_NS);
	struct cgs_record r = rec(1);
	assert_int_equal(tsc_hold_push(&h, &r, "/a/b", "proc", 1, 1), 0);
	tsc_hold_free(&h);
	assert_int_equal(h.n, 0);
	tsc_hold_free(&h);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(order_and_answers),
		cmocka_unit_test(bounded),
		cmocka_unit_test(free_held),
	};
	return CGT_RUN(argc, argv, tests);
}
