/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Files a unit test lays out in its temp dir (runtime state, fixtures). */
#ifndef CGS_TESTS_FILES_H
#define CGS_TESTS_FILES_H

#include <stddef.h>

/* Write n bytes to path, making its missing parent folders (0755) first;
 * a failure fails the case. */
void cgt_write_file(const char *path, const void *data, size_t n);

/* Remove path and everything below it (not following symlinks); absent
 * is fine, a failure fails the case. */
void cgt_rm_rf(const char *path);

#endif
