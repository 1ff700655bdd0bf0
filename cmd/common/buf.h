/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Growable byte buffer used to format output off the write path. */
#ifndef TSC_BUF_H
#define TSC_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	char *p;     /* owned; NUL-terminated when len < cap */
	size_t len;
	size_t cap;
	bool oom;    /* an allocation failed; contents are truncated */
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
/* After b was filled: give back what is far more than it holds now (cap
 * above twice len plus BUF_FIT_SLACK), keeping an eighth of room. A
 * buffer filled every interval keeps its size while what it holds stays
 * about the same, and shrinks after it fell (cgroups retired). */
#define BUF_FIT_SLACK (1u << 20)
void buf_fit(struct buf *b);
bool buf_reserve(struct buf *b, size_t more);
void buf_add(struct buf *b, const void *p, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Unsigned decimal, and fixed-point "<v / 10^digits>" without floats. */
void buf_u64(struct buf *b, uint64_t v);
void buf_fixed(struct buf *b, uint64_t v, unsigned digits);

/* Write all of [p, p+n) to fd, retrying on EINTR. 0 or -errno. */
int write_all(int fd, const void *p, size_t n);

#endif
