/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Top commands per cgroup (cgs_rollup_opts.comms) against the real kernel,
 * with exact expectations.
 *
 *  heavy_hitters_kernel  the case: in a scratch cgroup, NLIGHT
 *               distinct light commands ("l00000".."l09999": born there by
 *               clone3(CLONE_INTO_CGROUP), renamed with PR_SET_NAME, exit
 *               at once) run FIRST, THEN five heavy ones ("heavy0".."heavy4",
 *               300, 250, 200, 150 and 100 process exits, interleaved),
 *               each burning a known user CPU per process so that the CPU
 *               ranking (heavy4 first) is the reverse of the exits ranking
 *               (heavy0 first). Summaries of 64 counters (the collector's
 *               least), 5 listed, one listener shard: by exits the five
 *               heavy ones in order with their exact exit counts; (other)
 *               holds the rest within its stated error; by CPU the five in
 *               the order of the CPU their records hold (the reverse of
 *               the exits order unless forks are very slow), each exactly
 *               the sum of utime + stime of its own records (read here
 *               from the same callback), and within a plausible range of
 *               what it burned plus what a light process costs.
 *  heavy_hitters_shards  the same with the default listener (one shard per
 *               CPU, at least 2): the shards' summaries merged.
 *  threads_kernel  "mtparent", whose 8 threads rename themselves
 *               ("worker-N"), burn CPU and exit before it does: all its CPU
 *               ranks under "mtparent", none under "worker-*"; the same for
 *               "mtquick" ("qworker-N" threads), whose records are all read
 *               only after it was reaped (the kernel captured the leader's
 *               comm at exit).
 *  threads_proc  the /proc source (children moved in before they run): for
 *               "mtparent", alive while its thread records are read, the
 *               same; for "mtquick", gone when they are read, each thread
 *               record is ranked under its own comm and counted in
 *               totals.comm_own.
 *
 * Heavy hitters and Space-Saving's exactness: a command's value (lower
 * bound) is exact when it was never pushed out since its first exit. Each
 * heavy command first runs twice in a row pinned to each CPU (so twice in
 * a row in each shard) burning WARM_US each time: by exits it is then at
 * the floor + 2, above every light command (at most floor + 1), by CPU far
 * above any light command's counter, so it is never the one evicted by the
 * four other heavy commands that enter after it (the lights are done by
 * then): the values are exact by construction, not by the heap's
 * tie-breaking. (With a single exit per shard first, a just-entered
 * command tied with the lights at floor + 1 can be the next one evicted:
 * seen with 2 shards, heavy3 at 149 of 150 exits, within its error.)
 *
 * CPU times come from taskstats (tick-sampled here without
 * VIRT_CPU_ACCOUNTING_GEN): the orders are chosen with margins of many
 * standard deviations of that sampling; only the comparison with the
 * records is exact.
 *
 * Only records of this test's cgroups are asserted on (other tests may
 * run on the host). The listener must drop nothing (64 MiB buffers); the
 * kernel cases need every record of ours attributed by the kernel source.
 * Skips (77) without taskstats, CAP_NET_ADMIN, cgroup2, clone3, or (kernel
 * cases) the kernel source, saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/cgtest.h"
#include "support/clock.h"
#include "support/pipeline.h"
#include "support/skip.h"

#define NLIGHT 10000
#define NHEAVY 5
#define SUMMARY 64   /* cgs_rollup_opts.comms: the collector's least */
#define LISTED 5     /* cgs_snapshot_opts.comms */
#define WARM_US 20000 /* each heavy command's first 2 exits on each CPU */
#define NTHREADS 8
#define THREAD_US 20000
#define RCVBUF (64u << 20)
#define EXIT_NO_CLONE3 77

static const unsigned heavy_exits[NHEAVY] = { 300, 250, 200, 150, 100 };
/* user CPU burnt by each later process, us: heavy4 burns the most */
static const unsigned heavy_us[NHEAVY] = { 250, 1200, 3000, 8000, 24000 };

