/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: cgs_parse_proc_cgroup(), and the same text as a
 * /proc/<pid>/stat (cgsi_proc_stat_parse(): in bounds, 0 or -EBADMSG).
 *
 * Input: one selector byte, then the /proc/<pid>/cgroup text.
 *   bits 0-1  hierarchy: "v2", "cpu", "memory", "name=systemd"
 *   bits 2-4  output buffer size: 1, 2, 3, 8, 16, 64, 256, 4097 bytes
 * The text and the output buffer are malloc'ed at their exact sizes (the
 * text is not NUL-terminated) so ASan flags any access outside them.
 * Checked: return values, NUL termination, that a path starts with '/',
 * holds no newline and is a verbatim piece of the text, and that a bigger
 * buffer only ever turns -ENAMETOOLONG into success with the same path.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "cgstats.h"
#include "attribute/proc_stat.h"

static const char *const hiers[4] = { "v2", "cpu", "memory",
				      "name=systemd" };
static const size_t sizes[8] = { 1, 2, 3, 8, 16, 64, 256, 4097 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *hier;
	size_t blen, tlen;
	char *text, *buf, *big;
	int rc, rc2;

	if (size < 1)
		return 0;
	hier = hiers[data[0] & 3];
	blen = sizes[(data[0] >> 2) & 7];
	tlen = size - 1;
	text = malloc(tlen ? tlen : 1);
	buf = malloc(blen);
	big = malloc(tlen + 1);
	CHECK(text && buf && big);
	memcpy(text, data + 1, tlen);

	struct cgsi_proc_stat st;
	rc = cgsi_proc_stat_parse(text, tlen, &st);
	CHECK(rc == 0 || rc == -EBADMSG);

	rc = cgs_parse_proc_cgroup(text, tlen, hier, buf, blen);
	CHECK(rc == -ENOENT || rc == -ENAMETOOLONG || rc == -EBADMSG ||
	      rc > 0);
	if (rc > 0) {
		CHECK((size_t)rc < blen);
		CHECK(buf[rc] == '\0');
		CHECK(buf[0] == '/');
		CHECK(!memchr(buf, '\n', (size_t)rc));
		CHECK(memmem(text, tlen, buf, (size_t)rc) != NULL);
	}

	/* a buffer as large as the text can hold any path in it */
	rc2 = cgs_parse_proc_cgroup(text, tlen, hier, big, tlen + 1);
	if (rc == -ENAMETOOLONG)
		CHECK(rc2 > 0 && (size_t)rc2 >= blen);
	else
		CHECK(rc2 == rc);
	if (rc > 0)
		CHECK(!memcmp(buf, big, (size_t)rc + 1));

	free(text);
	free(buf);
	free(big);
	return 0;
}
