/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Found by fuzz/fuzz_escape.c: escaping an empty name into a fresh buffer
 * (esc_text reserves space first, then adds nothing) left b.p allocated
 * but not NUL-terminated, although buf.h promises a NUL-terminated buffer
 * whenever len < cap. The heap chunk is dirtied first so the test does
 * not pass by luck on freshly zeroed memory.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_empty_text),
		cmocka_unit_test(t_empty_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
