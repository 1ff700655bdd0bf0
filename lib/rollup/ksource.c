/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rollup's side of the kernel attribution source (attribute/ksrc.h):
 * loading it per the options, and turning a verified cgroup id into the
 * shard's node (a direct-mapped id cache, then the id's path, interned
 * by id so that incarnations of one path stay apart).
 */
#include <stdio.h>

#include "attribute/ksrc.h"
#include "rollup/rollup_int.h"

int cgsi_kernel_open(struct cgs_rollup *r)
{
	enum cgs_attribution want = r->o.attribution;
	if (want == CGS_ATTRIBUTION_PROC)
		return 0;
	if (want != CGS_ATTRIBUTION_AUTO && want != CGS_ATTRIBUTION_KERNEL) {
		snprintf(r->kerr, sizeof(r->kerr), "unknown attribution %d",
			 (int)want);
		return -EINVAL;
	}
	if (strcmp(r->proc_root, "/proc")) {
		/* a fake proc tree (tests): the kernel's answers are about
		 * the host, not about it */
		snprintf(r->kerr, sizeof(r->kerr), "proc_root is not /proc");
		return want == CGS_ATTRIBUTION_KERNEL ? -EINVAL : 0;
	}
	int rc = cgsi_ksrc_open(&r->ksrc, &r->mount, r->nshards,
				r->o.shard_cpus, r->o.kernel_ringbuf,
				r->o.kernel_wait_ms, r->o.comms > 0, r->kerr,
				sizeof(r->kerr));
	r->o.shard_cpus = NULL; /* not kept */
	if (rc < 0)
		return want == CGS_ATTRIBUTION_KERNEL ? rc : 0;
	r->kerr[0] = '\0';
	return 0;
}

static struct cgsi_cgnode *id_node(struct cgs_rollup *r, struct cgsi_rshard *s,
				   uint64_t id, uint64_t now)
{
	struct cgsi_kcache_ent *c =
		&s->kcache[(id * 0x9E3779B97F4A7C15ull >> 40) %
			   CGSI_KCACHE_SIZE];
	if (cgs_likely(c->id == id && c->gen == s->kgen && c->n))
		return c->n;
	int len = cgsi_ksrc_path(r->ksrc, id, s->path, sizeof(s->path));
	if (len < 0)
		return NULL;
	struct cgsi_cgnode *n = cgsi_intern_id(r, s, s->path, (size_t)len, id,
					       now);
	if (n) {
		c->id = id;
		c->n = n;
		c->gen = s->kgen;
	}
	return n;
}

struct cgsi_cgnode *cgsi_kernel_node(struct cgs_rollup *r,
				     struct cgsi_rshard *s,
				     const struct cgs_record *rec, bool found,
				     uint64_t cgid, uint64_t now,
				     enum cgs_source *how)
{
	*how = CGS_SOURCE_KERNEL;
	struct cgsi_cgnode *n = NULL;
	if (rec->kind == CGS_KIND_TGID) {
		/* the aggregate rides in the message of its group's last
		 * exit, accounted just before on this shard */
		if (s->k_last_tgid == rec->tgid && s->k_last_gen == s->kgen)
			n = s->k_last_node;
	} else if (found) {
		n = id_node(r, s, cgid, now);
		if (n && rec->kind == CGS_KIND_PROCESS) {
			s->k_last_tgid = rec->tgid ? rec->tgid : rec->pid;
			s->k_last_node = n;
			s->k_last_gen = s->kgen;
		}
	}
	if (n)
		s->st.via_kernel++;
	return n;
}
