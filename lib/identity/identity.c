// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Workload identity: which file names a cgroup's container or pod, asked
 * in order (containerd's CRI, CRI-O, Docker, the kubelet's log folders),
 * and what each look-up found. The parsers are in id_parse.c, the bounded
 * read in id_read.c.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "identity/id_cache.h"
#include "identity/identity.h"
#include "util/common.h"

enum id_source { SRC_CONTAINERD, SRC_CRIO, SRC_DOCKER, SRC_KUBELET, SRC_POD };

struct cgs_identity_src {
	char *containerd, *crio, *docker, *logs;
	size_t max_file, max_dir;
	struct cgs_identity_counts c;
	pthread_mutex_t lock; /* look-ups, counts, the cache's own table */
	struct cgsi_idcache *cache;
};

static const char *const source_name[] = {
	"containerd", "cri-o", "docker", "kubelet", "kubelet",
};

static char *dup_or(const char *s, const char *def)
{
	return strdup(s && *s ? s : def);
}

int cgs_identity_src_new(struct cgs_identity_src **out,
			 const struct cgs_identity_opts *opts)
{
	struct cgs_identity_opts o = { .sz = sizeof(o) };
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (opts) {
		int e = cgsi_opts_copy(&o, sizeof(o), opts, opts->sz);
		if (e < 0)
			return e;
	}
	struct cgs_identity_src *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->containerd = dup_or(o.containerd_state, "/run/containerd");
	s->crio = dup_or(o.crio_storage, "/run/containers/storage");
	s->docker = dup_or(o.docker_root, "/var/lib/docker");
	s->logs = dup_or(o.kubelet_logs, "/var/log");
	s->max_file = o.max_file_bytes ? o.max_file_bytes : 1u << 20;
	s->max_dir = o.max_dir_entries ? o.max_dir_entries : 65536;
	s->c.sz = sizeof(s->c);
	pthread_mutex_init(&s->lock, NULL);
	if (!s->containerd || !s->crio || !s->docker || !s->logs ||
	    cgsi_idcache_new(&s->cache, o.readers, o.max_cached, o.queue_len,
			     o.keep_ms) < 0) {
		cgs_identity_src_free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

/* 1.2's name and argument order (CGSTATS_1.2): <cgstats/deprecated.h> */
int cgs_identity_new(const struct cgs_identity_opts *opts,
		     struct cgs_identity_src **out)
{
	return cgs_identity_src_new(out, opts);
}

void cgs_identity_src_free(struct cgs_identity_src *s)
{
	if (!s)
		return;
	cgsi_idcache_free(s->cache); /* stops the resolver thread */
	pthread_mutex_destroy(&s->lock);
	free(s->containerd);
	free(s->crio);
	free(s->docker);
	free(s->logs);
	free(s);
}

static void count(struct cgs_identity_src *s, enum cgsi_id_reason r)
{
	uint64_t *by[CGSI_ID__REASONS] = {
		[CGSI_ID_TOO_BIG] = &s->c.too_big,
		[CGSI_ID_NOT_REGULAR] = &s->c.not_regular,
		[CGSI_ID_LOOP] = &s->c.loop,
		[CGSI_ID_IO] = &s->c.io_error,
		[CGSI_ID_BAD_JSON] = &s->c.bad_json,
		[CGSI_ID_BAD_VALUE] = &s->c.bad_value,
	};
	if ((unsigned)r < CGSI_ID__REASONS && by[r])
		(*by[r])++;
}

typedef enum cgsi_id_reason (*parse_fn)(const char *, size_t,
					struct cgs_identity *);

/* One state file: read, parse into a scratch copy, keep it if it named. */
static bool try_file(struct cgs_identity_src *s, const char *path,
		     parse_fn parse, struct cgs_identity *id)
{
	char *buf;
	size_t len;
	enum cgsi_id_reason r = cgsi_id_read(path, s->max_file, &buf, &len);
	if (r == CGSI_ID_OK) {
		struct cgs_identity t = *id;
		r = parse(buf, len, &t);
		free(buf);
		if (r == CGSI_ID_OK)
			*id = t;
	}
	count(s, r);
	return r == CGSI_ID_OK;
}

typedef enum cgsi_id_reason (*name_fn)(const char *name, const char *key,
				       struct cgs_identity *id);

/* A kubelet log folder: the entry whose name ends in @key, if any. */
static bool try_dir(struct cgs_identity_src *s, const char *dir,
		    const char *key, name_fn parse, struct cgs_identity *id)
{
	DIR *d = opendir(dir);
	if (!d) {
		if (errno != ENOENT && errno != ENOTDIR)
			count(s, errno == ELOOP ? CGSI_ID_LOOP : CGSI_ID_IO);
		return false;
	}
	bool found = false;
	size_t seen = 0;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		if (++seen > s->max_dir) {
			s->c.dir_truncated++;
			break;
		}
		struct cgs_identity t = *id;
		enum cgsi_id_reason r = parse(e->d_name, key, &t);
		if (r == CGSI_ID_ABSENT)
			continue;
		count(s, r);
		if (r == CGSI_ID_OK) {
			*id = t;
			found = true;
		}
	}
	closedir(d);
	return found;
}

static bool container_from_files(struct cgs_identity_src *s,
				 const struct cgs_workload *w,
				 struct cgs_identity *id, enum id_source *by)
{
	const char *rt = w->runtime, *cid = w->container;
	char p[PATH_MAX];
	bool any = !rt[0];
	if (any || !strcmp(rt, "containerd")) {
		snprintf(p, sizeof(p),
			 "%s/io.containerd.runtime.v2.task/k8s.io/%s/config.json",
			 s->containerd, cid);
		if (try_file(s, p, cgsi_id_parse_oci, id))
			return *by = SRC_CONTAINERD, true;
	}
	if (any || !strcmp(rt, "cri-o")) {
		snprintf(p, sizeof(p),
			 "%s/overlay-containers/%s/userdata/config.json",
			 s->crio, cid);
		if (try_file(s, p, cgsi_id_parse_oci, id))
			return *by = SRC_CRIO, true;
	}
	if (any || !strcmp(rt, "docker")) {
		snprintf(p, sizeof(p), "%s/containers/%s/config.v2.json",
			 s->docker, cid);
		if (try_file(s, p, cgsi_id_parse_docker, id))
			return *by = SRC_DOCKER, true;
	}
	snprintf(p, sizeof(p), "%s/containers", s->logs);
	if (try_dir(s, p, cid, cgsi_id_parse_log_link, id))
		return *by = SRC_KUBELET, true;
	return false;
}

static int nonempty(const struct cgs_identity *id)
{
	const char *m[] = { id->k8s_namespace, id->pod, id->container,
			    id->image, id->pod_uid, id->container_id,
			    id->project, id->service };
	int n = 0;
	for (size_t i = 0; i < sizeof(m) / sizeof(*m); i++)
		n += m[i][0] != '\0';
	return n;
}

/* The look-up itself, from the files (s->lock held). */
static int resolve_files(void *ctx, const char *path, struct cgs_identity *out)
{
	struct cgs_identity_src *s = ctx;
	struct cgs_identity id = { .sz = sizeof(id) };
	struct cgs_workload w = { .sz = sizeof(w) };
	s->c.lookups++;
	cgs_workload_from_path(path, &w);
	enum id_source by = SRC_POD;
	bool named = false;
	if (w.container[0]) {
		snprintf(id.container_id, sizeof(id.container_id), "%s",
			 w.container);
		named = container_from_files(s, &w, &id, &by);
	}
	if (!id.pod_uid[0] && w.pod_uid[0])
		snprintf(id.pod_uid, sizeof(id.pod_uid), "%s", w.pod_uid);
	if (id.pod_uid[0] && !id.pod[0]) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/pods", s->logs);
		bool pod = try_dir(s, p, id.pod_uid, cgsi_id_parse_pod_dir,
				   &id);
		if (pod && !named)
			by = SRC_POD;
		named |= pod;
	}
	if (named) {
		snprintf(id.source, sizeof(id.source), "%s", source_name[by]);
		s->c.named++;
		s->c.by_source[by]++;
	} else if (w.container[0] || w.pod_uid[0]) {
		s->c.unnamed++;
	}
	int e = cgsi_out_copy(out, &id, sizeof(id));
	return e < 0 ? e : nonempty(&id);
}

