/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sz convention of include/cgstats.h, from both sides of a version
 * change: a program built against an older header (smaller structs) and one
 * built against a newer header (larger structs) each get exactly the bytes
 * they asked for, and nothing beyond them is read or written.
 * "Older" and "newer" structs are simulated by the sz the caller passes:
 * what the library sees of a caller is its pointer and its sz.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/nlmsg.h"

#define GUARD 0xa7

/* A version-16 struct taskstats payload, all zero but its version and a
 * few fields whose offsets the kernel's uapi header fixes. */
static void v16_payload(unsigned char p[560])
{
	uint16_t version = 16;
	uint64_t utime = 1234, nvcsw = 77;

	memset(p, 0, 560);
	memcpy(p, &version, sizeof(version));
	memcpy(p + 152, &utime, sizeof(utime)); /* ac_utime */
	memcpy(p + 272, &nvcsw, sizeof(nvcsw)); /* nvcsw */
}

/* A caller whose struct cgs_record ends before nvcsw (an older header):
 * the library fills that prefix and not one byte more. */
static void test_record_older_caller(void **state)
{
	(void)state;
	unsigned char p[560];
	union {
		struct cgs_record r;
		unsigned char b[sizeof(struct cgs_record) + 64];
	} u;
	const size_t old_sz = offsetof(struct cgs_record, nvcsw);
	CGS_OPTS(cgs_record, full);

	v16_payload(p);
	assert_int_equal(cgs_decode_payload(p, sizeof(p), CGS_KIND_THREAD,
					    &full, NULL),
			 0);
	assert_int_equal(full.sz, sizeof(struct cgs_record));
	assert_int_equal(full.utime_us, 1234);
	assert_int_equal(full.nvcsw, 77);

	memset(&u, GUARD, sizeof(u));
	u.r.sz = old_sz;
	assert_int_equal(cgs_decode_payload(p, sizeof(p), CGS_KIND_THREAD,
					    &u.r, NULL),
			 0);
	assert_int_equal(u.r.sz, old_sz);
	assert_memory_equal((unsigned char *)&u.r + sizeof(size_t),
			    (unsigned char *)&full + sizeof(size_t),
			    old_sz - sizeof(size_t));
	for (size_t i = old_sz; i < sizeof(u.b); i++)
		assert_int_equal(u.b[i], GUARD);
}

/* A caller whose struct is larger (a newer header): the library fills its
 * own size, says so in sz, and leaves the caller's extra fields alone. */
static void test_record_newer_caller(void **state)
{
	(void)state;
	unsigned char p[560];
	struct {
		struct cgs_record r;
		uint64_t future[8];
	} big;

	v16_payload(p);
	memset(&big, GUARD, sizeof(big));
	big.r.sz = sizeof(big);
	assert_int_equal(cgs_decode_payload(p, sizeof(p), CGS_KIND_THREAD,
					    &big.r, NULL),
			 0);
	assert_int_equal(big.r.sz, sizeof(struct cgs_record));
	assert_true(CGS_SZ_HAS(&big.r, nvcsw));
	assert_int_equal(big.r.nvcsw, 77);
	const unsigned char *f = (const unsigned char *)big.future;
	for (size_t i = 0; i < sizeof(big.future); i++)
		assert_int_equal(f[i], GUARD);
}

/* sz 0 (a caller that forgot it) is refused everywhere, not guessed. */
static void test_sz_zero_refused(void **state)
{
	(void)state;
	unsigned char p[560];
	struct cgs_record r;
	struct cgs_decode_stats st;
	unsigned char msg[64] = { 0 };

	v16_payload(p);
	memset(&r, 0, sizeof(r));
	assert_int_equal(cgs_decode_payload(p, sizeof(p), CGS_KIND_THREAD,
					    &r, NULL),
			 -EINVAL);
	CGS_OPTS(cgs_record, ok);
	memset(&st, 0, sizeof(st));
	assert_int_equal(cgs_decode_payload(p, sizeof(p), CGS_KIND_THREAD,
					    &ok, &st),
			 -EINVAL);
	assert_int_equal(cgs_decode_msg(msg, sizeof(msg), CGS_NO_TGID, &r,
					NULL, NULL),
			 -EINVAL);
}

/* Decoder counters of an older caller: only the fields it has move. */
static void test_decode_stats_older_caller(void **state)
{
	(void)state;
	unsigned char p[560];
	union {
		struct cgs_decode_stats st;
		unsigned char b[sizeof(struct cgs_decode_stats)];
	} u;
	const size_t old_sz = offsetof(struct cgs_decode_stats, malformed);
	CGS_OPTS(cgs_record, r);

	v16_payload(p);
	memset(&u, GUARD, sizeof(u));
	u.st.sz = old_sz;
	/* too short for version 16: malformed, which this caller lacks */
	assert_int_equal(cgs_decode_payload(p, 100, CGS_KIND_THREAD, &r,
					    &u.st),
			 -EBADMSG);
	assert_int_equal(u.st.sz, old_sz);
	for (size_t i = old_sz; i < sizeof(u.b); i++)
		assert_int_equal(u.b[i], GUARD);

	CGS_OPTS(cgs_decode_stats, full);
	assert_int_equal(cgs_decode_payload(p, 100, CGS_KIND_THREAD, &r,
					    &full),
			 -EBADMSG);
	assert_int_equal(full.malformed, 1);
}

