/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* TASKSTATS_CMD_GET for live pids/tgids, and cgroupstats (cgroup v1). */
#include <fcntl.h>
#include <linux/cgroupstats.h>
#include <linux/genetlink.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util/common.h"
#include "util/genl.h"

#define CGSI_QUERY_BUF 16384
#define CGSI_QUERY_TIMEOUT_MS 2000

struct cgs_query {
	struct nl_sock *sk;
	int family;
	unsigned char *buf;
	unsigned timeout_ms;
};

int cgsi_query_open_1_3(struct cgs_query **out,
			const struct cgs_query_opts *opts);
int cgsi_query_open_1_0(struct cgs_query **out,
			const struct cgs_query_opts *opts);

/* 1.3: the library's own error codes (CGS_ERR_NO_TASKSTATS) */
CGSI_VERSIONED(cgs_query_open, CGSTATS_1.3)
int cgsi_query_open_1_3(struct cgs_query **out,
			const struct cgs_query_opts *opts)
{
	struct cgs_query_opts o;

	if (!out)
		return -EINVAL;
	*out = NULL;
	int r = cgsi_opts_copy(&o, sizeof(o), opts, opts ? opts->sz : 0);
	if (r < 0)
		return r;
	struct cgs_query *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->timeout_ms = o.timeout_ms ? o.timeout_ms : CGSI_QUERY_TIMEOUT_MS;
	q->buf = malloc(CGSI_QUERY_BUF);
	if (!q->buf) {
		free(q);
		return -ENOMEM;
	}
	r = cgsi_genl_socket(&q->sk, &q->family);
	if (r < 0) {
		free(q->buf);
		free(q);
		return r;
	}
	*out = q;
	return 0;
}

/* 1.0 .. 1.2: each as the plain errno it was (cgsi_err_compat()) */
CGSI_COMPAT(cgs_query_open, CGSTATS_1.0)
int cgsi_query_open_1_0(struct cgs_query **out,
			const struct cgs_query_opts *opts)
{
	return cgsi_err_compat(cgsi_query_open_1_3(out, opts));
}

void cgs_query_close(struct cgs_query *q)
{
	if (!q)
		return;
	nl_socket_free(q->sk);
	free(q->buf);
	free(q);
}

typedef int (*reply_fn)(const struct nlmsghdr *h, void *ctx);

struct txn {
	reply_fn fn;
	void *ctx;
	bool got;
};

/* The kernel's answer, then its ack: the request ends with the ack, so
 * nothing of it is left queued for the next one. */
static int txn_reply(const struct nlmsghdr *h, void *arg)
{
	struct txn *t = arg;
	int r = t->fn(h, t->ctx);
	if (r < 0)
		return r;
	t->got |= r > 0;
	return 0;
}

/* Send one request; fn takes the reply (>0: it did). Returns 0 once one
 * was taken, what fn failed with, or -errno from an error reply. */
static int transact(struct cgs_query *q, uint8_t cmd, int attr, uint32_t val,
		    reply_fn fn, void *ctx)
{
	const struct cgsi_genl_attr a = { .type = attr, .u32 = val };
	struct txn t = { .fn = fn, .ctx = ctx };
	struct cgsi_nlreq req = {
		.timeout_ms = q->timeout_ms,
		.buf = q->buf,
		.buflen = CGSI_QUERY_BUF,
		.reply = txn_reply,
		.ctx = &t,
	};
	int r = cgsi_genl_request(q->sk, q->family, cmd, TASKSTATS_GENL_VERSION,
				  &a, &req);
	if (r == 0 && !t.got)
		r = -EBADMSG; /* acked without an answer */
	return r;
}

struct rec_ctx {
	struct cgs_record rec; /* ours: the caller's may be smaller */
	bool want_group;
};

