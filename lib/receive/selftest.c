/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * End-to-end proof that events reach us: fork a child that exits at once
 * and wait for its record. Catches what no up-front check can (a foreign
 * network namespace we could not identify, a filter in the way, ...).
 */
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "receive/listener_int.h"

struct selftest_ctx {
	pid_t child;
	bool seen;
	cgs_exit_fn fn;
	void *user;
};

static int selftest_cb(const struct cgs_exit *ev, void *arg)
{
	struct selftest_ctx *c = arg;
	if (ev->task && ev->task->pid == (uint32_t)c->child)
		c->seen = true;
	if (c->fn)
		c->fn(ev, c->user);
	return 0;
}

CGS_EXPORT int cgs_listener_selftest(struct cgs_listener *l, int timeout_ms,
				     cgs_exit_fn fn, void *user)
{
	if (!l || l->running || timeout_ms < 0)
		return -EINVAL;
	struct selftest_ctx c = { .fn = fn, .user = user };
	c.child = fork();
	if (c.child < 0)
		return -errno;
	if (c.child == 0)
		_exit(0);
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
