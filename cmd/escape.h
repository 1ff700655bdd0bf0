/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Escaping of arbitrary bytes (comm names and cgroup paths may hold any
 * byte but NUL) for the three text formats. Bytes that are not valid UTF-8
 * (stray continuation bytes, overlong forms, surrogates, > U+10FFFF,
 * truncated sequences) become U+FFFD, one per offending byte, in every
 * format, so each output is valid UTF-8. The functions return true when
 * such a replacement happened, so callers can add the raw bytes in hex.
 */
#ifndef TSC_ESCAPE_H
#define TSC_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* JSON string literal, quotes included: \" \\ \b \f \n \r \t, other
 * controls and DEL as \u00XX, invalid UTF-8 as \ufffd. */
bool esc_json(struct buf *b, const char *s, size_t n);
/* Same escapes without the quotes, for the human-readable table (keeps
 * terminal control sequences out). */
bool esc_text(struct buf *b, const char *s, size_t n);
/* CSV field (RFC 4180): quoted, with "" for ", when it holds , " CR LF or
 * leading/trailing space; invalid UTF-8 as U+FFFD. */
bool esc_csv(struct buf *b, const char *s, size_t n);
/* Prometheus label value, without the quotes: \\ \" \n escaped, invalid
 * UTF-8 as U+FFFD. */
bool esc_prom_label(struct buf *b, const char *s, size_t n);
/* Lower-case hex of n bytes. */
void esc_hex(struct buf *b, const char *s, size_t n);

#endif
