/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel attribution source; see ksrc.h. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attribute/ksrc.h"
#include "attribute/ksrc_util.h"
#include "util/common.h"

#ifdef CGS_HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

#include "attribute/bpf/exitcg_abi.h"
#include "attribute/cgid.h"
#include "attribute/cgid_v1.h"
#include "attribute/kjoin.h"
#include "exitcg.skel.h"
#include "util/cpulist.h"

/* Entries are expired this long after the newest one a record claimed:
 * records of one shard arrive in exit order, so an older entry's record
 * is not coming (dropped by the kernel, or on a listener we don't have);
 * the margin covers tasks that migrated to another shard's CPU and a
 * shard read late on a loaded host. The table's size bounds memory. */
#define KSRC_EXPIRE_NS 60000000000ull

/* The cgroup event ring is also read every this many lookups, so a burst
 * of mkdir/rmdir without exits (or with known ids) cannot overflow it. */
#define KSRC_CG_EVERY 1024u

struct kshard {
	pthread_mutex_t lock; /* owner per record; others on a miss */
	unsigned *cpus;       /* the CPUs whose rings this shard reads */
	unsigned ncpus;
	struct cgsi_kjoin join;
	uint64_t waits, expired_calls;
	uint64_t ring_peak;   /* most entries one ring held when consumed */
	int64_t off;          /* CLOCK_REALTIME - CLOCK_MONOTONIC, cached */
	uint32_t off_age;     /* lookups since off was read */
} __attribute__((aligned(64)));

struct cgsi_ksrc {
	struct exitcg_bpf *skel;
	unsigned nshards;
	struct kshard *sh;
	unsigned ncpu;          /* possible CPUs (ring count) */
	uint32_t nslots;        /* entries per CPU ring */
	struct cgsk_ctl *ctl;   /* mmapped, ncpu elements */
	size_t ctl_len;
	const struct cgsk_exit *slots; /* mmapped, ncpu * nslots */
	size_t slots_len;
	const struct cgsk_comm *comms; /* mmapped like slots, or NULL */
	size_t comms_len;
	size_t ring_bytes;      /* per shard */
	unsigned wait_us;
	struct ring_buffer *cgrb;
	pthread_mutex_t idlock; /* ids, cgrb, dfl_hier */
	struct cgsi_cgid ids;
	const struct cgsi_cg_mount *mount;
	int64_t dfl_hier;       /* its hierarchy id (cgroup2: -1 till known) */
	struct cgsi_cgv1 v1;    /* a v1 hierarchy: how (else how 0) */
	uint64_t now_ms;        /* for cgroup events, under idlock */
	uint64_t cg_unreadable; /* events with no usable path (idlock) */
	pthread_t reader;       /* cg_reader(), if reader_on */
	bool reader_on;
	_Atomic int reader_tried; /* reader_start() ran (first lookup) */
	int stopfd;             /* eventfd: tells the reader to stop */
	_Atomic uint64_t lost_charged; /* lost entries given as a reason */
	cgsi_ksrc_cg_fn *cg_hook; /* cgsi_ksrc_set_cg_hook(), under idlock */
	void *cg_hook_ctx;
};

/* Entry at ring index idx (cpu * nslots + position). */
static void entry_of(struct cgsi_kentry *e, const struct cgsi_ksrc *k,
		     size_t idx)
{
	const struct cgsk_exit *x = &k->slots[idx];
	*e = (struct cgsi_kentry){
		.tid = x->tid, .tgid = x->tgid, .csw = x->csw,
		.cgid = x->cgid, .start_ns = x->start_ns,
		.now_ns = x->now_ns, .runtime_ns = x->runtime_ns,
		.pcount = x->pcount, .run_delay = x->run_delay, .minflt = x->minflt,
		.flags = x->type & ~CGSK_EV_TYPE_MASK,
	};
	if (k->comms) {
		memcpy(e->comm, k->comms[idx].comm, sizeof(e->comm));
		e->comm[sizeof(e->comm) - 1] = '\0';
	}
}

/*
 * The common case, without a copy or a hash: a shard reads its CPUs'
 * records in the order they exited, which is the order of their rings, so
 * a record's entry is usually the oldest unread one of a ring.
 */
