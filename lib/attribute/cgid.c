/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup2 id -> path map; see cgid.h. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribute/cgid.h"
#include "util/common.h"

static inline uint32_t id_hash(uint64_t id)
{
	return (uint32_t)((id * 0x9E3779B97F4A7C15ull) >> 32);
}

int cgsi_cgid_init(struct cgsi_cgid *m, const struct cgsi_cg_mount *mount)
{
	memset(m, 0, sizeof(*m));
	m->mount = mount;
	m->slot = calloc(1024, sizeof(*m->slot));
	if (!m->slot)
		return -ENOMEM;
	m->mask = 1023;
	return 0;
}

void cgsi_cgid_fini(struct cgsi_cgid *m)
{
	for (uint32_t i = 0; m->slot && i <= m->mask; i++)
		free(m->slot[i].path);
	free(m->slot);
	free(m->rq);
	memset(m, 0, sizeof(*m));
}

/* Tombstones are slots with id != 0 and path == NULL. */
static struct cgsi_cgid_ent *find(const struct cgsi_cgid *m, uint64_t id)
{
	for (uint32_t i = id_hash(id) & m->mask; m->slot[i].id;
	     i = (i + 1) & m->mask)
		if (m->slot[i].id == id && m->slot[i].path)
			return &m->slot[i];
	return NULL;
}

const char *cgsi_cgid_get(const struct cgsi_cgid *m, uint64_t id)
{
	const struct cgsi_cgid_ent *e = find(m, id);
	return e ? e->path : NULL;
}

static int grow(struct cgsi_cgid *m)
{
	uint32_t n = (m->mask + 1) * 2;
	if ((m->count + 1) * 4 < (m->mask + 1) * 3 / 2)
		n = m->mask + 1; /* mostly tombstones: rehash in place */
	struct cgsi_cgid_ent *s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i <= m->mask; i++) {
		struct cgsi_cgid_ent *e = &m->slot[i];
		if (!e->id || !e->path)
			continue;
		uint32_t k = id_hash(e->id) & (n - 1);
		while (s[k].id)
			k = (k + 1) & (n - 1);
		s[k] = *e;
	}
	free(m->slot);
	m->slot = s;
	m->mask = n - 1;
	m->tombs = 0;
	return 0;
}

int cgsi_cgid_set(struct cgsi_cgid *m, uint64_t id, const char *path)
{
	if (!id)
		return 0;
	struct cgsi_cgid_ent *e = find(m, id);
	if (e) {
		if (strcmp(e->path, path)) { /* renamed */
			char *p = strdup(path);
			if (!p)
				return -ENOMEM;
			free(e->path);
			e->path = p;
		}
		return 0;
	}
	if ((m->count + m->tombs + 1) * 4 > (m->mask + 1) * 3 && grow(m) < 0)
		return -ENOMEM;
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	uint32_t i = id_hash(id) & m->mask;
	while (m->slot[i].id && m->slot[i].path)
		i = (i + 1) & m->mask;
	if (m->slot[i].id)
		m->tombs--;
	m->slot[i].id = id;
	m->slot[i].path = p;
	m->slot[i].removed_ms = 0;
	m->count++;
	return 0;
}

static void purge(struct cgsi_cgid *m, uint64_t now_ms);

/* Queue a removal (false on ENOMEM: that entry then goes only with the
 * table). */
static bool rq_push(struct cgsi_cgid *m, uint64_t id, uint64_t ms)
{
	uint64_t held = m->rq_tail - m->rq_head;
	if (!m->rq || held == (uint64_t)m->rq_mask + 1) {
		uint32_t n = m->rq ? (m->rq_mask + 1) * 2 : 1024;
		struct cgsi_cgid_rm *q = malloc(n * sizeof(*q));
		if (!q)
			return false;
		for (uint64_t i = 0; i < held; i++)
			q[i] = m->rq[(m->rq_head + i) & m->rq_mask];
		free(m->rq);
		m->rq = q;
		m->rq_mask = n - 1;
		m->rq_head = 0;
		m->rq_tail = held;
	}
	m->rq[m->rq_tail++ & m->rq_mask] = (struct cgsi_cgid_rm){ id, ms };
	return true;
}

void cgsi_cgid_removed(struct cgsi_cgid *m, uint64_t id, uint64_t now_ms)
{
	struct cgsi_cgid_ent *e = find(m, id);
	m->rmdirs++;
	m->rm_unknown += !e;
	if (e && !e->removed_ms) {
		e->removed_ms = now_ms ? now_ms : 1;
		rq_push(m, id, e->removed_ms);
	}
	purge(m, now_ms);
}

int cgsi_cgid_is_removed(const struct cgsi_cgid *m, uint64_t id)
{
	const struct cgsi_cgid_ent *e = find(m, id);
	return e && e->removed_ms;
}

