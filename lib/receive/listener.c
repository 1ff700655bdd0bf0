/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Listener lifecycle: shards, their CPU subsets, buffers, registration. */
#include <linux/sock_diag.h>
#include <linux/taskstats.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "receive/listener_int.h"
#include "util/cpulist.h"
#include "util/genl.h"

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

#define CGSI_DEFAULT_RCVBUF (16u << 20)

/* Exact count of what the kernel dropped on this socket: sk_drops. */
static int sock_drops(int fd, uint64_t *out)
{
	uint32_t rmem, rcvbuf, drops;
	int r = cgsi_sock_meminfo(fd, &rmem, &rcvbuf, &drops);
	if (r == 0)
		*out = drops;
	return r;
}

static int set_rcvbuf(struct cgs_listener *l, struct cgsi_shard *s,
		      size_t want)
{
	int v = want > (size_t)(INT32_MAX / 2) ? INT32_MAX / 2 : (int)want;
	if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0) {
		/* without CAP_NET_ADMIN: capped by net.core.rmem_max */
		if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0)
			return -errno;
	}
	int got = 0;
	socklen_t len = sizeof(got);
	if (getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &got, &len) < 0)
		return -errno;
	s->rcvbuf = (size_t)got;
	/* the kernel doubles what it is asked for, for its bookkeeping */
	if ((size_t)got < want)
		cgsi_log(l, CGS_LOG_WARNING,
			 "shard %u: receive buffer is only %d bytes (asked "
			 "%zu; raise net.core.rmem_max or grant "
			 "CAP_NET_ADMIN): bursts may be dropped",
			 s->idx, got, want);
	return 0;
}

