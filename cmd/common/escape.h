/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Escaping of arbitrary bytes (comm names and cgroup paths may hold any
 * byte but NUL) for the text formats. Every output is valid UTF-8.
 *
 * CSV, Prometheus label values and the table use one reversible escape,
 * so that two different names never print alike: a byte that does not
 * start a valid UTF-8 sequence (stray continuation byte, overlong form,
 * surrogate, > U+10FFFF, truncated sequence) is written \xNN (two
 * lower-case hex digits), and a backslash, the escape character, is
 * written \\; every other character is kept (then each format's own
 * quoting applies on top). Decoding: \\ is a backslash, \xNN the byte NN.
 *
 * JSON cannot hold bytes: there such a byte becomes \ufffd, and the
 * caller adds the raw bytes in hex (the functions return true when that
 * happened, in every format).
 */
#ifndef TSC_ESCAPE_H
#define TSC_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* JSON string literal, quotes included: \" \\ \b \f \n \r \t, other
 * controls and DEL as \u00XX, invalid UTF-8 as \ufffd (not reversible
 * alone: add NAME_hex when it returns true). */
bool esc_json(struct buf *b, const char *s, size_t n);
/* The JSON escapes without the quotes, for the human-readable table (keeps
 * terminal control sequences out), but invalid UTF-8 as \xNN: reversible
 * (\\ is already the backslash). */
bool esc_text(struct buf *b, const char *s, size_t n);
/* CSV field (RFC 4180): the reversible escape (\\, \xNN), then quoted,
 * with "" for ", when it holds , " CR LF or leading/trailing space. */
bool esc_csv(struct buf *b, const char *s, size_t n);
/* Prometheus label value, without the quotes: the value is the reversible
 * escape of s (\\, \xNN), written with the exposition format's escapes
 * \\ \" \n; so a backslash of s appears as \\\\ in the text and an
 * invalid byte as \\xNN. */
bool esc_prom_label(struct buf *b, const char *s, size_t n);
/* Lower-case hex of n bytes. */
void esc_hex(struct buf *b, const char *s, size_t n);

#endif
