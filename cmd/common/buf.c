/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"

void buf_init(struct buf *b)
{
	memset(b, 0, sizeof(*b));
}

void buf_free(struct buf *b)
{
	free(b->p);
	buf_init(b);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->oom = false;
	if (b->p)
		b->p[0] = '\0';
}

void buf_fit(struct buf *b)
{
	if (b->cap <= 2 * b->len + BUF_FIT_SLACK)
		return;
	size_t cap = b->len + b->len / 8 + 1;
	char *p = realloc(b->p, cap);
	if (!p)
		return; /* kept as it was */
	b->p = p;
	b->cap = cap;
}

bool buf_reserve(struct buf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	p[b->len] = '\0'; /* NUL-terminated even before the first byte */
	return true;
}

void buf_add(struct buf *b, const void *p, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char tmp[256];

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		buf_add(b, tmp, (size_t)n);
		return;
	}
	if (!buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_u64(struct buf *b, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf_add(b, tmp + i, sizeof(tmp) - i);
}

void buf_fixed(struct buf *b, uint64_t v, unsigned digits)
{
	uint64_t div = 1;
	for (unsigned i = 0; i < digits; i++)
		div *= 10;
	buf_u64(b, v / div);
	if (!digits)
		return;
	uint64_t frac = v % div;
	char tmp[24];
	for (unsigned i = digits; i-- > 0;) {
		tmp[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	/* Trim trailing zeros but keep one digit: "1.5", "2.0". */
	unsigned n = digits;
	while (n > 1 && tmp[n - 1] == '0')
		n--;
	buf_putc(b, '.');
	buf_add(b, tmp, n);
}

int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}
