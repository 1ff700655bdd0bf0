/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/add.h"
#include "support/clock.h"
#include "support/pipeline.h"
#include "support/skip.h"

#define CGT_MAX_SHARDS 256

static int listener_open(struct cgs_listener **l,
			 const struct cgs_listener_opts *lo)
{
	int rc = cgs_listener_open(l, lo);
	if (cgt_forbidden(rc)) {
		fprintf(stderr, "SKIP: %s\n", cgs_strerror(rc));
		return 77;
	}
	if (rc < 0) {
		fprintf(stderr, "listener: %s\n", cgs_strerror(rc));
		return 1;
	}
	return 0;
}

int cgt_listener_open(struct cgs_listener **l, size_t rcvbuf)
{
	struct cgs_listener_opts lo = { .sz = sizeof(lo), .rcvbuf = rcvbuf };
	return listener_open(l, &lo);
}

int cgt_pipeline_open(struct cgt_pipeline *p, size_t rcvbuf,
		      enum cgs_attribution a, size_t kernel_ringbuf,
		      unsigned flags)
{
	struct cgs_listener_opts lo = { .sz = sizeof(lo), .rcvbuf = rcvbuf };
	struct cgs_rollup_opts ro = {
		.sz = sizeof(ro), .attribution = a,
		.kernel_ringbuf = kernel_ringbuf, .flags = flags,
	};
	return cgt_pipeline_open_opts(p, &lo, &ro);
}

int cgt_pipeline_open_opts(struct cgt_pipeline *p,
			   const struct cgs_listener_opts *lo,
			   const struct cgs_rollup_opts *rop)
{
	struct cgs_listener *l = NULL;
	struct cgs_listener_opts dl = { .sz = sizeof(dl) };
	int rc = listener_open(&l, lo ? lo : &dl);
	if (rc)
		return rc;
	unsigned n = cgs_listener_shards(l);
	const char *cpus[CGT_MAX_SHARDS];
	for (unsigned i = 0; i < n && i < CGT_MAX_SHARDS; i++)
		cpus[i] = cgs_listener_shard_cpus(l, i);
	char why[320] = "";
	struct cgs_rollup_opts ro = { .sz = sizeof(ro) };
	if (rop)
		ro = *rop;
	ro.sz = sizeof(ro);
	ro.shards = n;
	ro.shard_cpus = n <= CGT_MAX_SHARDS ? cpus : NULL;
	ro.errbuf = why;
	ro.errbuf_len = sizeof(why);
	struct cgs_rollup *r = NULL;
	rc = cgs_rollup_new(&r, &ro);
	if (rc < 0) {
		cgs_listener_close(l);
		if (ro.attribution == CGS_ATTRIBUTION_KERNEL && why[0]) {
			fprintf(stderr, "SKIP: kernel source unavailable: %s\n",
				why);
			return 77;
		}
		fprintf(stderr, "rollup: %s\n", why[0] ? why : cgs_strerror(rc));
		return 1;
	}
	p->l = l;
	p->on_task = NULL;
	p->on_task_ctx = NULL;
	p->r = r;
	return 0;
}

void cgt_pipeline_close(struct cgt_pipeline *p)
{
	/* the listener first: its receive threads account into the rollup */
	cgs_listener_close(p->l);
	cgs_rollup_free(p->r);
	p->r = NULL;
	p->l = NULL;
}

int cgt_forks_rollup_open(struct cgs_rollup **r, struct cgs_listener *l,
			  unsigned flags, struct cgs_rollup_totals *t0)
{
	struct cgs_rollup_opts ro = {
		.sz = sizeof(ro),
		.shards = cgs_listener_shards(l),
		.flags = CGS_ROLLUP_TRACK_FORKS | flags,
		/* what is tested is the /proc fallback */
		.attribution = CGS_ATTRIBUTION_PROC,
	};
	int rc = cgs_rollup_new(r, &ro);
	if (rc < 0) {
		fprintf(stderr, "rollup: %s\n", cgs_strerror(rc));
		return 1;
	}
	struct cgs_rollup_totals t = { .sz = sizeof(t) };
	cgs_rollup_get_totals(*r, &t);
	if (!t.fork_tracking) {
		fprintf(stderr, "FAIL: fork tracking unavailable as root "
			"(no proc connector?)\n");
		return 1;
	}
	if (t0)
		*t0 = t;
	return 0;
}

