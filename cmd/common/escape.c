/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <string.h>

#include "escape.h"

static const char hex[] = "0123456789abcdef";

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4) /* continuation, overlong 2-byte, > 10FFFF */
		return 0;
	size_t len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (c == 0xe0 && s[1] < 0xa0) /* overlong 3-byte */
		return 0;
	if (c == 0xed && s[1] >= 0xa0) /* UTF-16 surrogates */
		return 0;
	if (c == 0xf0 && s[1] < 0x90) /* overlong 4-byte */
		return 0;
	if (c == 0xf4 && s[1] >= 0x90) /* > U+10FFFF */
		return 0;
	return len;
}

/* Copy the UTF-8 sequence at s (non-ASCII lead byte). A byte that does not
 * start one becomes repl if given, else the reversible escape "xNN" after
 * bsl backslashes (1, or 2 where the format escapes the backslash again);
 * *lossy notes either. Returns the bytes consumed. */
static size_t utf8_copy(struct buf *b, const char *s, size_t n,
			const char *repl, size_t bsl, bool *lossy)
{
	size_t len = utf8_seq_len((const unsigned char *)s, n);
	if (len) {
		buf_add(b, s, len);
		return len;
	}
	*lossy = true;
	if (repl) {
		buf_puts(b, repl);
		return 1;
	}
	unsigned char c = (unsigned char)s[0];
	while (bsl--)
		buf_putc(b, '\\');
	char e[3] = { 'x', hex[c >> 4], hex[c & 15] };
	buf_add(b, e, sizeof(e));
	return 1;
}

static bool esc_json_core(struct buf *b, const char *s, size_t n, bool q,
			  bool rev)
{
	const unsigned char *u = (const unsigned char *)s;
	bool lossy = false;

	buf_reserve(b, n + 2);
	if (q)
		buf_putc(b, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		/* Fast path: a run of plain printable ASCII. */
		size_t j = i;
		while (j < n && u[j] >= 0x20 && u[j] < 0x7f && u[j] != '"' &&
		       u[j] != '\\')
			j++;
		if (j > i) {
			buf_add(b, s + i, j - i);
			i = j;
			continue;
		}
		switch (c) {
		case '"': buf_puts(b, "\\\""); i++; continue;
		case '\\': buf_puts(b, "\\\\"); i++; continue;
		case '\b': buf_puts(b, "\\b"); i++; continue;
		case '\f': buf_puts(b, "\\f"); i++; continue;
		case '\n': buf_puts(b, "\\n"); i++; continue;
		case '\r': buf_puts(b, "\\r"); i++; continue;
		case '\t': buf_puts(b, "\\t"); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4],
				      hex[c & 15] };
			buf_add(b, e, sizeof(e));
			i++;
			continue;
		}
		i += utf8_copy(b, s + i, n - i, rev ? NULL : "\\ufffd", 1,
			       &lossy);
	}
	if (q)
		buf_putc(b, '"');
	return lossy;
}

bool esc_json(struct buf *b, const char *s, size_t n)
{
	return esc_json_core(b, s, n, true, false);
}

bool esc_text(struct buf *b, const char *s, size_t n)
{
	return esc_json_core(b, s, n, false, true);
}

bool esc_csv(struct buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	bool quote = n && (s[0] == ' ' || s[n - 1] == ' ');
	bool lossy = false;

	for (size_t i = 0; i < n && !quote; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
			quote = true;
	if (quote)
		buf_putc(b, '"');
	for (size_t i = 0; i < n;) {
		if (u[i] < 0x80) {
			if (s[i] == '"' || s[i] == '\\')
				buf_putc(b, s[i]);
			buf_putc(b, s[i++]);
			continue;
		}
		i += utf8_copy(b, s + i, n - i, NULL, 1, &lossy);
	}
	if (quote)
		buf_putc(b, '"');
	return lossy;
}

bool esc_prom_label(struct buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	bool lossy = false;

	for (size_t i = 0; i < n;) {
		if (u[i] < 0x80) {
			if (s[i] == '\\') /* \\ in the value, each escaped */
				buf_puts(b, "\\\\\\\\");
			else if (s[i] == '"')
				buf_puts(b, "\\\"");
			else if (s[i] == '\n')
				buf_puts(b, "\\n");
			else
				buf_putc(b, s[i]);
			i++;
			continue;
		}
		i += utf8_copy(b, s + i, n - i, NULL, 2, &lossy);
	}
	return lossy;
}

void esc_hex(struct buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, 2 * n))
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		b->p[b->len++] = hex[c >> 4];
		b->p[b->len++] = hex[c & 15];
	}
	b->p[b->len] = '\0';
}