static bool claim_head(struct cgsi_ksrc *k, struct kshard *s,
		       const struct cgs_record *rec, int64_t off,
		       struct cgsi_kinfo *ki)
{
	for (unsigned i = 0; i < s->ncpus; i++) {
		struct cgsk_ctl *c = &k->ctl[s->cpus[i]];
		uint64_t t = c->tail;
		if (t == __atomic_load_n(&c->head, __ATOMIC_ACQUIRE))
			continue;
		size_t idx = (size_t)s->cpus[i] * k->nslots +
			     (t & (k->nslots - 1));
		if (k->slots[idx].tid != rec->pid)
			continue;
		struct cgsi_kentry e;
		entry_of(&e, k, idx);
		if (cgsi_kjoin_verify(&e, rec, off) < 0)
			continue;
		cgsi_kinfo_of(ki, &e);
		if (e.now_ns > s->join.newest_matched_ns)
			s->join.newest_matched_ns = e.now_ns;
		s->join.st.matched++;
		__atomic_store_n(&c->tail, t + 1, __ATOMIC_RELEASE);
		return true;
	}
	return false;
}

/* Move what the shard's CPUs wrote into its join table (no syscall). */
static void consume(struct cgsi_ksrc *k, struct kshard *s)
{
	for (unsigned i = 0; i < s->ncpus; i++) {
		unsigned cpu = s->cpus[i];
		struct cgsk_ctl *c = &k->ctl[cpu];
		uint64_t h = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		uint64_t t = c->tail;
		if (t == h)
			continue;
		if (h - t > s->ring_peak)
			s->ring_peak = h - t;
		size_t base = (size_t)cpu * k->nslots;
		for (; t != h; t++) {
			struct cgsi_kentry e;
			entry_of(&e, k, base + (t & (k->nslots - 1)));
			cgsi_kjoin_add(&s->join, &e);
		}
		/* the slots are read: the program may reuse them */
		__atomic_store_n(&c->tail, t, __ATOMIC_RELEASE);
	}
}

/* cgroup2's hierarchy id, as /proc/self/cgroup shows it: the first field
 * of the line without controllers ("0::/..."); -1 if there is none. */
static int64_t dfl_hier_from_proc(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 64];
	int64_t id = -1;
	if (!f)
		return -1;
	while (id < 0 && fgets(line, sizeof(line), f)) {
		char *end;
		long long v = strtoll(line, &end, 10);
		if (end != line && v >= 0 && end[0] == ':' && end[1] == ':')
			id = v;
	}
	fclose(f);
	return id;
}

/* Is (hier, id, path) an event of the cgroup2 hierarchy? Known from
 * /proc/self/cgroup at open; else learned once from an event whose
 * directory is still there with that inode (an event of a cgroup already
 * removed teaches nothing: without the first, a host whose new cgroups
 * all go quickly would lose their mkdir events until one stays). */
static bool dfl_event(struct cgsi_ksrc *k, const struct cgsk_cgev *e)
{
	if (k->dfl_hier >= 0)
		return (int64_t)e->hier == k->dfl_hier;
	char dir[PATH_MAX + 64];
	struct stat st;
	if (cgsi_cg_dir(k->mount, e->path, dir, sizeof(dir)) < 0 ||
	    stat(dir, &st) < 0 || (uint64_t)st.st_ino != e->id)
		return false;
	k->dfl_hier = e->hier;
	return true;
}

static int on_cg_event(void *ctx, void *data, size_t len)
{
	struct cgsi_ksrc *k = ctx;
	const struct cgsk_cgev *e = data;
	if (len < sizeof(*e) || e->len <= 1 || e->len > CGSK_PATH_MAX) {
		k->cg_unreadable++; /* a walk finds it; removal checks stat */
		return 0;
	}
	struct cgsk_cgev c = *e;
	c.path[CGSK_PATH_MAX - 1] = '\0';
	if (!dfl_event(k, &c))
		return 0;
	if (c.type == CGSK_EV_MKDIR)
		cgsi_cgid_set(&k->ids, c.id, c.path);
	else if (c.type == CGSK_EV_RMDIR)
		cgsi_cgid_removed(&k->ids, c.id, k->now_ms);
	if (k->cg_hook && (c.type == CGSK_EV_MKDIR || c.type == CGSK_EV_RMDIR))
		k->cg_hook(k->cg_hook_ctx, (int)c.type, c.id, c.path);
	return 0;
}

