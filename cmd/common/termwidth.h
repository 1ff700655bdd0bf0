/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Text that fits a terminal (issue 38): the width the human-readable
 * outputs fit (the collector's table, taskstat-top) and the one visible
 * way a text is shortened to a width. Part of tsc_util.
 */
#ifndef TSC_TERMWIDTH_H
#define TSC_TERMWIDTH_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

#define TSC_WIDTH_DEFAULT 120 /* neither a terminal nor $COLUMNS */
#define TSC_WIDTH_MIN 40      /* narrower widths are taken as this */
#define TSC_ELLIPSIS "..."    /* marks a shortened text (ASCII: files) */

/*
 * The width to fit: the terminal's columns when fd is one (TIOCGWINSZ),
 * else $COLUMNS when it is a number, else TSC_WIDTH_DEFAULT; at least
 * TSC_WIDTH_MIN. Read again each time (a resized terminal).
 */
unsigned tsc_term_width(int fd);

/* Columns of the UTF-8 text s[0..n): its characters (one column each). */
size_t tsc_text_cols(const char *s, size_t n);

/*
 * Append s[0..n) (UTF-8) to b if it fits in cols columns; else shortened
 * to exactly cols, visibly: TSC_ELLIPSIS then its end (tail: the leaf of a
 * path), or its start then TSC_ELLIPSIS, cut between characters. Returns
 * the columns written.
 */
size_t tsc_put_fit(struct buf *b, const char *s, size_t n, size_t cols,
		   bool tail);

#endif
