/*
 * Register for real, run known workloads, and check that exactly their exits
 * arrive: K threads + 1 process exit for a threaded process, one process
 * record per forked child, right pid/tgid/ppid/comm/status/kind, 0 drops.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/skip.h"

#define MAX_SEEN 4096

struct seen {
	pthread_mutex_t mu;
	uint32_t watch_tgid;  /* records of this tgid ... */
	uint32_t watch_ppid;  /* ... or whose parent is this */
	size_t n;
	struct cgs_record task[MAX_SEEN];
	size_t ngroup;
	struct cgs_record group[64];
	bool done;            /* the watched process's exit has arrived */
};

static int collect(const struct cgs_exit *ev, void *arg)
{
	struct seen *s = arg;
	const struct cgs_record *t = ev->task;
	pthread_mutex_lock(&s->mu);
	if (t && ((s->watch_tgid && t->tgid == s->watch_tgid) ||
		  (s->watch_ppid && t->ppid == s->watch_ppid &&
		   t->kind == CGS_KIND_PROCESS))) {
		if (s->n < MAX_SEEN)
			s->task[s->n++] = *t;
		if (s->watch_tgid && t->kind == CGS_KIND_PROCESS &&
		    t->tgid == s->watch_tgid)
			s->done = true;
	}
	if (ev->group && s->watch_tgid && ev->group->tgid == s->watch_tgid &&
	    s->ngroup < 64)
		s->group[s->ngroup++] = *ev->group;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static void *worker(void *arg)
{
	prctl(PR_SET_NAME, "cgs-worker");
	struct timespec ts = { 0, 1000 * (long)(intptr_t)arg };
	nanosleep(&ts, NULL);
	return NULL;
}

/*
 * A child that runs K threads to completion, then exits with status 3;
 * with go >= 0, only once a byte can be read from go. Fork it before the
 * listener's threads exist: a child forked from a multi-threaded process
 * that allocates and makes threads can hang under ASan (its allocator's
 * lock held by another thread at the fork; seen in CI).
 */
static pid_t spawn_threaded(int k, int go)
{
	pid_t p = fork();
	if (p != 0)
		return p;
	char c;
	if (go >= 0 && read(go, &c, 1) != 1)
		_exit(98);
	prctl(PR_SET_NAME, "cgs-main");
	pthread_t *t = calloc((size_t)k, sizeof(*t));
	for (int i = 0; i < k; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i))
			_exit(99);
	for (int i = 0; i < k; i++)
		pthread_join(t[i], NULL);
	exit(3);
}

