/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nbwrite.h: stderr written without waiting for its reader. */
#include "nbwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	NBW_OWN,   /* fd: our non-blocking description (close it) */
	NBW_SEND,  /* a socket: send(MSG_DONTWAIT) */
	NBW_FILE,  /* a regular file: write() */
	NBW_POLL,  /* poll() for room, then write() */
};

void nbwrite_open(struct nbwrite *w, int fd)
{
	struct stat st;
	char path[64];

	w->fd = fd;
	w->how = NBW_POLL;
	if (fstat(fd, &st) < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		w->how = NBW_SEND;
	} else if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
		w->how = NBW_FILE;
	} else {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		int o = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (o >= 0) {
			w->fd = o;
			w->how = NBW_OWN;
		}
	}
}

void nbwrite_close(struct nbwrite *w)
{
	if (w->how == NBW_OWN && w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

int nbwrite(struct nbwrite *w, const void *p, size_t len)
{
	ssize_t n;

	if (w->fd < 0)
		return -EBADF;
	if (w->how == NBW_POLL) {
		struct pollfd pf = { .fd = w->fd, .events = POLLOUT };
		int r = poll(&pf, 1, 0);
		if (r < 0)
			return -errno;
		if (!r || !(pf.revents & POLLOUT))
			return -EAGAIN;
	}
	do {
		n = w->how == NBW_SEND ?
		    send(w->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) :
		    write(w->fd, p, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return (size_t)n == len ? 0 : -EAGAIN; /* cut short: the rest lost */
}