/* What the callback saw of the records of one of our cgroups. */
struct tally {
	char path[512];
	atomic_uint_fast64_t records, exits, kernel, cpu, threads;
	atomic_uint_fast64_t light_exits, light_cpu, light_cpu_max;
	atomic_uint_fast64_t heavy_exits[NHEAVY], heavy_cpu[NHEAVY];
};

static struct cgs_rollup *rollup;
static struct tally tallies[2];
static size_t ntallies;
static atomic_uint_fast64_t account_errors;

static void account_one(const struct cgs_exit *ev, const struct cgs_record *r)
{
	const char *path = NULL;
	enum cgs_source src = CGS_SOURCE_NONE;
	if (cgt_add(rollup, ev->shard, r, &path, &src) < 0) {
		atomic_fetch_add(&account_errors, 1);
		return;
	}
	if (!path || r->kind == CGS_KIND_TGID)
		return;
	for (size_t i = 0; i < ntallies; i++) {
		struct tally *t = &tallies[i];
		if (strcmp(path, t->path))
			continue;
		uint64_t cpu = r->utime_us + r->stime_us;
		bool proc = r->kind == CGS_KIND_PROCESS;
		atomic_fetch_add(&t->records, 1);
		atomic_fetch_add(&t->exits, proc);
		atomic_fetch_add(&t->threads, !proc);
		atomic_fetch_add(&t->kernel, src == CGS_SOURCE_KERNEL);
		atomic_fetch_add(&t->cpu, cpu);
		unsigned k;
		char end;
		if (sscanf(r->comm, "heavy%u%c", &k, &end) == 1 &&
		    k < NHEAVY) {
			atomic_fetch_add(&t->heavy_exits[k], proc);
			atomic_fetch_add(&t->heavy_cpu[k], cpu);
		} else if (r->comm[0] == 'l' && strlen(r->comm) == 6) {
			atomic_fetch_add(&t->light_exits, proc);
			atomic_fetch_add(&t->light_cpu, cpu);
			uint_fast64_t m = atomic_load(&t->light_cpu_max);
			while (cpu > m && !atomic_compare_exchange_weak(
						  &t->light_cpu_max, &m, cpu))
				;
		}
	}
}

static int on_exit_ev(const struct cgs_exit *ev, void *user)
{
	(void)user;
	if (ev->task)
		account_one(ev, ev->task);
	if (ev->group)
		account_one(ev, ev->group);
	return 0;
}

static struct tally *tally_new(const char *rel)
{
	struct tally *t = &tallies[ntallies++];
	memset(t, 0, sizeof(*t));
	snprintf(t->path, sizeof(t->path), "%s", rel);
	return t;
}

/* Burn `us` of this thread's CPU, mostly in user mode. */
static void burn(unsigned us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	uint64_t until = (uint64_t)a.tv_sec * 1000000 + a.tv_nsec / 1000 + us;
	volatile uint64_t x = 1;
	for (;;) {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		if ((uint64_t)b.tv_sec * 1000000 + b.tv_nsec / 1000 >= until)
			break;
	}
}

static size_t find_index(const struct cgs_snapshot *s, const char *path)
{
	for (size_t i = 0; i < cgs_snapshot_count(s); i++)
		if (!strcmp(cgs_snapshot_get_cgroup(s, i)->path, path))
			return i;
	return (size_t)-1;
}

static void print_ranking(const struct cgs_snapshot *s, size_t i,
			  enum cgs_comm_rank by)
{
	size_t n = cgs_snapshot_comm_count(s, i, by);
	printf("  %s (%zu entries):\n", by == CGS_COMMS_BY_CPU ? "by cpu us" :
	       "by exits", n);
	for (size_t j = 0; j < n; j++) {
		const struct cgs_comm *e = cgs_snapshot_get_comm(s, i, by, j);
		printf("    %-16s value %llu error %llu%s", e->other ? "(other)" :
		       e->comm, (unsigned long long)e->value,
		       (unsigned long long)e->error, e->other ? "" : "\n");
		if (e->other)
			printf(" max_each %llu\n",
			       (unsigned long long)e->max_each);
	}
}