static int rec_reply(const struct nlmsghdr *h, void *arg)
{
	struct rec_ctx *c = arg;
	CGS_OPTS(cgs_record, task);
	CGS_OPTS(cgs_record, group);
	int r = cgs_decode_msg(h, h->nlmsg_len, 0, &task, &group, NULL);
	if (r < 0)
		return r;
	if (c->want_group && (r & 2)) {
		c->rec = group;
		return 1;
	}
	if (!c->want_group && (r & 1)) {
		c->rec = task;
		c->rec.kind = CGS_KIND_THREAD; /* a live task */
		return 1;
	}
	return -EBADMSG;
}

/* TASKSTATS_CMD_GET of a pid or tgid into the caller's record, as much of
 * it as its sz says. */
static int query_rec(struct cgs_query *q, int attr, uint32_t id,
		     bool want_group, struct cgs_record *out)
{
	if (!q || !out || !id || !CGSI_OUT_OK(out))
		return -EINVAL;
	struct rec_ctx c = { .want_group = want_group };
	int r = transact(q, TASKSTATS_CMD_GET, attr, id, rec_reply, &c);
	if (r < 0)
		return r;
	if (want_group)
		c.rec.tgid = id;
	return cgsi_out_copy(out, &c.rec, sizeof(c.rec));
}

int cgs_query_pid(struct cgs_query *q, uint32_t pid,
		  struct cgs_record *out)
{
	return query_rec(q, TASKSTATS_CMD_ATTR_PID, pid, false, out);
}

int cgs_query_tgid(struct cgs_query *q, uint32_t tgid,
		   struct cgs_record *out)
{
	return query_rec(q, TASKSTATS_CMD_ATTR_TGID, tgid, true, out);
}

static int cgstats_reply(const struct nlmsghdr *h, void *arg)
{
	struct cgs_task_states *out = arg;
	size_t len = h->nlmsg_len;
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	const unsigned char *p = (const unsigned char *)h;
	while (off + NLA_HDRLEN <= len) {
		struct nlattr a;
		memcpy(&a, p + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len - off)
			return -EBADMSG;
		if ((a.nla_type & NLA_TYPE_MASK) == CGROUPSTATS_TYPE_CGROUP_STATS) {
			struct cgroupstats cs;
			size_t n = a.nla_len - NLA_HDRLEN;
			memset(&cs, 0, sizeof(cs));
			memcpy(&cs, p + off + NLA_HDRLEN,
			       CGS_MIN(n, sizeof(cs)));
			out->nr_sleeping = cs.nr_sleeping;
			out->nr_running = cs.nr_running;
			out->nr_stopped = cs.nr_stopped;
			out->nr_uninterruptible = cs.nr_uninterruptible;
			out->nr_io_wait = cs.nr_io_wait;
			return 1;
		}
		off += NLA_ALIGN(a.nla_len);
	}
	return -EBADMSG;
}

int cgs_query_cgroup(struct cgs_query *q, const char *cgroup_dir,
		     struct cgs_task_states *out)
{
	if (!q || !cgroup_dir || !out || !CGSI_OUT_OK(out))
		return -EINVAL;
	int fd = open(cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
		close(fd);
		return -CGS_ERR_CGROUP2;
	}
	if (sfs.f_type != CGROUP_SUPER_MAGIC) {
		close(fd);
		return -ENOTDIR;
	}
	CGS_OPTS(cgs_task_states, cs); /* ours: the caller's may be smaller */
	int r = transact(q, CGROUPSTATS_CMD_GET, CGROUPSTATS_CMD_ATTR_FD,
			 (uint32_t)fd, cgstats_reply, &cs);
	close(fd);
	if (r < 0)
		return r;
	return cgsi_out_copy(out, &cs, sizeof(cs));
}

/* 1.0's name (CGSTATS_1.0) and struct, of the same layout, and its
 * return value for a cgroup2 directory (-EOPNOTSUPP) */
_Static_assert(sizeof(struct cgs_cgroupstats) ==
		       sizeof(struct cgs_task_states),
	       "struct cgs_cgroupstats is struct cgs_task_states");
int cgs_query_cgroupstats(struct cgs_query *q,
			  const char *cgroup_dir,
			  struct cgs_cgroupstats *out)
{
	return cgsi_err_compat(cgs_query_cgroup(q, cgroup_dir,
					(struct cgs_task_states *)out));
}
