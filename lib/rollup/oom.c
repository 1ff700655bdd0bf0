/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OOM kills per cgroup without the kernel source (CGS_OOM_CGROUP): from
 * the cgroup's own counter, the oom_kill line of cgroup2's
 * memory.events.local (not the hierarchical memory.events) or of v1's
 * memory.oom_control. Read when a cgroup is first seen (its baseline) and
 * at snapshot time for cgroups with a SIGKILL exit since their last read.
 * Shards share one baseline per cgroup incarnation (a rollup-wide table):
 * the kills the counter grew by go to the first node that reads them, so
 * merging the shards' nodes counts each once. A baseline goes when a node
 * of its incarnation is retired (the directory is gone).
 */
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "rollup/rollup_int.h"

#define OOM_BUCKETS 1024u
#define OOM_UNKNOWN UINT64_MAX

struct oom_ent {
	struct oom_ent *next;
	uint64_t ino, base, claimed;
	char path[];
};

struct cgsi_oomtab {
	pthread_mutex_t lock;
	const char *file; /* memory.events.local or memory.oom_control */
	struct oom_ent *b[OOM_BUCKETS];
};

static bool has_memory_controller(const struct cgsi_cg_mount *m)
{
	char p[PATH_MAX + 32], buf[4096];
	if (snprintf(p, sizeof(p), "%s/cgroup.controllers", m->mnt) >=
	    (int)sizeof(p))
		return false;
	if (cgsi_read_file(p, buf, sizeof(buf)) < 0)
		return false;
	char *save = NULL;
	for (char *t = strtok_r(buf, " \n", &save); t;
	     t = strtok_r(NULL, " \n", &save))
		if (!strcmp(t, "memory"))
			return true;
	return false;
}

static int parse_oom_kill(const char *p, uint64_t *out)
{
	char buf[1024];
	int len = cgsi_read_file(p, buf, sizeof(buf));
	if (len < 0)
		return len;
	for (char *l = buf; l; l = strchr(l, '\n')) {
		unsigned long long v;
		if (*l == '\n')
			l++;
		if (sscanf(l, "oom_kill %llu", &v) == 1) {
			*out = v;
			return 0;
		}
	}
	return -ENOENT;
}

static struct oom_ent *find(struct cgsi_oomtab *t, const char *path,
			    size_t len, uint64_t ino, bool create);

/* nftw has no context argument: the walk is serialised. */
static pthread_mutex_t walk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cgs_rollup *walk_r;

static int walk_one(const char *dir, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_D)
		return 0;
	struct cgs_rollup *r = walk_r;
	const struct cgsi_cg_mount *m = &r->mount;
	char path[PATH_MAX], p[PATH_MAX + 64];
	size_t ml = strlen(m->mnt);
	const char *rel = dir + (strncmp(dir, m->mnt, ml) ? 0 : ml);
	bool root = !strcmp(m->root, "/");
	int n = snprintf(path, sizeof(path), "%s%s", root ? "" : m->root, rel);
	if (n < 0 || n >= (int)sizeof(path))
		return 0;
	if (!n) /* the mount's own directory: the root cgroup */
		strcpy(path, "/"), n = 1;
	uint64_t v;
	bool ok = snprintf(p, sizeof(p), "%s/%s", dir, r->oom->file) <
			  (int)sizeof(p) && parse_oom_kill(p, &v) == 0;
	/* there now: unreadable, its baseline is taken at its first read
	 * (counted unreadable), never 0 (that would count kills before) */
	struct oom_ent *e = find(r->oom, path, (size_t)n,
				 (uint64_t)st->st_ino, true);
	if (e && ok)
		e->base = v;
	return 0;
}

int cgsi_oom_open(struct cgs_rollup *r)
{
	if (r->at.ksrc) {
		r->oom_source = CGS_OOM_KERNEL;
		return 0;
	}
	const char *file = NULL;
	if (r->mount.mounted && !strcmp(r->mount.hier, "memory"))
		file = "memory.oom_control";
	else if (r->mount.mounted && !strcmp(r->mount.hier, "v2") &&
		 has_memory_controller(&r->mount))
		file = "memory.events.local";
	if (!file) {
		r->oom_source = CGS_OOM_NONE;
		return 0;
	}
	cgsi_hash_seed_init(); /* keyed by path: cgsi_path_hash() is seeded */
	struct cgsi_oomtab *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	t->file = file;
	r->oom = t;
	r->oom_source = CGS_OOM_CGROUP;
	pthread_mutex_lock(&walk_lock);
	walk_r = r;
	nftw(r->mount.mnt, walk_one, 16, FTW_PHYS | FTW_MOUNT);
	walk_r = NULL;
	pthread_mutex_unlock(&walk_lock);
	return 0;
}

