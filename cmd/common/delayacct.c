/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kernel.task_delayacct: whether the kernel measures delays (CPU, block
 * I/O, swap, reclaim, ...). Only tasks started while it is on carry delay
 * counts, so the collector says whether it is on, and can turn it on at
 * start while still privileged (the write needs CAP_SYS_ADMIN, which is
 * shed with the rest before any record is read).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "delayacct.h"

static const char sysctl_path[] = "/proc/sys/kernel/task_delayacct";

int tsc_delayacct_read(void)
{
	char v[8];
	ssize_t n;
	int fd, e;

	/* Read at every snapshot: open/read/close is cheap and shows a change
	 * made during the run. Absent (ENOENT) on kernels before 5.14 and on
	 * those built without CONFIG_TASK_DELAY_ACCT. */
	fd = open(sysctl_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, v, sizeof(v));
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	if (n < 1 || (v[0] != '0' && v[0] != '1'))
		return -EINVAL;
	return v[0] == '1';
}

int tsc_delayacct_enable(void)
{
	int fd, r = 0;

	fd = open(sysctl_path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1\n", 2) != 2)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	return r;
}
