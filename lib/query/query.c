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
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "receive/listener_int.h"

#define CGSI_QUERY_BUF 16384
#define CGSI_QUERY_TIMEOUT_MS 2000

struct cgs_query {
	struct nl_sock *sk;
	int family;
	int fd;
	unsigned char *buf;
	unsigned timeout_ms;
};

CGS_EXPORT int cgs_query_open(struct cgs_query **out,
			      const struct cgs_query_opts *opts)
{
	struct cgs_query_opts o;

	if (!out)
		return -EINVAL;
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
	r = cgsi_genl_socket(&q->sk, &q->family, 0);
	if (r < 0) {
		free(q->buf);
		free(q);
		return r;
	}
	q->fd = nl_socket_get_fd(q->sk);
	*out = q;
	return 0;
}

CGS_EXPORT void cgs_query_close(struct cgs_query *q)
{
	if (!q)
		return;
	nl_socket_free(q->sk);
	free(q->buf);
	free(q);
}

/* Send one request; hand each reply message of the same sequence to fn.
 * Returns what fn returned (>0 done), or -errno from an error reply. */
typedef int (*reply_fn)(const struct nlmsghdr *h, void *ctx);

static int transact(struct cgs_query *q, uint8_t cmd, int attr, uint32_t val,
		    reply_fn fn, void *ctx)
{
	struct nl_msg *msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	int r = -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, q->family, 0, 0, cmd,
			 TASKSTATS_GENL_VERSION))
		goto out;
	r = nla_put_u32(msg, attr, val);
	if (r < 0) {
		r = cgsi_nl_err(r);
		goto out;
	}
	r = nl_send_auto(q->sk, msg);
	if (r < 0) {
		r = cgsi_nl_err(r);
		goto out;
	}
	uint32_t seq = nlmsg_hdr(msg)->nlmsg_seq;
	uint64_t deadline = cgsi_now_mono_ms() + q->timeout_ms;
	for (;;) {
		uint64_t now = cgsi_now_mono_ms();
		if (now >= deadline) {
			r = -ETIMEDOUT;
			goto out;
		}
		struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			continue;
		ssize_t n = recv(q->fd, q->buf, CGSI_QUERY_BUF, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			r = -errno;
			goto out;
		}
		size_t rem = (size_t)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)q->buf;
		     NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				if (h->nlmsg_len <
				    NLMSG_LENGTH(sizeof(*e))) {
					r = -EBADMSG;
					goto out;
				}
				if (e->error) {
					r = e->error;
					goto out;
				}
				continue;
			}
			r = fn(h, ctx);
			if (r != 0)
				goto out;
		}
	}
out:
	nlmsg_free(msg);
	return r;
}

struct rec_ctx {
	struct cgs_record *out;
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
	if (c->want_group && (r & CGS_DECODED_GROUP)) {
		cgsi_out_copy(c->out, &group, sizeof(group));
		return 1;
	}
	if (!c->want_group && (r & CGS_DECODED_TASK)) {
		task.kind = CGS_KIND_THREAD; /* a live task */
		cgsi_out_copy(c->out, &task, sizeof(task));
		return 1;
	}
	return -EBADMSG;
}

CGS_EXPORT int cgs_query_pid(struct cgs_query *q, uint32_t pid,
			     struct cgs_record *out)
{
	if (!q || !out || !pid || !CGSI_OUT_OK(out))
		return -EINVAL;
	struct rec_ctx c = { .out = out, .want_group = false };
	int r = transact(q, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID, pid,
			 rec_reply, &c);
	return r > 0 ? 0 : r;
}

CGS_EXPORT int cgs_query_tgid(struct cgs_query *q, uint32_t tgid,
			      struct cgs_record *out)
{
	if (!q || !out || !tgid || !CGSI_OUT_OK(out))
		return -EINVAL;
	struct rec_ctx c = { .out = out, .want_group = true };
	int r = transact(q, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_TGID, tgid,
			 rec_reply, &c);
	if (r > 0) {
		if (CGS_SZ_HAS(out, tgid))
			out->tgid = tgid;
		return 0;
	}
	return r;
}

static int cgstats_reply(const struct nlmsghdr *h, void *arg)
{
	struct cgs_cgroupstats *out = arg;
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

CGS_EXPORT int cgs_query_cgroupstats(struct cgs_query *q,
				     const char *cgroup_dir,
				     struct cgs_cgroupstats *out)
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
	CGS_OPTS(cgs_cgroupstats, cs);
	int r = transact(q, CGROUPSTATS_CMD_GET, CGROUPSTATS_CMD_ATTR_FD,
			 (uint32_t)fd, cgstats_reply, &cs);
	close(fd);
	if (r <= 0)
		return r;
	return cgsi_out_copy(out, &cs, sizeof(cs));
}