/* During a walk (idlock held, or at open before any lookup): read the
 * cgroup events, so that a long walk beside a churn cannot let the ring
 * overflow (nothing else reads it meanwhile). */
static void walk_tick(void *ctx)
{
	struct cgsi_ksrc *k = ctx;
	k->now_ms = cgsi_now_mono_ms();
	ring_buffer__consume(k->cgrb);
}

/*
 * The cgroup event ring's reader of last resort. Lookups read the ring as
 * records come (every KSRC_CG_EVERY lookups, and for an unknown id); a
 * storm of mkdir/rmdir with no exit in between would overflow it, losing
 * the paths of cgroups whose exits come later. The BPF program wakes
 * this thread only when the ring is a quarter full, so it costs nothing
 * otherwise: it sleeps in poll(). After a read it naps CG_READER_NAP_MS,
 * so that a storm is read in batches, far within the ring.
 */
#define CG_READER_NAP_MS 2
static void *cg_reader(void *arg)
{
	struct cgsi_ksrc *k = arg;
	struct pollfd pf[2] = {
		{ .fd = ring_buffer__epoll_fd(k->cgrb), .events = POLLIN },
		{ .fd = k->stopfd, .events = POLLIN },
	};
	struct timespec nap = { 0, CG_READER_NAP_MS * 1000000L };
	for (;;) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		pthread_mutex_lock(&k->idlock);
		k->now_ms = cgsi_now_mono_ms();
		ring_buffer__consume(k->cgrb);
		pthread_mutex_unlock(&k->idlock);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/*
 * Start cg_reader() once, from the first lookup, not at open: a thread
 * inherits its creator's credentials, capabilities and no_new_privs, all
 * per thread, and a caller drops privileges after loading the program
 * but before records flow (taskstat-collect --user): the reader is then
 * made by a listener thread that holds none. Every signal is blocked in
 * it (the caller's handlers stay the caller's business). Without it
 * (pthread_create failed) lookups alone read the ring, as before.
 */
static void reader_start(struct cgsi_ksrc *k)
{
	int no = 0;
	if (!atomic_compare_exchange_strong(&k->reader_tried, &no, 1))
		return;
	k->stopfd = eventfd(0, EFD_CLOEXEC);
	if (k->stopfd < 0)
		return;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	k->reader_on = pthread_create(&k->reader, NULL, cg_reader, k) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void reader_stop(struct cgsi_ksrc *k)
{
	if (k->reader_on) {
		uint64_t one = 1;
		while (write(k->stopfd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
		pthread_join(k->reader, NULL);
		k->reader_on = false;
	}
	if (k->stopfd >= 0)
		close(k->stopfd);
	k->stopfd = -1;
}

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

void cgsi_ksrc_close(struct cgsi_ksrc *k)
{
	if (!k)
		return;
	reader_stop(k);
	for (unsigned i = 0; k->sh && i < k->nshards; i++) {
		cgsi_kjoin_fini(&k->sh[i].join);
		free(k->sh[i].cpus);
		pthread_mutex_destroy(&k->sh[i].lock);
	}
	free(k->sh);
	if (k->ctl)
		munmap(k->ctl, k->ctl_len);
	if (k->slots)
		munmap((void *)k->slots, k->slots_len);
	if (k->comms)
		munmap((void *)k->comms, k->comms_len);
	ring_buffer__free(k->cgrb);
	exitcg_bpf__destroy(k->skel);
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
static int ksrc_load(struct cgsi_ksrc *k, bool want_comm, char *lerr,
		     size_t lerrlen)
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
					   on_cg_event, k, NULL);
		if (!k->cgrb)
			rc = -errno;
	}
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
		   char *err, size_t errlen)
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
	k->stopfd = -1;
	k->nshards = nshards;
	k->ncpu = (unsigned)ncpu;
	k->mount = m;
	k->v1 = v1;
	k->dfl_hier = v1.how ? v1.hier : dfl_hier_from_proc();
	k->wait_us = (wait_ms ? wait_ms : CGSI_KSRC_WAIT_MS) * 1000u;
	k->sh = aligned_alloc(64, sizeof(*k->sh) * nshards);
	rc = -ENOMEM;
	if (!k->sh || cgsi_cgid_init(&k->ids, m) < 0)
		goto fail_nolog;
	memset(k->sh, 0, sizeof(*k->sh) * nshards);
	for (unsigned i = 0; i < nshards; i++)
		pthread_mutex_init(&k->sh[i].lock, NULL);
	if ((rc = cpu_map(k, shard_cpus)) < 0 ||
	    (rc = ksrc_size_rings(k, ring_bytes)) < 0)
		goto fail_nolog;
	if ((rc = ksrc_load(k, want_comm, lerr, sizeof(lerr))))
		goto fail;
	k->ids.tick = walk_tick;
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

static bool try_claim(struct cgsi_ksrc *k, struct kshard *s,
		      const struct cgs_record *rec, int64_t off,
		      struct cgsi_kinfo *ki)
{
	if (claim_head(k, s, rec, off, ki))
		return true;
	consume(k, s);
	return cgsi_kjoin_claim(&s->join, rec, off, ki);
}

/* A task that migrated between taskstats_exit() and the tracepoint left
 * its entry on another shard's ring: look there (slow path). */
static bool claim_elsewhere(struct cgsi_ksrc *k, unsigned shard,
			    const struct cgs_record *rec, int64_t off,
			    struct cgsi_kinfo *ki)
{
	for (unsigned i = 0; i < k->nshards; i++) {
		if (i == shard)
			continue;
		struct kshard *o = &k->sh[i];
		pthread_mutex_lock(&o->lock);
		bool ok = try_claim(k, o, rec, off, ki);
		pthread_mutex_unlock(&o->lock);
		if (ok)
			return true;
	}
	return false;
}

static uint64_t lost_now(struct cgsi_ksrc *k, unsigned shard)
{
	uint64_t n = 0;
	const struct kshard *s = &k->sh[shard];
	for (unsigned i = 0; i < s->ncpus; i++)
		n += __atomic_load_n(&k->ctl[s->cpus[i]].lost,
				     __ATOMIC_RELAXED);
	return n;
}

/* Why a record found no entry (slow path: after the wait): entries of
 * its tid that did not verify, the wait's end, a lost entry (exact
 * counts: before a dropped tid, which may be an earlier task's of that
 * pid), an entry of its tid expired or evicted, or none. */
static enum cgsi_kmiss miss_reason(struct cgsi_ksrc *k,
				   const struct cgs_record *rec,
				   bool timed_out, bool started)
{
	bool seen = false, dropped = false;
	for (unsigned i = 0; i < k->nshards; i++) {
		struct kshard *o = &k->sh[i];
		pthread_mutex_lock(&o->lock);
		seen = seen || cgsi_kjoin_has_tid(&o->join, rec->pid);
		dropped = dropped || cgsi_kjoin_dropped(&o->join, rec->pid);
		pthread_mutex_unlock(&o->lock);
	}
	if (seen)
		return CGSI_KMISS_MISMATCH;
	if (timed_out)
		return CGSI_KMISS_TIMEOUT;
	if (cgsi_ksrc_charge_lost(k->ctl, k->ncpu, &k->lost_charged))
		return CGSI_KMISS_LOST;
	if (dropped)
		return CGSI_KMISS_EXPIRED;
	/* a shard's records come in the order they were queued: those
	 * before its first match were queued before the attach */
	return started ? CGSI_KMISS_NO_ENTRY : CGSI_KMISS_BEFORE_ATTACH;
}

bool cgsi_ksrc_lookup(struct cgsi_ksrc *k, unsigned shard,
		      const struct cgs_record *rec, struct cgsi_kinfo *ki)
{
	struct kshard *s = &k->sh[shard];
	if (cgs_unlikely(!atomic_load_explicit(&k->reader_tried,
					       memory_order_relaxed)))
		reader_start(k);
	/* the offset moves only when the clock is set: read it now and then
	 * (and afresh before giving up on a record) */
	if (!s->off_age++ || s->off_age > KSRC_CG_EVERY) {
		s->off = cgsi_ksrc_real_off_ns();
		s->off_age = 1;
		if (!pthread_mutex_trylock(&k->idlock)) {
			k->now_ms = cgsi_now_mono_ms();
			ring_buffer__consume(k->cgrb);
			pthread_mutex_unlock(&k->idlock);
		}
	}
	int64_t off = s->off;
	pthread_mutex_lock(&s->lock);
	bool ok = try_claim(k, s, rec, off, ki);
	if (ok) {
		if (s->join.newest_matched_ns > KSRC_EXPIRE_NS &&
		    (++s->expired_calls & 255) == 0)
			cgsi_kjoin_expire(&s->join, s->join.newest_matched_ns,
					  KSRC_EXPIRE_NS);
		pthread_mutex_unlock(&s->lock);
		return true;
	}
	pthread_mutex_unlock(&s->lock);
	s->off = off = cgsi_ksrc_real_off_ns();
	s->off_age = 1;
	if (claim_elsewhere(k, shard, rec, off, ki))
		return true;
	/* Not published yet (the tracepoint runs after taskstats_exit(), and
	 * the task may be preempted in between), or lost, or never coming.
	 * The task itself tells which: until the tracepoint has run it is
	 * neither a zombie nor gone. So wait while it is still exiting,
	 * bounded; a task that is done (its entry lost) costs no wait. */
	uint64_t t0 = cgsi_ksrc_mono_ns(), deadline = t0 + k->wait_us * 1000ull;
	struct timespec nap = { 0, 50000 };
	bool waited = false, timed_out = false;
	unsigned naps = 0;
	/* /proc is looked at every ~1 ms, the rings every ~50 us */
	while (!ok && (naps++ % 20 || !cgsi_ksrc_task_done(rec->pid)) &&
	       !(timed_out = cgsi_ksrc_mono_ns() >= deadline)) {
		waited = true;
		nanosleep(&nap, NULL);
		pthread_mutex_lock(&s->lock);
		ok = try_claim(k, s, rec, off, ki);
		pthread_mutex_unlock(&s->lock);
		if (!ok)
			ok = claim_elsewhere(k, shard, rec, off, ki);
	}
	/* done (meanwhile, or already at the first look: the entry may have
	 * come out between the claims above and that look): its entry is out
	 * now, unless lost */
	if (!ok) {
		pthread_mutex_lock(&s->lock);
		ok = try_claim(k, s, rec, off, ki);
		pthread_mutex_unlock(&s->lock);
		if (!ok)
			ok = claim_elsewhere(k, shard, rec, off, ki);
	}
	pthread_mutex_lock(&s->lock);
	s->waits += waited; /* a miss is counted by the caller's fallback */
	bool started = s->join.newest_matched_ns != 0;
	pthread_mutex_unlock(&s->lock);
	if (!ok)
		ki->miss = miss_reason(k, rec, timed_out, started);
	return ok;
}

/* An unknown id (idlock held): -ESTALE, -ENOENT or -EAGAIN (ksrc.h). A
 * walk that started after the exit finds the cgroup or proves it gone,
 * so none is made for an id that a walk since its exit did not find. */
static const char *path_unknown(struct cgsi_ksrc *k, uint64_t id,
				uint64_t exit_ns, uint64_t now_ms, int *rc)
{
	*rc = -ESTALE;
	if (cgsi_cgid_was_purged(&k->ids, id))
		return NULL;
	*rc = -ENOENT;
	if (k->ids.last_walk_ms * 1000000ull > exit_ns)
		return NULL;
	if (cgsi_cgid_walk(&k->ids, now_ms, 0) > 0)
		return cgsi_cgid_get(&k->ids, id);
	*rc = -EAGAIN;
	return NULL;
}

int cgsi_ksrc_path(struct cgsi_ksrc *k, uint64_t id, uint64_t exit_ns,
		   char *buf, size_t len)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&k->idlock);
	/* one clock for every stamp of the id table (removal, purge, walk):
	 * the caller's (a rollup's, counting from its start) would have
	 * purged a removed cgroup stamped by it at once */
	uint64_t now_ms = k->now_ms = cgsi_now_mono_ms();
	const char *p = cgsi_cgid_get(&k->ids, id);
	if (!p) {
		ring_buffer__consume(k->cgrb);
		p = cgsi_cgid_get(&k->ids, id);
	}
	if (!p)
		p = path_unknown(k, id, exit_ns, now_ms, &rc);
	if (p) {
		size_t n = strlen(p);
		if (n < len) {
			memcpy(buf, p, n + 1);
			rc = (int)n;
		} else {
			rc = -ENAMETOOLONG;
		}
	} else {
		k->ids.unresolved++;
	}
	pthread_mutex_unlock(&k->idlock);
	return rc;
}