/* A mountinfo naming one cgroup2 mount, so that a rollup can be created
 * wherever the test runs (records are accounted to explicit paths). */
static char mountinfo[] = "/tmp/cgs-abi-mountinfo-XXXXXX";

static int setup(void **state)
{
	(void)state;
	static const char line[] =
		"30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
	int fd = mkstemp(mountinfo);
	if (fd < 0)
		return -1;
	int ok = write(fd, line, sizeof(line) - 1) == sizeof(line) - 1;
	close(fd);
	return ok ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	unlink(mountinfo);
	return 0;
}

static struct cgs_rollup *proc_rollup(void)
{
	struct cgs_rollup *r = NULL;
	CGS_OPTS(cgs_rollup_opts, o, .attribution = CGS_ATTRIBUTION_PROC,
		 .mountinfo = mountinfo);
	assert_int_equal(cgs_rollup_new(&r, &o), 0);
	return r;
}

/*
 * A record handed in by an older caller: the rollup reads only its sz
 * bytes. Bytes beyond it (garbage in the caller's memory) never reach the
 * counters; an older caller's snapshot views are complete for what it has.
 */
static void test_rollup_reads_only_sz(void **state)
{
	(void)state;
	union {
		struct cgs_record r;
		unsigned char b[sizeof(struct cgs_record)];
	} u;
	const size_t old_sz = offsetof(struct cgs_record, read_char);
	struct cgs_rollup *r = proc_rollup();

	memset(&u, GUARD, sizeof(u));
	memset(&u.r, 0, old_sz);
	u.r.sz = old_sz;
	u.r.kind = CGS_KIND_PROCESS;
	u.r.pid = u.r.tgid = 4242;
	u.r.utime_us = 5;
	assert_int_equal(cgt_add_path(r, 0, &u.r, "/abi"), 0);

	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(r, NULL, &s), 0);
	const struct cgs_cgroup_stats *c = NULL;
	for (size_t i = 0; i < cgs_snapshot_count(s); i++)
		if (!strcmp(cgs_snapshot_get_cgroup(s, i)->path, "/abi"))
			c = cgs_snapshot_get_cgroup(s, i);
	assert_non_null(c);
	assert_int_equal(c->sz, sizeof(*c));
	assert_true(CGS_SZ_HAS(c, inferred_delta));
	assert_int_equal(c->self->sz, sizeof(struct cgs_counters));
	assert_int_equal(c->self->tasks, 1);
	assert_int_equal(c->self->utime_us, 5);
	/* beyond the caller's sz: zero, not GUARD bytes */
	assert_int_equal(c->self->read_char, 0);
	assert_int_equal(c->self->nvcsw, 0);
	assert_int_equal(c->self->hiwater_vm_kb_max, 0);
	cgs_snapshot_free(s);

	/* a record too short to say what it is */
	u.r.sz = sizeof(size_t);
	assert_int_equal(cgt_add_path(r, 0, &u.r, "/abi"),
			 -EINVAL);

	/* totals into an older, smaller struct */
	union {
		struct cgs_rollup_totals t;
		unsigned char b[sizeof(struct cgs_rollup_totals)];
	} t;
	const size_t tsz = offsetof(struct cgs_rollup_totals, via_cache);
	memset(&t, GUARD, sizeof(t));
	t.t.sz = tsz;
	assert_int_equal(cgs_rollup_get_totals(r, &t.t), 0);
	assert_int_equal(t.t.sz, tsz);
	assert_int_equal(t.t.records, 1);
	for (size_t i = tsz; i < sizeof(t.b); i++)
		assert_int_equal(t.b[i], GUARD);
	t.t.sz = 0;
	assert_int_equal(cgs_rollup_get_totals(r, &t.t), -EINVAL);
	cgs_rollup_free(r);
}

/*
 * Options from a newer caller: extra bytes that are zero mean "defaults for
 * what this library does not know" and are accepted; a non-zero one asks
 * for something this library cannot do and is refused with -E2BIG.
 */
