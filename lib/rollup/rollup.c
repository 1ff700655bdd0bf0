/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rollup: per-shard state (process cache + cgroup table), each shard
 * guarded by its own mutex that only snapshots contend, so the writers of
 * different shards never touch each other's memory. A record is accounted
 * once, to its own cgroup ("self"); subtree sums are made at snapshot
 * time (snapshot.c). TGID-kind records only count as tgid_records: they
 * sum what the task records of the same process already carried.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "util/cpulist.h"
#include "rollup/counters.h"
#include "rollup/rollup_int.h"
#include "rollup/wstatus.h"

static uint64_t coarse_ms(void *ctx)
{
	(void)ctx;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int shard_init(struct cgs_rollup *r, struct cgsi_rshard *s)
{
	memset(s, 0, sizeof(*s));
	s->r = r;
	int rc;
	if ((rc = cgsi_cgtab_init(&s->cgs)) < 0)
		return rc;
	s->unknown = cgsi_cgtab_add(&s->cgs, CGS_UNKNOWN_CGROUP,
				    strlen(CGS_UNKNOWN_CGROUP),
				    cgsi_path_hash(CGS_UNKNOWN_CGROUP,
						   strlen(CGS_UNKNOWN_CGROUP)));
	if (!s->unknown)
		return -ENOMEM;
	s->unknown->unknown = true;
	s->unknown->depth = 0;
	cgsi_node_created(r, s, s->unknown);
	return 0;
}

static void shard_fini(struct cgsi_rshard *s)
{
	cgsi_cgtab_fini(&s->cgs);
}

void cgs_rollup_free(struct cgs_rollup *r)
{
	if (!r)
		return;
	for (unsigned i = 0; r->shards && i < r->nshards; i++)
		shard_fini(&r->shards[i]);
	free(r->shards);
	free(r->listener_cpus);
	cgsi_exe_free(r->exe); /* before its kernel source */
	cgsi_attr_close(&r->at);
	cgsi_oom_close(r);
	cgsi_snap_pool_close(r->snap_pool);
	pthread_mutex_destroy(&r->snap_lock);
	free(r->proc_root);
	free(r->mountinfo);
	free(r);
}

/*
 * Shards and their CPUs: the listener's when one is given, else as many as
 * a listener opened with the defaults has here, so that the documented
 * wiring (both objects with their defaults) never refuses a record.
 */
static int shards_default(struct cgs_rollup *r)
{
	const struct cgs_listener *l = r->o.listener;
	r->o.listener = NULL; /* not kept */
	if (l) {
		unsigned n = cgs_listener_shards(l);
		if (!n || (r->o.shards && r->o.shards != n) ||
		    r->o.shard_cpus)
			return -EINVAL;
		r->o.shards = n;
		r->listener_cpus = calloc(n, sizeof(*r->listener_cpus));
		if (!r->listener_cpus)
			return -ENOMEM;
		for (unsigned i = 0; i < n; i++)
			r->listener_cpus[i] = cgs_listener_shard_cpus(l, i);
		r->o.shard_cpus = r->listener_cpus;
		return 0;
	}
	if (!r->o.shards) {
		int n = cgs_possible_cpus();
		r->o.shards = cgsi_default_shards(n > 0 ? (unsigned)n : 1);
	}
	return 0;
}

/* Refuse a record: counted (totals.refused), never silent. */
static int refuse(struct cgs_rollup *r)
{
	if (r)
		__atomic_add_fetch(&r->refused, 1, __ATOMIC_RELAXED);
	return -EINVAL;
}

/* Attribution per the options (attr.h), each shard bound to its lock
 * and unknown bucket. */
static int attr_open(struct cgs_rollup *r, const struct cgsi_rollup_iopts *io)
{
	struct cgsi_attr_cfg c = {
		.ops = &cgsi_rollup_attr_ops,
		.ctx = r,
		.proc_root = r->proc_root,
		.mount = &r->mount,
		.nshards = r->nshards,
		.want = r->o.attribution,
		.shard_cpus = r->o.shard_cpus,
		.kernel_ringbuf = r->o.kernel_ringbuf,
		.kernel_wait_ms = r->o.kernel_wait_ms,
		.want_comm = r->o.comms > 0,
		.exe_max = r->o.exe_paths,
		.track_forks = !!(r->o.flags & CGS_ROLLUP_TRACK_FORKS),
		.forks_injected = io && io->forks_injected,
		.fast = !!(r->o.flags & CGS_ROLLUP_FAST_ATTRIBUTION),
		.grace_ms = r->o.grace_ms,
		.revalidate_ms = r->o.revalidate_ms,
		.now = cgsi_rollup_now(r),
	};
	r->o.shard_cpus = NULL; /* not kept */
	int rc = cgsi_attr_open(&r->at, &c);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < r->nshards; i++)
		cgsi_attr_bind(&r->at, i, &r->shards[i].lock,
			       r->shards[i].unknown);
	return 0;
}

