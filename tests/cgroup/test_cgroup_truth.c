/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Ground truth against real cgroups: a tree 6 deep under the cgroup2 mount
 * (<mnt>/cgs-test-<pid>/a/b/c/d/e, plus e/burst), known workloads in each
 * cgroup, a real listener feeding the rollup, and an exact comparison of
 * per-cgroup task exits, process exits, TGID records and subtree sums.
 *
 * Per level: a process creating and joining T threads R times; a parent
 * forking P children that exit at once and are reaped at once; a process
 * that runs T x R threads, is moved to the next level's cgroup once its
 * records have been accounted, and after revalidate_ms + margin runs
 * T x R more threads and exits there. In e/burst: N children forked,
 * exiting at once and reaped at once, one after the other; the share of
 * them attributed to e/burst is printed and must be >= 99.9 %.
 *
 * Only records of our workload are accounted (tgid or ppid among our
 * worker processes, which stay unreaped zombies until the listener is
 * stopped, so their pids cannot be reused meanwhile); so the unknown
 * bucket must be exactly 0. Skips (77) only without taskstats, without
 * CAP_NET_ADMIN, or without a cgroup2 mount.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgstats.h"
#include "support/add.h"
#include "support/cgtest.h"
#include "support/clock.h"
#include "support/pipeline.h"
#include "support/skip.h"
#include "support/snap.h"

#define LEVELS 6 /* base, a, b, c, d, e */
#define T 8      /* threads per round */
#define R 20     /* rounds */
#define P 50     /* children of a fork worker */
#define BURST 10000
#define MAX_WORKERS 64
#define REVALIDATE_MS 1000

static char base_rel[256];          /* "/cgs-test-<pid>" */
static char rel[LEVELS + 1][512];   /* cgroup paths as /proc shows them */
static char dir[LEVELS + 1][4608];  /* directories */

struct expect {
	uint64_t tasks, processes, tgid_records;
};
static struct expect want[LEVELS + 1];

/* workers: written by the main thread before they start, read by the
 * listener threads */
static pid_t workers[MAX_WORKERS];
static atomic_int nworkers;
static pid_t movers[LEVELS];
static atomic_uint_fast64_t mover_seen[LEVELS];
static pid_t burst_pid;
static atomic_uint_fast64_t burst_seen, burst_ok;
static atomic_uint_fast64_t account_errors;
static pthread_mutex_t wrong_lock = PTHREAD_MUTEX_INITIALIZER;
static char wrong[8][600];
static int nwrong;
static struct cgs_rollup *rollup;

static bool ours(const struct cgs_record *rec)
{
	int n = atomic_load_explicit(&nworkers, memory_order_acquire);
	for (int i = 0; i < n; i++)
		if (rec->tgid == (uint32_t)workers[i] ||
		    (rec->kind != CGS_KIND_TGID &&
		     rec->ppid == (uint32_t)workers[i]))
			return true;
	return false;
}

static void account(const struct cgs_record *rec, unsigned shard)
{
	if (!rec || !ours(rec))
		return;
	const char *path = NULL;
	if (cgt_add(rollup, shard, rec, &path, NULL) < 0) {
		atomic_fetch_add(&account_errors, 1);
		return;
	}
	if (rec->kind == CGS_KIND_THREAD)
		for (int i = 0; i < LEVELS; i++)
			if (rec->tgid == (uint32_t)movers[i])
				atomic_fetch_add(&mover_seen[i], 1);
	if (burst_pid && rec->kind == CGS_KIND_PROCESS &&
	    rec->ppid == (uint32_t)burst_pid) {
		atomic_fetch_add(&burst_seen, 1);
		if (path && !strcmp(path, rel[LEVELS])) {
			atomic_fetch_add(&burst_ok, 1);
		} else {
			/* the first few misses, to say where they went */
			pthread_mutex_lock(&wrong_lock);
			if (nwrong < 8)
				snprintf(wrong[nwrong++], sizeof(wrong[0]),
					 "pid %u ppid %u shard %u -> %s",
					 rec->pid, rec->ppid, shard,
					 path ? path : "(null)");
			pthread_mutex_unlock(&wrong_lock);
		}
	}
}

static int on_exit_event(const struct cgs_exit *ev, void *user)
{
	(void)user;
	account(ev->task, ev->shard);
	account(ev->group, ev->shard);
	return 0;
}

/* ---- workloads (run in forked children) ---------------------------- */

static void *thread_fn(void *arg)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 20000; i++)
		x += i * (uintptr_t)arg;
	return NULL;
}