/* Wait (up to 20 s) for the callback to have seen `want` exits in t, then
 * settle, stop the listener, and require that nothing was dropped. */
static void wait_records(struct cgt_pipeline *pl, const struct tally *t,
			 uint64_t want)
{
	for (int i = 0; i < 200 && atomic_load(&t->exits) < want; i++)
		cgt_sleep_ms(100);
	struct cgs_loss loss;
	assert_int_equal(cgt_listener_drain(pl->l, 300, &loss), 0);
	printf("%s: %llu exits of %llu seen, %llu records, dropped %llu\n",
	       t->path, (unsigned long long)atomic_load(&t->exits),
	       (unsigned long long)want,
	       (unsigned long long)atomic_load(&t->records),
	       (unsigned long long)loss.dropped);
	if (loss.dropped)
		fail_msg("the kernel dropped %llu records: no ground truth",
			 (unsigned long long)loss.dropped);
	assert_int_equal(atomic_load(&account_errors), 0);
}

static void open_pipeline(struct cgt_pipeline *pl, unsigned shards,
			  enum cgs_attribution a)
{
	if (!cgt_cgroup2_mount())
		cgt_skip("no cgroup2 mount");
	struct cgs_listener_opts lo = {
		.sz = sizeof(lo), .rcvbuf = RCVBUF, .shards = shards,
	};
	struct cgs_rollup_opts ro = {
		.sz = sizeof(ro), .attribution = a, .comms = SUMMARY,
	};
	int rc = cgt_pipeline_open_opts(pl, &lo, &ro);
	if (rc == 77)
		cgt_skip("see above (listener or attribution source)");
	assert_int_equal(rc, 0);
	rollup = pl->r;
}

/* ---- heavy hitters ------------------------------------------------- */

static int cgfd = -1;

/* A child born in our cgroup, named `name`, pinned to cpu (-1: not),
 * burning us of CPU; reaped. */
static void run_one(const char *name, int cpu, unsigned us)
{
	pid_t p = cgt_clone_into(cgfd);
	if (p == 0) {
		prctl(PR_SET_NAME, name);
		if (cpu >= 0) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set) < 0)
				_exit(3);
		}
		if (us)
			burn(us);
		_exit(0);
	}
	if (p < 0 && errno == ENOSYS)
		cgt_skip("no clone3() here (Linux < 5.7, or valgrind)");
	if (p < 0)
		fail_msg("clone3: %s", strerror(errno));
	int st = 0;
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("%s: status %#x", name, st);
}

/* The truth of heavy command k by `by`: its exits, or the CPU its
 * records hold. */
static uint64_t heavy_truth(const struct tally *t, enum cgs_comm_rank by,
			    int k)
{
	return by == CGS_COMMS_BY_CPU ? atomic_load(&t->heavy_cpu[k])
				      : heavy_exits[k];
}