void cgsi_oom_close(struct cgs_rollup *r)
{
	struct cgsi_oomtab *t = r->oom;
	if (!t)
		return;
	for (unsigned i = 0; i < OOM_BUCKETS; i++)
		for (struct oom_ent *e = t->b[i], *nx; e; e = nx) {
			nx = e->next;
			free(e);
		}
	pthread_mutex_destroy(&t->lock);
	free(t);
	r->oom = NULL;
}

/* The counter now, or -errno (the cgroup is gone, or not a memory one). */
static int read_oom_kill(struct cgs_rollup *r, struct cgsi_rshard *s,
			 const struct cgsi_cgnode *n, uint64_t *out)
{
	char p[PATH_MAX + 96];
	if (cgsi_cg_dir(&r->mount, n->path, s->dir, sizeof(s->dir)) < 0 ||
	    snprintf(p, sizeof(p), "%s/%s", s->dir, r->oom->file) >=
		    (int)sizeof(p))
		return -ENAMETOOLONG;
	return parse_oom_kill(p, out);
}

/* An incarnation of path: the same inode, or either unknown. */
static struct oom_ent *find(struct cgsi_oomtab *t, const char *path,
			    size_t len, uint64_t ino, bool create)
{
	struct oom_ent **b = &t->b[cgsi_path_hash(path, len) % OOM_BUCKETS];
	for (struct oom_ent *e = *b; e; e = e->next)
		if ((e->ino == ino || !e->ino || !ino) &&
		    !strcmp(e->path, path))
			return e;
	if (!create)
		return NULL;
	struct oom_ent *e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	e->ino = ino;
	e->base = OOM_UNKNOWN;
	e->claimed = 0;
	memcpy(e->path, path, len);
	e->path[len] = '\0';
	e->next = *b;
	*b = e;
	return e;
}

void cgsi_oom_baseline(struct cgs_rollup *r, struct cgsi_rshard *s,
		       struct cgsi_cgnode *n)
{
	(void)s;
	if (!r->oom || n->unknown || n->path[0] != '/')
		return;
	pthread_mutex_lock(&r->oom->lock);
	struct oom_ent *e = find(r->oom, n->path, n->len, n->ino, false);
	if (!e && (e = find(r->oom, n->path, n->len, n->ino, true)))
		e->base = 0; /* not there when the rollup started */
	pthread_mutex_unlock(&r->oom->lock);
}

void cgsi_oom_update(struct cgs_rollup *r, struct cgsi_rshard *s,
		     struct cgsi_cgnode *n)
{
	if (!r->oom || n->unknown || !n->attributed || !n->sigs ||
	    *cgsi_x4_cum(n->x, CGSI_XW_SIG(SIGKILL)) <= n->oom_sigkills)
		return;
	n->oom_sigkills = *cgsi_x4_cum(n->x, CGSI_XW_SIG(SIGKILL));
	/* the counter at this path must be the node's incarnation's: once
	 * removed and created again, the new one's kills are its own node's */
	bool gone;
	uint64_t ino = cgsi_cg_ino(&r->mount, n->path, s->dir, sizeof(s->dir),
				   &gone);
	uint64_t v;
	if (!n->hashed || !ino || (n->ino && ino != n->ino) ||
	    read_oom_kill(r, s, n, &v) < 0) {
		s->st.oom_unreadable++;
		return;
	}
	pthread_mutex_lock(&r->oom->lock);
	struct oom_ent *e = find(r->oom, n->path, n->len, n->ino, true);
	if (e && e->base == OOM_UNKNOWN) {
		/* its baseline could not be read: from now on */
		e->base = v;
		s->st.oom_unreadable++;
	}
	if (e && v >= e->base && v - e->base > e->claimed) {
		n->cum.oom_kills += v - e->base - e->claimed;
		e->claimed = v - e->base;
	}
	pthread_mutex_unlock(&r->oom->lock);
}

void cgsi_oom_forget(struct cgs_rollup *r, const struct cgsi_cgnode *n)
{
	if (!r->oom || n->unknown || n->path[0] != '/')
		return;
	pthread_mutex_lock(&r->oom->lock);
	struct oom_ent **p = &r->oom->b[cgsi_path_hash(n->path, n->len) %
					 OOM_BUCKETS];
	while (*p) {
		struct oom_ent *e = *p;
		if (e->ino == n->ino && !strcmp(e->path, n->path)) {
			*p = e->next;
			free(e);
			break;
		}
		p = &e->next;
	}
	pthread_mutex_unlock(&r->oom->lock);
}

size_t cgsi_oom_entries(struct cgs_rollup *r)
{
	size_t n = 0;
	if (!r->oom)
		return 0;
	pthread_mutex_lock(&r->oom->lock);
	for (unsigned i = 0; i < OOM_BUCKETS; i++)
		for (struct oom_ent *e = r->oom->b[i]; e; e = e->next)
			n++;
	pthread_mutex_unlock(&r->oom->lock);
	return n;
}
