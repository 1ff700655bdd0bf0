// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgs_rollup_set_identity(): the identity resolver hooked to the kernel
 * source's cgroup events, so that a container is named when its cgroup
 * appears (lib/identity/id_cache.c), not at its first snapshot.
 */
#include <errno.h>

#include "attribute/ksrc.h"
#include "identity/id_cache.h"
#include "identity/identity.h"
#include "rollup/rollup_int.h"

int cgs_rollup_set_identity(struct cgs_rollup *r,
			    struct cgs_identity_src *src)
{
	if (!r)
		return -EINVAL;
	if (!r->at.ksrc)
		return src ? -CGS_ERR_NO_KSRC : 0;
	if (!src) {
		cgsi_ksrc_set_cg_hook(r->at.ksrc, NULL, NULL);
		return 0;
	}
	void *ctx;
	int rc = cgsi_identity_watch(src, &ctx);
	if (rc < 0)
		return rc;
	cgsi_ksrc_set_cg_hook(r->at.ksrc, cgsi_idcache_event, ctx);
	return 0;
}