static void expect_rank(const struct cgs_snapshot *s, size_t i,
			enum cgs_comm_rank by, const int *order,
			const struct tally *t, uint64_t total)
{
	const char *what = by == CGS_COMMS_BY_CPU ? "cpu" : "exits";
	size_t n = cgs_snapshot_comm_count(s, i, by);
	assert_int_equal(n, LISTED + 1);
	uint64_t values = 0;
	for (int j = 0; j < LISTED; j++) {
		const struct cgs_comm *e = cgs_snapshot_get_comm(s, i, by, j);
		char want[16];
		snprintf(want, sizeof(want), "heavy%d", order[j]);
		unsigned k;
		char end;
		/* two commands with the same truth rank either way */
		if (!e->other && strcmp(e->comm, want) &&
		    sscanf(e->comm, "heavy%u%c", &k, &end) == 1 &&
		    k < NHEAVY && heavy_truth(t, by, (int)k) ==
				    heavy_truth(t, by, order[j]))
			snprintf(want, sizeof(want), "heavy%u", k);
		if (e->other || strcmp(e->comm, want))
			fail_msg("by %s, #%d: %s, want %s", what, j,
				 e->other ? "(other)" : e->comm, want);
		uint64_t truth = heavy_truth(t, by, order[j]);
		/* never pushed out since its first exit: exact */
		if (e->value != truth)
			fail_msg("by %s, %s: value %llu, its records hold %llu "
				 "(error %llu)", what, want,
				 (unsigned long long)e->value,
				 (unsigned long long)truth,
				 (unsigned long long)e->error);
		/* the stated bound: error <= total / capacity */
		assert_true(e->error <= total / SUMMARY);
		values += e->value;
	}
	const struct cgs_comm *o = cgs_snapshot_get_comm(s, i, by, LISTED);
	assert_true(o->other);
	assert_string_equal(o->comm, "");
	/* the rest lies in [value, value + error] and the whole adds up */
	uint64_t rest = total - values;
	if (o->value > rest || rest > o->value + o->error)
		fail_msg("by %s, (other): %llu not in [%llu, %llu + %llu]",
			 what, (unsigned long long)rest,
			 (unsigned long long)o->value,
			 (unsigned long long)o->value,
			 (unsigned long long)o->error);
	assert_true(o->value + values + o->error == total);
	/* no folded command has more than max_each: a light command's
	 * true value is its one record's */
	uint64_t light_max = by == CGS_COMMS_BY_CPU ?
		atomic_load(&t->light_cpu_max) : 1;
	if (o->max_each < light_max)
		fail_msg("by %s, (other): max_each %llu, a light command has "
			 "%llu", what, (unsigned long long)o->max_each,
			 (unsigned long long)light_max);
	assert_null(cgs_snapshot_get_comm(s, i, by, LISTED + 1));
}

/* The heavy commands by the CPU their records hold, most first: heavy4
 * to heavy0 by the CPU they burn (with a margin of 225 ms of burn between
 * heavy1 and heavy0, the closest pair), unless forks cost so much that
 * the 50 exits more of the lower one outweigh that; the summary must rank
 * by what the records hold either way. */
static void cpu_order(const struct tally *t, int *order)
{
	for (int j = 0; j < LISTED; j++)
		order[j] = NHEAVY - 1 - j;
	for (int a = 0; a < LISTED; a++)
		for (int b = a + 1; b < LISTED; b++)
			if (atomic_load(&t->heavy_cpu[order[b]]) >
			    atomic_load(&t->heavy_cpu[order[a]])) {
				int x = order[a];
				order[a] = order[b];
				order[b] = x;
			}
	bool reversed = true;
	for (int j = 0; j < LISTED; j++)
		reversed = reversed && order[j] == NHEAVY - 1 - j;
	if (!reversed)
		printf("note: forks cost so much here that the CPU order is "
		       "not the reverse of the exits order\n");
}

