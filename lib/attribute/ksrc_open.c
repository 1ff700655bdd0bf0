/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel source opened and closed: can it run here, the BPF program
 * sized, loaded, mapped and attached, each CPU's ring given to a shard. */
#ifdef CGS_HAVE_BPF

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "attribute/ksrc_int.h"
#include "attribute/ksrc_util.h"
#include "exitcg.skel.h"
#include "util/common.h"
#include "util/cpulist.h"

static char *load_log;
static size_t load_log_len;

static int log_libbpf(enum libbpf_print_level lvl, const char *fmt,
		      va_list ap)
{
	if (lvl == LIBBPF_DEBUG || !load_log || load_log[0])
		return 0;
	vsnprintf(load_log, load_log_len, fmt, ap);
	size_t n = strlen(load_log);
	while (n && load_log[n - 1] == '\n')
		load_log[--n] = '\0';
	return 0;
}

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* Each possible CPU's ring goes to the shard that receives its records. */
static int cpu_map(struct cgsi_ksrc *k, const char *const *shard_cpus)
{
	int *owner = calloc(k->ncpu, sizeof(*owner));
	unsigned char *set = calloc(CGSI_MAX_CPUS, 1);
	int rc = -ENOMEM;
	if (!owner || !set)
		goto out;
	/* with cpulists, a CPU no shard listens to gets no ring reader;
	 * without, the possible CPUs are cut as a listener with as many
	 * shards cuts them */
	if (!shard_cpus) {
		int *split = malloc(sizeof(*split) * CGSI_MAX_CPUS);
		if (!split || cgsi_possible_set(set) < 0) {
			free(split);
			rc = split ? -EIO : -ENOMEM;
			goto out;
		}
		cgsi_cpus_split(set, k->nshards, split);
		for (unsigned c = 0; c < k->ncpu; c++)
			owner[c] = c < CGSI_MAX_CPUS && split[c] >= 0
					   ? split[c]
					   : (int)(c % k->nshards);
		free(split);
	} else {
		for (unsigned c = 0; c < k->ncpu; c++)
			owner[c] = -1;
	}
	for (unsigned i = 0; shard_cpus && i < k->nshards; i++) {
		if (!shard_cpus[i])
			continue;
		memset(set, 0, CGSI_MAX_CPUS);
		if (cgsi_cpulist_parse(shard_cpus[i], set, NULL, 0) < 0)
			continue;
		for (unsigned c = 0; c < k->ncpu && c < CGSI_MAX_CPUS; c++)
			if (set[c])
				owner[c] = (int)i;
	}
	for (unsigned i = 0; i < k->nshards; i++) {
		struct kshard *s = &k->sh[i];
		s->cpus = calloc(k->ncpu, sizeof(*s->cpus));
		if (!s->cpus)
			goto out;
		for (unsigned c = 0; c < k->ncpu; c++)
			if (owner[c] == (int)i)
				s->cpus[s->ncpus++] = c;
	}
	rc = 0;
out:
	free(owner);
	free(set);
	return rc;
}

/* What ksrc_load() made, undone (a retry starts from scratch). */
static void ksrc_unload(struct cgsi_ksrc *k)
{
	if (k->ctl)
		munmap(k->ctl, k->ctl_len);
	if (k->slots)
		munmap((void *)k->slots, k->slots_len);
	if (k->comms)
		munmap((void *)k->comms, k->comms_len);
	ring_buffer__free(k->cgrb);
	ring_buffer__free(k->exerb);
	exitcg_bpf__destroy(k->skel);
	k->ctl = NULL;
	k->slots = NULL;
	k->comms = NULL;
	k->cgrb = k->exerb = NULL;
	k->skel = NULL;
}

void cgsi_ksrc_close(struct cgsi_ksrc *k)
{
	if (!k)
		return;
	cgsi_ksrc_reader_stop(k);
	for (unsigned i = 0; k->sh && i < k->nshards; i++) {
		cgsi_kjoin_fini(&k->sh[i].join);
		free(k->sh[i].cpus);
	}
	free(k->sh);
	ksrc_unload(k);
	pthread_mutex_destroy(&k->exelock);
	cgsi_cgid_fini(&k->ids);
	pthread_mutex_destroy(&k->idlock);
	free(k);
}

/* Can the kernel source run here (cgroup2 mounted, BTF, privileges)?
 * The number of possible CPUs, or -errno with the reason in err. */
