/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Found by fuzz/fuzz_escape.c: escaping an empty name into a fresh buffer
 * (esc_text reserves space first, then adds nothing) left b.p allocated
 * but not NUL-terminated, although buf.h promises a NUL-terminated buffer
 * whenever len < cap. The heap chunk is dirtied first so the test does
 * not pass by luck on freshly zeroed memory.
 *
 * Also the names the U+FFFD replacement made print alike (issue 13): each
 * pair below must give two different outputs in CSV, Prometheus and the
 * table, with the exact reversible escape (\xNN, \\).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "escape.h"

static void dirty_heap(void)
{
	for (size_t sz = 200; sz <= 300; sz += 8) {
		char *p = malloc(sz);
		assert_non_null(p);
		memset(p, 0xaa, sz);
		free(p);
	}
}

static void t_empty_text(void **st)
{
	(void)st;
	struct buf b;

	dirty_heap();
	buf_init(&b);
	assert_false(esc_text(&b, "", 0));
	assert_int_equal(b.len, 0);
	assert_true(b.p == NULL || b.p[0] == '\0');
	buf_free(&b);
}

static void t_empty_all(void **st)
{
	(void)st;
	struct buf b;

	dirty_heap();
	buf_init(&b);
	esc_json(&b, "", 0);
	assert_string_equal(b.p, "\"\"");
	buf_reset(&b);
	esc_csv(&b, "", 0);
	assert_true(b.len == 0 && b.p[0] == '\0');
	buf_reset(&b);
	esc_prom_label(&b, "", 0);
	assert_true(b.len == 0 && b.p[0] == '\0');
	buf_free(&b);
	buf_init(&b);
	assert_true(buf_reserve(&b, 100));
	assert_true(b.len == 0 && b.p[0] == '\0');
	buf_free(&b);
}

typedef bool (*esc_fn)(struct buf *, const char *, size_t);

static const char *render(struct buf *b, esc_fn fn, const char *s)
{
	buf_reset(b);
	fn(b, s, strlen(s));
	return b->p;
}

static void t_apart(void **st)
{
	(void)st;
	/* name, then its CSV, Prometheus (exposition text) and table form */
	static const char *const want[][4] = {
		{ "dup\xff", "dup\\xff", "dup\\\\xff", "dup\\xff" },
		{ "dup\xfe", "dup\\xfe", "dup\\\\xfe", "dup\\xfe" },
		{ "dup\\xff", "dup\\\\xff", "dup\\\\\\\\xff",
		  "dup\\\\xff" },
		{ "dup\xef\xbf\xbd", "dup\xef\xbf\xbd", "dup\xef\xbf\xbd",
		  "dup\xef\xbf\xbd" },
		{ "a\\x2d.slice", "a\\\\x2d.slice", "a\\\\\\\\x2d.slice",
		  "a\\\\x2d.slice" },
		{ "a-.slice", "a-.slice", "a-.slice", "a-.slice" },
		{ "\\\xc3", "\\\\\\xc3", "\\\\\\\\\\\\xc3",
		  "\\\\\\xc3" },
	};
	static const esc_fn fn[] = { esc_csv, esc_prom_label, esc_text };
	const size_t n = sizeof(want) / sizeof(want[0]);
	struct buf b, c;

	buf_init(&b);
	buf_init(&c);
	for (size_t f = 0; f < 3; f++)
		for (size_t i = 0; i < n; i++) {
			assert_string_equal(render(&b, fn[f], want[i][0]),
					    want[i][f + 1]);
			for (size_t j = 0; j < i; j++)
				assert_string_not_equal(
					render(&b, fn[f], want[i][0]),
					render(&c, fn[f], want[j][0]));
		}
	buf_free(&b);
	buf_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_empty_text),
		cmocka_unit_test(t_empty_all),
		cmocka_unit_test(t_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