/* Drop removed entries from the oldest on: those removed more than
 * CGSI_CGID_KEEP_MS ago, and while more than CGSI_CGID_REMOVED_MAX are
 * held, those removed more than CGSI_CGID_KEEP_MIN_MS ago. */
static void purge(struct cgsi_cgid *m, uint64_t now_ms)
{
	while (m->rq_head < m->rq_tail) {
		const struct cgsi_cgid_rm *q = &m->rq[m->rq_head & m->rq_mask];
		uint64_t age = now_ms > q->ms ? now_ms - q->ms : 0;
		bool over = m->rq_tail - m->rq_head > CGSI_CGID_REMOVED_MAX;
		if (age <= CGSI_CGID_KEEP_MS &&
		    !(over && age > CGSI_CGID_KEEP_MIN_MS))
			break;
		struct cgsi_cgid_ent *e = find(m, q->id);
		if (e && e->removed_ms == q->ms) {
			m->purged_id[id_hash(q->id) % CGSI_CGID_PURGED_SLOTS] =
				q->id;
			free(e->path);
			e->path = NULL; /* tombstone: keeps probe chains */
			m->count--;
			m->tombs++;
			m->purged_early += age <= CGSI_CGID_KEEP_MS;
		}
		m->rq_head++;
	}
}

int cgsi_cgid_was_purged(const struct cgsi_cgid *m, uint64_t id)
{
	return id && m->purged_id[id_hash(id) % CGSI_CGID_PURGED_SLOTS] == id &&
	       !find(m, id);
}

/* Add directory `rel` (below the mount, "" at the top) with inode ino. */
static int walk_add(struct cgsi_cgid *m, uint64_t ino, const char *rel,
		    size_t len)
{
	/* the path as /proc/<pid>/cgroup shows it: mount root + rel */
	char full[PATH_MAX];
	const char *root = m->mount->root;
	bool slash = !strcmp(root, "/");
	int k = snprintf(full, sizeof(full), "%s%s", slash ? "" : root,
			 len ? rel : (slash ? "/" : ""));
	if (m->tick && ++m->tick_n % CGSI_CGID_TICK_DIRS == 0)
		m->tick(m->tick_ctx);
	return k > 0 && (size_t)k < sizeof(full) &&
	       cgsi_cgid_set(m, ino, full) == 0;
}

/* Depth-first walk of the subdirectories of dfd (`rel`, len bytes). A
 * cgroup directory's nlink is 2 + its subdirectories (kernfs): a leaf is
 * only stat'ed, without an open and a read of its ~30 files. */
static int walk_dir(struct cgsi_cgid *m, int dfd, char *rel, size_t len,
		    size_t cap, unsigned depth)
{
	int n = 0;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return n;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))))
			continue;
		size_t nl = strlen(de->d_name);
		struct stat st;
		if (len + 1 + nl + 1 > cap ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* removed meanwhile */
		rel[len] = '/';
		memcpy(rel + len + 1, de->d_name, nl + 1);
		n += walk_add(m, (uint64_t)st.st_ino, rel, len + 1 + nl);
		int c = -1;
		if (st.st_nlink != 2 && depth < 64)
			c = openat(dirfd(d), de->d_name, O_RDONLY |
				   O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (c >= 0)
			n += walk_dir(m, c, rel, len + 1 + nl, cap, depth + 1);
		rel[len] = '\0';
	}
	closedir(d);
	return n;
}

int cgsi_cgid_walk(struct cgsi_cgid *m, uint64_t now_ms, int force)
{
	if (!force && m->last_walk_ms && now_ms < m->next_walk_ms)
		return 0;
	m->last_walk_ms = now_ms;
	m->walks++;
	purge(m, now_ms);
	int fd = open(m->mount->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char rel[PATH_MAX];
	rel[0] = '\0';
	struct stat st;
	int n = 0;
	if (fstat(fd, &st) == 0)
		n += walk_add(m, (uint64_t)st.st_ino, rel, 0);
	n += walk_dir(m, fd, rel, 0, sizeof(rel), 0);
	uint64_t end = cgsi_now_mono_ms();
	m->walk_ms_last = end > now_ms ? end - now_ms : 0;
	m->next_walk_ms = end + CGS_MAX((uint64_t)CGSI_CGID_WALK_MS,
					CGSI_CGID_WALK_COST * m->walk_ms_last);
	return n;
}

void cgsi_cgid_each_live(const struct cgsi_cgid *m,
			 void (*fn)(void *ctx, int type, uint64_t id,
				    const char *path),
			 void *ctx, int type)
{
	for (uint32_t i = 0; m->slot && i <= m->mask; i++) {
		const struct cgsi_cgid_ent *e = &m->slot[i];
		if (e->id && e->path && !e->removed_ms)
			fn(ctx, type, e->id, e->path);
	}
}
