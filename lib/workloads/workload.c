/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workload names from cgroup paths: systemd units and slices, container
 * ids, Kubernetes pod UIDs and QoS classes, for the export stage.
 *
 * A path is read one name (directory) at a time from the root down; each
 * name is tried against the rows of `rules` below, group by group, the
 * first row of a group that matches deciding that group for this name. A
 * group decided by a deeper name replaces what an ancestor said, so every
 * group comes from the nearest named cgroup: a sub-cgroup of a container
 * scope inherits its container, a container inside a pod its pod, a pod
 * inside a node container (kind, k3d) its pod, not the node's container.
 *
 * A row only matches a syntactically valid name: ids of exactly 64
 * lower-case hex digits, pod UIDs of UUID syntax (8-4-4-4-12 lower-case
 * hex), unit names of systemd's character set and length. Anything else
 * (other shapes, upper case, stray bytes, over-long names) decides
 * nothing: no name is better than a wrong one. Where the path does not say
 * which runtime made a container (the kubelet's cgroupfs driver names
 * containerd's and docker's containers by their bare id) the id is given
 * without a runtime, and container_id, which joins with kube-state-metrics
 * only when the runtime is right, stays empty.
 *
 * Facts the rows rely on:
 *  - systemd names a unit's cgroup after the unit; a name that could clash
 *    with a kernel file or starts with '_' gets one '_' in front
 *    (cg_escape), removed here before the name is checked;
 *  - the kubelet's systemd driver makes <root>kubepods.slice, then
 *    <root>kubepods-burstable.slice and <root>kubepods-besteffort.slice,
 *    and one slice per pod below them (Guaranteed pods directly below
 *    kubepods.slice), the pod UID's dashes turned into underscores (a dash
 *    separates slice levels); <root> is "" or "<cgroup-root>-";
 *  - its cgroupfs driver makes kubepods/{burstable,besteffort}/pod<uid>
 *    and kubepods/pod<uid>, the UID unchanged;
 *  - a static pod's UID is the 32-hex md5 of its manifest, not the UID of
 *    its mirror pod in the API (that is the config.hash annotation): such a
 *    pod gets its QoS class and no pod_uid;
 *  - conmon (CRI-O, podman) runs in a scope of its own next to the
 *    container's: the monitor, not the container;
 *  - runtimes, as the kubelet writes container ids: docker, containerd,
 *    cri-o. podman is not a CRI runtime: "podman" is its name in cAdvisor
 *    and here.
 */
#include <stdio.h>
#include <string.h>

#include "workloads/workload.h"
#include "util/common.h"

#define HEX64 64
#define UNIT_MAX 255 /* systemd's UNIT_NAME_MAX without the NUL */

typedef struct cgsi_wl_name name_t;

static bool eq(name_t a, const char *s)
{
	size_t n = strlen(s);
	return a.n == n && !memcmp(a.p, s, n);
}

static bool starts(name_t a, const char *s)
{
	size_t n = strlen(s);
	return a.n >= n && !memcmp(a.p, s, n);
}

static bool ends(name_t a, const char *s)
{
	size_t n = strlen(s);
	return a.n >= n && !memcmp(a.p + a.n - n, s, n);
}

/* The part of a between the literal pre and post, if a has them. */
static bool between(name_t a, const char *pre, const char *post, name_t *mid)
{
	size_t lp = strlen(pre), lq = strlen(post);
	if (a.n < lp + lq || !starts(a, pre) || !ends(a, post))
		return false;
	mid->p = a.p + lp;
	mid->n = a.n - lp - lq;
	return true;
}

static bool lhex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool hex_n(name_t a, size_t n)
{
	if (a.n != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!lhex(a.p[i]))
			return false;
	return true;
}

/* 8-4-4-4-12 lower-case hex digits, separated by sep. */
static bool uuid_sep(name_t a, char sep)
{
	if (a.n != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? a.p[i] != sep : !lhex(a.p[i]))
			return false;
	}
	return true;
}

static void put(char *dst, size_t cap, name_t a)
{
	size_t n = CGS_MIN(a.n, cap - 1);
	memcpy(dst, a.p, n);
	dst[n] = '\0';
}

/* ---- systemd units ---------------------------------------------------- */

