/* Shared bits of the real-kernel tests. */
#ifndef CGS_TESTS_KERNEL_COMMON_H
#define CGS_TESTS_KERNEL_COMMON_H

#include <cgstats.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Exit 77 (skipped) only where the host can't run us: no taskstats, or no
 * CAP_NET_ADMIN. Any other failure to open is a test failure. */
static inline void kt_require_taskstats(void)
{
	struct cgs_listener *l = NULL;
	int r = cgs_listener_open(&l, NULL);
	if (r == -CGS_ERR_NO_TASKSTATS || r == -CGS_ERR_PERM) {
		fprintf(stderr, "SKIP: %s\n", cgs_strerror(r));
		exit(77);
	}
	if (r < 0) {
		fprintf(stderr, "cannot open a listener: %s\n", cgs_strerror(r));
		exit(1);
	}
	cgs_listener_close(l);
}

#endif