int cgs_rollup_new(struct cgs_rollup **out,
		   const struct cgs_rollup_opts *opts)
{
	return cgsi_rollup_new(out, opts, NULL);
}

int cgsi_rollup_new(struct cgs_rollup **out,
		    const struct cgs_rollup_opts *opts,
		    const struct cgsi_rollup_iopts *io)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	struct cgs_rollup *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->snap_lock, NULL);
	int rc = cgsi_opts_copy(&r->o, sizeof(r->o), opts,
				opts ? opts->sz : 0);
	if (rc < 0)
		goto fail;
	rc = -EINVAL;
	if (r->o.flags & ~(CGS_NO_TGID | CGS_ROLLUP_TRACK_FORKS |
			   CGS_ROLLUP_FAST_ATTRIBUTION | CGS_ROLLUP_HISTOGRAMS |
			   CGS_ROLLUP_NO_DELAY_PEAKS) ||
	    r->o.comms > CGSI_COMMS_MAX || r->o.exes > CGSI_COMMS_MAX ||
	    r->o.exe_paths > CGSI_EXE_MAX)
		goto fail;
	r->tops = r->o.comms || r->o.exes;
	if ((rc = shards_default(r)) < 0)
		goto fail;
	rc = -EINVAL;
	if (!r->o.grace_ms)
		r->o.grace_ms = 2000;
	if (!r->o.revalidate_ms)
		r->o.revalidate_ms = 1000;
	if (!r->o.clock_ms)
		r->o.clock_ms = coarse_ms;
	rc = -ENOMEM;
	r->proc_root = strdup(r->o.proc_root ? r->o.proc_root : "/proc");
	if (!r->proc_root)
		goto fail;
	if (r->o.mountinfo)
		r->mountinfo = strdup(r->o.mountinfo);
	else if (asprintf(&r->mountinfo, "%s/self/mountinfo", r->proc_root) < 0)
		r->mountinfo = NULL;
	if (!r->mountinfo)
		goto fail;
	rc = cgsi_cg_mount_find(r->mountinfo, r->o.hierarchy, &r->mount);
	if (rc < 0)
		goto fail;
	/* the caller's strings are not kept */
	r->o.hierarchy = r->o.proc_root = r->o.mountinfo = NULL;
	r->o.errbuf = NULL;
	r->t0 = r->o.clock_ms(r->o.clock_ctx);
	r->nshards = r->o.shards;
	r->shards = aligned_alloc(64, sizeof(*r->shards) * r->nshards);
	if (!r->shards) {
		rc = -ENOMEM;
		r->nshards = 0;
		goto fail;
	}
	for (unsigned i = 0; i < r->nshards; i++) {
		if ((rc = shard_init(r, &r->shards[i])) < 0) {
			shard_fini(&r->shards[i]);
			r->nshards = i;
			goto fail;
		}
	}
	if ((rc = attr_open(r, io)) < 0) {
		if (opts && opts->sz >= offsetof(struct cgs_rollup_opts,
						 errbuf_len) + sizeof(size_t) &&
		    opts->errbuf && opts->errbuf_len && r->at.kerr[0])
			snprintf(opts->errbuf, opts->errbuf_len, "%s",
				 r->at.kerr);
		goto fail;
	}
	if ((rc = cgsi_oom_open(r)) < 0)
		goto fail;
	rc = -ENOMEM;
	if (r->o.exe_paths) {
		if (!(r->exe = cgsi_exe_new(r->proc_root, r->o.exe_paths,
					    r->at.ksrc)))
			goto fail;
		cgsi_exe_scan(r->exe);
	}
	rc = -ENOMEM;
	if (!(r->snap_pool = cgsi_snap_pool_new()))
		goto fail;
	*out = r;
	return 0;
fail:
	cgs_rollup_free(r);
	return rc;
}

/* What the rollup knows of a record besides the record. */
struct acct_info {
	bool inferred;
	bool oom;         /* its process was an OOM victim */
	bool tops;        /* a task record ranked (opts.comms or .exes) */
	const char *comm; /* its process's command (with opts.comms) */
	size_t comm_len;
};

/* A thread's process's command without the kernel's word: its process's
 * /proc/<tgid>/comm while it lives (the last one read is kept for a
 * second: threads of one process exit together), else its own. */
