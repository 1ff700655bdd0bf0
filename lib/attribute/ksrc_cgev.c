/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel source's cgroup events: ids and paths from mkdir/rmdir, the
 * ring's reader thread, the hook that names cgroups as they appear (ksrc_int.h). */
#ifdef CGS_HAVE_BPF

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attribute/ksrc_int.h"
#include "attribute/ksrc_util.h"
#include "exitcg.skel.h"
#include "util/common.h"

/* cgroup2's hierarchy id, as /proc/self/cgroup shows it: the first field
 * of the line without controllers ("0::/..."); -1 if there is none. */
int64_t cgsi_ksrc_dfl_hier(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 64];
	int64_t id = -1;
	if (!f)
		return -1;
	while (id < 0 && fgets(line, sizeof(line), f)) {
		char *end;
		long long v = strtoll(line, &end, 10);
		if (end != line && v >= 0 && end[0] == ':' && end[1] == ':')
			id = v;
	}
	fclose(f);
	return id;
}

/* Is (hier, id, path) an event of the cgroup2 hierarchy? Known from
 * /proc/self/cgroup at open; else learned once from an event whose
 * directory is still there with that inode (an event of a cgroup already
 * removed teaches nothing: without the first, a host whose new cgroups
 * all go quickly would lose their mkdir events until one stays). */
static bool dfl_event(struct cgsi_ksrc *k, const struct cgsk_cgev *e)
{
	if (k->dfl_hier >= 0)
		return (int64_t)e->hier == k->dfl_hier;
	char dir[PATH_MAX + 64];
	struct stat st;
	if (cgsi_cg_dir(k->mount, e->path, dir, sizeof(dir)) < 0 ||
	    stat(dir, &st) < 0 || (uint64_t)st.st_ino != e->id)
		return false;
	k->dfl_hier = e->hier;
	return true;
}

int cgsi_ksrc_on_cg_event(void *ctx, void *data, size_t len)
{
	struct cgsi_ksrc *k = ctx;
	const struct cgsk_cgev *e = data;
	if (len < sizeof(*e) || e->len <= 1 || e->len > CGSK_PATH_MAX) {
		k->cg_unreadable++; /* a walk finds it; removal checks stat */
		return 0;
	}
	struct cgsk_cgev c = *e;
	c.path[CGSK_PATH_MAX - 1] = '\0';
	if (!dfl_event(k, &c))
		return 0;
	if (c.type == CGSK_EV_MKDIR)
		cgsi_cgid_set(&k->ids, c.id, c.path);
	else if (c.type == CGSK_EV_RMDIR)
		cgsi_cgid_removed(&k->ids, c.id, k->now_ms);
	if (k->cg_hook && (c.type == CGSK_EV_MKDIR || c.type == CGSK_EV_RMDIR))
		k->cg_hook(k->cg_hook_ctx, (int)c.type, c.id, c.path);
	return 0;
}

/* During a walk (idlock held, or at open before any lookup): read the
 * cgroup events, so that a long walk beside a churn cannot let the ring
 * overflow (nothing else reads it meanwhile). */
void cgsi_ksrc_walk_tick(void *ctx)
{
	struct cgsi_ksrc *k = ctx;
	k->now_ms = cgsi_now_mono_ms();
	ring_buffer__consume(k->cgrb);
}

/*
 * The cgroup event ring's reader of last resort. Lookups read the ring as
 * records come (every KSRC_CG_EVERY lookups, and for an unknown id); a
 * storm of mkdir/rmdir with no exit in between would overflow it, losing
 * the paths of cgroups whose exits come later. The BPF program wakes
 * this thread only when the ring is a quarter full, so it costs nothing
 * otherwise: it sleeps in poll(). After a read it naps CG_READER_NAP_MS,
 * so that a storm is read in batches, far within the ring.
 */
#define CG_READER_NAP_MS 2
static void *cg_reader(void *arg)
{
	struct cgsi_ksrc *k = arg;
	struct pollfd pf[2] = {
		{ .fd = ring_buffer__epoll_fd(k->cgrb), .events = POLLIN },
		{ .fd = k->stopfd, .events = POLLIN },
	};
	struct timespec nap = { 0, CG_READER_NAP_MS * 1000000L };
	for (;;) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		pthread_mutex_lock(&k->idlock);
		k->now_ms = cgsi_now_mono_ms();
		ring_buffer__consume(k->cgrb);
		pthread_mutex_unlock(&k->idlock);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/*
 * Start cg_reader() once, from the first lookup, not at open: a thread
 * inherits its creator's credentials, capabilities and no_new_privs, all
 * per thread, and a caller drops privileges after loading the program
 * but before records flow (taskstat-collect --user): the reader is then
 * made by a listener thread that holds none. Every signal is blocked in
 * it (the caller's handlers stay the caller's business). Without it
 * (pthread_create failed) lookups alone read the ring, as before.
 */
void cgsi_ksrc_reader_start(struct cgsi_ksrc *k)
{
	int no = 0;
	if (!atomic_compare_exchange_strong(&k->reader_tried, &no, 1))
		return;
	k->stopfd = eventfd(0, EFD_CLOEXEC);
	if (k->stopfd < 0)
		return;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	k->reader_on = pthread_create(&k->reader, NULL, cg_reader, k) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void cgsi_ksrc_reader_stop(struct cgsi_ksrc *k)
{
	if (k->reader_on) {
		uint64_t one = 1;
		while (write(k->stopfd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
		pthread_join(k->reader, NULL);
		k->reader_on = false;
	}
	if (k->stopfd >= 0)
		close(k->stopfd);
	k->stopfd = -1;
}


void cgsi_ksrc_set_cg_hook(struct cgsi_ksrc *k, cgsi_ksrc_cg_fn *fn,
			   void *ctx)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->idlock);
	k->cg_hook = fn;
	k->cg_hook_ctx = ctx;
	__atomic_store_n(&k->skel->bss->wake_mkdir, fn != NULL,
			 __ATOMIC_RELAXED);
	if (fn) /* the cgroups there before (a mkdir after: an event) */
		cgsi_cgid_each_live(&k->ids, fn, ctx, CGSI_KSRC_EXISTING);
	pthread_mutex_unlock(&k->idlock);
	if (fn) /* someone must be there to be woken */
		cgsi_ksrc_reader_start(k);
}

#endif /* CGS_HAVE_BPF */