int cgt_listener_drain(struct cgs_listener *l, long settle_ms,
		       struct cgs_loss *loss)
{
	cgt_sleep_ms(settle_ms);
	int rc = cgs_listener_stop(l);
	if (rc < 0) {
		fprintf(stderr, "stop: %s\n", cgs_strerror(rc));
		return 1;
	}
	*loss = (struct cgs_loss){ .sz = sizeof(*loss) };
	cgs_listener_get_loss(l, CGS_ALL_SHARDS, loss);
	return 0;
}

static int account_all(const struct cgs_exit *ev, void *user)
{
	struct cgt_pipeline *p = user;
	const char *path = NULL;
	if (ev->task &&
	    cgt_add(p->r, ev->shard, ev->task, &path, NULL) == 0 &&
	    p->on_task)
		p->on_task(ev->task, path, p->on_task_ctx);
	if (ev->group)
		cgs_rollup_add(p->r, ev->shard, ev->group, NULL, NULL);
	return 0;
}

long cgt_pipeline_pump(struct cgt_pipeline *p, long ms)
{
	double end = cgt_now_s() + (double)(ms > 0 ? ms : 0) / 1e3;
	long total = 0;
	unsigned n = cgs_listener_shards(p->l);
	do {
		int got = 0;
		for (unsigned s = 0; s < n; s++) {
			int k = cgs_listener_drain(p->l, s, account_all, p);
			if (k < 0) {
				fprintf(stderr, "drain: %s\n", cgs_strerror(k));
				return -1;
			}
			got += k;
		}
		total += got;
		if (!got)
			cgt_sleep_ms(2);
	} while (cgt_now_s() < end);
	return total;
}

int cgt_pipeline_run(struct cgt_pipeline *p)
{
	int rc = cgs_listener_run(p->l, account_all, p, NULL);
	if (rc < 0) {
		fprintf(stderr, "listener run: %s\n", cgs_strerror(rc));
		return 1;
	}
	return 0;
}

ssize_t cgt_snapshot_find(const struct cgs_snapshot *s, const char *path)
{
	for (size_t i = 0; i < cgs_snapshot_count(s); i++)
		if (!strcmp(cgs_snapshot_get_cgroup(s, i)->path, path))
			return (ssize_t)i;
	return -1;
}

int cgt_pump_until(struct cgt_pipeline *p, const char *path, uint64_t tasks,
		   long timeout_ms)
{
	double end = cgt_now_s() + (double)timeout_ms / 1e3;
	struct cgs_snapshot_opts so = { .sz = sizeof(so), .no_delta = true };
	for (;;) {
		if (cgt_pipeline_pump(p, 20) < 0)
			return -1;
		struct cgs_snapshot *s = NULL;
		uint64_t got = 0;
		if (cgs_rollup_snapshot(p->r, &so, &s) == 0) {
			ssize_t i = cgt_snapshot_find(s, path);
			got = i < 0 ? 0 : cgs_snapshot_get_cgroup(s, (size_t)i)->self->tasks;
		}
		cgs_snapshot_free(s);
		if (got >= tasks)
			return 0;
		if (cgt_now_s() >= end) {
			fprintf(stderr, "%s: %llu task records after %ld ms, "
				"want %llu\n", path, (unsigned long long)got,
				timeout_ms, (unsigned long long)tasks);
			return 1;
		}
	}
}

pid_t cgt_clone_into(int cgfd)
{
	struct clone_args a;
	memset(&a, 0, sizeof(a));
	a.flags = CLONE_INTO_CGROUP;
	a.exit_signal = SIGCHLD;
	a.cgroup = (uint64_t)cgfd;
	return (pid_t)syscall(SYS_clone3, &a, sizeof(a));
}

int cgt_exit_in_new(const char *dir, pid_t *pid)
{
	if (mkdir(dir, 0755) < 0) {
		fprintf(stderr, "mkdir %s: %s\n", dir, strerror(errno));
		return 1;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", dir, strerror(errno));
		return 1;
	}
	pid_t p = cgt_clone_into(fd);
	int err = errno;
	close(fd);
	if (p < 0 && err == ENOSYS) {
		fprintf(stderr, "SKIP: no clone3() here\n");
		rmdir(dir);
		return 77;
	}
	if (p < 0) {
		fprintf(stderr, "clone3 into %s: %s\n", dir, strerror(err));
		return 1;
	}
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	if (pid)
		*pid = p;
	return 0;
}