static void threads_rounds(void)
{
	for (int r = 0; r < R; r++) {
		pthread_t th[T];
		for (int t = 0; t < T; t++)
			if (pthread_create(&th[t], NULL, thread_fn,
					   (void *)(uintptr_t)(t + 1)))
				_exit(2);
		for (int t = 0; t < T; t++)
			pthread_join(th[t], NULL);
	}
}

static void fork_children(int n, bool sequential)
{
	if (sequential) {
		for (int i = 0; i < n; i++) {
			pid_t c = fork();
			if (c == 0)
				_exit(0);
			if (c < 0 || waitpid(c, NULL, 0) != c)
				_exit(3);
		}
		return;
	}
	pid_t kids[P];
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(0);
		if (kids[i] < 0)
			_exit(3);
	}
	for (int i = 0; i < n; i++)
		if (waitpid(kids[i], NULL, 0) != kids[i])
			_exit(3);
}

enum wkind { W_THREADS, W_FORKS, W_MOVER, W_BURST };

static void wait_go(int fd)
{
	char c;
	if (read(fd, &c, 1) != 1)
		_exit(4);
}

struct worker {
	pid_t pid;
	int go; /* write end */
};

static struct worker spawn(enum wkind k, int level)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("pipe");
		exit(1);
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		close(p[1]);
		wait_go(p[0]);
		switch (k) {
		case W_THREADS:
			threads_rounds();
			break;
		case W_FORKS:
			fork_children(P, false);
			break;
		case W_MOVER:
			threads_rounds();
			wait_go(p[0]); /* moved meanwhile */
			threads_rounds();
			break;
		case W_BURST:
			fork_children(BURST, true);
			break;
		}
		_exit(0);
	}
	close(p[0]);
	int n = atomic_load(&nworkers);
	workers[n] = pid;
	atomic_store_explicit(&nworkers, n + 1, memory_order_release);
	if (cgt_move(dir[level], pid) < 0)
		exit(1);
	return (struct worker){ pid, p[1] };
}

static void go(struct worker *w)
{
	if (write(w->go, "g", 1) != 1) {
		perror("go");
		exit(1);
	}
}

/* Wait for a worker's exit without reaping it (its pid stays reserved). */
static void wait_exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0) {
		perror("waitid");
		exit(1);
	}
	if (si.si_code != CLD_EXITED || si.si_status != 0) {
		fprintf(stderr, "worker %d failed (code %d status %d)\n",
			(int)pid, si.si_code, si.si_status);
		exit(1);
	}
}



static int failures;
#define CHECK_EQ(what, got, exp)                                             \
	do {                                                                 \
		unsigned long long g_ = (got), e_ = (exp);                   \
		if (g_ != e_) {                                              \
			fprintf(stderr, "FAIL %s: got %llu, expected %llu\n", \
				what, g_, e_);                               \
			failures++;                                          \
		}                                                            \
	} while (0)

