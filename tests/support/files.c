// SPDX-License-Identifier: LGPL-2.1-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/files.h"

void cgt_write_file(const char *path, const void *data, size_t n)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755); /* EEXIST for those there already */
		*s = '/';
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	close(fd);
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

void cgt_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return;
	assert_int_equal(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}