static void heavy_hitters(unsigned shards, bool need_shards)
{
	struct cgt_pipeline pl;
	open_pipeline(&pl, shards, CGS_ATTRIBUTION_KERNEL);
	unsigned nsh = cgs_listener_shards(pl.l);
	if (need_shards && nsh < 2) {
		cgt_pipeline_close(&pl);
		cgt_skip("one CPU: a single listener shard");
	}
	char rel[128], dir[4608];
	snprintf(rel, sizeof(rel), "/cgs-comms-%d", (int)getpid());
	assert_int_equal(cgt_mkdir(rel, dir, sizeof(dir)), 0);
	cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(cgfd >= 0);
	ntallies = 0;
	struct tally *t = tally_new(rel);

	cpu_set_t mine;
	CPU_ZERO(&mine);
	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	int cpus[CPU_SETSIZE], ncpu = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &mine))
			cpus[ncpu++] = c;
	assert_true(ncpu >= 1 && 2u * ncpu < heavy_exits[NHEAVY - 1]);

	struct cgs_run_opts run = { .sz = sizeof(run), .batch_ms = 20 };
	assert_int_equal(cgs_listener_run(pl.l, on_exit_ev, NULL, &run), 0);
	double t0 = cgt_now_s();
	for (int i = 0; i < NLIGHT; i++) {
		char name[16];
		snprintf(name, sizeof(name), "l%05d", i);
		run_one(name, -1, 0);
	}
	double t1 = cgt_now_s();
	/* the heavy ones: each first twice on each CPU (see the top) */
	unsigned left[NHEAVY];
	uint64_t burnt[NHEAVY];
	char hname[NHEAVY][16];
	for (int k = 0; k < NHEAVY; k++) {
		snprintf(hname[k], sizeof(hname[k]), "heavy%d", k);
		for (int c = 0; c < ncpu; c++) {
			run_one(hname[k], cpus[c], WARM_US);
			run_one(hname[k], cpus[c], WARM_US);
		}
		left[k] = heavy_exits[k] - 2u * (unsigned)ncpu;
		burnt[k] = 2ull * (unsigned)ncpu * WARM_US +
			   (uint64_t)left[k] * heavy_us[k];
	}
	for (bool any = true; any;) {
		any = false;
		for (int k = 0; k < NHEAVY; k++)
			if (left[k]) {
				left[k]--;
				run_one(hname[k], -1, heavy_us[k]);
				any = true;
			}
	}
	uint64_t heavy_total = 0;
	for (int k = 0; k < NHEAVY; k++)
		heavy_total += heavy_exits[k];
	printf("%u shards; %d lights in %.1f s, heavy ones in %.1f s\n", nsh,
	       NLIGHT, t1 - t0, cgt_now_s() - t1);
	wait_records(&pl, t, NLIGHT + heavy_total);
	close(cgfd);

	struct cgs_snapshot_opts so = {
		.sz = sizeof(so), .no_delta = true, .comms = LISTED,
	};
	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(pl.r, &so, &s), 0);
	size_t i = find_index(s, rel);
	assert_true(i != (size_t)-1);
	const struct cgs_cgroup_stats *c = cgs_snapshot_get_cgroup(s, i);
	const struct cgs_rollup_totals *tt = cgs_snapshot_get_totals(s);
	printf("%s: %llu exits (%llu light), %llu records, %llu via kernel, "
	       "cpu %llu us; totals.comms %llu\n", rel,
	       (unsigned long long)c->self->processes,
	       (unsigned long long)atomic_load(&t->light_exits),
	       (unsigned long long)atomic_load(&t->records),
	       (unsigned long long)atomic_load(&t->kernel),
	       (unsigned long long)atomic_load(&t->cpu),
	       (unsigned long long)tt->comms);
	/* what the kernel source missed, if anything: why a record could
	 * have gone elsewhere */
	printf("kernel source: %llu matched, unmatched %llu lost %llu "
	       "expired %llu waits %llu; proc %llu parent %llu\n",
	       (unsigned long long)tt->via_kernel,
	       (unsigned long long)tt->kernel_unmatched,
	       (unsigned long long)tt->kernel_lost,
	       (unsigned long long)tt->kernel_expired,
	       (unsigned long long)tt->kernel_waits,
	       (unsigned long long)tt->via_proc,
	       (unsigned long long)tt->via_parent);
	print_ranking(s, i, CGS_COMMS_BY_EXITS);
	print_ranking(s, i, CGS_COMMS_BY_CPU);
	for (int k = 0; k < NHEAVY; k++)
		printf("  heavy%d: %u exits, burnt %llu us, records %llu us\n",
		       k, heavy_exits[k], (unsigned long long)burnt[k],
		       (unsigned long long)atomic_load(&t->heavy_cpu[k]));

	/* the ground truth is whole: every exit of ours, each attributed by
	 * the kernel source to this cgroup */
	assert_int_equal(tt->comms, SUMMARY);
	assert_int_equal(atomic_load(&t->light_exits), NLIGHT);
	for (int k = 0; k < NHEAVY; k++)
		assert_int_equal(atomic_load(&t->heavy_exits[k]),
				 heavy_exits[k]);
	assert_int_equal(atomic_load(&t->exits), NLIGHT + heavy_total);
	assert_int_equal(c->self->processes, NLIGHT + heavy_total);
	if (atomic_load(&t->kernel) != atomic_load(&t->records))
		fail_msg("%llu of %llu records not attributed by the kernel "
			 "source", (unsigned long long)(atomic_load(&t->records) -
							 atomic_load(&t->kernel)),
			 (unsigned long long)atomic_load(&t->records));

	static const int by_exits[LISTED] = { 0, 1, 2, 3, 4 };
	int by_cpu[LISTED];
	cpu_order(t, by_cpu);
	expect_rank(s, i, CGS_COMMS_BY_EXITS, by_exits, t,
		    NLIGHT + heavy_total);
	expect_rank(s, i, CGS_COMMS_BY_CPU, by_cpu, t, atomic_load(&t->cpu));
	/* the kernel's sampled CPU against what each burnt, plus its clone,
	 * exit and wait: what a light process costs, measured in this run
	 * (0.6 ms here, 1.9 ms on a CI machine where forks were slow), at
	 * least 1 ms */
	uint64_t each = 2 * atomic_load(&t->light_cpu) / NLIGHT;
	if (each < 1000)
		each = 1000;
	for (int k = 0; k < NHEAVY; k++) {
		uint64_t v = atomic_load(&t->heavy_cpu[k]);
		uint64_t lo = burnt[k] * 6 / 10;
		uint64_t hi = burnt[k] * 3 / 2 + heavy_exits[k] * each;
		if (v < lo || v > hi)
			fail_msg("heavy%d: %llu us of CPU, burnt %llu (want "
				 "%llu..%llu)", k, (unsigned long long)v,
				 (unsigned long long)burnt[k],
				 (unsigned long long)lo, (unsigned long long)hi);
	}
	cgs_snapshot_free(s);
	cgt_pipeline_close(&pl);
}