static void wait_done(struct seen *s, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		pthread_mutex_lock(&s->mu);
		bool d = s->done;
		pthread_mutex_unlock(&s->mu);
		if (d)
			return;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static void test_threads_exactly_k_plus_1(void **state)
{
	(void)state;
	const int K = 200;
	static struct seen s;
	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.mu, NULL);
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t child = spawn_threaded(K, go[0]);
	close(go[0]);
	s.watch_tgid = (uint32_t)child;
	struct cgs_listener *l;
	assert_int_equal(cgs_listener_open(&l, NULL), 0);
	assert_true(cgs_listener_shards(l) >= 1);
	assert_int_equal(cgs_listener_selftest(l, 2000, NULL, NULL), 0);
	assert_int_equal(cgs_listener_run(l, collect, &s, NULL), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	wait_done(&s, 5000);
	assert_int_equal(cgs_listener_stop(l), 0);

	struct cgs_loss loss = { .sz = sizeof(loss) };
	assert_int_equal(cgs_listener_get_loss(l, CGS_ALL_SHARDS, &loss), 0);
	assert_int_equal(loss.dropped, 0);
	assert_int_equal(loss.malformed, 0);

	assert_int_equal(s.n, (size_t)K + 1);
	int threads = 0, procs = 0;
	for (size_t i = 0; i < s.n; i++) {
		const struct cgs_record *r = &s.task[i];
		assert_int_equal(r->tgid, (uint32_t)child);
		assert_true(r->version >= 12);
		assert_true(r->fields & CGS_HAS_BASIC);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(s.task[j].pid, r->pid);
		if (r->kind == CGS_KIND_PROCESS) {
			procs++;
			/* the leader exits last: it joined everyone */
			assert_int_equal(r->pid, (uint32_t)child);
			assert_string_equal(r->comm, "cgs-main");
			assert_int_equal(r->exit_status, 3 << 8);
			assert_true(r->flag & CGS_AC_AGROUP);
			assert_int_equal(r->ppid, (uint32_t)getpid());
		} else {
			threads++;
			assert_int_equal(r->kind, CGS_KIND_THREAD);
			assert_string_equal(r->comm, "cgs-worker");
			assert_int_not_equal(r->pid, (uint32_t)child);
			assert_false(r->flag & CGS_AC_AGROUP);
		}
	}
	assert_int_equal(threads, K);
	assert_int_equal(procs, 1);
	/* a multi-threaded process gets one thread-group aggregate */
	assert_int_equal(s.ngroup, 1);
	assert_int_equal(s.group[0].kind, CGS_KIND_TGID);
	assert_int_equal(s.group[0].tgid, (uint32_t)child);
	cgs_listener_close(l);
}

static void test_forked_children(void **state)
{
	(void)state;
	const int P = 300;
	static struct seen s;
	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.mu, NULL);
	s.watch_ppid = (uint32_t)getpid();
	struct cgs_listener *l;
	struct cgs_listener_opts o = { .sz = sizeof(o) };
	assert_int_equal(cgs_listener_open(&l, &o), 0);
	assert_int_equal(cgs_listener_run(l, collect, &s, NULL), 0);
	pid_t kids[300];
	for (int i = 0; i < P; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (kids[i] == 0) {
			prctl(PR_SET_NAME, "cgs-kid");
			_exit(7);
		}
		int st;
		assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
	}
	for (int i = 0; i < 300; i++) {
		pthread_mutex_lock(&s.mu);
		size_t n = s.n;
		pthread_mutex_unlock(&s.mu);
		if (n >= (size_t)P)
			break;
		usleep(10000);
	}
	assert_int_equal(cgs_listener_stop(l), 0);
	struct cgs_loss loss = { .sz = sizeof(loss) };
	assert_int_equal(cgs_listener_get_loss(l, CGS_ALL_SHARDS, &loss), 0);
	assert_int_equal(loss.dropped, 0);
	assert_int_equal(s.n, (size_t)P);
	for (int i = 0; i < P; i++) {
		const struct cgs_record *r = NULL;
		for (size_t j = 0; j < s.n; j++)
			if (s.task[j].pid == (uint32_t)kids[i])
				r = &s.task[j];
		assert_non_null(r);
		assert_int_equal(r->kind, CGS_KIND_PROCESS);
		assert_int_equal(r->tgid, (uint32_t)kids[i]);
		assert_string_equal(r->comm, "cgs-kid");
		assert_int_equal(r->exit_status, 7 << 8);
	}
	/* single-threaded processes send no TGID aggregate */
	assert_int_equal(s.ngroup, 0);
	cgs_listener_close(l);
}

static int count_cb(const struct cgs_exit *ev, void *arg)
{
	(void)ev;
	++*(int *)arg;
	return 0;
}

/* Drive the shard fds from our own poll loop, one socket per CPU. */
static void test_own_loop_one_shard_per_cpu(void **state)
{
	(void)state;
	int ncpu = cgs_possible_cpus();
	assert_true(ncpu >= 1);
	struct cgs_listener *l;
	struct cgs_listener_opts o = { .sz = sizeof(o), .shards = (unsigned)ncpu,
				       .flags = CGS_NO_TGID };
	assert_int_equal(cgs_listener_open(&l, &o), 0);
	assert_int_equal(cgs_listener_shards(l), (unsigned)ncpu);
	for (int i = 0; i < ncpu; i++) {
		char want[16];
		snprintf(want, sizeof(want), "%d", i);
		assert_string_equal(cgs_listener_shard_cpus(l, (unsigned)i), want);
		assert_true(cgs_listener_shard_fd(l, (unsigned)i) >= 0);
		/* forced buffer: at least what we asked for */
		assert_true(cgs_listener_shard_rcvbuf(l, (unsigned)i) >= (16u << 20));
	}
	pid_t c = spawn_threaded(20, -1);
	waitpid(c, NULL, 0);
	usleep(50000);
	int n = 0;
	for (int i = 0; i < ncpu; i++)
		assert_true(cgs_listener_drain(l, (unsigned)i, count_cb, &n) >= 0);
	assert_true(n >= 21);
	struct cgs_loss loss = { .sz = sizeof(loss) };
	assert_int_equal(cgs_listener_get_loss(l, CGS_ALL_SHARDS, &loss), 0);
	assert_int_equal(loss.dropped, 0);
	assert_int_equal(loss.seq_gaps, 0);
	assert_true(loss.tgid_skipped >= 1);
	cgs_listener_close(l);
}