static int shard_alloc_slots(struct cgsi_shard *s)
{
	s->msgs = calloc(CGSI_RECV_SLOTS, sizeof(*s->msgs));
	s->iov = calloc(CGSI_RECV_SLOTS, sizeof(*s->iov));
	s->bufs = malloc((size_t)CGSI_RECV_SLOTS * CGSI_RECV_SLOT_SIZE);
	if (!s->msgs || !s->iov || !s->bufs)
		return -ENOMEM;
	for (unsigned i = 0; i < CGSI_RECV_SLOTS; i++) {
		s->iov[i].iov_base = s->bufs + (size_t)i * CGSI_RECV_SLOT_SIZE;
		s->iov[i].iov_len = CGSI_RECV_SLOT_SIZE;
		s->msgs[i].msg_hdr.msg_iov = &s->iov[i];
		s->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

/* Split the CPUs into n contiguous groups as even as possible. */
static int split_cpus(struct cgs_listener *l, const unsigned char *set)
{
	unsigned char *sub = malloc(CGSI_MAX_CPUS);
	char *buf = malloc(100 + 6 * CGSI_MAX_CPUS);
	int *owner = malloc(sizeof(*owner) * CGSI_MAX_CPUS);
	if (!sub || !buf || !owner) {
		free(sub);
		free(buf);
		free(owner);
		return -ENOMEM;
	}
	int r = 0;
	cgsi_cpus_split(set, l->nshards, owner);
	for (unsigned i = 0; i < l->nshards; i++) {
		unsigned take = 0;
		int first = -1;
		for (int c = 0; c < CGSI_MAX_CPUS; c++) {
			sub[c] = owner[c] == (int)i;
			if (sub[c] && !take++)
				first = c;
		}
		l->shards[i].single_cpu = take == 1 ? first : -1;
		l->shards[i].ncpus = take;
		r = cgsi_cpulist_format(sub, CGSI_MAX_CPUS, buf,
					100 + 6 * CGSI_MAX_CPUS);
		if (r < 0)
			break;
		l->shards[i].cpus = strdup(buf);
		if (!l->shards[i].cpus) {
			r = -ENOMEM;
			break;
		}
		r = 0;
	}
	free(owner);
	free(sub);
	free(buf);
	return r;
}

static int shard_open(struct cgs_listener *l, struct cgsi_shard *s,
		      size_t rcvbuf, const char *all_possible, uint32_t port)
{
	int r = shard_alloc_slots(s);
	if (r < 0)
		return r;
	r = cgsi_genl_connect(&s->sk, port);
	if (r < 0)
		return r;
	s->fd = nl_socket_get_fd(s->sk);
	r = set_rcvbuf(l, s, rcvbuf);
	if (r < 0)
		return r;
	/*
	 * The kernel keys listeners by port id and a socket closed without
	 * deregistering leaves its entries behind; if our autobound port id
	 * was someone's before, we would inherit their CPUs. Clear it first.
	 */
	r = cgsi_send_mask(s, l->family, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK,
			   all_possible, false);
	if (r == 0)
		r = cgsi_send_mask(s, l->family,
				   TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, s->cpus,
				   true);
	if (r == -EPERM)
		return -CGS_ERR_PERM;
	/* The kernel's add_del_listener() says -EINVAL for a mask beyond the
	 * possible CPUs (ours are checked against them) and for a caller
	 * outside the initial user or pid namespace: the latter, which
	 * cgsi_check_namespaces() cannot see from inside a pid namespace
	 * with a /proc of its own (a container's). */
	if (r == -EINVAL)
		return -CGS_ERR_PIDNS;
	if (r < 0)
		return r;
	sock_drops(s->fd, &s->drops_base);
	s->seen_drops = s->drops_base;
	s->wait_cap_ns = cgsi_wait_cap_ns(s->rcvbuf, s->ncpus);
	return 0;
}

int cgsi_listener_open_1_3(struct cgs_listener **out,
			   const struct cgs_listener_opts *uopts);
int cgsi_listener_open_1_0(struct cgs_listener **out,
			   const struct cgs_listener_opts *uopts);

/* 1.3: the library's own error codes (CGS_ERR_*) */
CGSI_VERSIONED(cgs_listener_open, CGSTATS_1.3)
int cgsi_listener_open_1_3(struct cgs_listener **out,
			   const struct cgs_listener_opts *uopts)
{
	return cgsi_listener_open(out, uopts, NULL);
}

/* 1.0 .. 1.2: each as the plain errno it was (cgsi_err_compat()) */
CGSI_COMPAT(cgs_listener_open, CGSTATS_1.0)
int cgsi_listener_open_1_0(struct cgs_listener **out,
			   const struct cgs_listener_opts *uopts)
{
	return cgsi_err_compat(cgsi_listener_open(out, uopts, NULL));
}

int cgsi_listener_open(struct cgs_listener **out,
		       const struct cgs_listener_opts *uopts,
		       const struct cgsi_listener_iopts *io)
{
	struct cgs_listener_opts o;
	if (!out)
		return -EINVAL;
	*out = NULL;
	int r = cgsi_opts_copy(&o, sizeof(o), uopts, uopts ? uopts->sz : 0);
	if (r < 0)
		return r;

	unsigned char *set = calloc(1, CGSI_MAX_CPUS);
	unsigned char *poss = calloc(1, CGSI_MAX_CPUS);
	char *possible_list = malloc(100 + 6 * CGSI_MAX_CPUS);
	struct cgs_listener *l = calloc(1, sizeof(*l));
	if (!set || !poss || !possible_list || !l) {
		r = -ENOMEM;
		goto fail;
	}
	if (o.flags & ~(CGS_NO_TGID | CGS_LISTEN_NO_NS_CHECK)) {
		r = -EINVAL;
		goto fail;
	}
	l->flags = o.flags;
	l->log = o.log;
	l->log_ctx = o.log_ctx;
	l->stop_fd = -1;
	pthread_mutex_init(&l->grow_lock, NULL);

	/* Validate the mask ourselves: the kernel's errors are terse. */
	int nposs = cgsi_possible_set(poss);
	if (nposs <= 0) {
		r = nposs < 0 ? nposs : -EIO;
		goto fail;
	}
	cgsi_cpulist_format(poss, CGSI_MAX_CPUS, possible_list,
			    100 + 6 * CGSI_MAX_CPUS);
	int ncpus;
	if (o.cpus) {
		char err[128];
		ncpus = cgsi_cpulist_parse(o.cpus, set, err, sizeof(err));
		if (ncpus < 0) {
			cgsi_log(l, CGS_LOG_ERR, "bad cpu list \"%s\": %s",
				 o.cpus, err);
			r = ncpus;
			goto fail;
		}
		for (int c = 0; c < CGSI_MAX_CPUS; c++)
			if (set[c] && !poss[c]) {
				cgsi_log(l, CGS_LOG_ERR,
					 "cpu %d is not a possible cpu", c);
				r = -ERANGE;
				goto fail;
			}
	} else {
		memcpy(set, poss, CGSI_MAX_CPUS);
		ncpus = nposs;
	}

	if (!(o.flags & CGS_LISTEN_NO_NS_CHECK)) {
		r = cgsi_check_namespaces();
		if (r < 0)
			goto fail;
	}
	/* resolve once, up front so "no taskstats" wins over "no
	 * privilege"; the shards' sockets use this id */
	{
		struct nl_sock *probe;
		r = cgsi_genl_socket(&probe, &l->family);
		if (r < 0)
			goto fail;
		nl_socket_free(probe);
	}
	if (cgsi_have_net_admin() == 0) {
		r = -CGS_ERR_PERM;
		goto fail;
	}

	l->fixed_threads = o.shards != 0;
	l->nshards = o.shards ? o.shards : cgsi_default_shards((unsigned)ncpus);
	if (l->nshards > (unsigned)ncpus)
		l->nshards = (unsigned)ncpus;
	l->shards = aligned_alloc(64, sizeof(*l->shards) * l->nshards);
	if (!l->shards) {
		r = -ENOMEM;
		goto fail;
	}
	memset(l->shards, 0, sizeof(*l->shards) * l->nshards);
	for (unsigned i = 0; i < l->nshards; i++) {
		l->shards[i].owner = l;
		l->shards[i].idx = i;
		l->shards[i].task.sz = sizeof(struct cgs_record);
		l->shards[i].group.sz = sizeof(struct cgs_record);
		l->shards[i].dstats.sz = sizeof(struct cgs_decode_stats);
		l->shards[i].fd = -1;
	}
	r = split_cpus(l, set);
	if (r < 0)
		goto fail;
	for (unsigned i = 0; i < l->nshards; i++) {
		r = shard_open(l, &l->shards[i],
			       o.rcvbuf ? o.rcvbuf : CGSI_DEFAULT_RCVBUF,
			       possible_list,
			       i == 0 && io ? io->shard0_port : 0);
		if (r < 0)
			goto fail;
	}
	free(set);
	free(poss);
	free(possible_list);
	*out = l;
	return 0;
fail:
	free(set);
	free(poss);
	free(possible_list);
	cgs_listener_close(l);
	return r;
}

/*
 * Deregistering needs CAP_NET_ADMIN, which a collector may have shed after
 * registering. The kernel drops a listener entry when a send to its closed
 * port fails, so one exit on each of the shard's CPUs after close removes
 * what we could not: until then, whoever bound that port id next would
 * receive every exit on those CPUs.
 */
static void flush_stale(const char *cpus)
{
	/* on the stack: the children exit at once and must own no heap */
	unsigned char set[CGSI_MAX_CPUS];
	if (cgsi_cpulist_parse(cpus, set, NULL, 0) <= 0)
		return;
	for (int c = 0; c < CGSI_MAX_CPUS && c < CPU_SETSIZE; c++) {
		if (!set[c])
			continue;
		pid_t p = fork();
		if (p == 0) {
			cpu_set_t cs;
			CPU_ZERO(&cs);
			CPU_SET(c, &cs);
			sched_setaffinity(0, sizeof(cs), &cs);
			_exit(0);
		}
		if (p > 0)
			while (waitpid(p, NULL, 0) < 0 && errno == EINTR) {
			}
	}
}

static void shard_close(struct cgs_listener *l, struct cgsi_shard *s)
{
	if (s->sk) {
		int r = 0;
		if (s->cpus && s->bufs)
			r = cgsi_send_mask(s, l->family,
					   TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK,
					   s->cpus, false);
		nl_socket_free(s->sk);
		s->sk = NULL;
		if (r < 0 && s->cpus)
			flush_stale(s->cpus);
	}
	free(s->cpus);
	free(s->msgs);
	free(s->iov);
	free(s->bufs);
	free(s->pending);
}

void cgs_listener_close(struct cgs_listener *l)
{
	if (!l)
		return;
	if (l->running)
		cgs_listener_stop(l);
	if (l->shards)
		for (unsigned i = 0; i < l->nshards; i++)
			shard_close(l, &l->shards[i]);
	free(l->shards);
	if (l->stop_fd >= 0)
		close(l->stop_fd);
	pthread_mutex_destroy(&l->grow_lock);
	free(l);
}

unsigned cgs_listener_shards(const struct cgs_listener *l)
{
	return l ? l->nshards : 0;
}

unsigned cgs_listener_get_threads(const struct cgs_listener *l)
{
	if (!l || !__atomic_load_n(&l->running, __ATOMIC_ACQUIRE))
		return 0;
	return __atomic_load_n(&l->active, __ATOMIC_ACQUIRE);
}

int cgs_listener_shard_fd(const struct cgs_listener *l,
			  unsigned shard)
{
	if (!l || shard >= l->nshards)
		return -EINVAL;
	return l->shards[shard].fd;
}

const char *cgs_listener_shard_cpus(const struct cgs_listener *l,
				    unsigned shard)
{
	if (!l || shard >= l->nshards)
		return NULL;
	return l->shards[shard].cpus;
}

size_t cgs_listener_shard_rcvbuf(const struct cgs_listener *l,
				 unsigned shard)
{
	if (!l || shard >= l->nshards)
		return 0;
	return l->shards[shard].rcvbuf;
}

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static void add_loss(struct cgs_loss *sum, struct cgsi_shard *s)
{
	uint64_t drops;
	if (sock_drops(s->fd, &drops) == 0 && drops >= s->drops_base)
		sum->dropped += drops - s->drops_base;
	sum->dropped += LD(s->loss.dropped); /* our own (pending overflow) */
	sum->enobufs += LD(s->loss.enobufs);
	sum->seq_gaps += LD(s->loss.seq_gaps);
	sum->truncated += LD(s->loss.truncated);
	sum->discarded += LD(s->loss.discarded);
	const struct cgs_decode_stats *d = &s->dstats;
	sum->messages += LD(d->messages);
	sum->records += LD(d->records);
	sum->malformed += LD(d->malformed);
	sum->unknown_version += LD(d->unknown_version);
	sum->unknown_bytes += LD(d->unknown_bytes);
	sum->layout_guesses += LD(d->layout_guesses);
	sum->tgid_skipped += LD(d->tgid_skipped);
	sum->version0 += LD(d->version0);
}

int cgs_listener_get_loss(struct cgs_listener *l, unsigned shard,
			  struct cgs_loss *out)
{
	if (!l || !out || out->sz < sizeof(size_t))
		return -EINVAL;
	struct cgs_loss sum;
	memset(&sum, 0, sizeof(sum));
	if (shard == CGS_ALL_SHARDS) {
		for (unsigned i = 0; i < l->nshards; i++)
			add_loss(&sum, &l->shards[i]);
	} else if (shard < l->nshards) {
		add_loss(&sum, &l->shards[shard]);
	} else {
		return -EINVAL;
	}
	sum.sz = sizeof(sum);
	return cgsi_out_copy(out, &sum, sizeof(sum));
}

/* 1.0's name (CGSTATS_1.0): <cgstats/deprecated.h> */
CGSI_ALIAS(cgs_listener_loss, cgs_listener_get_loss);