static bool unit_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == ':' || c == '-' || c == '_' ||
	       c == '.';
}

static bool anyhex(char c)
{
	return lhex(c) || (c >= 'A' && c <= 'F');
}

/* systemd's unit-name syntax: [A-Za-z0-9:-_.\] (a backslash only in a
 * \xNN escape), at most one '@' followed by a non-empty instance, a
 * non-empty prefix, the given type suffix, at most 255 bytes. */
static bool unit_name(name_t a, const char *suffix)
{
	name_t body;
	if (a.n > UNIT_MAX || !between(a, "", suffix, &body) || !body.n)
		return false;
	bool at = false;
	for (size_t i = 0; i < body.n; i++) {
		char c = body.p[i];
		if (c == '@') {
			if (at || i == 0 || i + 1 == body.n)
				return false;
			at = true;
		} else if (c == '\\') {
			if (i + 3 >= body.n || body.p[i + 1] != 'x' ||
			    !anyhex(body.p[i + 2]) || !anyhex(body.p[i + 3]))
				return false;
			i += 3;
		} else if (!unit_char(c)) {
			return false;
		}
	}
	return true;
}

/* The unit name of a cgroup name: one leading '_' is systemd's escape. */
static name_t cg_unescape(name_t a)
{
	if (a.n && a.p[0] == '_') {
		a.p++;
		a.n--;
	}
	return a;
}

static bool m_unit(const struct cgsi_wl_rule *r, const struct cgsi_wl_ctx *c,
		   struct cgs_workload *w)
{
	name_t u = cg_unescape(c->self);
	if (!unit_name(u, r->post))
		return false;
	if (r->group == CGSI_WL_SLICE)
		put(w->slice, sizeof(w->slice), u);
	else
		put(w->unit, sizeof(w->unit), u);
	return true;
}

/* ---- containers ------------------------------------------------------- */

static void set_container(struct cgs_workload *w, const char *runtime,
			  name_t id)
{
	memset(w->runtime, 0, sizeof(w->runtime));
	memset(w->container_id, 0, sizeof(w->container_id));
	put(w->container, sizeof(w->container), id);
	if (runtime) {
		snprintf(w->runtime, sizeof(w->runtime), "%s", runtime);
		snprintf(w->container_id, sizeof(w->container_id), "%s://%s",
			 runtime, w->container);
	}
}

/* pre<64 hex>post, below a parent named arg if arg is set. */
static bool m_id(const struct cgsi_wl_rule *r, const struct cgsi_wl_ctx *c,
		 struct cgs_workload *w)
{
	name_t id;
	if (!between(c->self, r->pre, r->post, &id) || !hex_n(id, HEX64))
		return false;
	if (r->arg && !eq(c->parent, r->arg))
		return false;
	set_container(w, r->value, id);
	return true;
}

/* A bare 64-hex id directly below a cgroupfs-driver pod. */
static bool m_id_in_pod(const struct cgsi_wl_rule *r,
			const struct cgsi_wl_ctx *c, struct cgs_workload *w)
{
	if (!c->parent_pod_dir || !hex_n(c->self, HEX64))
		return false;
	set_container(w, r->value, c->self);
	return true;
}

/* A container monitor: decides the group (no container here), sets
 * nothing. */
static bool m_monitor(const struct cgsi_wl_rule *r,
		      const struct cgsi_wl_ctx *c, struct cgs_workload *w)
{
	name_t id;
	(void)w;
	return between(c->self, r->pre, r->post, &id) && hex_n(id, HEX64);
}

/* ---- Kubernetes pods -------------------------------------------------- */

static void set_pod(struct cgs_workload *w, const char *qos, name_t uid)
{
	memset(w->pod_uid, 0, sizeof(w->pod_uid));
	memset(w->qos_class, 0, sizeof(w->qos_class));
	snprintf(w->qos_class, sizeof(w->qos_class), "%s", qos);
	if (uid.n == 36) { /* a UUID; a 32-hex static pod's has no API UID */
		put(w->pod_uid, sizeof(w->pod_uid), uid);
		for (size_t i = 0; w->pod_uid[i]; i++)
			if (w->pod_uid[i] == '_')
				w->pod_uid[i] = '-';
	}
}

