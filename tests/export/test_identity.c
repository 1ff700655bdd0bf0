/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of workload identity (cgs_identity_src_resolve()): each runtime's
 * state laid out in a temp dir as the runtime writes it (containerd's CRI
 * task bundle, CRI-O's userdata, Docker's config.v2.json, the kubelet's log
 * folders alone), the pause container marked as the sandbox, and hostile
 * state files (too big, FIFO, symlink, loop, bad JSON, bad UTF-8, control
 * bytes, deep nesting, a value too long), each naming nothing and counted
 * under its reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgstats.h"
#include "attribute/ksrc.h"
#include "identity/id_cache.h"
#include "identity/identity.h"
#include "support/files.h"
#include "support/skip.h"

#define CID "4f3a1e0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"
#define SID "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define UID "0b5c1d6e-7f80-4a91-b2c3-d4e5f6a7b8c9"
#define UID_ "0b5c1d6e_7f80_4a91_b2c3_d4e5f6a7b8c9"
#define POD "/kubepods.slice/kubepods-burstable.slice/" \
	"kubepods-burstable-pod" UID_ ".slice"
#define CG_CTRD POD "/cri-containerd-" CID ".scope"
#define CG_SAND POD "/cri-containerd-" SID ".scope"
#define CG_CRIO POD "/crio-" CID ".scope"
#define CG_DOCK "/system.slice/docker-" CID ".scope"

struct fx {
	char root[64];
	struct cgs_identity_src *src;
};

/* root/rel with the file's bytes (its folders made). */
static void put_file(struct fx *f, const char *rel, const char *txt,
		     size_t n)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", f->root, rel);
	cgt_write_file(p, txt, n);
}

