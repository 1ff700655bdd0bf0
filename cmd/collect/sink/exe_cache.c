/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* (dev, inode) -> executable path from /proc/<pid>/exe (exe_cache.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exe_cache.h"

struct exe_ent {
	uint64_t dev, ino; /* ino 0: free */
	char *path;
	bool seen_running; /* from /proc: checked for deletion by scans */
};

struct exe_cache {
	pthread_rwlock_t lock;
	char *proc;
	size_t max, cap; /* cap: a power of 2, >= 2 * max */
	struct exe_ent *v;
	struct exe_counts n; /* known, unknown: atomics */
	bool dirs_done;      /* the bin directories were read */
};

struct exe_cache *exe_cache_new(const char *proc_root, size_t max)
{
	struct exe_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max = max ? max : 4096;
	c->cap = 16;
	while (c->cap < 2 * c->max)
		c->cap *= 2;
	c->v = calloc(c->cap, sizeof(*c->v));
	c->proc = strdup(proc_root ? proc_root : "/proc");
	if (!c->v || !c->proc || pthread_rwlock_init(&c->lock, NULL)) {
		free(c->v);
		free(c->proc);
		free(c);
		return NULL;
	}
	c->n.bytes = sizeof(*c) + c->cap * sizeof(*c->v);
	return c;
}

void exe_cache_free(struct exe_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		free(c->v[i].path);
	free(c->v);
	free(c->proc);
	pthread_rwlock_destroy(&c->lock);
	free(c);
}

static size_t slot_of(const struct exe_cache *c, uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino * 0x9e3779b97f4a7c15ull) ^ (dev * 0xc2b2ae3d27d4eb4full);
	size_t i = (size_t)(h >> 17) & (c->cap - 1);
	while (c->v[i].ino && (c->v[i].ino != ino || c->v[i].dev != dev))
		i = (i + 1) & (c->cap - 1);
	return i;
}

/* Insert or refresh (write lock held). */
static void put(struct exe_cache *c, uint64_t dev, uint64_t ino,
		const char *path, bool running)
{
	struct exe_ent *e = &c->v[slot_of(c, dev, ino)];
	if (e->ino && running)
		e->seen_running = true;
	if (e->ino && !strcmp(e->path, path))
		return;
	if (!e->ino && c->n.entries >= c->max) {
		c->n.full++;
		return;
	}
	char *p = strdup(path);
	if (!p)
		return;
	if (e->ino) {
		c->n.bytes -= strlen(e->path) + 1;
		free(e->path);
	} else {
		c->n.entries++;
	}
	c->n.bytes += strlen(p) + 1;
	*e = (struct exe_ent){ dev, ino, p, running };
}

/* The executables of the usual bin directories: short-lived processes of
 * system binaries are named even if no scan ever saw one running. */
static void scan_dirs(struct exe_cache *c)
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
			pthread_rwlock_wrlock(&c->lock);
			struct exe_ent *e = &c->v[slot_of(c, (uint64_t)st.st_dev,
							  (uint64_t)st.st_ino)];
			if (!e->ino)
				put(c, (uint64_t)st.st_dev,
				    (uint64_t)st.st_ino, p, false);
			pthread_rwlock_unlock(&c->lock);
		}
		if (d)
			closedir(d);
	}
}

/* Entries learned from running processes whose path no longer names
 * their inode (deleted, or replaced in place by an upgrade): marked so,
 * as the kernel's own " (deleted)". */
static void mark_gone(struct exe_cache *c)
{
	for (size_t i = 0; i < c->cap; i++) {
		struct exe_ent *e = &c->v[i];
		struct stat st;
		if (!e->ino || !e->seen_running || strstr(e->path, " (deleted)"))
			continue;
		if (stat(e->path, &st) == 0 && (uint64_t)st.st_ino == e->ino &&
		    (uint64_t)st.st_dev == e->dev)
			continue;
		size_t n = strlen(e->path);
		char *p = malloc(n + sizeof(" (deleted)"));
		if (!p)
			continue;
		memcpy(p, e->path, n);
		memcpy(p + n, " (deleted)", sizeof(" (deleted)"));
		pthread_rwlock_wrlock(&c->lock);
		free(e->path);
		e->path = p;
		c->n.bytes += sizeof(" (deleted)") - 1;
		pthread_rwlock_unlock(&c->lock);
	}
}

size_t exe_cache_scan(struct exe_cache *c)
{
	if (!c->dirs_done) {
		scan_dirs(c);
		c->dirs_done = true;
	}
	mark_gone(c);
	DIR *d = opendir(c->proc);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	char lp[PATH_MAX], target[PATH_MAX];
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(lp, sizeof(lp), "%s/%s/exe", c->proc, de->d_name);
		struct stat st;
		ssize_t len = readlink(lp, target, sizeof(target) - 1);
		if (len <= 0 || stat(lp, &st) < 0) /* kernel threads: none */
			continue;
		target[len] = '\0';
		n++;
		pthread_rwlock_wrlock(&c->lock);
		put(c, (uint64_t)st.st_dev, (uint64_t)st.st_ino, target, true);
		pthread_rwlock_unlock(&c->lock);
	}
	closedir(d);
	return n;
}

bool exe_cache_get(struct exe_cache *c, uint64_t dev, uint64_t ino,
		   char *out, size_t n)
{
	bool ok = false;
	if (ino) {
		pthread_rwlock_rdlock(&c->lock);
		const struct exe_ent *e = &c->v[slot_of(c, dev, ino)];
		if (e->ino) {
			snprintf(out, n, "%s", e->path);
			ok = true;
		}
		pthread_rwlock_unlock(&c->lock);
	}
	__atomic_add_fetch(ok ? &c->n.known : &c->n.unknown, 1,
			   __ATOMIC_RELAXED);
	return ok;
}

void exe_cache_counts(struct exe_cache *c, struct exe_counts *out)
{
	pthread_rwlock_rdlock(&c->lock);
	*out = c->n;
	pthread_rwlock_unlock(&c->lock);
	out->known = __atomic_load_n(&c->n.known, __ATOMIC_RELAXED);
	out->unknown = __atomic_load_n(&c->n.unknown, __ATOMIC_RELAXED);
}