static const char *proc_comm(struct cgs_rollup *r, struct cgsi_rshard *s,
			     const struct cgs_record *rec, uint64_t now)
{
	if (!now)
		now = cgsi_rollup_now(r);
	if (s->comm_tgid == rec->tgid && now < s->comm_ms + 1000)
		return s->comm;
	char p[64];
	snprintf(p, sizeof(p), "%s/%u/comm", r->proc_root, rec->tgid);
	int n = cgsi_read_file(p, s->comm, sizeof(s->comm));
	if (n <= 0) {
		s->comm_tgid = 0;
		s->st.comm_own++;
		return rec->comm;
	}
	if (s->comm[n - 1] == '\n')
		s->comm[n - 1] = '\0';
	s->comm_tgid = rec->tgid;
	s->comm_ms = now;
	return s->comm;
}

static void comm_of(struct cgs_rollup *r, struct cgsi_rshard *s,
		    const struct cgs_record *rec, const char *kcomm,
		    uint64_t now, struct acct_info *ai)
{
	if (kcomm)
		ai->comm = kcomm; /* the kernel's: the group leader's, at exit */
	else if (!rec->tgid || rec->pid == rec->tgid)
		ai->comm = rec->comm; /* the leader's own record */
	else
		ai->comm = proc_comm(r, s, rec, now);
	ai->comm_len = strnlen(ai->comm, CGS_COMM_LEN);
}

/* w of key into summary t of capacity cap, made with its first key (on
 * ENOMEM the key is not ranked; the next one tries again). */
static void top_add(struct cgsi_topk *t, uint32_t cap, const void *key,
		    size_t len, uint64_t w)
{
	if (cgs_likely(t->slots) || cgsi_topk_init(t, cap) == 0)
		cgsi_topk_add(t, key, len, w);
}

/* One key into a node's summaries: [0] by CPU, [1] by exits, [2] (the
 * executables') by crashes, as enum cgs_comm_rank and cgs_exe_rank. */
static void tops_add(struct cgsi_topk *t, uint32_t cap, const void *key,
		     size_t len, uint64_t cpu, bool exit, bool crash)
{
	/* no CPU, nothing to rank by it (most short tasks: ticks) */
	if (cpu)
		top_add(&t[0], cap, key, len, cpu);
	if (exit)
		top_add(&t[1], cap, key, len, 1);
	if (crash)
		top_add(&t[2], cap, key, len, 1);
}

/* A task record into its node's command and executable rankings. */
static void account_tops(const struct cgs_rollup *r, struct cgsi_rshard *s,
			 struct cgsi_cgnode *n, const struct cgs_record *rec,
			 const struct acct_info *ai)
{
	uint64_t cpu = rec->utime_us + rec->stime_us;
	bool exit = rec->kind == CGS_KIND_PROCESS;
	if (n->comms && ai->comm)
		tops_add(n->comms, r->o.comms, ai->comm, ai->comm_len, cpu,
			 exit, false);
	if (n->exes) {
		/* the key: 16 bytes, (dev, inode) (snap_extra.c reads it) */
		uint64_t key[2] = { rec->exe_dev, rec->exe_inode };
		_Static_assert(sizeof(key) <= CGSI_TOPK_KEY_MAX,
			       "an executable's key fits a summary's");
		unsigned sig;
		bool crash = exit && cgsi_wstatus(rec->exit_status, &sig) >=
					     CGS_EXIT_SIGNALED &&
			     cgsi_crash_signal(sig);
		s->st.exe_none += !rec->exe_inode;
		tops_add(n->exes, r->o.exes, key, sizeof(key), cpu, exit,
			 crash);
	}
}

/* One record into its node, s->lock held. Inlined in account_attr(),
 * the hot path (no call, no frame, ai in registers); the copy in
 * account_given() is the price. */