void cgsi_ksrc_stats(struct cgsi_ksrc *k, struct cgsi_ksrc_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!k)
		return;
	for (unsigned i = 0; i < k->nshards; i++) {
		struct kshard *s = &k->sh[i];
		pthread_mutex_lock(&s->lock);
		out->matched += s->join.st.matched;
		out->expired += s->join.st.expired;
		out->evicted += s->join.st.evicted;
		out->waits += s->waits;
		out->ring_peak = CGS_MAX(out->ring_peak, s->ring_peak);
		pthread_mutex_unlock(&s->lock);
		out->lost += lost_now(k, i);
	}
	out->ring_queued = cgsi_ksrc_queued(k->ctl, k->ncpu);
	pthread_mutex_lock(&k->idlock);
	ring_buffer__consume(k->cgrb);
	out->unresolved = k->ids.unresolved;
	out->walks = k->ids.walks;
	out->walk_ms_last = k->ids.walk_ms_last;
	pthread_mutex_unlock(&k->idlock);
	out->cg_lost = __atomic_load_n(&k->skel->bss->cg_lost, __ATOMIC_RELAXED);
	out->ring_bytes = k->ring_bytes;
	out->ring_slots = k->nslots;
	cgsi_ksrc_prog_stats(k->skel->obj, out);
}