static bool is_desc(int i, int j) /* is level j inside level i's subtree */
{
	size_t l = strlen(rel[i]);
	return !strncmp(rel[j], rel[i], l) &&
	       (rel[j][l] == '/' || rel[j][l] == '\0');
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mnt = cgt_require_cgroup2();
	/* a big buffer per shard: the exact comparison needs every record,
	 * and these machines are shared (the receive threads may not run
	 * for a while) */
	struct cgs_listener *l = NULL;
	int rc = cgt_listener_open(&l, 64u << 20);
	if (rc)
		return rc;

	/* the tree */
	snprintf(base_rel, sizeof(base_rel), "/cgs-test-%d", (int)getpid());
	const char *names[] = { "", "/a", "/b", "/c", "/d", "/e", "/burst" };
	for (int i = 0; i <= LEVELS; i++) {
		snprintf(rel[i], sizeof(rel[i]), "%s%s",
			 i ? rel[i - 1] : base_rel, names[i]);
		if (cgt_mkdir(rel[i], dir[i], sizeof(dir[i])) < 0)
			return 1;
	}

	struct cgs_rollup_opts ro = { .sz = sizeof(ro),
				      .shards = cgs_listener_shards(l),
				      .revalidate_ms = REVALIDATE_MS };
	if ((rc = cgs_rollup_new(&rollup, &ro)) < 0) {
		fprintf(stderr, "rollup: %s\n", cgs_strerror(rc));
		return 1;
	}
	printf("hierarchy %s at %s, %u shards, tree %s\n",
	       cgs_rollup_hierarchy(rollup), mnt, cgs_listener_shards(l),
	       rel[LEVELS]);
	if (strcmp(cgs_rollup_hierarchy(rollup), "v2")) {
		fprintf(stderr, "expected the v2 hierarchy\n");
		return 1;
	}
	const uint64_t TR = (uint64_t)T * R;
	struct worker thr[LEVELS], frk[LEVELS], mov[LEVELS];
	for (int i = 0; i < LEVELS; i++) {
		int next = (i + 1) % LEVELS;
		thr[i] = spawn(W_THREADS, i);
		frk[i] = spawn(W_FORKS, i);
		mov[i] = spawn(W_MOVER, i);
		movers[i] = mov[i].pid;
		want[i].tasks += TR + 1 + P + 1 + TR;
		want[i].processes += 1 + P + 1;
		want[i].tgid_records += 1;
		want[next].tasks += TR + 1;
		want[next].processes += 1;
		want[next].tgid_records += 1;
	}
	/* short-lived children reaped at once, in e/burst */
	struct worker b = spawn(W_BURST, LEVELS);
	burst_pid = b.pid;
	want[LEVELS].tasks += BURST + 1;
	want[LEVELS].processes += BURST + 1;

	/* Every worker is forked before the receive threads start: a fork
	 * of a multi-threaded process may inherit a lock held by another
	 * thread (seen with ASan's allocator), and the workers create
	 * threads themselves. The listener is registered already. */
	if ((rc = cgs_listener_run(l, on_exit_event, NULL, NULL)) < 0) {
		fprintf(stderr, "run: %s\n", cgs_strerror(rc));
		return 1;
	}
	for (int i = 0; i < LEVELS; i++) {
		go(&thr[i]);
		go(&frk[i]);
		go(&mov[i]);
	}
	/* move each mover once its first phase has been accounted */
	for (int i = 0; i < LEVELS; i++) {
		int waited = 0;
		while (atomic_load(&mover_seen[i]) < TR && waited < 20000) {
			cgt_sleep_ms(5);
			waited += 5;
		}
		if (atomic_load(&mover_seen[i]) != TR) {
			fprintf(stderr, "mover %d: %llu of %llu records seen\n",
				i, (unsigned long long)atomic_load(&mover_seen[i]),
				(unsigned long long)TR);
			return 1;
		}
		if (cgt_move(dir[(i + 1) % LEVELS], mov[i].pid) < 0)
			return 1;
	}
	cgt_sleep_ms(REVALIDATE_MS + 300);
	for (int i = 0; i < LEVELS; i++)
		go(&mov[i]);

	go(&b);

	for (int i = 0; i < LEVELS; i++) {
		wait_exited(thr[i].pid);
		wait_exited(frk[i].pid);
		wait_exited(mov[i].pid);
	}
	wait_exited(b.pid);
	struct cgs_loss loss;
	if (cgt_listener_drain(l, 200, &loss))
		return 1;
	printf("loss: dropped %llu enobufs %llu truncated %llu malformed %llu\n",
	       (unsigned long long)loss.dropped,
	       (unsigned long long)loss.enobufs,
	       (unsigned long long)loss.truncated,
	       (unsigned long long)loss.malformed);
	CHECK_EQ("kernel drops", loss.dropped, 0);
	CHECK_EQ("account errors", atomic_load(&account_errors), 0);

	struct cgs_snapshot *s = NULL;
	if ((rc = cgs_rollup_snapshot(rollup, NULL, &s)) < 0) {
		fprintf(stderr, "snapshot: %s\n", cgs_strerror(rc));
		return 1;
	}
	const struct cgs_rollup_totals *t = cgs_snapshot_get_totals(s);
	printf("records %llu unattributed %llu via cache %llu proc %llu "
	       "parent %llu proc_reads %llu cache_entries %llu\n",
	       (unsigned long long)t->records,
	       (unsigned long long)t->unattributed,
	       (unsigned long long)t->via_cache,
	       (unsigned long long)t->via_proc,
	       (unsigned long long)t->via_parent,
	       (unsigned long long)t->proc_reads,
	       (unsigned long long)t->cache_entries);
	printf("attribution %s: via kernel %llu unmatched %llu lost %llu "
	       "expired %llu waits %llu unresolved %llu inferred %llu\n",
	       t->attribution == CGS_ATTRIBUTION_KERNEL ? "kernel" : "proc",
	       (unsigned long long)t->via_kernel,
	       (unsigned long long)t->kernel_unmatched,
	       (unsigned long long)t->kernel_lost,
	       (unsigned long long)t->kernel_expired,
	       (unsigned long long)t->kernel_waits,
	       (unsigned long long)t->kernel_unresolved,
	       (unsigned long long)t->inferred);
	for (int i = 0; i <= LEVELS; i++) {
		const struct cgs_cgroup_stats *c =
			cgt_cgroup_at(s, rel[i], CGT_LIVE);
		char what[700];
		if (!c) {
			fprintf(stderr, "FAIL %s missing from the snapshot\n",
				rel[i]);
			failures++;
			continue;
		}
		struct expect sub = { 0 };
		uint64_t ut = 0, st = 0, nv = 0;
		for (int j = 0; j <= LEVELS; j++)
			if (is_desc(i, j)) {
				sub.tasks += want[j].tasks;
				sub.processes += want[j].processes;
				sub.tgid_records += want[j].tgid_records;
				const struct cgs_cgroup_stats *cj =
					cgt_cgroup_at(s, rel[j], CGT_LIVE);
				if (cj) {
					ut += cj->self->utime_us;
					st += cj->self->stime_us;
					nv += cj->self->nvcsw;
				}
			}
		printf("%-40s depth %u self tasks %6llu procs %6llu tgid %llu | "
		       "subtree tasks %6llu procs %6llu | utime %llu us\n",
		       rel[i], c->depth, (unsigned long long)c->self->tasks,
		       (unsigned long long)c->self->processes,
		       (unsigned long long)c->self->tgid_records,
		       (unsigned long long)c->subtree->tasks,
		       (unsigned long long)c->subtree->processes,
		       (unsigned long long)c->self->utime_us);
		snprintf(what, sizeof(what), "%s self.tasks", rel[i]);
		CHECK_EQ(what, c->self->tasks, want[i].tasks);
		snprintf(what, sizeof(what), "%s self.processes", rel[i]);
		CHECK_EQ(what, c->self->processes, want[i].processes);
		snprintf(what, sizeof(what), "%s self.tgid_records", rel[i]);
		CHECK_EQ(what, c->self->tgid_records, want[i].tgid_records);
		snprintf(what, sizeof(what), "%s subtree.tasks", rel[i]);
		CHECK_EQ(what, c->subtree->tasks, sub.tasks);
		snprintf(what, sizeof(what), "%s subtree.processes", rel[i]);
		CHECK_EQ(what, c->subtree->processes, sub.processes);
		snprintf(what, sizeof(what), "%s subtree.tgid_records", rel[i]);
		CHECK_EQ(what, c->subtree->tgid_records, sub.tgid_records);
		snprintf(what, sizeof(what), "%s subtree.utime_us", rel[i]);
		CHECK_EQ(what, c->subtree->utime_us, ut);
		snprintf(what, sizeof(what), "%s subtree.stime_us", rel[i]);
		CHECK_EQ(what, c->subtree->stime_us, st);
		snprintf(what, sizeof(what), "%s subtree.nvcsw", rel[i]);
		CHECK_EQ(what, c->subtree->nvcsw, nv);
		snprintf(what, sizeof(what), "%s depth", rel[i]);
		CHECK_EQ(what, c->depth, (unsigned)i + 1);
	}
	/* the threads did work: CPU time was accounted */
	const struct cgs_cgroup_stats *top = cgt_cgroup_at(s, rel[0], CGT_LIVE);
	if (top && top->subtree->utime_us + top->subtree->stime_us == 0) {
		fprintf(stderr, "FAIL no CPU time accounted\n");
		failures++;
	}
	const struct cgs_cgroup_stats *u =
		cgt_cgroup_at(s, CGS_UNKNOWN_CGROUP, CGT_LIVE);
	CHECK_EQ("unknown bucket tasks", u ? u->self->tasks : 1, 0);
	CHECK_EQ("unknown bucket tgid records", u ? u->self->tgid_records : 1,
		 0);
	CHECK_EQ("unattributed", t->unattributed, 0);

	uint64_t seen = atomic_load(&burst_seen), ok = atomic_load(&burst_ok);
	/* correctness of what was received (drops are checked above) */
	double rate = seen ? 100.0 * (double)ok / (double)seen : 0.0;
	printf("short-lived children reaped at once: %llu of %d seen, %llu "
	       "attributed to %s: %.3f %%\n",
	       (unsigned long long)seen, BURST, (unsigned long long)ok,
	       rel[LEVELS], rate);
	for (int i = 0; i < nwrong; i++)
		printf("misattributed: %s\n", wrong[i]);
	if (seen < BURST / 2 || rate < 99.9) {
		fprintf(stderr, "FAIL attribution rate %.3f %% < 99.9 %%\n",
			rate);
		failures++;
	}
	cgs_snapshot_free(s);

	/* reap, then the directories can go */
	int nw = atomic_load(&nworkers);
	for (int i = 0; i < nw; i++)
		waitpid(workers[i], NULL, 0);
	cgs_listener_close(l);
	cgs_rollup_free(rollup);
	cgt_cleanup();
	printf("%s\n", failures ? "FAILED" : "OK");
	return failures ? 1 : 0;
}