/* a is "<root>kubepods<tag>" with <root> "" or ending in '-'. */
static bool kubepods_name(name_t a, const char *tag)
{
	name_t root;
	char end[64];
	snprintf(end, sizeof(end), "kubepods%s", tag);
	if (!between(a, "", end, &root))
		return false;
	return root.n == 0 || root.p[root.n - 1] == '-';
}

/* p + ".slice" == a */
static bool slice_of(name_t a, name_t p)
{
	return a.n == p.n + 6 && !memcmp(a.p, p.p, p.n) &&
	       !memcmp(a.p + p.n, ".slice", 6);
}

/* systemd driver: <P>-pod<uid>.slice below <P>.slice, where P is
 * <root>kubepods<arg>. */
static bool m_pod_slice(const struct cgsi_wl_rule *r,
			const struct cgsi_wl_ctx *c, struct cgs_workload *w)
{
	name_t body;
	if (!between(c->self, "", ".slice", &body))
		return false;
	static const size_t lens[] = { 36, 32 };
	for (size_t i = 0; i < CGS_ARRAY_SIZE(lens); i++) {
		if (body.n < lens[i] + 4)
			continue;
		name_t uid = { body.p + body.n - lens[i], lens[i] };
		name_t p = { body.p, body.n - lens[i] - 4 };
		if (memcmp(p.p + p.n, "-pod", 4))
			continue;
		if (!(lens[i] == 36 ? uuid_sep(uid, '_') : hex_n(uid, 32)))
			continue;
		if (!kubepods_name(p, r->arg) || !slice_of(c->parent, p))
			continue;
		set_pod(w, r->value, uid);
		return true;
	}
	return false;
}

/* systemd driver: <root>kubepods<arg>.slice below <root>kubepods.slice. */
static bool m_qos_slice(const struct cgsi_wl_rule *r,
			const struct cgsi_wl_ctx *c, struct cgs_workload *w)
{
	name_t p, root;
	if (!between(c->self, "", ".slice", &p) || !kubepods_name(p, r->arg))
		return false;
	root.p = p.p;
	root.n = p.n - strlen(r->arg);
	if (!slice_of(c->parent, root))
		return false;
	set_pod(w, r->value, (name_t){ "", 0 });
	return true;
}

/* cgroupfs driver: pod<uid> below kubepods (arg NULL) or below
 * kubepods/<arg>. */
static bool m_pod_dir(const struct cgsi_wl_rule *r,
		      const struct cgsi_wl_ctx *c, struct cgs_workload *w)
{
	name_t uid;
	if (!between(c->self, "pod", "", &uid) ||
	    !(uuid_sep(uid, '-') || hex_n(uid, 32)))
		return false;
	if (r->arg ? !(eq(c->parent, r->arg) && eq(c->grand, "kubepods"))
		   : !eq(c->parent, "kubepods"))
		return false;
	set_pod(w, r->value, uid);
	return true;
}

/* cgroupfs driver: kubepods/<arg>. */
static bool m_qos_dir(const struct cgsi_wl_rule *r,
		      const struct cgsi_wl_ctx *c, struct cgs_workload *w)
{
	if (!eq(c->self, r->arg) || !eq(c->parent, "kubepods"))
		return false;
	set_pod(w, r->value, (name_t){ "", 0 });
	return true;
}

/* ---- the table -------------------------------------------------------- */

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "5f0c4b7e-2d1a-4c3b-9e8f-7a6b5c4d3e2f"
#define UID_ "5f0c4b7e_2d1a_4c3b_9e8f_7a6b5c4d3e2f"

/*
 * Every shape known, by group; within a group the first row that matches
 * a name decides it. Container monitors come first so that no later row
 * can take them for containers. docs/collector.md has the same table.
 */