static void test_opts_newer_caller(void **state)
{
	(void)state;
	struct {
		struct cgs_rollup_opts o;
		uint64_t future;
	} big;
	struct cgs_rollup *r = NULL;

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.o.attribution = CGS_ATTRIBUTION_PROC;
	big.o.mountinfo = mountinfo;
	assert_int_equal(cgs_rollup_new(&r, &big.o), 0);
	cgs_rollup_free(r);

	big.future = 1;
	assert_int_equal(cgs_rollup_new(&r, &big.o), -E2BIG);
	assert_null(r);

	/* unknown flag bits are refused, not ignored */
	CGS_OPTS(cgs_rollup_opts, o, .attribution = CGS_ATTRIBUTION_PROC,
		 .mountinfo = mountinfo, .flags = 1u << 30);
	assert_int_equal(cgs_rollup_new(&r, &o), -EINVAL);
	CGS_OPTS(cgs_listener_opts, lo, .flags = 1u << 30);
	struct cgs_listener *l = NULL;
	assert_int_equal(cgs_listener_open(&l, &lo), -EINVAL);
}

/*
 * The reserved delay slots are cleared for a caller's struct, whatever it
 * held; with CGS_DECODE_REUSE (a record filled before) they are left
 * alone, and everything else is decoded just the same.
 */
static void test_reserved_slots(void **state)
{
	(void)state;
	unsigned char p[560];
	struct mb m;
	struct cgs_record t, again;

	v16_payload(p);
	mb_init(&m, 0x17, 2); /* TASKSTATS_CMD_NEW, on any family id */
	mb_record(&m, 4, 1, 4242, p, sizeof(p)); /* AGGR_PID, PID */
	mb_finish(&m);
	memset(&t, GUARD, sizeof(t));
	t.sz = sizeof(t);
	assert_int_equal(cgs_decode_msg(m.b, m.len, CGS_NO_TGID, &t, NULL,
					NULL),
			 CGS_DECODED_TASK);
	const unsigned char *z =
		(const unsigned char *)&t.delay[cgs_delay_classes()];
	const size_t nz = sizeof(struct cgs_delay) *
			  (CGS_DELAY_SLOTS - cgs_delay_classes());
	for (size_t i = 0; i < nz; i++)
		assert_int_equal(z[i], 0);
	again = t;
	assert_int_equal(cgs_decode_msg(m.b, m.len,
					CGS_NO_TGID | CGS_DECODE_REUSE, &again,
					NULL, NULL),
			 CGS_DECODED_TASK);
	assert_memory_equal(&again, &t, sizeof(t));
	assert_int_equal(again.pid, 4242);
	assert_int_equal(again.nvcsw, 77);
}

/* The delay arrays keep room for classes a later kernel adds. */
static void test_delay_capacity(void **state)
{
	(void)state;
	assert_true(cgs_delay_classes() >= CGS_DELAY__COUNT);
	assert_true(cgs_delay_classes() <= CGS_DELAY_SLOTS);
	assert_int_equal(sizeof(((struct cgs_record *)0)->delay) /
				 sizeof(struct cgs_delay),
			 CGS_DELAY_SLOTS);
	assert_int_equal(sizeof(((struct cgs_counters *)0)->delay) /
				 sizeof(struct cgs_delay_sum),
			 CGS_DELAY_SLOTS);
	for (unsigned c = 0; c < cgs_delay_classes(); c++)
		assert_non_null(cgs_delay_name((enum cgs_delay_class)c));
	assert_null(cgs_delay_name((enum cgs_delay_class)CGS_DELAY_SLOTS));
}

/*
 * Functions renamed in 1.2 keep their old names at their old versions, as
 * aliases (<cgstats/deprecated.h>): programs linked against 1.0 or 1.1 run
 * on, and sources written against them still compile.
 */
static void test_old_names(void **state)
{
	(void)state;
	void *get = dlvsym(RTLD_DEFAULT, "cgs_rollup_get_totals", "CGSTATS_1.2");
	void *old = dlvsym(RTLD_DEFAULT, "cgs_rollup_totals", "CGSTATS_1.0");
	assert_non_null(get);
	assert_ptr_equal(get, old);
	get = dlvsym(RTLD_DEFAULT, "cgs_exit_classify", "CGSTATS_1.2");
	old = dlvsym(RTLD_DEFAULT, "cgs_exit_outcome", "CGSTATS_1.1");
	assert_non_null(get);
	assert_ptr_equal(get, old);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	int sig = -1;
	/* killed by SIGSEGV (11), core dumped (0x80) */
	assert_int_equal(cgs_exit_outcome(0x8b, &sig), CGS_EXIT_CORE_DUMPED);
	assert_int_equal(sig, 11);
	assert_int_equal(cgs_rollup_totals(NULL, NULL), -EINVAL);
#pragma GCC diagnostic pop
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_older_caller),
		cmocka_unit_test(test_record_newer_caller),
		cmocka_unit_test(test_sz_zero_refused),
		cmocka_unit_test(test_decode_stats_older_caller),
		cmocka_unit_test(test_rollup_reads_only_sz),
		cmocka_unit_test(test_opts_newer_caller),
		cmocka_unit_test(test_delay_capacity),
		cmocka_unit_test(test_reserved_slots),
		cmocka_unit_test(test_old_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
