/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Ready-made receive threads. Wake-ups, not the kernel's per-exit work,
 * dominate what a listener costs the workload, so after each drain a thread
 * waits before it looks again: the socket buffer absorbs the burst and one
 * wake-up handles many records. By default one thread serves every shard
 * and waits as long as the sockets' fill allows (adapt.c); threads are
 * added while one cannot keep up. An explicit cgs_listener_opts.shards
 * gives each shard its own thread, an explicit batch_ms a fixed wait (the
 * behaviour before 1.3).
 */
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "receive/listener_int.h"
#include "util/cpulist.h"

#define CGSI_DEFAULT_BATCH_MS 20
/* An adaptive round drains at most this many batches per shard (1,024
 * datagrams), so that a long drain is seen while it lasts. */
#define CGSI_ROUND_BATCHES 16

static bool stopping(struct cgs_listener *l)
{
	return __atomic_load_n(&l->stop, __ATOMIC_ACQUIRE);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Pin the calling thread to the CPUs of the shards it serves. */
static void pin_worker(struct cgs_listener *l, struct cgsi_worker *w)
{
	unsigned char *set = malloc(CGSI_MAX_CPUS);
	if (!set)
		return;
	cpu_set_t cs;
	CPU_ZERO(&cs);
	for (unsigned j = 0; j + 2 < w->npfd; j++) {
		const struct cgsi_shard *s = &l->shards[w->pshard[j]];
		if (cgsi_cpulist_parse(s->cpus, set, NULL, 0) <= 0)
			continue;
		for (int c = 0; c < CGSI_MAX_CPUS && c < CPU_SETSIZE; c++)
			if (set[c])
				CPU_SET(c, &cs);
	}
	if (CPU_COUNT(&cs))
		sched_setaffinity(0, sizeof(cs), &cs);
	free(set);
}

/* The poll set of worker w: its shards' sockets, then wake_fd, stop_fd. */
static void worker_rebuild(struct cgs_listener *l, struct cgsi_worker *w,
			   unsigned active)
{
	w->npfd = 0;
	for (unsigned i = w->idx; i < l->nshards; i += active) {
		w->pfd[w->npfd] = (struct pollfd){ .fd = l->shards[i].fd,
						   .events = POLLIN };
		w->pshard[w->npfd++] = i;
	}
	w->pfd[w->npfd++] = (struct pollfd){ .fd = w->wake_fd,
					     .events = POLLIN };
	w->pfd[w->npfd++] = (struct pollfd){ .fd = l->stop_fd,
					     .events = POLLIN };
	w->wait_cap_ns = UINT64_MAX;
	for (unsigned j = 0; j + 2 < w->npfd; j++)
		if (l->shards[w->pshard[j]].wait_cap_ns < w->wait_cap_ns)
			w->wait_cap_ns = l->shards[w->pshard[j]].wait_cap_ns;
	if (l->pin)
		pin_worker(l, w);
}

/* Drain shard i unless another thread still does (a shard moving between
 * threads): what it leaves is seen by the next poll. */
static void drain_one(struct cgs_listener *l, struct cgsi_shard *s,
		      struct cgsi_round *rd, bool look)
{
	if (__atomic_exchange_n(&s->draining, 1, __ATOMIC_ACQUIRE))
		return;
	if (look) {
		uint32_t rmem, rcvbuf, drops;
		if (cgsi_sock_meminfo(s->fd, &rmem, &rcvbuf, &drops) == 0 &&
		    rcvbuf) {
			unsigned pm = (unsigned)((uint64_t)rmem * 1000 / rcvbuf);
			if (pm > rd->fill_pm)
				rd->fill_pm = pm;
			if (drops != (uint32_t)s->seen_drops)
				rd->dropped = true;
			s->seen_drops = drops;
		}
	}
	int r = look ? cgsi_shard_drain_max(l, s, l->fn, l->user,
					    CGSI_ROUND_BATCHES, &rd->more)
		     : cgsi_shard_drain(l, s, l->fn, l->user);
	if (r < 0 && r != -EINTR)
		cgsi_log(l, CGS_LOG_WARNING, "shard %u: receive: %s", s->idx,
			 cgs_strerror(r));
	__atomic_store_n(&s->draining, 0, __ATOMIC_RELEASE);
}

/* Wait ns, waking at once for stop or a change of the thread set. */
static void batch_wait(struct cgsi_worker *w, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
			       (long)(ns % 1000000000u) };
	ppoll(&w->pfd[w->npfd - 2], 2, &ts, NULL);
}