int cgs_identity_src_resolve(struct cgs_identity_src *s,
			     const char *path,
			     struct cgs_identity *out)
{
	if (!s || !path || !out || out->sz < sizeof(out->sz))
		return -EINVAL;
	struct cgs_identity id = { .sz = sizeof(id) };
	pthread_mutex_lock(&s->lock);
	int n;
	if (cgsi_idcache_find(s->cache, path, &id)) {
		s->c.cache_hits++;
		n = nonempty(&id);
	} else {
		n = resolve_files(s, path, &id);
		if (n > 0 && (id.source[0] || id.k8s_namespace[0]))
			cgsi_idcache_put(s->cache, path, &id);
	}
	pthread_mutex_unlock(&s->lock);
	int e = cgsi_out_copy(out, &id, sizeof(id));
	return e < 0 ? e : n;
}

int cgs_identity_src_peek(struct cgs_identity_src *s,
			  unsigned reader, const char *path,
			  struct cgs_identity *out)
{
	if (!s || !path || !out || out->sz < sizeof(out->sz))
		return -EINVAL;
	return cgsi_idcache_read(s->cache, reader, path, out);
}

void cgsi_identity_forget(struct cgs_identity_src *s, const char *path)
{
	if (!s || !path)
		return;
	pthread_mutex_lock(&s->lock);
	cgsi_idcache_gone(s->cache, path);
	pthread_mutex_unlock(&s->lock);
}

/* cgs_rollup_set_identity()'s half on this side: the thread and the hook. */
int cgsi_identity_watch(struct cgs_identity_src *s, void **hook_ctx)
{
	*hook_ctx = s->cache;
	return cgsi_idcache_start(s->cache, &s->lock, resolve_files, s);
}

int cgs_identity_src_get_counts(const struct cgs_identity_src *cs,
				struct cgs_identity_counts *out)
{
	struct cgs_identity_src *s = (struct cgs_identity_src *)cs;
	if (!s || !out)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	struct cgs_identity_counts c = s->c;
	cgsi_idcache_counts(s->cache, &c);
	pthread_mutex_unlock(&s->lock);
	return cgsi_out_copy(out, &c, sizeof(c));
}

/* 1.2's names (CGSTATS_1.2), the same functions: <cgstats/deprecated.h> */
CGSI_ALIAS(cgs_identity_free, cgs_identity_src_free);
CGSI_ALIAS(cgs_identity_resolve, cgs_identity_src_resolve);
CGSI_ALIAS(cgs_identity_get_counts, cgs_identity_src_get_counts);