static inline __attribute__((always_inline)) void
account_node(struct cgs_rollup *r, struct cgsi_rshard *s,
	     struct cgsi_cgnode *n, const struct cgs_record *rec,
	     const struct acct_info *ai)
{
	s->st.records++;
	if (cgs_unlikely(ai->inferred)) {
		n->inferred++;
		s->st.inferred++;
	}
	if (rec->kind == CGS_KIND_TGID) {
		n->cum.tgid_records++;
		return;
	}
	cgsi_counters_account(&n->cum, rec);
	if (rec->hiwater_rss_kb > n->ivl_rss)
		n->ivl_rss = rec->hiwater_rss_kb;
	if (rec->hiwater_vm_kb > n->ivl_vm)
		n->ivl_vm = rec->hiwater_vm_kb;
	/* delay peaks: made with the first record carrying them (v15+) */
	if ((rec->fields & CGS_HAS_DELAY_MAXMIN) &&
	    !(r->o.flags & CGS_ROLLUP_NO_DELAY_PEAKS) && cgsi_dpk_get(&n->dpk))
		cgsi_pkset_observe(&n->dpk->ivl, rec);
	if (rec->kind == CGS_KIND_PROCESS) {
		n->cum.oom_kills += ai->oom;
		unsigned sig;
		bool by_signal = cgsi_wstatus(rec->exit_status, &sig) >=
				 CGS_EXIT_SIGNALED;
		/* signal counts: the node's extra sets, made on first need */
		if (cgs_unlikely(by_signal) && cgsi_node_xs(n)) {
			(*cgsi_x4_cum(n->x, CGSI_XW_SIG(sig)))++;
			cgsi_nz_mark(n->xnz, CGSI_XW_SIG(sig));
			n->sigs = true;
		}
	}
	/* n->x is made with the node's first record (node.c), or retried
	 * here after a failed allocation */
	if ((r->o.flags & CGS_ROLLUP_HISTOGRAMS) && (n->x || cgsi_node_x(n)))
		cgsi_x4_observe(&n->x, n->xnz, rec);
	if (cgs_unlikely(ai->tops))
		account_tops(r, s, n, rec, ai);
}

const char *cgs_source_name(enum cgs_source s)
{
	static const char *const n[] = { "none", "kernel", "proc",
					 "inferred", "given" };
	return (unsigned)s < CGS_ARRAY_SIZE(n) ? n[s] : NULL;
}

/* A record attributed by the rollup: the hot path of every caller.
 * Inlined in two copies, account_plain() and account_out(), so that the
 * common call without a result tests no output pointers. */
static inline __attribute__((always_inline)) int
account_attr(struct cgs_rollup *r, unsigned shard,
	     const struct cgs_record *rec, const char **path_out,
	     enum cgs_source *src_out)
{
	struct cgs_record tmp;

	if (src_out)
		*src_out = CGS_SOURCE_NONE;
	if (cgs_unlikely(!r || !rec || shard >= r->nshards ||
			 !(rec = cgsi_rec_in(rec, &tmp)) ||
			 rec->kind < CGS_KIND_THREAD ||
			 rec->kind > CGS_KIND_TGID))
		return refuse(r);
	if (rec->kind == CGS_KIND_TGID && (r->o.flags & CGS_NO_TGID)) {
		if (path_out)
			*path_out = NULL;
		return 0;
	}
	struct cgsi_rshard *s = &r->shards[shard];
	/* with the kernel source the common path reads no clock: 0, read
	 * where needed (cgsi_attr_now(), proc_comm()) */
	uint64_t now = r->at.ksrc ? 0 : cgsi_rollup_now(r);
	struct cgsi_attr_ans at;
	bool found = cgsi_attr_prepare(&r->at, shard, rec, now, &at);
	cgsi_flock_lock(&s->lock);
	/* the node key is the node */
	cgsi_attr_resolve_locked(&r->at, shard, rec, found, now, &at);
	struct cgsi_cgnode *n = at.node;
	struct acct_info ai = {
		.inferred = at.how == CGS_SOURCE_INFERRED,
		.oom = at.oom,
	};
	if (r->tops && rec->kind != CGS_KIND_TGID) {
		ai.tops = true;
		if (r->o.comms)
			comm_of(r, s, rec, at.comm, now, &ai);
	}
	account_node(r, s, n, rec, &ai);
	n->attributed = true;
	cgsi_flock_unlock(&s->lock);
	if (src_out)
		*src_out = at.how;
	if (path_out)
		*path_out = n->path;
	return 0;
}

/* account_attr() without a result (the collector's calls, exits). */
static __attribute__((noinline)) int
account_plain(struct cgs_rollup *r, unsigned shard,
	      const struct cgs_record *rec)
{
	return account_attr(r, shard, rec, NULL, NULL);
}

/* account_attr() with a result: either pointer may be NULL. */
static __attribute__((noinline)) int
account_out(struct cgs_rollup *r, unsigned shard,
	    const struct cgs_record *rec, const char **path_out,
	    enum cgs_source *src_out)
{
	return account_attr(r, shard, rec, path_out, src_out);
}