static int ksrc_usable(const struct cgsi_cg_mount *m, unsigned nshards,
		       char *err, size_t errlen)
{
	if (!nshards || nshards > CGSK_MAX_SHARDS) {
		snprintf(err, errlen, "%u shards: the kernel source supports "
			 "1..%u", nshards, CGSK_MAX_SHARDS);
		return -EINVAL;
	}
	if (!m->mounted) {
		snprintf(err, errlen, "the hierarchy in use (%s) is not "
			 "mounted", m->hier);
		return -EOPNOTSUPP;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
		snprintf(err, errlen, "the kernel has no BTF "
			 "(/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF)");
		return -EOPNOTSUPP;
	}
	if (!cgsi_ksrc_have_cap(CAP_SYS_ADMIN) &&
	    !(cgsi_ksrc_have_cap(CAP_BPF) && cgsi_ksrc_have_cap(CAP_PERFMON))) {
		snprintf(err, errlen, "loading the BPF program needs CAP_BPF "
			 "and CAP_PERFMON (or CAP_SYS_ADMIN)%s%s",
			 cgsi_ksrc_have_cap(CAP_BPF) ? "; CAP_PERFMON is missing" : "",
			 cgsi_ksrc_have_cap(CAP_PERFMON) ? "; CAP_BPF is missing" : "");
		return -EPERM;
	}
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0) {
		snprintf(err, errlen, "cannot count the possible CPUs");
		return ncpu < 0 ? ncpu : -EINVAL;
	}
	return ncpu;
}

/* The rings' size (a shard's buffer is shared out among its CPUs' rings)
 * and each shard's join of records and entries. */