void cgsi_ksrc_sync_ids(struct cgsi_ksrc *k, struct cgsi_ksrc_rmstate *rm)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->idlock);
	k->now_ms = cgsi_now_mono_ms();
	ring_buffer__consume(k->cgrb);
	if (rm) {
		rm->rmdirs = k->ids.rmdirs;
		rm->missed = k->ids.rm_unknown + k->cg_unreadable +
			     __atomic_load_n(&k->skel->bss->cg_lost,
					     __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&k->idlock);
}

int cgsi_ksrc_removed(struct cgsi_ksrc *k, uint64_t id)
{
	if (!k || !id)
		return 0;
	pthread_mutex_lock(&k->idlock);
	int rc = cgsi_cgid_is_removed(&k->ids, id);
	pthread_mutex_unlock(&k->idlock);
	return rc;
}

void cgsi_ksrc_set_cg_hook(struct cgsi_ksrc *k, cgsi_ksrc_cg_fn *fn,
			   void *ctx)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->idlock);
	k->cg_hook = fn;
	k->cg_hook_ctx = ctx;
	__atomic_store_n(&k->skel->bss->wake_mkdir, fn != NULL,
			 __ATOMIC_RELAXED);
	if (fn) /* the cgroups there before (a mkdir after: an event) */
		cgsi_cgid_each_live(&k->ids, fn, ctx, CGSI_KSRC_EXISTING);
	pthread_mutex_unlock(&k->idlock);
	if (fn) /* someone must be there to be woken */
		reader_start(k);
}

size_t cgsi_ksrc_ids(struct cgsi_ksrc *k)
{
	if (!k)
		return 0;
	pthread_mutex_lock(&k->idlock);
	size_t n = k->ids.count;
	pthread_mutex_unlock(&k->idlock);
	return n;
}
#endif /* CGS_HAVE_BPF */
