/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <cgstats/cgroup.h>: cgroup paths: the path of a process in
 * /proc/<pid>/cgroup, and the workload (systemd unit, container, pod) a
 * path names, for the export stage. Part of <cgstats.h>.
 */
#ifndef CGSTATS_CGROUP_H
#define CGSTATS_CGROUP_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * cgs_parse_proc_cgroup() - Find a hierarchy's path in /proc/<pid>/cgroup.
 * @text: The file's contents; need not be NUL-terminated.
 * @len: Bytes of @text.
 * @hierarchy: "v2" (the "0::" line) or a v1 controller name ("cpu",
 *	"name=systemd", ...); NULL means "v2".
 * @buf: Receives the NUL-terminated path. On cgroup2 a trailing
 *	" (deleted)" (a removed cgroup still holding a zombie) is stripped.
 * @buflen: Size of @buf.
 *
 * Context: Any thread; no allocation.
 * Return: The path's length (without the NUL); -EINVAL for a NULL @text
 * or @buf or a @buflen of 0; -ENOENT if the hierarchy is absent;
 * -ENAMETOOLONG if buf is too small; -EBADMSG for garbage (also an empty
 * text, or a path that does not start with '/').
 */
CGS_EXPORT int
cgs_parse_proc_cgroup(const char *text, size_t len, const char *hierarchy,
		      char *buf, size_t buflen);

#define CGS_WL_NAME_LEN 256    /* systemd unit names: 255 bytes + NUL */
#define CGS_WL_RUNTIME_LEN 16  /* "docker", "containerd", "cri-o", "podman" */
#define CGS_WL_CONTAINER_LEN 80 /* a container id: 64 hex digits */
#define CGS_WL_CONTAINER_ID_LEN 112 /* "<runtime>://<id>" */
#define CGS_WL_POD_UID_LEN 48  /* a UUID: 36 bytes */
#define CGS_WL_QOS_LEN 16      /* "Guaranteed", "Burstable", "BestEffort" */

/*
 * What a cgroup path says about the workload in it. Every member is a
 * NUL-terminated string, "" when the path does not say; a member is only
 * ever filled from a syntactically valid match of a known shape (see
 * lib/workloads/workload.c and docs/collector.md), so its bytes are printable
 * ASCII. Each group of members comes from the nearest cgroup along the path
 * (the cgroup itself or its closest ancestor) that names it.
 */
struct cgs_workload {
	size_t sz;                          /* sizeof(struct cgs_workload) */
	char unit[CGS_WL_NAME_LEN];         /* systemd unit: the nearest
					     * .service, .scope, .socket,
					     * .mount or .swap */
	char slice[CGS_WL_NAME_LEN];        /* the nearest systemd .slice */
	/* the nearest container; its three members go together */
	char runtime[CGS_WL_RUNTIME_LEN];   /* "" when the path does not say
					     * which runtime made it */
	char container[CGS_WL_CONTAINER_LEN]; /* the id, 64 hex digits */
	char container_id[CGS_WL_CONTAINER_ID_LEN]; /* "<runtime>://<id>" as
					     * kube-state-metrics writes it;
					     * "" when the runtime is unknown */
	/* the nearest Kubernetes pod (or QoS-level) cgroup */
	char pod_uid[CGS_WL_POD_UID_LEN];   /* with its dashes, as the API
					     * server shows it */
	char qos_class[CGS_WL_QOS_LEN];     /* as in the pod's status */
};

/**
 * cgs_workload_from_path() - Name the workload a cgroup path belongs to.
 * @path: A cgroup path as /proc/<pid>/cgroup shows it ("/system.slice/
 *	foo.service"); any bytes. A path not starting with '/' (such as
 *	CGS_UNKNOWN_CGROUP) names nothing.
 * @out: Receives the names; sz set (see <cgstats.h>), on return the bytes
 *	written.
 *
 * Knows systemd units and slices; docker, containerd (CRI), CRI-O and
 * podman containers (their conmon monitors are not containers); Kubernetes
 * pods and QoS classes of both kubelet cgroup drivers, also nested under
 * another prefix (a node in a container). Reads no file.
 *
 * Context: Any thread; no allocation.
 * Return: The number of non-empty members of @out (>= 0); -EINVAL for a
 * NULL @path or @out, or out->sz too small to hold sz.
 */
CGS_EXPORT int
cgs_workload_from_path(const char *path, struct cgs_workload *out);

#ifdef __cplusplus
}
#endif

#endif /* CGSTATS_CGROUP_H */
