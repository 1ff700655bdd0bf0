/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Ready-made receive threads, one per shard. Wake-ups, not the kernel's
 * per-exit work, dominate what a listener costs the workload, so after each
 * drain a thread may sleep batch_ms before it looks again: the socket buffer
 * absorbs the burst and one wake-up handles many records.
 */
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "receive/listener_int.h"
#include "util/cpulist.h"

#define CGSI_DEFAULT_BATCH_MS 20

static bool stopping(struct cgs_listener *l)
{
	return __atomic_load_n(&l->stop, __ATOMIC_ACQUIRE);
}

static void pin_shard(struct cgsi_shard *s)
{
	unsigned char *set = malloc(CGSI_MAX_CPUS);
	if (!set)
		return;
	if (cgsi_cpulist_parse(s->cpus, set, NULL, 0) > 0) {
		cpu_set_t cs;
		CPU_ZERO(&cs);
		for (int c = 0; c < CGSI_MAX_CPUS && c < CPU_SETSIZE; c++)
			if (set[c])
				CPU_SET(c, &cs);
		sched_setaffinity(0, sizeof(cs), &cs);
	}
	free(set);
}

static void *shard_thread(void *arg)
{
	struct cgsi_shard *s = arg;
	struct cgs_listener *l = s->owner;
	if (l->pin)
		pin_shard(s);
	struct pollfd pfd[2] = {
		{ .fd = s->fd, .events = POLLIN },
		{ .fd = l->stop_fd, .events = POLLIN },
	};
	while (!stopping(l)) {
		int r = cgsi_shard_drain(l, s, l->fn, l->user);
		if (r < 0 && r != -EINTR)
			cgsi_log(l, CGS_LOG_WARNING, "shard %u: receive: %s",
				 s->idx, cgs_strerror(r));
		if (l->batch_ms) {
			/* sleep, but wake at once for stop */
			if (poll(&pfd[1], 1, (int)l->batch_ms) > 0)
				break;
		}
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
	}
	/* final drain: what the kernel queued before stop is still ours */
	cgsi_shard_drain(l, s, l->fn, l->user);
	return NULL;
}

int cgs_listener_run(struct cgs_listener *l, cgs_exit_fn fn,
		     void *user, const struct cgs_run_opts *uopts)
{
	struct cgs_run_opts o;
	if (!l || l->running)
		return -EINVAL;
	int r = cgsi_opts_copy(&o, sizeof(o), uopts, uopts ? uopts->sz : 0);
	if (r < 0)
		return r;
	if (!o.batch_ms)
		o.batch_ms = CGSI_DEFAULT_BATCH_MS;
	else if (o.batch_ms == CGS_RUN_NO_BATCH)
		o.batch_ms = 0;
	l->fn = fn;
	l->user = user;
	l->batch_ms = o.batch_ms;
	l->pin = o.pin;
	l->stop = false;
	if (l->stop_fd < 0) {
		l->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (l->stop_fd < 0)
			return -errno;
	}
	for (unsigned i = 0; i < l->nshards; i++) {
		struct cgsi_shard *s = &l->shards[i];
		r = -pthread_create(&s->thread, NULL, shard_thread, s);
		if (r < 0) {
			l->running = true;
			cgs_listener_stop(l);
			return r;
		}
		s->thread_started = true;
	}
	l->running = true;
	return 0;
}

int cgs_listener_stop(struct cgs_listener *l)
{
	if (!l || !l->running)
		return -EINVAL;
	__atomic_store_n(&l->stop, true, __ATOMIC_RELEASE);
	uint64_t one = 1;
	if (write(l->stop_fd, &one, sizeof(one)) < 0) {
		/* eventfd can't be full after one write; nothing to do */
	}
	for (unsigned i = 0; i < l->nshards; i++) {
		struct cgsi_shard *s = &l->shards[i];
		if (s->thread_started) {
			pthread_join(s->thread, NULL);
			s->thread_started = false;
		}
	}
	/* reset for a possible later run */
	uint64_t v;
	while (read(l->stop_fd, &v, sizeof(v)) > 0) {
	}
	l->running = false;
	return 0;
}
