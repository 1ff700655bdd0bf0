// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Workload identity: the bounded read of one runtime state file. Regular
 * files only, the final component not a symlink, never blocking (a FIFO
 * put where a config.json should be), never more than the bound (a file
 * that never ends, or grows while read).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "identity/identity.h"

static enum cgsi_id_reason open_reason(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return CGSI_ID_ABSENT;
	case ELOOP: /* O_NOFOLLOW on a symlink, or a loop on the way */
		return CGSI_ID_NOT_REGULAR;
	case ENAMETOOLONG:
		return CGSI_ID_LOOP;
	default:
		return CGSI_ID_IO;
	}
}

enum cgsi_id_reason cgsi_id_read(const char *path, size_t max, char **out,
				 size_t *len)
{
	*out = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
			    O_NOCTTY);
	if (fd < 0)
		return open_reason(errno);
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return CGSI_ID_NOT_REGULAR;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return CGSI_ID_TOO_BIG;
	}
	char *buf = malloc(max + 2);
	if (!buf) {
		close(fd);
		return CGSI_ID_IO;
	}
	size_t off = 0;
	while (off <= max) { /* one byte past the bound tells "too big" */
		ssize_t n = read(fd, buf + off, max + 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return e == EAGAIN ? CGSI_ID_NOT_REGULAR : CGSI_ID_IO;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	if (off > max) {
		free(buf);
		return CGSI_ID_TOO_BIG;
	}
	buf[off] = '\0';
	*out = buf;
	*len = off;
	return CGSI_ID_OK;
}