static void put_text(struct fx *f, const char *rel, const char *txt)
{
	put_file(f, rel, txt, strlen(txt));
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "/tmp/cgs-id-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	char c[PATH_MAX], o[PATH_MAX], d[PATH_MAX], l[PATH_MAX];
	snprintf(c, sizeof(c), "%s/containerd", f->root);
	snprintf(o, sizeof(o), "%s/crio", f->root);
	snprintf(d, sizeof(d), "%s/docker", f->root);
	snprintf(l, sizeof(l), "%s/log", f->root);
	struct cgs_identity_opts opts = {
		.sz = sizeof(opts), .containerd_state = c, .crio_storage = o,
		.docker_root = d, .kubelet_logs = l, .max_file_bytes = 4096,
	};
	assert_int_equal(cgs_identity_src_new(&f->src, &opts), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[PATH_MAX + 16];
	cgs_identity_src_free(f->src);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static const char ctrd_spec[] =
	"{\"ociVersion\":\"1.1.0\",\"process\":{\"args\":[\"/app\"]},"
	"\"annotations\":{"
	"\"io.kubernetes.cri.container-type\":\"container\","
	"\"io.kubernetes.cri.container-name\":\"web\","
	"\"io.kubernetes.cri.sandbox-id\":\"" SID "\","
	"\"io.kubernetes.cri.sandbox-name\":\"shop-7d9f\","
	"\"io.kubernetes.cri.sandbox-namespace\":\"prod\","
	"\"io.kubernetes.cri.sandbox-uid\":\"" UID "\","
	"\"io.kubernetes.cri.image-name\":\"registry.example/shop:1.4\"}}";

static struct cgs_identity resolve(struct fx *f, const char *cg, int want)
{
	struct cgs_identity id = { .sz = sizeof(id) };
	int n = cgs_identity_src_resolve(f->src, cg, &id);
	if (want >= 0)
		assert_int_equal(n, want);
	return id;
}

static struct cgs_identity_counts counts(struct fx *f)
{
	struct cgs_identity_counts c = { .sz = sizeof(c) };
	assert_int_equal(cgs_identity_src_get_counts(f->src, &c), 0);
	return c;
}

static void containerd_cri(void **state)
{
	struct fx *f = *state;
	put_text(f, "containerd/io.containerd.runtime.v2.task/k8s.io/" CID
		    "/config.json", ctrd_spec);
	struct cgs_identity id = resolve(f, CG_CTRD, 6);
	assert_string_equal(id.k8s_namespace, "prod");
	assert_string_equal(id.pod, "shop-7d9f");
	assert_string_equal(id.container, "web");
	assert_string_equal(id.image, "registry.example/shop:1.4");
	assert_string_equal(id.pod_uid, UID);
	assert_string_equal(id.container_id, CID);
	assert_string_equal(id.source, "containerd");
	assert_int_equal(id.sandbox, 0);
	struct cgs_identity_counts c = counts(f);
	assert_int_equal(c.lookups, 1);
	assert_int_equal(c.named, 1);
	assert_int_equal(c.by_source[0], 1);
}

static void containerd_sandbox(void **state)
{
	struct fx *f = *state;
	put_text(f, "containerd/io.containerd.runtime.v2.task/k8s.io/" SID
		    "/config.json",
		 "{\"annotations\":{"
		 "\"io.kubernetes.cri.container-type\":\"sandbox\","
		 "\"io.kubernetes.cri.sandbox-name\":\"shop-7d9f\","
		 "\"io.kubernetes.cri.sandbox-namespace\":\"prod\","
		 "\"io.kubernetes.cri.sandbox-uid\":\"" UID "\"}}");
	struct cgs_identity id = resolve(f, CG_SAND, -1);
	assert_int_equal(id.sandbox, 1);
	assert_string_equal(id.container, "");
	assert_string_equal(id.pod, "shop-7d9f");
}

/* CRI-O: its userdata/config.json, keys from CRI-O's pkg/annotations;
 * the container's own name only in the Labels string. */
static void crio(void **state)
{
	struct fx *f = *state;
	put_text(f, "crio/overlay-containers/" CID "/userdata/config.json",
		 "{\"annotations\":{"
		 "\"io.kubernetes.cri-o.ContainerType\":\"container\","
		 "\"io.kubernetes.cri-o.ContainerName\":"
		 "\"k8s_web_shop-7d9f_prod_" UID "_0\","
		 "\"io.kubernetes.cri-o.SandboxID\":\"" SID "\","
		 "\"io.kubernetes.cri-o.ImageName\":\"quay.io/shop:1.4\","
		 "\"io.kubernetes.cri-o.Labels\":\"{\\\"io.kubernetes.pod."
		 "name\\\":\\\"shop-7d9f\\\",\\\"io.kubernetes.pod.namespace"
		 "\\\":\\\"prod\\\",\\\"io.kubernetes.pod.uid\\\":\\\"" UID
		 "\\\",\\\"io.kubernetes.container.name\\\":\\\"web\\\"}\"}}");
	struct cgs_identity id = resolve(f, CG_CRIO, 6);
	assert_string_equal(id.source, "cri-o");
	assert_string_equal(id.container, "web");
	assert_string_equal(id.pod, "shop-7d9f");
	assert_string_equal(id.k8s_namespace, "prod");
	assert_string_equal(id.image, "quay.io/shop:1.4");
}

static void docker_compose(void **state)
{
	struct fx *f = *state;
	put_text(f, "docker/containers/" CID "/config.v2.json",
		 "{\"ID\":\"" CID "\",\"Name\":\"/shop-web-1\","
		 "\"Config\":{\"Image\":\"shop:1.4\",\"Labels\":{"
		 "\"com.docker.compose.project\":\"shop\","
		 "\"com.docker.compose.service\":\"web\"}}}");
	struct cgs_identity id = resolve(f, CG_DOCK, 5);
	assert_string_equal(id.source, "docker");
	assert_string_equal(id.container, "shop-web-1");
	assert_string_equal(id.image, "shop:1.4");
	assert_string_equal(id.project, "shop");
	assert_string_equal(id.service, "web");
}

/* Any runtime: the kubelet's log links and pod folders alone. */
static void kubelet_logs(void **state)
{
	struct fx *f = *state;
	put_text(f, "log/containers/other_prod_web-" SID ".log", "");
	put_text(f, "log/containers/shop-7d9f_prod_web-" CID ".log", "");
	put_text(f, "log/pods/prod_shop-7d9f_" UID "/web/0.log", "");
	/* the pod's own cgroup: names from its folder (first: once a
	 * container of it is named, its names name the pod from the cache) */
	struct cgs_identity id = resolve(f, POD, 3);
	assert_string_equal(id.pod, "shop-7d9f");
	assert_string_equal(id.pod_uid, UID);
	assert_int_equal(counts(f).by_source[4], 1);
	id = resolve(f, CG_CTRD, 5);
	assert_string_equal(id.source, "kubelet");
	assert_string_equal(id.container, "web");
	assert_string_equal(id.pod, "shop-7d9f");
	assert_string_equal(id.k8s_namespace, "prod");
	assert_int_equal(counts(f).pods_named, 0); /* it had its name */
}

/* Not a container: nothing looked for, nothing counted as unnamed. */
static void not_a_container(void **state)
{
	struct fx *f = *state;
	resolve(f, "/system.slice/cron.service", 0);
	resolve(f, "/", 0);
	struct cgs_identity_counts c = counts(f);
	assert_int_equal(c.lookups, 2);
	assert_int_equal(c.unnamed, 0);
	/* a container whose state is gone (came and went): unnamed */
	struct cgs_identity id = resolve(f, CG_CTRD, 2);
	assert_string_equal(id.container_id, CID);
	assert_string_equal(id.source, "");
	assert_int_equal(counts(f).unnamed, 1);
}

static const char *spec_path =
	"containerd/io.containerd.runtime.v2.task/k8s.io/" CID "/config.json";

/* One hostile config.json: no name, and one count under its reason. */
static void hostile(struct fx *f, size_t off)
{
	struct cgs_identity_counts before = counts(f);
	struct cgs_identity id = resolve(f, CG_CTRD, -1);
	assert_string_equal(id.container, "");
	assert_string_equal(id.pod, "");
	struct cgs_identity_counts after = counts(f);
	uint64_t b, a;
	memcpy(&b, (char *)&before + off, sizeof(b));
	memcpy(&a, (char *)&after + off, sizeof(a));
	assert_int_equal(a, b + 1);
}

#define C(m) offsetof(struct cgs_identity_counts, m)

static void hostile_files(void **state)
{
	struct fx *f = *state;
	char big[5000];
	memset(big, ' ', sizeof(big));
	put_file(f, spec_path, big, sizeof(big)); /* > max_file_bytes */
	hostile(f, C(too_big));
	put_text(f, spec_path, "{\"annotations\":{\"io.kubernetes.cri."
			       "container-name\":\"we");
	hostile(f, C(bad_json));
	put_text(f, spec_path, "{\"annotations\":{\"io.kubernetes.cri."
			       "container-name\":\"w\xff\xfe\"}}");
	hostile(f, C(bad_json)); /* not UTF-8 */
	put_text(f, spec_path, "{\"annotations\":{\"io.kubernetes.cri."
			       "container-name\":\"w\\u0007b\"}}");
	hostile(f, C(bad_value)); /* a control byte */
	put_text(f, spec_path, "{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}");
	hostile(f, C(bad_json)); /* nested too deep */
	put_text(f, spec_path, "{\"annotations\":{}} trailing");
	hostile(f, C(bad_json));
	char longv[600 + 80];
	memset(longv, 0, sizeof(longv));
	strcpy(longv, "{\"annotations\":{\"io.kubernetes.cri.container-name"
		      "\":\"");
	memset(longv + strlen(longv), 'x', 300);
	strcat(longv, "\"}}");
	put_text(f, spec_path, longv);
	hostile(f, C(bad_value)); /* longer than a name can be */
}

static void hostile_kinds(void **state)
{
	struct fx *f = *state;
	char p[PATH_MAX], t[PATH_MAX];
	put_text(f, spec_path, ctrd_spec);
	snprintf(p, sizeof(p), "%s/%s", f->root, spec_path);
	snprintf(t, sizeof(t), "%s/real.json", f->root);
	assert_int_equal(rename(p, t), 0);
	assert_int_equal(symlink(t, p), 0); /* a symlinked file */
	hostile(f, C(not_regular));
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkfifo(p, 0644), 0); /* would block a plain open */
	hostile(f, C(not_regular));
	assert_int_equal(unlink(p), 0);
	assert_int_equal(symlink("/dev/zero", p), 0); /* never ends */
	hostile(f, C(not_regular));
	assert_int_equal(unlink(p), 0);
	/* a loop of directory symlinks on the way */
	snprintf(p, sizeof(p), "%s/containerd/io.containerd.runtime.v2.task/"
		 "k8s.io/" CID, f->root);
	char cmd[5 * PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && ln -s '%s.b' '%s' && "
		 "ln -s '%s' '%s.b'", p, p, p, p, p);
	assert_int_equal(system(cmd), 0);
	hostile(f, C(not_regular)); /* ELOOP: counted with symlinked files */
}

static void sizes(void **state)
{
	struct fx *f = *state;
	struct cgs_identity id = { .sz = 1 };
	assert_int_equal(cgs_identity_src_resolve(f->src, "/", &id), -EINVAL);
	assert_int_equal(cgs_identity_src_resolve(NULL, "/", &id), -EINVAL);
	struct cgs_identity_src *s;
	struct cgs_identity_opts o = { .sz = 1 };
	assert_int_equal(cgs_identity_src_new(&s, &o), -EINVAL);
	assert_int_equal(cgs_identity_src_new(NULL, NULL), -EINVAL);
	assert_int_equal(cgs_identity_src_new(&s, NULL), 0);
	cgs_identity_src_free(s);
	cgs_identity_src_free(NULL);
	/* an old caller's shorter struct gets its prefix */
	put_text(f, spec_path, ctrd_spec);
	char old[offsetof(struct cgs_identity, pod)];
	size_t osz = sizeof(old);
	memcpy(old, &osz, sizeof(osz));
	assert_int_equal(cgs_identity_src_resolve(f->src, CG_CTRD,
					      (struct cgs_identity *)old), 6);
	assert_string_equal(old + offsetof(struct cgs_identity,
					   k8s_namespace), "prod");
}

/* A name found once is answered from the cache after the runtime deleted
 * its state, by resolve and by every reader slot; non-containers never. */
static void cached_after_gone(void **state)
{
	struct fx *f = *state;
	char p[PATH_MAX];
	put_text(f, "containerd/io.containerd.runtime.v2.task/k8s.io/" CID
		    "/config.json", ctrd_spec);
	resolve(f, CG_CTRD, 6);
	snprintf(p, sizeof(p), "%s/containerd", f->root);
	cgt_rm_rf(p);
	struct cgs_identity id = resolve(f, CG_CTRD, 6);
	assert_string_equal(id.container, "web");
	assert_int_equal(counts(f).cache_hits, 1);
	/* the container and its pod's own cgroup, named by it (issue 38.3:
	 * no kubelet log folders here) */
	assert_int_equal(counts(f).cached, 2);
	assert_int_equal(counts(f).pods_named, 1);
	struct cgs_identity pod = resolve(f, POD, 3);
	assert_string_equal(pod.k8s_namespace, "prod");
	assert_string_equal(pod.pod, "shop-7d9f");
	assert_string_equal(pod.container, "");
	for (unsigned r = 0; r < 3; r++) {
		struct cgs_identity c = { .sz = sizeof(c) };
		assert_true(cgs_identity_src_peek(f->src, r, CG_CTRD, &c) == 0);
		assert_string_equal(c.pod, "shop-7d9f");
	}
	struct cgs_identity c = { .sz = sizeof(c) };
	assert_int_equal(cgs_identity_src_peek(f->src, 0, "/system.slice/x."
					     "service", &c), -ENOENT);
	assert_int_equal(cgs_identity_src_peek(NULL, 0, CG_CTRD, &c), -EINVAL);
}

static struct cgs_identity_counts wait_counts(struct cgs_identity_src *s,
					      size_t off, uint64_t want)
{
	struct cgs_identity_counts c = { .sz = sizeof(c) };
	for (int i = 0; i < 400; i++) { /* 4 s */
		assert_int_equal(cgs_identity_src_get_counts(s, &c), 0);
		if (*(uint64_t *)((char *)&c + off) >= want)
			break;
		usleep(10000);
	}
	return c;
}

/* The mkdir hook's way: queued, looked up by the resolver thread at once
 * (the state deleted right after still leaves the name), retired keep_ms
 * after its rmdir; a path that names no container is not queued. */
static void named_at_mkdir(void **state)
{
	struct fx *f = *state;
	char c[PATH_MAX];
	snprintf(c, sizeof(c), "%s/containerd", f->root);
	struct cgs_identity_opts o = { .sz = sizeof(o),
				       .containerd_state = c,
				       .kubelet_logs = "/nonexistent",
				       .readers = 2, .keep_ms = 1 };
	struct cgs_identity_src *s;
	assert_int_equal(cgs_identity_src_new(&s, &o), 0);
	put_text(f, "containerd/io.containerd.runtime.v2.task/k8s.io/" CID
		    "/config.json", ctrd_spec);
	void *ctx;
	assert_int_equal(cgsi_identity_watch(s, &ctx), 0);
	assert_int_equal(cgsi_identity_watch(s, &ctx), 0); /* once */
	cgsi_idcache_event(ctx, CGSI_KSRC_MKDIR, 7, "/system.slice/a.service");
	cgsi_idcache_event(ctx, CGSI_KSRC_MKDIR, 8, CG_CTRD);
	struct cgs_identity_counts n =
		wait_counts(s, offsetof(struct cgs_identity_counts,
					early_named), 1);
	assert_int_equal(n.queued, 1);
	assert_int_equal(n.early_named, 1);
	cgt_rm_rf(c);
	struct cgs_identity id = { .sz = sizeof(id) };
	assert_true(cgs_identity_src_peek(s, 1, CG_CTRD, &id) == 0);
	assert_string_equal(id.k8s_namespace, "prod");
	assert_string_equal(id.image, "registry.example/shop:1.4");
	cgsi_idcache_event(ctx, CGSI_KSRC_RMDIR, 8, CG_CTRD);
	n = wait_counts(s, offsetof(struct cgs_identity_counts, retired), 1);
	assert_int_equal(n.retired, 1);
	assert_int_equal(n.cached, 1); /* its pod's, named by it, stays */
	assert_int_equal(n.pods_named, 1);
	assert_int_equal(cgs_identity_src_peek(s, 1, CG_CTRD, &id), -ENOENT);
	assert_int_equal(cgs_identity_src_peek(s, 0, POD, &id), 0);
	assert_string_equal(id.pod, "shop-7d9f");
	/* a container whose state is not there: pending (its records
	 * wait) while looked up again 50 ms, 250 ms, 1 s later; unnamed */
	cgsi_idcache_event(ctx, CGSI_KSRC_MKDIR, 9, CG_CRIO);
	assert_int_equal(cgs_identity_src_peek(s, 1, CG_CRIO, &id), -EAGAIN);
	usleep(100000);
	assert_int_equal(cgs_identity_src_peek(s, 0, CG_CRIO, &id), -EAGAIN);
	n = wait_counts(s, offsetof(struct cgs_identity_counts,
				    early_unnamed), 1);
	assert_int_equal(n.early_unnamed + n.gone_before, 1);
	assert_int_equal(n.retried, 3);
	assert_int_equal(cgs_identity_src_peek(s, 1, CG_CRIO, &id), -ENOENT);
	/* one there before the hook (the start-up walk's): pending until
	 * named, then named; its state written late, named at a retry */
	cgsi_idcache_event(ctx, CGSI_KSRC_EXISTING, 10, CG_CTRD);
	assert_int_equal(cgs_identity_src_peek(s, 1, CG_CTRD, &id), -EAGAIN);
	usleep(20000);
	put_text(f, "containerd/io.containerd.runtime.v2.task/k8s.io/" CID
		    "/config.json", ctrd_spec);
	n = wait_counts(s, offsetof(struct cgs_identity_counts,
				    retry_named), 1);
	assert_int_equal(n.existing, 1);
	assert_int_equal(n.retry_named, 1);
	assert_int_equal(cgs_identity_src_peek(s, 1, CG_CTRD, &id), 0);
	assert_string_equal(id.container, "web");
	cgs_identity_src_free(s); /* stops the thread */
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		T(containerd_cri),
		T(containerd_sandbox),
		T(crio),
		T(docker_compose),
		T(kubelet_logs),
		T(not_a_container),
		T(hostile_files),
		T(hostile_kinds),
		T(sizes),
		T(cached_after_gone),
		T(named_at_mkdir),
	};
	return CGT_RUN(argc, argv, tests);
}
