/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes to a descriptor (stderr) that never wait for its reader: a pipe
 * nobody reads, a journal that lags. O_NONBLOCK on stderr itself would
 * change the open file description every other writer shares (this
 * process's other threads, the parent), so a pipe or a terminal is
 * opened again through /proc/self/fd, non-blocking for us alone; a
 * socket (journald's stream) is sent to with MSG_DONTWAIT; a regular file
 * is written as it is (it does not wait for a reader). Where /proc cannot
 * open it, a write goes ahead only if poll() says there is room.
 */
#ifndef TSC_NBWRITE_H
#define TSC_NBWRITE_H

#include <stddef.h>

struct nbwrite {
	int fd;  /* ours, or the one given */
	int how; /* NBW_* in nbwrite.c */
};

/* Sets w up for fd (which stays open and is not changed). */
void nbwrite_open(struct nbwrite *w, int fd);
void nbwrite_close(struct nbwrite *w);
/* Writes all len bytes (len <= PIPE_BUF: a pipe takes them whole or not
 * at all), or none. Returns 0, -EAGAIN where it would have waited, or
 * another negative errno. */
int nbwrite(struct nbwrite *w, const void *p, size_t len);

#endif