static const struct cgsi_wl_rule rules[] = {
	/* systemd units: the cgroup's own unit (services, scopes, sockets,
	 * mounts and swaps run processes) and the nearest slice */
	{ CGSI_WL_UNIT, m_unit, "", ".service", NULL, NULL, false,
	  "<unit>.service: unit", "/system.slice/system-getty.slice/"
	  "getty@tty1.service" },
	{ CGSI_WL_UNIT, m_unit, "", ".scope", NULL, NULL, false,
	  "<unit>.scope: unit", "/user.slice/user-1000.slice/session-3.scope" },
	{ CGSI_WL_UNIT, m_unit, "", ".socket", NULL, NULL, false,
	  "<unit>.socket: unit", "/system.slice/sshd.socket" },
	{ CGSI_WL_UNIT, m_unit, "", ".mount", NULL, NULL, false,
	  "<unit>.mount: unit", "/system.slice/boot-efi.mount" },
	{ CGSI_WL_UNIT, m_unit, "", ".swap", NULL, NULL, false,
	  "<unit>.swap: unit", "/system.slice/dev-sda2.swap" },
	{ CGSI_WL_SLICE, m_unit, "", ".slice", NULL, NULL, false,
	  "<slice>.slice: slice", "/system.slice/system-systemd\\x2dfsck.slice" },

	/* containers: monitors first */
	{ CGSI_WL_CONTAINER, m_monitor, "crio-conmon-", ".scope", NULL, NULL,
	  false, "crio-conmon-<id>.scope: CRI-O's conmon, no container",
	  "/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" ID
	  ".scope" },
	{ CGSI_WL_CONTAINER, m_monitor, "crio-conmon-", "", NULL, NULL, false,
	  "crio-conmon-<id> (cgroupfs): CRI-O's conmon, no container",
	  "/kubepods/pod" UID "/crio-conmon-" ID },
	{ CGSI_WL_CONTAINER, m_monitor, "libpod-conmon-", ".scope", NULL,
	  NULL, false, "libpod-conmon-<id>.scope: podman's conmon, no "
	  "container", "/machine.slice/libpod-conmon-" ID ".scope" },
	{ CGSI_WL_CONTAINER, m_id, "docker-", ".scope", NULL, "docker", false,
	  "docker-<id>.scope (systemd driver): docker", "/system.slice/docker-"
	  ID ".scope" },
	{ CGSI_WL_CONTAINER, m_id, "", "", "docker", "docker", false,
	  "docker/<id> (cgroupfs driver): docker", "/docker/" ID },
	{ CGSI_WL_CONTAINER, m_id, "cri-containerd-", ".scope", NULL,
	  "containerd", false, "cri-containerd-<id>.scope: containerd (CRI)",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  UID_ ".slice/cri-containerd-" ID ".scope" },
	{ CGSI_WL_CONTAINER, m_id, "crio-", ".scope", NULL, "cri-o", false,
	  "crio-<id>.scope: CRI-O", "/kubepods.slice/kubepods-besteffort.slice/"
	  "kubepods-besteffort-pod" UID_ ".slice/crio-" ID ".scope" },
	{ CGSI_WL_CONTAINER, m_id, "crio-", "", NULL, "cri-o", false,
	  "crio-<id> (cgroupfs driver): CRI-O", "/kubepods/burstable/pod" UID
	  "/crio-" ID },
	{ CGSI_WL_CONTAINER, m_id, "libpod-", ".scope", NULL, "podman", false,
	  "libpod-<id>.scope: podman", "/machine.slice/libpod-" ID ".scope" },
	{ CGSI_WL_CONTAINER, m_id, "libpod-", "", NULL, "podman", false,
	  "libpod-<id> (cgroupfs): podman", "/libpod_parent/libpod-" ID },
	{ CGSI_WL_CONTAINER, m_id_in_pod, "", "", NULL, NULL, false,
	  "<id> below a cgroupfs pod: runtime unknown (containerd or docker)",
	  "/kubepods/besteffort/pod" UID "/" ID },

	/* Kubernetes pods, systemd driver (UID with '_' for '-') */
	{ CGSI_WL_POD, m_pod_slice, "", "", "", "Guaranteed", false,
	  "kubepods-pod<uid>.slice below kubepods.slice: Guaranteed pod",
	  "/kubepods.slice/kubepods-pod" UID_ ".slice" },
	{ CGSI_WL_POD, m_pod_slice, "", "", "-burstable", "Burstable", false,
	  "kubepods-burstable-pod<uid>.slice below kubepods-burstable.slice: "
	  "Burstable pod", "/kubepods.slice/kubepods-burstable.slice/"
	  "kubepods-burstable-pod" UID_ ".slice" },
	{ CGSI_WL_POD, m_pod_slice, "", "", "-besteffort", "BestEffort",
	  false, "kubepods-besteffort-pod<uid>.slice below "
	  "kubepods-besteffort.slice: BestEffort pod", "/kubepods.slice/"
	  "kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice" },
	{ CGSI_WL_POD, m_qos_slice, "", "", "-burstable", "Burstable", false,
	  "kubepods-burstable.slice below kubepods.slice: Burstable pods",
	  "/kubepods.slice/kubepods-burstable.slice" },
	{ CGSI_WL_POD, m_qos_slice, "", "", "-besteffort", "BestEffort", false,
	  "kubepods-besteffort.slice below kubepods.slice: BestEffort pods",
	  "/kubepods.slice/kubepods-besteffort.slice" },
	/* Kubernetes pods, cgroupfs driver (UID as is) */
	{ CGSI_WL_POD, m_pod_dir, "", "", NULL, "Guaranteed", true,
	  "kubepods/pod<uid>: Guaranteed pod", "/kubepods/pod" UID },
	{ CGSI_WL_POD, m_pod_dir, "", "", "burstable", "Burstable", true,
	  "kubepods/burstable/pod<uid>: Burstable pod",
	  "/kubepods/burstable/pod" UID },
	{ CGSI_WL_POD, m_pod_dir, "", "", "besteffort", "BestEffort", true,
	  "kubepods/besteffort/pod<uid>: BestEffort pod",
	  "/kubepods/besteffort/pod" UID },
	{ CGSI_WL_POD, m_qos_dir, "", "", "burstable", "Burstable", false,
	  "kubepods/burstable: Burstable pods", "/kubepods/burstable" },
	{ CGSI_WL_POD, m_qos_dir, "", "", "besteffort", "BestEffort", false,
	  "kubepods/besteffort: BestEffort pods", "/kubepods/besteffort" },
};

