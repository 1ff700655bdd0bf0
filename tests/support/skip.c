/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgstats.h"
#include "support/cgtest.h"
#include "support/skip.h"

static size_t skipped; /* cases that called cgt_skip_note() */

static void vsay(const char *fmt, va_list ap)
{
	fputs("SKIP: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cgt_skip_exit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	exit(CGT_SKIP);
}

void cgt_skip_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	skipped++;
}

bool cgt_forbidden(int r)
{
	/* no taskstats, no privilege, or a container's own pid or network
	 * namespace */
	return r == -CGS_ERR_NO_TASKSTATS || r == -CGS_ERR_PERM ||
	       r == -CGS_ERR_PIDNS || r == -CGS_ERR_NETNS;
}

void cgt_skip_if_forbidden(int r)
{
	if (cgt_forbidden(r))
		cgt_skip_exit("%s", cgs_strerror(r));
}

void cgt_require_taskstats(void)
{
	struct cgs_listener *l = NULL;
	int r = cgs_listener_open(&l, NULL);
	cgt_skip_if_forbidden(r);
	if (r < 0) {
		fprintf(stderr, "cannot open a listener: %s\n", cgs_strerror(r));
		exit(1);
	}
	cgs_listener_close(l);
}

const char *cgt_require_cgroup2(void)
{
	const char *m = cgt_cgroup2_mount();
	if (!m)
		cgt_skip_exit("no cgroup2 mount in /proc/self/mountinfo");
	return m;
}

int cgt_run(int argc, char **argv, const struct CMUnitTest *tests, size_t n)
{
	size_t from = 0, count = n;
	if (argc > 1) {
		for (from = 0; from < n; from++)
			if (!strcmp(tests[from].name, argv[1]))
				break;
		if (from == n) {
			fprintf(stderr, "%s: no case named %s\n", argv[0],
				argv[1]);
			return 1;
		}
		count = 1;
	}
	/* a one-case group: cmocka 1.1 counts a skip as a pass, we do not */
	int rc = _cmocka_run_group_tests(argc > 1 ? argv[1] : argv[0],
					 tests + from, count, NULL, NULL);
	if (rc == 0 && skipped == count)
		return CGT_SKIP;
	return rc;
}
