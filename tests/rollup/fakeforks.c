/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fakeforks.h"
#include "rollup/rollup_int.h"

int fp_rollup_new(struct fakeproc *f, unsigned flags, struct cgs_rollup **out)
{
	struct cgs_rollup_opts o = fp_opts(f);
	o.flags = flags;
	struct cgsi_rollup_iopts io = { .forks_injected = true };
	*out = NULL;
	return cgsi_rollup_new(out, &o, &io);
}

void fp_fork(struct cgs_rollup *r, uint32_t parent, uint32_t child,
	     uint64_t ago_ms)
{
	struct cgsi_forks *f = r->forks;
	pthread_mutex_lock(&f->lock);
	cgsi_forks_record_locked(f, parent, child,
				 cgsi_rollup_now(r) - ago_ms);
	pthread_mutex_unlock(&f->lock);
}

void fp_lost(struct cgs_rollup *r, uint64_t n)
{
	pthread_mutex_lock(&r->forks->lock);
	cgsi_forks_lost_locked(r->forks, n);
	pthread_mutex_unlock(&r->forks->lock);
}