const struct cgsi_wl_rule *cgsi_wl_rules(size_t *n)
{
	*n = CGS_ARRAY_SIZE(rules);
	return rules;
}

/* ---- the walk --------------------------------------------------------- */

/* Try one name against every group; returns whether it is a cgroupfs
 * pod. */
static bool classify(const struct cgsi_wl_ctx *c, struct cgs_workload *w,
		     const struct cgsi_wl_rule *why[CGSI_WL__GROUPS])
{
	bool decided[CGSI_WL__GROUPS] = { false };
	bool pod_dir = false;

	for (size_t i = 0; i < CGS_ARRAY_SIZE(rules); i++) {
		const struct cgsi_wl_rule *r = &rules[i];
		if (decided[r->group] || !r->match(r, c, w))
			continue;
		decided[r->group] = true;
		pod_dir |= r->pod_dir;
		if (why)
			why[r->group] = r;
	}
	return pod_dir;
}

static int count(const struct cgs_workload *w)
{
	return !!w->unit[0] + !!w->slice[0] + !!w->runtime[0] +
	       !!w->container[0] + !!w->container_id[0] + !!w->pod_uid[0] +
	       !!w->qos_class[0];
}

int cgsi_workload_parse(const char *path, struct cgs_workload *w,
			const struct cgsi_wl_rule *why[CGSI_WL__GROUPS])
{
	struct cgsi_wl_ctx c;

	memset(w, 0, sizeof(*w));
	w->sz = sizeof(*w);
	if (why)
		for (int g = 0; g < CGSI_WL__GROUPS; g++)
			why[g] = NULL;
	if (path[0] != '/')
		return 0;
	memset(&c, 0, sizeof(c));
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchrnul(p, '/');
		c.grand = c.parent;
		c.parent = c.self;
		c.self = (name_t){ p, (size_t)(e - p) };
		c.parent_pod_dir = classify(&c, w, why);
		p = e;
	}
	return count(w);
}

int cgs_workload_from_path(const char *path,
			   struct cgs_workload *out)
{
	struct cgs_workload w;

	if (!path || !out || !CGSI_OUT_OK(out))
		return -EINVAL;
	int n = cgsi_workload_parse(path, &w, NULL);
	int r = cgsi_out_copy(out, &w, sizeof(w));
	return r < 0 ? r : n;
}