static void test_heavy_hitters_kernel(void **state)
{
	(void)state;
	heavy_hitters(1, false);
}

static void test_heavy_hitters_shards(void **state)
{
	(void)state;
	heavy_hitters(0, true);
}

/* ---- threads ------------------------------------------------------- */

static const char *thread_fmt;

static void *worker(void *a)
{
	char name[16];
	snprintf(name, sizeof(name), thread_fmt, (int)(intptr_t)a);
	pthread_setname_np(pthread_self(), name);
	burn(THREAD_US);
	return NULL;
}

static void mt_body(const char *comm, const char *fmt, unsigned linger_ms)
{
	prctl(PR_SET_NAME, comm);
	thread_fmt = fmt;
	pthread_t th[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i))
			_exit(3);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	/* alive while its thread records are read (batches of 20 ms) */
	if (linger_ms)
		cgt_sleep_ms(linger_ms);
}

static void mtparent(void)
{
	mt_body("mtparent", "worker-%d", 500);
}

static void mtquick(void)
{
	mt_body("mtquick", "qworker-%d", 0);
}

static void release(int go[2], pid_t p)
{
	close(go[0]);
	if (write(go[1], "g", 1) != 1)
		fail_msg("release %d: %s", (int)p, strerror(errno));
	close(go[1]);
}

static void reap(pid_t p)
{
	int st = 0;
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("child %d: status %#x", (int)p, st);
}