static bool worker_parked(struct cgs_listener *l, struct cgsi_worker *w)
{
	if (w->idx < __atomic_load_n(&l->active, __ATOMIC_ACQUIRE))
		return false;
	struct pollfd p[2] = { { .fd = w->wake_fd, .events = POLLIN },
			       { .fd = l->stop_fd, .events = POLLIN } };
	uint64_t v;
	poll(p, 2, -1);
	if (p[0].revents && read(w->wake_fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: someone else's wake-up; nothing to do */
	}
	return true;
}

void *cgsi_worker_main(void *arg)
{
	struct cgsi_worker *w = arg;
	struct cgs_listener *l = w->owner;
	bool adapt = l->adapt_wait || !l->fixed_threads;
	w->gen = ~0u;
	w->wait_ns = l->adapt_wait ? (uint64_t)CGSI_DEFAULT_BATCH_MS * 1000000u
				   : (uint64_t)l->batch_ms * 1000000u;
	while (!stopping(l)) {
		if (worker_parked(l, w))
			continue;
		unsigned gen = __atomic_load_n(&l->gen, __ATOMIC_ACQUIRE);
		bool all = gen != w->gen;
		if (all) {
			/* new shards: drain each once (events kept while
			 * registering wake no poll) */
			w->gen = gen;
			worker_rebuild(l, w,
				       __atomic_load_n(&l->active,
						       __ATOMIC_ACQUIRE));
		} else {
			if (poll(w->pfd, w->npfd, -1) < 0 && errno != EINTR)
				break;
			if (w->pfd[w->npfd - 1].revents)
				break;
			if (w->pfd[w->npfd - 2].revents) {
				uint64_t v;
				if (read(w->wake_fd, &v, sizeof(v)) < 0) {
					/* EAGAIN: nothing pending */
				}
				continue;
			}
		}
		struct cgsi_round rd = { .start_ns = mono_ns() };
		for (unsigned j = 0; j + 2 < w->npfd; j++)
			if (all || w->pfd[j].revents)
				drain_one(l, &l->shards[w->pshard[j]], &rd,
					  adapt);
		rd.end_ns = mono_ns();
		if (adapt)
			cgsi_adapt_round(l, w, &rd);
		if (w->wait_ns && !rd.more)
			batch_wait(w, w->wait_ns);
	}
	/* final drain: what the kernel queued before stop is still ours;
	 * the shards of the last poll set and of the final assignment (a
	 * thread set that changed just before stop leaves none undrained) */
	struct cgsi_round rd = { 0 };
	for (unsigned j = 0; j + 2 < w->npfd; j++)
		drain_one(l, &l->shards[w->pshard[j]], &rd, false);
	unsigned active = __atomic_load_n(&l->active, __ATOMIC_ACQUIRE);
	for (unsigned i = w->idx; w->idx < active && i < l->nshards;
	     i += active)
		drain_one(l, &l->shards[i], &rd, false);
	return NULL;
}

/* Start worker k (under grow_lock, or before the runner runs). */
static int worker_start(struct cgs_listener *l, unsigned k)
{
	struct cgsi_worker *w = &l->workers[k];
	if (w->started)
		return 0;
	w->owner = l;
	w->idx = k;
	w->pfd = calloc(l->nshards + 2, sizeof(*w->pfd));
	w->pshard = calloc(l->nshards + 2, sizeof(*w->pshard));
	w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!w->pfd || !w->pshard || w->wake_fd < 0)
		return w->wake_fd < 0 ? -errno : -ENOMEM;
	int r = -pthread_create(&w->thread, NULL, cgsi_worker_main, w);
	if (r == 0)
		w->started = true;
	return r;
}

/* Make n threads active (1 <= n <= nshards): start what is missing, bump
 * the generation, wake every started thread to rebuild its poll set. */
int cgsi_set_active(struct cgs_listener *l, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		int r = worker_start(l, k);
		if (r < 0)
			return r;
	}
	__atomic_store_n(&l->active, n, __ATOMIC_RELEASE);
	__atomic_add_fetch(&l->gen, 1, __ATOMIC_RELEASE);
	uint64_t one = 1;
	for (unsigned k = 0; k < l->nshards; k++)
		if (l->workers[k].started &&
		    write(l->workers[k].wake_fd, &one, sizeof(one)) < 0) {
			/* a full eventfd wakes the thread all the same */
		}
	return 0;
}

static void workers_free(struct cgs_listener *l)
{
	if (!l->workers)
		return;
	for (unsigned k = 0; k < l->nshards; k++) {
		struct cgsi_worker *w = &l->workers[k];
		free(w->pfd);
		free(w->pshard);
		if (w->wake_fd >= 0)
			close(w->wake_fd);
	}
	free(l->workers);
	l->workers = NULL;
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
	l->fn = fn;
	l->user = user;
	l->adapt_wait = o.batch_ms == 0;
	l->batch_ms = o.batch_ms == CGS_RUN_NO_BATCH ? 0 : o.batch_ms;
	l->pin = o.pin;
	l->stop = false;
	if (l->stop_fd < 0) {
		l->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (l->stop_fd < 0)
			return -errno;
	}
	l->workers = aligned_alloc(64, sizeof(*l->workers) * l->nshards);
	if (!l->workers)
		return -ENOMEM;
	memset(l->workers, 0, sizeof(*l->workers) * l->nshards);
	for (unsigned k = 0; k < l->nshards; k++)
		l->workers[k].wake_fd = -1;
	l->last_grow_ns = 0;
	l->shrink_start_ns = 0;
	l->running = true;
	pthread_mutex_lock(&l->grow_lock);
	r = cgsi_set_active(l, l->fixed_threads ? l->nshards : 1);
	pthread_mutex_unlock(&l->grow_lock);
	if (r < 0) {
		cgs_listener_stop(l);
		return r;
	}
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
	pthread_mutex_lock(&l->grow_lock); /* no thread starts after this */
	for (unsigned k = 0; k < l->nshards; k++) {
		struct cgsi_worker *w = &l->workers[k];
		if (w->started) {
			pthread_join(w->thread, NULL);
			w->started = false;
		}
	}
	pthread_mutex_unlock(&l->grow_lock);
	workers_free(l);
	/* reset for a possible later run */
	uint64_t v;
	while (read(l->stop_fd, &v, sizeof(v)) > 0) {
	}
	l->running = false;
	return 0;
}
