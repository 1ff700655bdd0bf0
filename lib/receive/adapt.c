/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runner's controller: how long a receive thread waits between two
 * drains, and how many threads drain. One thread serves every shard and
 * waits longer while little arrives, shorter as a socket fills; a thread is
 * added when one cannot keep up (a socket over half full although the
 * thread no longer waits, the kernel dropping, a round of 1,024 datagrams
 * taking over 50 ms with more queued, or draining taking three quarters of
 * the thread's time) and taken away again when all of them
 * together are busy less than 30 % of one thread's time for a second.
 */
#include <sys/socket.h>
#include <linux/sock_diag.h>

#include "receive/listener_int.h"

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

#define MS 1000000u
/* the wait's bounds, and where it starts */
#define WAIT_MAX_NS (50u * MS)
#define WAIT_STEP_NS (1u * MS)
/* The burst a wait must absorb: exits per second and CPU, and what one
 * queued exit message costs the socket's buffer (skb truesize of a
 * 1172-byte PID+TGID message in a 2 KiB slab object, with the sk_buff). */
#define PEAK_EXITS_PER_CPU 100000u
#define QUEUED_BYTES 2560u
/* fill thresholds, per mille of the receive buffer */
#define FILL_FULL 500u   /* no wait; with none already: a thread more */
#define FILL_HIGH 125u   /* halve the wait */
#define FILL_LOW 31u     /* lengthen it */
/* busy-fraction windows */
#define GROW_WIN_NS (250u * MS)
#define SHRINK_WIN_NS (1000u * MS)
#define GROW_ROUND_NS (50u * MS) /* a round at its batch limit this long */
#define GROW_GAP_NS (100u * MS)   /* at most one thread more per 100 ms */
#define SHRINK_CALM_NS (2000u * MS) /* none fewer within 2 s of a grow */

int cgsi_sock_meminfo(int fd, uint32_t *rmem, uint32_t *rcvbuf,
		      uint32_t *drops)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);
	memset(mem, 0, sizeof(mem));
	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0)
		return -errno;
	if (len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
		return -EOPNOTSUPP;
	*rmem = mem[SK_MEMINFO_RMEM_ALLOC];
	*rcvbuf = mem[SK_MEMINFO_RCVBUF];
	*drops = mem[SK_MEMINFO_DROPS];
	return 0;
}

/* The longest wait after which a burst at PEAK_EXITS_PER_CPU on each of
 * the shard's CPUs still fits in half its receive buffer. */
uint64_t cgsi_wait_cap_ns(size_t rcvbuf, unsigned ncpus)
{
	uint64_t per_s = (uint64_t)PEAK_EXITS_PER_CPU * (ncpus ? ncpus : 1) *
			 QUEUED_BYTES;
	uint64_t cap = (uint64_t)rcvbuf / 2 * 1000000000u / per_s;
	return cap < WAIT_MAX_NS ? cap : WAIT_MAX_NS;
}

static uint64_t all_busy_ns(struct cgs_listener *l)
{
	uint64_t t = 0;
	for (unsigned k = 0; k < l->nshards; k++)
		t += __atomic_load_n(&l->workers[k].busy_ns, __ATOMIC_RELAXED);
	return t;
}

/* One thread more, unless there are as many as shards or one was added
 * less than GROW_GAP_NS ago. Opportunistic: a busy lock means someone else
 * is changing the set (or the runner is stopping). */
static void try_grow(struct cgs_listener *l, uint64_t now, const char *why)
{
	unsigned n = __atomic_load_n(&l->active, __ATOMIC_ACQUIRE);
	if (n >= l->nshards || pthread_mutex_trylock(&l->grow_lock))
		return;
	n = __atomic_load_n(&l->active, __ATOMIC_ACQUIRE);
	if (n < l->nshards && now - l->last_grow_ns >= GROW_GAP_NS &&
	    !__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		if (cgsi_set_active(l, n + 1) == 0) {
			l->grows++;
			cgsi_log(l, CGS_LOG_DEBUG, "receive threads: %u (%s)",
				 n + 1, why);
		}
		l->last_grow_ns = now;
		l->shrink_start_ns = now;
		l->shrink_busy_ns = all_busy_ns(l);
	}
	pthread_mutex_unlock(&l->grow_lock);
}

/* One thread fewer when all of them together were busy less than 30 % of
 * one thread's time over the last SHRINK_WIN_NS and none was added for
 * SHRINK_CALM_NS. */
static void maybe_shrink(struct cgs_listener *l, uint64_t now)
{
	if (now - __atomic_load_n(&l->shrink_start_ns, __ATOMIC_RELAXED) <
	    SHRINK_WIN_NS || pthread_mutex_trylock(&l->grow_lock))
		return;
	uint64_t span = now - l->shrink_start_ns;
	uint64_t busy = all_busy_ns(l);
	unsigned n = __atomic_load_n(&l->active, __ATOMIC_ACQUIRE);
	if (span >= SHRINK_WIN_NS && n > 1 &&
	    now - l->last_grow_ns >= SHRINK_CALM_NS &&
	    (busy - l->shrink_busy_ns) * 10 < span * 3 &&
	    !__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		if (cgsi_set_active(l, n - 1) == 0) {
			l->shrinks++;
			cgsi_log(l, CGS_LOG_DEBUG, "receive threads: %u",
				 n - 1);
		}
	}
	if (span >= SHRINK_WIN_NS) {
		__atomic_store_n(&l->shrink_start_ns, now, __ATOMIC_RELAXED);
		l->shrink_busy_ns = busy;
	}
	pthread_mutex_unlock(&l->grow_lock);
}

/* The next wait from the fill the round found. */
static uint64_t next_wait(const struct cgsi_worker *w,
			  const struct cgsi_round *r)
{
	uint64_t wt = w->wait_ns;
	if (r->dropped || r->fill_pm > FILL_FULL)
		wt = 0;
	else if (r->fill_pm > FILL_HIGH)
		wt /= 2;
	else if (r->fill_pm < FILL_LOW)
		wt += wt / 4 + WAIT_STEP_NS;
	return wt < w->wait_cap_ns ? wt : w->wait_cap_ns;
}

void cgsi_adapt_round(struct cgs_listener *l, struct cgsi_worker *w,
		      const struct cgsi_round *r)
{
	uint64_t dur = r->end_ns - r->start_ns;
	__atomic_store_n(&w->busy_ns, w->busy_ns + dur, __ATOMIC_RELAXED);
	const char *why = NULL;
	if (r->dropped)
		why = "the kernel dropped";
	else if (r->fill_pm > FILL_FULL && (w->wait_ns == 0 || !l->adapt_wait))
		why = "a socket over half full";
	else if (r->more && dur >= GROW_ROUND_NS)
		why = "1,024 datagrams took over 50 ms with more queued";
	if (l->adapt_wait)
		w->wait_ns = next_wait(w, r);
	if (!w->win_start_ns)
		w->win_start_ns = r->start_ns;
	w->win_busy_ns += dur;
	uint64_t span = r->end_ns - w->win_start_ns;
	if (span >= GROW_WIN_NS) {
		if (w->win_busy_ns * 4 > span * 3)
			why = "draining takes 3/4 of the thread's time";
		w->win_start_ns = r->end_ns;
		w->win_busy_ns = 0;
	}
	if (l->fixed_threads)
		return;
	if (why)
		try_grow(l, r->end_ns, why);
	else
		maybe_shrink(l, r->end_ns);
}
