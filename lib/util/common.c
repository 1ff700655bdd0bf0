/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stddef.h>
#include <netlink/errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "util/common.h"

int cgsi_opts_copy(void *dst, size_t dst_sz, const void *src, size_t src_sz)
{
	memset(dst, 0, dst_sz);
	if (!src)
		return 0;
	if (src_sz < sizeof(size_t))
		return -EINVAL;
	if (src_sz > dst_sz) {
		const unsigned char *p = (const unsigned char *)src;
		for (size_t i = dst_sz; i < src_sz; i++)
			if (p[i])
				return -E2BIG;
		src_sz = dst_sz;
	}
	memcpy(dst, src, src_sz);
	*(size_t *)dst = dst_sz;
	return 0;
}

int cgsi_out_copy(void *dst, const void *src, size_t src_sz)
{
	size_t dsz;

	memcpy(&dsz, dst, sizeof(dsz));
	if (dsz < sizeof(size_t))
		return -EINVAL;
	size_t n = CGS_MIN(dsz, src_sz);
	memcpy(dst, src, n);
	memcpy(dst, &n, sizeof(n));
	return 0;
}

const struct cgs_record *cgsi_rec_in_copy(const struct cgs_record *rec,
					  struct cgs_record *tmp)
{
	/* kind, pid and tgid at least: what says which task it was */
	if (rec->sz < offsetof(struct cgs_record, ppid))
		return NULL;
	memset(tmp, 0, sizeof(*tmp));
	memcpy(tmp, rec, rec->sz);
	tmp->sz = sizeof(*tmp);
	return tmp;
}

int cgsi_nl_err(int nle)
{
	if (nle < 0)
		nle = -nle;
	switch (nle) {
	case 0: return 0;
	case NLE_INTR: return -EINTR;
	case NLE_BAD_SOCK: return -EBADF;
	case NLE_AGAIN: return -EAGAIN;
	case NLE_NOMEM: return -ENOMEM;
	case NLE_EXIST: return -EEXIST;
	case NLE_INVAL: return -EINVAL;
	case NLE_RANGE: return -ERANGE;
	case NLE_MSGSIZE: return -EMSGSIZE;
	case NLE_OPNOTSUPP: return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT: return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND: return -ENOENT;
	case NLE_NOATTR: return -ENOMSG;
	case NLE_MISSING_ATTR: return -ENOMSG;
	case NLE_AF_MISMATCH: return -EAFNOSUPPORT;
	case NLE_SEQ_MISMATCH: return -EILSEQ;
	case NLE_MSG_OVERFLOW: return -EOVERFLOW;
	case NLE_MSG_TRUNC: return -EMSGSIZE;
	case NLE_NOADDR: return -EADDRNOTAVAIL;
	case NLE_SRCRT_NOSUPPORT: return -EOPNOTSUPP;
	case NLE_MSG_TOOSHORT: return -EBADMSG;
	case NLE_MSGTYPE_NOSUPPORT: return -EOPNOTSUPP;
	case NLE_OBJ_MISMATCH: return -EINVAL;
	case NLE_NOCACHE: return -ENOENT;
	case NLE_BUSY: return -EBUSY;
	case NLE_PROTO_MISMATCH: return -EPROTONOSUPPORT;
	case NLE_NOACCESS: return -EACCES;
	case NLE_PERM: return -EPERM;
	case NLE_PKTLOC_FILE: return -ENOENT;
	case NLE_PARSE_ERR: return -EBADMSG;
	case NLE_NODEV: return -ENODEV;
	case NLE_IMMUTABLE: return -EPERM;
	case NLE_DUMP_INTR: return -EINTR;
	case NLE_ATTRSIZE: return -EBADMSG;
	default: return -EIO;
	}
}

int cgsi_read_file(const char *path, char *buf, size_t len)
{
	if (len == 0)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	while (off + 1 < len) {
		ssize_t n = read(fd, buf + off, len - 1 - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			close(fd);
			return e;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	return (int)off;
}

uint64_t cgsi_now_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t cgsi_now_boot_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t cgsi_now_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