/* A ranking with a single entry: comm, value. */
static void expect_only(const struct cgs_snapshot *s, size_t i,
			enum cgs_comm_rank by, const char *comm,
			uint64_t value)
{
	assert_int_equal(cgs_snapshot_comm_count(s, i, by), 1);
	const struct cgs_comm *e = cgs_snapshot_get_comm(s, i, by, 0);
	assert_false(e->other);
	assert_string_equal(e->comm, comm);
	assert_int_equal(e->value, value);
	assert_int_equal(e->error, 0);
}

/* Held keys of the CPU rankings of every row whose name starts with
 * prefix. */
static size_t count_keys(const struct cgs_snapshot *s, const char *prefix)
{
	size_t n = 0;
	for (size_t i = 0; i < cgs_snapshot_count(s); i++)
		for (size_t j = 0;
		     j < cgs_snapshot_comm_count(s, i, CGS_COMMS_BY_CPU); j++) {
			const struct cgs_comm *e =
				cgs_snapshot_get_comm(s, i, CGS_COMMS_BY_CPU, j);
			n += !e->other && !strncmp(e->comm, prefix,
						   strlen(prefix));
		}
	return n;
}

static void threads(enum cgs_attribution a)
{
	bool kernel = a == CGS_ATTRIBUTION_KERNEL;
	if (!cgt_cgroup2_mount())
		cgt_skip("no cgroup2 mount");
	char base[128], rel_mt[160], rel_q[160], dir[4608], dmt[4608],
		dq[4608];
	snprintf(base, sizeof(base), "/cgs-comms-%d", (int)getpid());
	snprintf(rel_mt, sizeof(rel_mt), "%s/mt", base);
	snprintf(rel_q, sizeof(rel_q), "%s/quick", base);
	assert_int_equal(cgt_mkdir(base, dir, sizeof(dir)), 0);
	assert_int_equal(cgt_mkdir(rel_mt, dmt, sizeof(dmt)), 0);
	assert_int_equal(cgt_mkdir(rel_q, dq, sizeof(dq)), 0);
	/* forked while single-threaded, moved in before they run */
	int gmt[2], gq[2];
	assert_int_equal(pipe(gmt), 0);
	assert_int_equal(pipe(gq), 0);
	pid_t pmt = cgt_fork_held(gmt, dmt, mtparent);
	pid_t pq = cgt_fork_held(gq, dq, mtquick);
	assert_true(pmt > 0 && pq > 0);

	struct cgt_pipeline pl;
	open_pipeline(&pl, 1, a);
	ntallies = 0;
	struct tally *tmt = tally_new(rel_mt);
	struct tally *tq = tally_new(rel_q);
	struct cgs_rollup_totals t0 = { .sz = sizeof(t0) };
	cgs_rollup_get_totals(pl.r, &t0);
	/* mtquick runs and is reaped before a record is read */
	release(gq, pq);
	reap(pq);
	struct cgs_run_opts run = { .sz = sizeof(run), .batch_ms = 20 };
	assert_int_equal(cgs_listener_run(pl.l, on_exit_ev, NULL, &run), 0);
	release(gmt, pmt);
	reap(pmt);
	wait_records(&pl, tmt, 1);
	if (kernel && atomic_load(&tq->exits) < 1)
		fail_msg("mtquick's exit not in %s", rel_q);

	struct cgs_snapshot_opts so = { .sz = sizeof(so), .no_delta = true };
	struct cgs_snapshot *s = NULL;
	assert_int_equal(cgs_rollup_snapshot(pl.r, &so, &s), 0);
	const struct cgs_rollup_totals *tt = cgs_snapshot_get_totals(s);
	uint64_t own = tt->comm_own - t0.comm_own;
	size_t imt = find_index(s, rel_mt), iq = find_index(s, rel_q);
	assert_true(imt != (size_t)-1);
	printf("%s: %llu records (%llu threads), %llu via kernel, cpu %llu "
	       "us\n", rel_mt, (unsigned long long)atomic_load(&tmt->records),
	       (unsigned long long)atomic_load(&tmt->threads),
	       (unsigned long long)atomic_load(&tmt->kernel),
	       (unsigned long long)atomic_load(&tmt->cpu));
	print_ranking(s, imt, CGS_COMMS_BY_CPU);
	print_ranking(s, imt, CGS_COMMS_BY_EXITS);
	if (iq != (size_t)-1) {
		printf("%s: %llu records (%llu threads), %llu via kernel, cpu "
		       "%llu us\n", rel_q,
		       (unsigned long long)atomic_load(&tq->records),
		       (unsigned long long)atomic_load(&tq->threads),
		       (unsigned long long)atomic_load(&tq->kernel),
		       (unsigned long long)atomic_load(&tq->cpu));
		print_ranking(s, iq, CGS_COMMS_BY_CPU);
	}
	size_t qkeys = count_keys(s, "qworker-");
	printf("comm_own +%llu; \"worker-*\" keys held %zu, \"qworker-*\" "
	       "keys held %zu\n", (unsigned long long)own,
	       count_keys(s, "worker-"), qkeys);

	/* mtparent: 8 thread records, its own; all under its comm */
	assert_int_equal(atomic_load(&tmt->threads), NTHREADS);
	assert_int_equal(atomic_load(&tmt->exits), 1);
	uint64_t cpu = atomic_load(&tmt->cpu);
	if (cpu < NTHREADS * THREAD_US / 2 || cpu > NTHREADS * THREAD_US * 3)
		fail_msg("mtparent: %llu us of CPU, its threads burnt %d",
			 (unsigned long long)cpu, NTHREADS * THREAD_US);
	expect_only(s, imt, CGS_COMMS_BY_CPU, "mtparent", cpu);
	expect_only(s, imt, CGS_COMMS_BY_EXITS, "mtparent", 1);
	assert_int_equal(count_keys(s, "worker-"), 0);
	if (kernel) {
		assert_int_equal(atomic_load(&tmt->kernel),
				 atomic_load(&tmt->records));
		/* mtquick: gone before its records were read, but the
		 * kernel captured its comm */
		assert_true(iq != (size_t)-1);
		assert_int_equal(atomic_load(&tq->threads), NTHREADS);
		assert_int_equal(atomic_load(&tq->kernel),
				 atomic_load(&tq->records));
		expect_only(s, iq, CGS_COMMS_BY_CPU, "mtquick",
			    atomic_load(&tq->cpu));
		expect_only(s, iq, CGS_COMMS_BY_EXITS, "mtquick", 1);
		assert_int_equal(qkeys, 0);
	} else {
		/* mtquick's thread records: its /proc/<tgid>/comm was gone,
		 * each ranked under its own comm and counted */
		if (own < NTHREADS)
			fail_msg("comm_own +%llu, want >= %d (mtquick's "
				 "threads)", (unsigned long long)own, NTHREADS);
		assert_true(qkeys <= own);
		/* where they landed in our tree, under their own names */
		if (iq != (size_t)-1 && atomic_load(&tq->threads)) {
			size_t n = cgs_snapshot_comm_count(s, iq,
							   CGS_COMMS_BY_CPU);
			for (size_t j = 0; j < n; j++) {
				const struct cgs_comm *e = cgs_snapshot_get_comm(
					s, iq, CGS_COMMS_BY_CPU, j);
				assert_false(e->other);
				assert_true(!strncmp(e->comm, "qworker-", 8) ||
					    !strcmp(e->comm, "mtquick"));
			}
		}
	}
	cgs_snapshot_free(s);
	cgt_pipeline_close(&pl);
}

static void test_threads_kernel(void **state)
{
	(void)state;
	threads(CGS_ATTRIBUTION_KERNEL);
}

static void test_threads_proc(void **state)
{
	(void)state;
	threads(CGS_ATTRIBUTION_PROC);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heavy_hitters_kernel),
		cmocka_unit_test(test_heavy_hitters_shards),
		cmocka_unit_test(test_threads_kernel),
		cmocka_unit_test(test_threads_proc),
	};
	return CGT_RUN(argc, argv, tests);
}