static void test_bad_cpulists(void **state)
{
	(void)state;
	const char *bad[] = { "garbage", "1-0", "0,,1", "", "0-", "-1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cgs_listener *l = (void *)1;
		struct cgs_listener_opts o = { .sz = sizeof(o), .cpus = bad[i] };
		char err[128] = "";
		assert_true(cgs_cpulist_validate(bad[i], err, sizeof(err)) < 0);
		assert_true(err[0] != '\0');
		assert_int_equal(cgs_listener_open(&l, &o), -EINVAL);
		assert_null(l);
	}
	struct cgs_listener *l;
	struct cgs_listener_opts o = { .sz = sizeof(o), .cpus = "4095" };
	assert_int_equal(cgs_listener_open(&l, &o), -ERANGE);
	o.cpus = "99999999999999999999";
	assert_int_equal(cgs_listener_open(&l, &o), -ERANGE);
	o.cpus = "0";
	assert_int_equal(cgs_listener_open(&l, &o), 0);
	assert_int_equal(cgs_listener_shards(l), 1);
	assert_string_equal(cgs_listener_shard_cpus(l, 0), "0");
	cgs_listener_close(l);
	/* an options struct from a newer caller with unknown tail fields set */
	unsigned char big[sizeof(struct cgs_listener_opts) + 8];
	memset(big, 0, sizeof(big));
	((struct cgs_listener_opts *)big)->sz = sizeof(big);
	big[sizeof(big) - 1] = 1;
	assert_int_equal(cgs_listener_open(&l, (void *)big), -E2BIG);
}

/* Issue 27: nothing consumed silently, and a rollup made for a listener.
 * A self-test or a drain without a callback consumes the host's exits:
 * counted in cgs_loss.discarded. */
static void test_discarded_and_rollup_for(void **state)
{
	(void)state;
	struct cgs_listener *l;
	struct cgs_listener_opts o = { .sz = sizeof(o), .cpus = "0" };
	assert_int_equal(cgs_listener_open(&l, &o), 0);
	struct cgs_loss loss = { .sz = sizeof(loss) };
	assert_int_equal(cgs_listener_selftest(l, 2000, NULL, NULL), 0);
	assert_int_equal(cgs_listener_get_loss(l, CGS_ALL_SHARDS, &loss), 0);
	uint64_t after_selftest = loss.discarded;
	assert_true(after_selftest >= 1); /* the self-test's own child */
	cpu_set_t all, zero;
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&zero);
	CPU_SET(0, &zero); /* the child exits where the listener listens */
	assert_int_equal(sched_setaffinity(0, sizeof(zero), &zero), 0);
	pid_t c = spawn_threaded(5, -1);
	waitpid(c, NULL, 0);
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	usleep(50000);
	int n = cgs_listener_drain(l, 0, NULL, NULL);
	assert_true(n >= 6);
	assert_int_equal(cgs_listener_get_loss(l, CGS_ALL_SHARDS, &loss), 0);
	assert_int_equal(loss.discarded, after_selftest + (uint64_t)n);

	CGS_OPTS(cgs_rollup_opts, ro, .listener = l,
		 .attribution = CGS_ATTRIBUTION_PROC);
	struct cgs_rollup *r;
	assert_int_equal(cgs_rollup_new(&r, &ro), 0);
	CGS_OPTS(cgs_record, rec);
	rec.kind = CGS_KIND_PROCESS;
	rec.pid = rec.tgid = (uint32_t)getpid();
	assert_int_equal(cgs_rollup_add(r, 0, &rec, NULL, NULL), 0);
	assert_int_equal(cgs_rollup_add(r, 1, &rec, NULL, NULL), -EINVAL);
	CGS_OPTS(cgs_rollup_totals, t);
	assert_int_equal(cgs_rollup_get_totals(r, &t), 0);
	assert_int_equal(t.records, 1);
	assert_int_equal(t.refused, 1);
	cgs_rollup_free(r);
	ro.shards = 2; /* disagrees with the listener's one */
	assert_int_equal(cgs_rollup_new(&r, &ro), -EINVAL);
	assert_null(r);
	cgs_listener_close(l);
}

int main(void)
{
	cgt_require_taskstats();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_exactly_k_plus_1),
		cmocka_unit_test(test_forked_children),
		cmocka_unit_test(test_own_loop_one_shard_per_cpu),
		cmocka_unit_test(test_bad_cpulists),
		cmocka_unit_test(test_discarded_and_rollup_for),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
