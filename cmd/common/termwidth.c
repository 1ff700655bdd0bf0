/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See termwidth.h. */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "termwidth.h"

unsigned tsc_term_width(int fd)
{
	struct winsize ws;
	unsigned long w = 0;

	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		w = ws.ws_col;
	if (!w) {
		const char *e = getenv("COLUMNS");
		char *end;
		if (e && *e >= '0' && *e <= '9') {
			w = strtoul(e, &end, 10);
			if (*end || w > 100000)
				w = 0;
		}
	}
	if (!w)
		w = TSC_WIDTH_DEFAULT;
	return w < TSC_WIDTH_MIN ? TSC_WIDTH_MIN : (unsigned)w;
}

static bool cont(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

size_t tsc_text_cols(const char *s, size_t n)
{
	size_t cols = 0;
	for (size_t i = 0; i < n; i++)
		cols += !cont(s[i]);
	return cols;
}

size_t tsc_put_fit(struct buf *b, const char *s, size_t n, size_t cols,
		   bool tail)
{
	const size_t el = sizeof(TSC_ELLIPSIS) - 1;
	size_t have = tsc_text_cols(s, n), keep, i;

	if (have <= cols) {
		buf_add(b, s, n);
		return have;
	}
	if (cols <= el) { /* no room for a character: the mark alone */
		buf_add(b, TSC_ELLIPSIS, cols);
		return cols;
	}
	keep = cols - el; /* characters kept */
	if (tail) {
		/* from the end: back over keep characters */
		for (i = n; i > 0 && keep; keep -= !cont(s[--i]))
			;
		while (i < n && cont(s[i])) /* a stray continuation byte */
			i++;
		buf_puts(b, TSC_ELLIPSIS);
		buf_add(b, s + i, n - i);
		return el + tsc_text_cols(s + i, n - i);
	}
	for (i = 0; i < n; i++)
		if (!cont(s[i]) && !keep--)
			break;
	buf_add(b, s, i);
	buf_puts(b, TSC_ELLIPSIS);
	return tsc_text_cols(s, i) + el;
}
