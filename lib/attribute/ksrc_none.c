/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel attribution source where libcgstats is built without libbpf:
 * it never opens, and every query answers "nothing known". */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attribute/ksrc.h"

#ifndef CGS_HAVE_BPF
int cgsi_ksrc_open(struct cgsi_ksrc **out, const struct cgsi_cg_mount *m,
		   unsigned nshards, const char *const *shard_cpus,
		   size_t ring_bytes, unsigned wait_ms, bool want_comm,
		   unsigned exe_max, char *err, size_t errlen)
{
	*out = NULL;
	snprintf(err, errlen, "this libcgstats was built without libbpf "
		 "(no kernel attribution source)");
	return -EOPNOTSUPP;
}
void cgsi_ksrc_close(struct cgsi_ksrc *k) {}
bool cgsi_ksrc_lookup(struct cgsi_ksrc *k, unsigned shard,
		      const struct cgs_record *rec, struct cgsi_kinfo *ki)
{
	return false;
}
int cgsi_ksrc_path(struct cgsi_ksrc *k, uint64_t id, uint64_t exit_ns,
		   char *buf, size_t len)
{
	return -ENOENT;
}
void cgsi_ksrc_stats(struct cgsi_ksrc *k, struct cgsi_ksrc_stats *out)
{
	memset(out, 0, sizeof(*out));
}

void cgsi_ksrc_sync_ids(struct cgsi_ksrc *k, struct cgsi_ksrc_rmstate *rm) {}
int cgsi_ksrc_removed(struct cgsi_ksrc *k, uint64_t id) { return 0; }
size_t cgsi_ksrc_ids(struct cgsi_ksrc *k) { return 0; }
int cgsi_ksrc_exe_drain(struct cgsi_ksrc *k, cgsi_ksrc_exe_fn *fn, void *ctx)
{
	return -EOPNOTSUPP;
}
int64_t cgsi_ksrc_exe_lost(struct cgsi_ksrc *k)
{
	return -EOPNOTSUPP;
}
void cgsi_ksrc_set_cg_hook(struct cgsi_ksrc *k, cgsi_ksrc_cg_fn *fn,
			   void *ctx) {}
#endif /* !CGS_HAVE_BPF */