static int ksrc_size_rings(struct cgsi_ksrc *k, size_t ring_bytes)
{
	unsigned per = 1;
	for (unsigned i = 0; i < k->nshards; i++)
		per = CGS_MAX(per, k->sh[i].ncpus);
	size_t want = (ring_bytes ? ring_bytes : CGSI_KSRC_RING_BYTES) /
		      per / sizeof(struct cgsk_exit);
	k->nslots = 64;
	while (k->nslots < want && k->nslots < (1u << 22))
		k->nslots <<= 1;
	k->ring_bytes = (size_t)k->nslots * sizeof(struct cgsk_exit) * per;
	for (unsigned i = 0; i < k->nshards; i++) {
		/* a queue's worth of records can wait behind their entries */
		uint32_t cap = k->nslots * CGS_MAX(k->sh[i].ncpus, 1u);
		int rc = cgsi_kjoin_init(&k->sh[i].join,
					 CGS_MIN(cap, 1u << 22));
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The loaded program's rings mapped (ctl, slots, comms). */
static int ksrc_map(struct cgsi_ksrc *k, bool want_comm, char *lerr,
		    size_t lerrlen)
{
	k->ctl_len = cgsi_ksrc_page_round(sizeof(struct cgsk_ctl) * k->ncpu);
	k->slots_len = cgsi_ksrc_page_round(sizeof(struct cgsk_exit) *
				  (size_t)k->ncpu * k->nslots);
	k->ctl = cgsi_ksrc_mmap(k->skel->maps.ctl, k->ctl_len,
			  PROT_READ | PROT_WRITE);
	k->slots = cgsi_ksrc_mmap(k->skel->maps.slots, k->slots_len, PROT_READ);
	if (want_comm) {
		k->comms_len = cgsi_ksrc_page_round(sizeof(struct cgsk_comm) *
					  (size_t)k->ncpu * k->nslots);
		k->comms = cgsi_ksrc_mmap(k->skel->maps.comms, k->comms_len,
				    PROT_READ);
	}
	if (!k->ctl || !k->slots || (want_comm && !k->comms)) {
		int rc = -errno;
		snprintf(lerr, lerrlen, "mmap of the rings: %s",
			 strerror(errno));
		return rc;
	}
	return 0;
}

/* Open, size, load and map the BPF program, turn its CPUs on and attach
 * it; libbpf's messages to lerr. */
/* The executables' program and maps (exe_max > 0), else none of them. */
static int ksrc_exe_plan(struct cgsi_ksrc *k, unsigned exe_max)
{
	bool on = exe_max > 0;
	struct stat st;
	if (on && stat("/proc/self/ns/mnt", &st) == 0)
		k->skel->rodata->own_mntns = (uint32_t)st.st_ino;
	bpf_program__set_autoload(k->skel->progs.cgs_exec, on);
	bpf_map__set_autocreate(k->skel->maps.exes, on);
	bpf_map__set_autocreate(k->skel->maps.exescratch, on);
	bpf_map__set_autocreate(k->skel->maps.exering, on);
	return on ? bpf_map__set_max_entries(k->skel->maps.exes, exe_max) : 0;
}

static int ksrc_exe_ring(struct cgsi_ksrc *k, unsigned exe_max)
{
	if (!exe_max)
		return 0;
	k->exerb = ring_buffer__new(bpf_map__fd(k->skel->maps.exering),
				    cgsi_ksrc_on_exe, k, NULL);
	return k->exerb ? 0 : -errno;
}

static int ksrc_load(struct cgsi_ksrc *k, bool want_comm, unsigned exe_max,
		     char *lerr, size_t lerrlen)
{
	/* libbpf's printer is process-wide: ours only while loading */
	pthread_mutex_lock(&load_lock);
	load_log = lerr;
	load_log_len = lerrlen;
	libbpf_print_fn_t old = libbpf_set_print(log_libbpf);
	int rc = 0;
	k->skel = exitcg_bpf__open();
	if (!k->skel)
		rc = errno ? -errno : -ENOMEM;
	if (!rc) {
		k->skel->rodata->nslots = k->nslots;
		k->skel->rodata->want_comm = want_comm;
		k->skel->rodata->only_hier = k->dfl_hier;
		k->skel->rodata->cg_how = k->v1.how;
		k->skel->rodata->v1_ssid = (uint32_t)CGS_MAX(k->v1.ssid, 0);
		bool kf = k->v1.how == CGSK_HOW_KFUNC;
		bpf_program__set_autoload(k->skel->progs.cgs_exit, !kf);
		bpf_program__set_autoload(k->skel->progs.cgs_exit_v1k, kf);
		rc = bpf_map__set_max_entries(k->skel->maps.ctl, k->ncpu);
	}
	if (!rc)
		rc = ksrc_exe_plan(k, exe_max);
	if (!rc)
		rc = bpf_map__set_max_entries(k->skel->maps.slots,
					      k->ncpu * k->nslots);
	if (!rc && want_comm)
		rc = bpf_map__set_max_entries(k->skel->maps.comms,
					      k->ncpu * k->nslots);
	if (!rc)
		rc = exitcg_bpf__load(k->skel);
	if (!rc)
		rc = ksrc_map(k, want_comm, lerr, lerrlen);
	for (unsigned i = 0; !rc && i < k->nshards; i++)
		for (unsigned c = 0; c < k->sh[i].ncpus; c++)
			k->ctl[k->sh[i].cpus[c]].on = 1;
	if (!rc) {
		k->cgrb = ring_buffer__new(bpf_map__fd(k->skel->maps.cgring),
					   cgsi_ksrc_on_cg_event, k, NULL);
		if (!k->cgrb)
			rc = -errno;
	}
	if (!rc)
		rc = ksrc_exe_ring(k, exe_max);
	if (!rc) /* cgroup events first, then the walk: nothing falls
		  * between the two */
		rc = exitcg_bpf__attach(k->skel);
	libbpf_set_print(old);
	load_log = NULL;
	pthread_mutex_unlock(&load_lock);
	return rc;
}

int cgsi_ksrc_open(struct cgsi_ksrc **out, const struct cgsi_cg_mount *m,
		   unsigned nshards, const char *const *shard_cpus,
		   size_t ring_bytes, unsigned wait_ms, bool want_comm,
		   unsigned exe_max, char *err, size_t errlen)
{
	char lerr[256] = "";
	int rc;
	*out = NULL;
	int ncpu = ksrc_usable(m, nshards, err, errlen);
	struct cgsi_cgv1 v1 = { .hier = -1 };
	if (ncpu >= 0 && strcmp(m->hier, "v2"))
		rc = cgsi_cgv1_plan(m, NULL, NULL, NULL, &v1, err, errlen);
	else
		rc = ncpu;
	if (rc < 0)
		return rc;
	struct cgsi_ksrc *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	pthread_mutex_init(&k->idlock, NULL);
	pthread_mutex_init(&k->exelock, NULL);
	k->stopfd = -1;
	k->nshards = nshards;
	k->ncpu = (unsigned)ncpu;
	k->mount = m;
	k->v1 = v1;
	k->dfl_hier = v1.how ? v1.hier : cgsi_ksrc_dfl_hier();
	k->wait_us = (wait_ms ? wait_ms : CGSI_KSRC_WAIT_MS) * 1000u;
	k->sh = aligned_alloc(64, sizeof(*k->sh) * nshards);
	rc = -ENOMEM;
	if (!k->sh || cgsi_cgid_init(&k->ids, m) < 0)
		goto fail_nolog;
	memset(k->sh, 0, sizeof(*k->sh) * nshards); /* locks free */
	if ((rc = cpu_map(k, shard_cpus)) < 0 ||
	    (rc = ksrc_size_rings(k, ring_bytes)) < 0)
		goto fail_nolog;
	rc = ksrc_load(k, want_comm, exe_max, lerr, sizeof(lerr));
	if (rc && exe_max) {
		/* the exec program alone must not cost the exit attribution
		 * (a kernel whose verifier or BTF refuses it): without it,
		 * executables come from /proc (cgsi_ksrc_exe_drain():
		 * -EOPNOTSUPP) */
		ksrc_unload(k);
		lerr[0] = '\0';
		rc = ksrc_load(k, want_comm, 0, lerr, sizeof(lerr));
	}
	if (rc)
		goto fail;
	k->ids.tick = cgsi_ksrc_walk_tick;
	k->ids.tick_ctx = k;
	rc = cgsi_cgid_walk(&k->ids, cgsi_now_mono_ms(), 1);
	if (rc < 0) {
		snprintf(lerr, sizeof(lerr), "walking %.200s: %s", m->mnt,
			 strerror(-rc));
		goto fail;
	}
	*out = k;
	return 0;
fail:
	if (rc > 0)
		rc = -rc;
	if (!rc)
		rc = -EINVAL;
	snprintf(err, errlen, "cannot load the BPF program: %s",
		 lerr[0] ? lerr : strerror(-rc));
	cgsi_ksrc_close(k);
	return rc;
fail_nolog:
	snprintf(err, errlen, "%s", strerror(-rc));
	cgsi_ksrc_close(k);
	return rc;
}

#endif /* CGS_HAVE_BPF */
