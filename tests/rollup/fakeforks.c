/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "fakeforks.h"
#include "rollup/rollup_int.h"

struct cgs_rollup *fp_forks_rollup(struct fakeproc *f, unsigned flags)
{
	struct cgs_rollup_opts o = fp_opts(f);
	struct cgsi_rollup_iopts io = { .forks_injected = true };
	struct cgs_rollup *r = NULL;

	o.flags = flags;
	assert_int_equal(cgsi_rollup_new(&r, &o, &io), 0);
	if (flags & CGS_ROLLUP_TRACK_FORKS) {
		assert_non_null(r->at.forks);
		assert_int_equal(r->at.forks->fd, -1); /* injected: no socket */
	}
	return r;
}

void fp_fork(struct cgs_rollup *r, uint32_t parent, uint32_t child,
	     uint64_t ago_ms)
{
	struct cgsi_forks *f = r->at.forks;
	pthread_mutex_lock(&f->lock);
	cgsi_forks_record_locked(f, parent, child,
				 cgsi_rollup_now(r) - ago_ms);
	pthread_mutex_unlock(&f->lock);
}

void fp_lost(struct cgs_rollup *r, uint64_t n)
{
	pthread_mutex_lock(&r->at.forks->lock);
	cgsi_forks_lost_locked(r->at.forks, n);
	pthread_mutex_unlock(&r->at.forks->lock);
}