/* A record of a cgroup the caller names: no attribution. */
static int account_given(struct cgs_rollup *r, unsigned shard,
			 const struct cgs_record *rec, const char *path,
			 const char **path_out)
{
	struct cgs_record tmp;

	if (!r || !rec || !path || shard >= r->nshards ||
	    !(rec = cgsi_rec_in(rec, &tmp)) ||
	    rec->kind < CGS_KIND_THREAD || rec->kind > CGS_KIND_TGID)
		return refuse(r);
	if (rec->kind == CGS_KIND_TGID && (r->o.flags & CGS_NO_TGID))
		return 0;
	bool unknown = !strcmp(path, CGS_UNKNOWN_CGROUP);
	if (!unknown && path[0] != '/')
		return refuse(r);
	size_t len = strlen(path);
	if (len >= PATH_MAX) {
		refuse(r);
		return -ENAMETOOLONG;
	}
	struct cgsi_rshard *s = &r->shards[shard];
	uint64_t now = cgsi_rollup_now(r);
	cgsi_flock_lock(&s->lock);
	struct cgsi_cgnode *n = unknown ? s->unknown
					: cgsi_intern(r, s, path, len, now, 0);
	/* a recorded thread's process command is not known: its own */
	struct acct_info ai = { .tops = r->tops && rec->kind != CGS_KIND_TGID };
	if (r->o.comms && rec->kind != CGS_KIND_TGID) {
		ai.comm = rec->comm;
		ai.comm_len = strnlen(rec->comm, CGS_COMM_LEN);
		s->st.comm_own += rec->tgid && rec->pid != rec->tgid;
	}
	if (n) {
		account_node(r, s, n, rec, &ai);
		*path_out = n->path;
	}
	cgsi_flock_unlock(&s->lock);
	return n ? 0 : (refuse(r), -ENOMEM);
}

/* cgs_rollup_add() with options, or a result too small for ours; out of
 * line, so that the hot path has no frame of its own */
static __attribute__((noinline)) int add_slow(struct cgs_rollup *r, unsigned shard,
		    const struct cgs_record *rec, const struct cgs_add_opts *o,
		    struct cgs_add_result *out)
{
	struct cgs_add_opts opt;
	int e = cgsi_opts_copy(&opt, sizeof(opt), o, o ? o->sz : 0);
	if (e < 0)
		return e;
	if (out && !CGSI_OUT_OK(out))
		return -EINVAL;
	struct cgs_add_result res = { .sz = sizeof(res) };
	int rc;
	if (opt.path) {
		rc = account_given(r, shard, rec, opt.path, &res.path);
		if (rc == 0 && res.path)
			res.source = CGS_SOURCE_GIVEN;
	} else {
		rc = account_out(r, shard, rec, &res.path, &res.source);
	}
	if (!out)
		return rc;
	e = cgsi_out_copy(out, &res, sizeof(res));
	return rc < 0 ? rc : e;
}

int cgs_rollup_add(struct cgs_rollup *r, unsigned shard,
		   const struct cgs_record *rec,
		   const struct cgs_add_opts *o,
		   struct cgs_add_result *out)
{
	/* the hot path (no options; no result, or one of our size or
	 * larger): the attribution alone, writing the result in place */
	if (cgs_likely(!o)) {
		if (!out)
			return account_plain(r, shard, rec);
		if (cgs_likely(CGSI_OUT_FULL(out))) {
			out->sz = sizeof(*out);
			out->path = NULL;
			return account_out(r, shard, rec, &out->path,
					   &out->source);
		}
	}
	return add_slow(r, shard, rec, o, out);
}

int cgs_rollup_account_exit(const struct cgs_exit *ev,
			    void *rollup)
{
	struct cgs_rollup *r = rollup;
	if (!ev || !r)
		return 0;
	if (ev->task)
		account_plain(r, ev->shard, ev->task);
	if (ev->group)
		account_plain(r, ev->shard, ev->group);
	return 0;
}

/* The calls cgs_rollup_add() replaced (CGSTATS_1.0):
 * <cgstats/deprecated.h>. Each keeps its own copy of the path it takes,
 * so that none costs more than before. */
int cgs_rollup_account(struct cgs_rollup *r, unsigned shard,
		       const struct cgs_record *rec,
		       const char **path_out)
{
	return account_out(r, shard, rec, path_out, NULL);
}

int cgs_rollup_account_src(struct cgs_rollup *r, unsigned shard,
			   const struct cgs_record *rec,
			   const char **path_out,
			   enum cgs_source *src_out)
{
	return account_out(r, shard, rec, path_out, src_out);
}

int cgs_rollup_account_path(struct cgs_rollup *r, unsigned shard,
			    const struct cgs_record *rec,
			    const char *path)
{
	const char *p;
	return account_given(r, shard, rec, path, &p);
}
