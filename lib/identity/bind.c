// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgs_rollup_set_identity(): the identity resolver hooked to the kernel
 * source's cgroup events, so that a container is named when its cgroup
 * appears (lib/identity/id_cache.c), not at its first snapshot; and the
 * cgroups there already (the kernel source's walk, else one of our own)
 * looked up at once, so that their records wait for their names too.
 */
#include <errno.h>

#include "attribute/cgid.h"
#include "attribute/ksrc.h"
#include "identity/id_cache.h"
#include "identity/identity.h"
#include "rollup/rollup_int.h"
#include "util/common.h"

/* No kernel source: the cgroups there now, from a walk of the mount (a
 * table of its own, freed after), queued as the kernel source's would be
 * (bounded: max_cached of them). */
static void seed_by_walk(struct cgs_rollup *r, void *ctx)
{
	struct cgsi_cgid t;
	if (!r->mount.mounted || cgsi_cgid_init(&t, &r->mount) < 0)
		return;
	if (cgsi_cgid_walk(&t, cgsi_now_mono_ms(), 1) > 0)
		cgsi_cgid_each_live(&t, cgsi_idcache_event, ctx,
				    CGSI_KSRC_EXISTING);
	cgsi_cgid_fini(&t);
}

int cgs_rollup_set_identity(struct cgs_rollup *r,
			    struct cgs_identity_src *src)
{
	if (!r)
		return -EINVAL;
	if (!src) {
		if (r->at.ksrc)
			cgsi_ksrc_set_cg_hook(r->at.ksrc, NULL, NULL);
		return 0;
	}
	void *ctx;
	int rc = cgsi_identity_watch(src, &ctx);
	if (rc < 0)
		return rc;
	if (!r->at.ksrc) {
		seed_by_walk(r, ctx);
		return -CGS_ERR_NO_KSRC;
	}
	/* the hook queues the cgroups there now, then every mkdir */
	cgsi_ksrc_set_cg_hook(r->at.ksrc, cgsi_idcache_event, ctx);
	return 0;
}
