/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * End-to-end proof that events reach us: fork a child that exits at once
 * and wait for its record. Catches what no up-front check can (a foreign
 * network namespace we could not identify, a filter in the way, ...).
 */
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "receive/listener_int.h"
#include "util/cpulist.h"

/*
 * The CPUs the listener hears, as an affinity mask for the child: a
 * listener on a subset of the CPUs only hears exits there. NULL when
 * it cannot be made (then the child runs where the scheduler puts it).
 */
static cpu_set_t *heard_cpus(const struct cgs_listener *l, size_t *size)
{
	unsigned char *set = malloc(CGSI_MAX_CPUS);
	cpu_set_t *m = CPU_ALLOC(CGSI_MAX_CPUS);
	*size = CPU_ALLOC_SIZE(CGSI_MAX_CPUS);
	if (!set || !m)
		goto fail;
	CPU_ZERO_S(*size, m);
	for (unsigned i = 0; i < l->nshards; i++) {
		if (cgsi_cpulist_parse(l->shards[i].cpus, set, NULL, 0) < 0)
			goto fail;
		for (int c = 0; c < CGSI_MAX_CPUS; c++)
			if (set[c])
				CPU_SET_S(c, *size, m);
	}
	free(set);
	return m;
fail:
	free(set);
	if (m)
		CPU_FREE(m);
	return NULL;
}

struct selftest_ctx {
	pid_t child;
	bool seen;
	cgs_exit_fn fn;
	void *user;
	struct cgs_listener *l;
};

static int selftest_cb(const struct cgs_exit *ev, void *arg)
{
	struct selftest_ctx *c = arg;
	if (ev->task && ev->task->pid == (uint32_t)c->child)
		c->seen = true;
	if (c->fn)
		c->fn(ev, c->user);
	else /* consumed: counted in cgs_loss.discarded */
		c->l->shards[ev->shard].loss.discarded++;
	return 0;
}

int cgs_listener_selftest(struct cgs_listener *l, int timeout_ms,
			  cgs_exit_fn fn, void *user)
{
	if (!l || l->running || timeout_ms < 0)
		return -EINVAL;
	struct selftest_ctx c = { .fn = fn, .user = user, .l = l };
	size_t msize;
	cpu_set_t *heard = heard_cpus(l, &msize);
	c.child = fork();
	if (c.child < 0) {
		int e = errno;
		if (heard)
			CPU_FREE(heard);
		return -e;
	}
	if (c.child == 0) {
		/* exit where the listener listens (it may hear only some
		 * CPUs); a CPU set this process may not use fails, harmless */
		if (heard)
			sched_setaffinity(0, msize, heard);
		_exit(0);
	}
	if (heard)
		CPU_FREE(heard);
	while (waitpid(c.child, NULL, 0) < 0 && errno == EINTR) {
	}

	struct pollfd *pfd = calloc(l->nshards, sizeof(*pfd));
	if (!pfd)
		return -ENOMEM;
	for (unsigned i = 0; i < l->nshards; i++) {
		pfd[i].fd = l->shards[i].fd;
		pfd[i].events = POLLIN;
	}
	uint64_t deadline = cgsi_now_mono_ms() + (uint64_t)timeout_ms;
	int r = -ETIMEDOUT;
	for (;;) {
		for (unsigned i = 0; i < l->nshards; i++) {
			int d = cgsi_shard_drain(l, &l->shards[i], selftest_cb,
						 &c);
			if (d < 0) {
				r = d;
				goto out;
			}
		}
		if (c.seen) {
			r = 0;
			break;
		}
		uint64_t now = cgsi_now_mono_ms();
		if (now >= deadline)
			break;
		poll(pfd, l->nshards, (int)(deadline - now));
	}
out:
	free(pfd);
	return r;
}
