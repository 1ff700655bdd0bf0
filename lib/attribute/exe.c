/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* (dev, inode) -> executable path (exe.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attribute/bpf/exitcg_abi.h"
#include "attribute/exe.h"
#include "attribute/ksrc.h"

#define EVICT_PROBE 8 /* neighbours compared when the map is full */

struct exe_ent {
	uint64_t dev, ino;  /* ino 0: free */
	char *path;
	unsigned flags;     /* CGS_EXE_EXEC, _TRUNCATED, _FOREIGN */
	unsigned state;     /* CGS_EXE_DELETED, _REPLACED as last checked */
	bool unlinked;      /* no link left when learnt */
	bool checked;       /* state valid as of checked_ms */
	uint64_t checked_ms, used_ms;
};

struct cgsi_exe {
	pthread_mutex_t lock;
	char *proc;
	struct cgsi_ksrc *k;
	size_t max, cap;    /* cap: a power of 2, >= 2 * max */
	struct exe_ent *v;
	unsigned recheck_ms;
	bool dirs_done;     /* the bin directories were read */
	char own_mntns[64]; /* readlink of <proc>/self/ns/mnt */
	struct cgs_exe_counts n;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct cgsi_exe *cgsi_exe_new(const char *proc_root, size_t max,
			      struct cgsi_ksrc *k)
{
	struct cgsi_exe *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max = max ? max : 4096;
	if (c->max > CGSI_EXE_MAX)
		c->max = CGSI_EXE_MAX;
	c->cap = 16;
	while (c->cap < 2 * c->max)
		c->cap *= 2;
	c->v = calloc(c->cap, sizeof(*c->v));
	c->proc = strdup(proc_root ? proc_root : "/proc");
	if (!c->v || !c->proc || pthread_mutex_init(&c->lock, NULL)) {
		free(c->v);
		free(c->proc);
		free(c);
		return NULL;
	}
	c->k = k;
	c->recheck_ms = CGSI_EXE_RECHECK_MS;
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/self/ns/mnt", c->proc);
	ssize_t l = readlink(p, c->own_mntns, sizeof(c->own_mntns) - 1);
	c->own_mntns[l > 0 ? l : 0] = '\0';
	c->n.bytes = sizeof(*c) + c->cap * sizeof(*c->v);
	return c;
}

void cgsi_exe_free(struct cgsi_exe *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		free(c->v[i].path);
	free(c->v);
	free(c->proc);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void cgsi_exe_set_recheck(struct cgsi_exe *c, unsigned ms)
{
	c->recheck_ms = ms;
}

static size_t home(const struct cgsi_exe *c, uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino * 0x9e3779b97f4a7c15ull) ^ (dev * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h >> 17) & (c->cap - 1);
}

/* The slot of (dev, ino), or the free slot that ends its probe. */
static size_t slot_of(const struct cgsi_exe *c, uint64_t dev, uint64_t ino)
{
	size_t i = home(c, dev, ino);
	while (c->v[i].ino && (c->v[i].ino != ino || c->v[i].dev != dev))
		i = (i + 1) & (c->cap - 1);
	return i;
}

/* Empty slot i, moving back the entries whose probe passed it (linear
 * probing's deletion without tombstones). */
static void del_at(struct cgsi_exe *c, size_t i)
{
	size_t mask = c->cap - 1, j = i;
	c->n.bytes -= strlen(c->v[i].path) + 1;
	free(c->v[i].path);
	c->v[i] = (struct exe_ent){ 0 };
	c->n.entries--;
	for (;;) {
		j = (j + 1) & mask;
		if (!c->v[j].ino)
			return;
		size_t h = home(c, c->v[j].dev, c->v[j].ino);
		/* j stays if its home is cyclically in (i, j] */
		bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
		if (stays)
			continue;
		c->v[i] = c->v[j];
		c->v[j] = (struct exe_ent){ 0 };
		i = j;
	}
}

/* Room for one more: the least recently used of the entries from the
 * new one's home on. */
static void evict(struct cgsi_exe *c, uint64_t dev, uint64_t ino)
{
	size_t i = home(c, dev, ino), best = c->cap;
	for (unsigned k = 0; k < EVICT_PROBE * 4 && (best == c->cap ||
						     k < EVICT_PROBE); k++) {
		if (c->v[i].ino &&
		    (best == c->cap || c->v[i].used_ms < c->v[best].used_ms))
			best = i;
		i = (i + 1) & (c->cap - 1);
	}
	if (best == c->cap) /* none near: any */
		for (i = 0; i < c->cap && best == c->cap; i++)
			if (c->v[i].ino)
				best = i;
	if (best < c->cap) {
		del_at(c, best);
		c->n.evicted++;
	}
}

/* Insert or refresh (lock held). */
static void put_locked(struct cgsi_exe *c, uint64_t dev, uint64_t ino,
		       const char *path, unsigned flags)
{
	size_t i = slot_of(c, dev, ino);
	struct exe_ent *e = &c->v[i];
	bool kern = flags & CGS_EXE_EXEC;
	bool unl = flags & CGS_EXE_DELETED;
	flags &= CGS_EXE_EXEC | CGS_EXE_TRUNCATED | CGS_EXE_FOREIGN;
	if (e->ino && (e->flags & CGS_EXE_EXEC) && !kern) {
		e->unlinked |= unl; /* /proc: no link left now */
		return;
	}
	if (e->ino && !strcmp(e->path, path) && e->flags == flags) {
		e->unlinked |= unl;
		return;
	}
	char *p = strdup(path);
	if (!p)
		return;
	if (!e->ino && c->n.entries >= c->max) {
		evict(c, dev, ino);
		e = &c->v[slot_of(c, dev, ino)];
	}
	if (e->ino) {
		c->n.bytes -= strlen(e->path) + 1;
		free(e->path);
	} else {
		c->n.entries++;
	}
	c->n.bytes += strlen(p) + 1;
	*e = (struct exe_ent){ .dev = dev, .ino = ino, .path = p,
			       .flags = flags, .unlinked = unl,
			       .used_ms = now_ms() };
}

void cgsi_exe_put(struct cgsi_exe *c, uint64_t dev, uint64_t ino,
		  const char *path, unsigned flags)
{
	if (!ino || !path || !path[0])
		return;
	pthread_mutex_lock(&c->lock);
	put_locked(c, dev, ino, path, flags);
	pthread_mutex_unlock(&c->lock);
}

static void on_kernel(void *ctx, uint64_t dev, uint64_t ino, unsigned kf,
		      const char *path)
{
	unsigned f = CGS_EXE_EXEC;
	if (kf & CGSK_EXE_F_TRUNC)
		f |= CGS_EXE_TRUNCATED;
	if (kf & CGSK_EXE_F_UNLINKED)
		f |= CGS_EXE_DELETED;
	if (kf & CGSK_EXE_F_FOREIGN)
		f |= CGS_EXE_FOREIGN;
	cgsi_exe_put(ctx, dev, ino, path, f);
}

/* Deleted or replaced, as of now (lock held): a stat of the path. */
static void check(struct exe_ent *e, uint64_t now)
{
	struct stat st;
	unsigned s = e->unlinked ? CGS_EXE_DELETED : 0;
	if (!(e->flags & (CGS_EXE_TRUNCATED | CGS_EXE_FOREIGN))) {
		if (stat(e->path, &st) == 0) {
			if ((uint64_t)st.st_ino != e->ino ||
			    (uint64_t)st.st_dev != e->dev)
				s = CGS_EXE_REPLACED;
		} else if (errno == ENOENT || errno == ENOTDIR) {
			s = CGS_EXE_DELETED;
		} else if (e->checked) {
			s = e->state; /* can't tell: as before */
		}
	}
	e->state = s;
	e->checked = true;
	e->checked_ms = now;
}

int cgsi_exe_get(struct cgsi_exe *c, uint64_t dev, uint64_t ino, char *buf,
		 size_t len, unsigned *flags)
{
	if (c->k)
		cgsi_ksrc_exe_drain(c->k, on_kernel, c);
	pthread_mutex_lock(&c->lock);
	size_t i = ino ? slot_of(c, dev, ino) : 0;
	struct exe_ent *e = ino && c->v[i].ino ? &c->v[i] : NULL;
	if (!e) {
		c->n.unknown++;
		pthread_mutex_unlock(&c->lock);
		return -ENOENT;
	}
	uint64_t now = now_ms();
	if (!e->checked || now - e->checked_ms >= c->recheck_ms)
		check(e, now);
	e->used_ms = now;
	unsigned f = e->flags | e->state;
	int n = snprintf(buf, len, "%s", e->path);
	c->n.known++;
	c->n.deleted += !!(f & CGS_EXE_DELETED);
	c->n.replaced += !!(f & CGS_EXE_REPLACED);
	c->n.exec += !!(f & CGS_EXE_EXEC);
	pthread_mutex_unlock(&c->lock);
	if (flags)
		*flags = f;
	return n;
}

/* The executables of the usual bin directories: short-lived processes of
 * system binaries are named even if no scan ever saw one running. */
static void scan_dirs(struct cgsi_exe *c)
{
	static const char *const dirs[] = { "/usr/local/sbin",
		"/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
		"/usr/libexec", "/usr/lib/systemd" };
	char p[PATH_MAX];
	for (size_t k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++) {
		DIR *d = opendir(dirs[k]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			struct stat st;
			snprintf(p, sizeof(p), "%s/%s", dirs[k], de->d_name);
			if (de->d_name[0] == '.' || stat(p, &st) < 0 ||
			    !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
				continue;
			/* /bin -> usr/bin: the first name found stays */
			pthread_mutex_lock(&c->lock);
			if (!c->v[slot_of(c, (uint64_t)st.st_dev,
					  (uint64_t)st.st_ino)].ino)
				put_locked(c, (uint64_t)st.st_dev,
					   (uint64_t)st.st_ino, p, 0);
			pthread_mutex_unlock(&c->lock);
		}
		if (d)
			closedir(d);
	}
}

/* One live process's executable: /proc/<pid>/exe (the kernel's path,
 * " (deleted)" cut: the state is kept apart), foreign when its mount
 * namespace is not ours. */
static bool scan_one(struct cgsi_exe *c, const char *pid)
{
	char lp[PATH_MAX], target[PATH_MAX], ns[64];
	struct stat st;
	snprintf(lp, sizeof(lp), "%s/%s/exe", c->proc, pid);
	ssize_t len = readlink(lp, target, sizeof(target) - 1);
	if (len <= 0 || stat(lp, &st) < 0) /* kernel threads: none */
		return false;
	target[len] = '\0';
	unsigned f = st.st_nlink ? 0 : CGS_EXE_DELETED;
	static const char del[] = " (deleted)";
	if (!st.st_nlink && (size_t)len > sizeof(del) - 1 &&
	    !strcmp(target + len - (sizeof(del) - 1), del))
		target[len - (sizeof(del) - 1)] = '\0';
	snprintf(lp, sizeof(lp), "%s/%s/ns/mnt", c->proc, pid);
	ssize_t nl = readlink(lp, ns, sizeof(ns) - 1);
	if (nl > 0 && c->own_mntns[0]) {
		ns[nl] = '\0';
		if (strcmp(ns, c->own_mntns))
			f |= CGS_EXE_FOREIGN;
	}
	cgsi_exe_put(c, (uint64_t)st.st_dev, (uint64_t)st.st_ino, target, f);
	return true;
}

size_t cgsi_exe_scan(struct cgsi_exe *c)
{
	if (c->k)
		cgsi_ksrc_exe_drain(c->k, on_kernel, c);
	if (!c->dirs_done) {
		scan_dirs(c);
		c->dirs_done = true;
	}
	DIR *d = opendir(c->proc);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
		    scan_one(c, de->d_name))
			n++;
	closedir(d);
	pthread_mutex_lock(&c->lock);
	c->n.scans++;
	pthread_mutex_unlock(&c->lock);
	return n;
}

void cgsi_exe_counts(struct cgsi_exe *c, struct cgs_exe_counts *out)
{
	if (c->k)
		cgsi_ksrc_exe_drain(c->k, on_kernel, c);
	pthread_mutex_lock(&c->lock);
	size_t sz = out->sz;
	*out = c->n;
	out->sz = sz;
	pthread_mutex_unlock(&c->lock);
	int64_t lost = c->k ? cgsi_ksrc_exe_lost(c->k) : -EOPNOTSUPP;
	out->lost = lost > 0 ? (uint64_t)lost : 0;
	out->exec_on = lost >= 0;
}
