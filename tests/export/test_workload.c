/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of cgs_workload_from_path(): every row of the pattern table
 * decides its group on its own example; real path shapes of systemd,
 * docker, containerd, CRI-O, podman and both kubelet cgroup drivers, also
 * nested under another prefix; near misses and hostile bytes, which must
 * name nothing; the sz convention of the result.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "cgstats.h"
#include "workloads/workload.h"
#include "support/skip.h"

#define ID "4f3a1e0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"
#define ID2 "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define UID "0b5c1d6e-7f80-4a91-b2c3-d4e5f6a7b8c9"
#define UID_ "0b5c1d6e_7f80_4a91_b2c3_d4e5f6a7b8c9"
#define STATIC_UID "6d0b1c2a3e4f5061728394a5b6c7d8e9" /* md5 of a manifest */

/* What a path must name; NULL members must come out empty. */
struct want {
	const char *unit, *slice, *runtime, *container, *container_id,
		*pod_uid, *qos_class;
};

static void field(const char *path, const char *name, const char *got,
		  const char *want)
{
	if (strcmp(got, want ? want : ""))
		fail_msg("%s: %s is '%s', want '%s'", path, name, got,
			 want ? want : "");
}

static void expect(const char *path, struct want w)
{
	CGS_OPTS(cgs_workload, o);
	int n = cgs_workload_from_path(path, &o);
	assert_true(n >= 0);
	assert_int_equal(o.sz, sizeof(o));
	field(path, "unit", o.unit, w.unit);
	field(path, "slice", o.slice, w.slice);
	field(path, "runtime", o.runtime, w.runtime);
	field(path, "container", o.container, w.container);
	field(path, "container_id", o.container_id, w.container_id);
	field(path, "pod_uid", o.pod_uid, w.pod_uid);
	field(path, "qos_class", o.qos_class, w.qos_class);
	const char *all[] = { w.unit, w.slice, w.runtime, w.container,
			      w.container_id, w.pod_uid, w.qos_class };
	int want_n = 0;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		want_n += all[i] && *all[i];
	assert_int_equal(n, want_n);
}

static void nothing(const char *path)
{
	expect(path, (struct want){ 0 });
}

/* Every row decides its own group on its documented example. */
static void test_table_examples(void **state)
{
	(void)state;
	size_t n;
	const struct cgsi_wl_rule *rules = cgsi_wl_rules(&n);
	assert_true(n > 20);
	for (size_t i = 0; i < n; i++) {
		const struct cgsi_wl_rule *why[CGSI_WL__GROUPS];
		struct cgs_workload w;
		assert_non_null(rules[i].shape);
		assert_non_null(rules[i].example);
		cgsi_workload_parse(rules[i].example, &w, why);
		if (why[rules[i].group] != &rules[i])
			fail_msg("row %zu (%s) does not decide its example %s",
				 i, rules[i].shape, rules[i].example);
	}
}

static void test_systemd(void **state)
{
	(void)state;
	expect("/system.slice/foo.service",
	       (struct want){ .unit = "foo.service", .slice = "system.slice" });
	expect("/system.slice/system-getty.slice/getty@tty1.service",
	       (struct want){ .unit = "getty@tty1.service",
			      .slice = "system-getty.slice" });
	expect("/user.slice/user-1000.slice/user@1000.service/app.slice/"
	       "x.scope", (struct want){ .unit = "x.scope",
					 .slice = "app.slice" });
	expect("/user.slice/user-1000.slice/user@1000.service/app.slice",
	       (struct want){ .unit = "user@1000.service",
			      .slice = "app.slice" });
	expect("/user.slice/user-1000.slice/user@1000.service/app.slice/"
	       "app-gnome-org.gnome.Terminal-4123.scope",
	       (struct want){ .unit = "app-gnome-org.gnome.Terminal-4123.scope",
			      .slice = "app.slice" });
	expect("/init.scope", (struct want){ .unit = "init.scope" });
	expect("/user.slice/user-1000.slice/session-3.scope",
	       (struct want){ .unit = "session-3.scope",
			      .slice = "user-1000.slice" });
	/* escapes are part of the unit name, as systemctl shows it */
	expect("/system.slice/system-systemd\\x2dfsck.slice/"
	       "systemd-fsck@dev-disk-by\\x2duuid-1a2b\\x2d3c4d.service",
	       (struct want){
		       .unit = "systemd-fsck@dev-disk-by\\x2duuid-1a2b\\x2d3c4d"
			       ".service",
		       .slice = "system-systemd\\x2dfsck.slice" });
	expect("/system.slice/sshd.socket",
	       (struct want){ .unit = "sshd.socket", .slice = "system.slice" });
	expect("/system.slice/boot-efi.mount",
	       (struct want){ .unit = "boot-efi.mount",
			      .slice = "system.slice" });
	/* cg_escape: one '_' in front of names that clash with kernel files */
	expect("/system.slice/_cpu.service",
	       (struct want){ .unit = "cpu.service", .slice = "system.slice" });
	expect("/system.slice/__foo.service",
	       (struct want){ .unit = "_foo.service", .slice = "system.slice" });
	/* a sub-cgroup a service made for itself inherits its unit */
	expect("/system.slice/foo.service/worker/0",
	       (struct want){ .unit = "foo.service", .slice = "system.slice" });
	/* units without cgroups, and names that only look like units */
	expect("/multi-user.target", (struct want){ 0 });
	expect("/system.slice/foo@.service",
	       (struct want){ .slice = "system.slice" });
	expect("/system.slice/@x.service",
	       (struct want){ .slice = "system.slice" });
	expect("/system.slice/a@b@c.service",
	       (struct want){ .slice = "system.slice" });
	expect("/system.slice/.service", (struct want){ .slice = "system.slice" });
	expect("/system.slice/bad\\x2.service",
	       (struct want){ .slice = "system.slice" });
	expect("/system.slice/bad\\y2d.service",
	       (struct want){ .slice = "system.slice" });
	nothing("/foo.services");
	nothing("/");
	nothing("");
	nothing(CGS_UNKNOWN_CGROUP);
	nothing("system.slice/foo.service"); /* not a path */
	/* repeated and trailing slashes are just separators */
	expect("//system.slice///foo.service/",
	       (struct want){ .unit = "foo.service", .slice = "system.slice" });
}

static void test_docker(void **state)
{
	(void)state;
	expect("/system.slice/docker-" ID ".scope",
	       (struct want){ .unit = "docker-" ID ".scope",
			      .slice = "system.slice", .runtime = "docker",
			      .container = ID, .container_id = "docker://" ID });
	expect("/docker/" ID, (struct want){ .runtime = "docker",
					     .container = ID,
					     .container_id = "docker://" ID });
	/* rootless docker under the user's manager */
	expect("/user.slice/user-1000.slice/user@1000.service/user.slice/"
	       "docker-" ID ".scope",
	       (struct want){ .unit = "docker-" ID ".scope",
			      .slice = "user.slice", .runtime = "docker",
			      .container = ID, .container_id = "docker://" ID });
	/* docker in docker: the inner container is the nearest */
	expect("/docker/" ID "/docker/" ID2,
	       (struct want){ .runtime = "docker", .container = ID2,
			      .container_id = "docker://" ID2 });
	/* a process tree the container made inside itself */
	expect("/docker/" ID "/init",
	       (struct want){ .runtime = "docker", .container = ID,
			      .container_id = "docker://" ID });
	/* a bare id elsewhere is no container; the systemd socket unit */
	nothing("/" ID);
	nothing("/dockerd/" ID);
	expect("/system.slice/docker.socket",
	       (struct want){ .unit = "docker.socket",
			      .slice = "system.slice" });
	expect("/system.slice/docker.service",
	       (struct want){ .unit = "docker.service",
			      .slice = "system.slice" });
}

static void test_containerd(void **state)
{
	(void)state;
	expect("/system.slice/cri-containerd-" ID ".scope",
	       (struct want){ .unit = "cri-containerd-" ID ".scope",
			      .slice = "system.slice",
			      .runtime = "containerd", .container = ID,
			      .container_id = "containerd://" ID });
	/* cgroupfs driver: the runtime is not in the path */
	expect("/kubepods/burstable/pod" UID "/" ID,
	       (struct want){ .container = ID, .pod_uid = UID,
			      .qos_class = "Burstable" });
	expect("/kubepods/pod" UID "/" ID,
	       (struct want){ .container = ID, .pod_uid = UID,
			      .qos_class = "Guaranteed" });
	expect("/kubepods/besteffort/pod" UID "/" ID,
	       (struct want){ .container = ID, .pod_uid = UID,
			      .qos_class = "BestEffort" });
	/* a bare id two levels below the pod is not the pod's container */
	expect("/kubepods/besteffort/pod" UID "/x/" ID,
	       (struct want){ .pod_uid = UID, .qos_class = "BestEffort" });
}

static void test_crio(void **state)
{
	(void)state;
	const char *pod = "/kubepods.slice/kubepods-burstable.slice/"
			  "kubepods-burstable-pod" UID_ ".slice";
	char p[512];
	snprintf(p, sizeof(p), "%s/crio-%s.scope", pod, ID);
	expect(p, (struct want){ .unit = "crio-" ID ".scope",
				 .slice = "kubepods-burstable-pod" UID_ ".slice",
				 .runtime = "cri-o", .container = ID,
				 .container_id = "cri-o://" ID, .pod_uid = UID,
				 .qos_class = "Burstable" });
	/* crun/runc may make a sub-cgroup inside the scope */
	snprintf(p, sizeof(p), "%s/crio-%s.scope/container", pod, ID);
	expect(p, (struct want){ .unit = "crio-" ID ".scope",
				 .slice = "kubepods-burstable-pod" UID_ ".slice",
				 .runtime = "cri-o", .container = ID,
				 .container_id = "cri-o://" ID, .pod_uid = UID,
				 .qos_class = "Burstable" });
	/* conmon: the monitor, in the pod, not a container */
	snprintf(p, sizeof(p), "%s/crio-conmon-%s.scope", pod, ID);
	expect(p, (struct want){ .unit = "crio-conmon-" ID ".scope",
				 .slice = "kubepods-burstable-pod" UID_ ".slice",
				 .pod_uid = UID, .qos_class = "Burstable" });
	/* cgroupfs driver */
	expect("/kubepods/burstable/pod" UID "/crio-" ID,
	       (struct want){ .runtime = "cri-o", .container = ID,
			      .container_id = "cri-o://" ID, .pod_uid = UID,
			      .qos_class = "Burstable" });
	expect("/kubepods/burstable/pod" UID "/crio-conmon-" ID,
	       (struct want){ .pod_uid = UID, .qos_class = "Burstable" });
}

static void test_podman(void **state)
{
	(void)state;
	expect("/machine.slice/libpod-" ID ".scope",
	       (struct want){ .unit = "libpod-" ID ".scope",
			      .slice = "machine.slice", .runtime = "podman",
			      .container = ID, .container_id = "podman://" ID });
	expect("/machine.slice/libpod-" ID ".scope/container",
	       (struct want){ .unit = "libpod-" ID ".scope",
			      .slice = "machine.slice", .runtime = "podman",
			      .container = ID, .container_id = "podman://" ID });
	expect("/machine.slice/libpod-conmon-" ID ".scope",
	       (struct want){ .unit = "libpod-conmon-" ID ".scope",
			      .slice = "machine.slice" });
	/* a podman pod's slice; rootless podman */
	expect("/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID
	       ".scope",
	       (struct want){ .unit = "libpod-" ID ".scope",
			      .slice = "machine-libpod_pod_" ID2 ".slice",
			      .runtime = "podman", .container = ID,
			      .container_id = "podman://" ID });
	expect("/user.slice/user-1000.slice/user@1000.service/user.slice/"
	       "libpod-" ID ".scope",
	       (struct want){ .unit = "libpod-" ID ".scope",
			      .slice = "user.slice", .runtime = "podman",
			      .container = ID, .container_id = "podman://" ID });
	/* cgroupfs */
	expect("/libpod_parent/libpod-" ID,
	       (struct want){ .runtime = "podman", .container = ID,
			      .container_id = "podman://" ID });
	nothing("/libpod_parent/conmon");
}

static void test_kubepods_systemd(void **state)
{
	(void)state;
	expect("/kubepods.slice", (struct want){ .slice = "kubepods.slice" });
	expect("/kubepods.slice/kubepods-burstable.slice",
	       (struct want){ .slice = "kubepods-burstable.slice",
			      .qos_class = "Burstable" });
	expect("/kubepods.slice/kubepods-besteffort.slice",
	       (struct want){ .slice = "kubepods-besteffort.slice",
			      .qos_class = "BestEffort" });
	expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	       UID_ ".slice",
	       (struct want){ .slice = "kubepods-burstable-pod" UID_ ".slice",
			      .pod_uid = UID, .qos_class = "Burstable" });
	expect("/kubepods.slice/kubepods-besteffort.slice/"
	       "kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID
	       ".scope",
	       (struct want){ .unit = "cri-containerd-" ID ".scope",
			      .slice = "kubepods-besteffort-pod" UID_ ".slice",
			      .runtime = "containerd", .container = ID,
			      .container_id = "containerd://" ID,
			      .pod_uid = UID, .qos_class = "BestEffort" });
	/* Guaranteed: directly below kubepods.slice */
	expect("/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID
	       ".scope",
	       (struct want){ .unit = "cri-containerd-" ID ".scope",
			      .slice = "kubepods-pod" UID_ ".slice",
			      .runtime = "containerd", .container = ID,
			      .container_id = "containerd://" ID,
			      .pod_uid = UID, .qos_class = "Guaranteed" });
	/* cri-dockerd */
	expect("/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID
	       ".scope",
	       (struct want){ .unit = "docker-" ID ".scope",
			      .slice = "kubepods-pod" UID_ ".slice",
			      .runtime = "docker", .container = ID,
			      .container_id = "docker://" ID,
			      .pod_uid = UID, .qos_class = "Guaranteed" });
	/* --cgroup-root=/kubelet: every slice gets the prefix */
	expect("/kubelet.slice/kubelet-kubepods.slice/"
	       "kubelet-kubepods-burstable.slice/"
	       "kubelet-kubepods-burstable-pod" UID_ ".slice",
	       (struct want){
		       .slice = "kubelet-kubepods-burstable-pod" UID_ ".slice",
		       .pod_uid = UID, .qos_class = "Burstable" });
	/* a static pod: its UID is a manifest hash, not an API UID */
	expect("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	       STATIC_UID ".slice",
	       (struct want){ .slice = "kubepods-burstable-pod" STATIC_UID
				       ".slice",
			      .qos_class = "Burstable" });
	/* wrong parents: the slice name alone proves nothing */
	expect("/kubepods-burstable-pod" UID_ ".slice",
	       (struct want){ .slice = "kubepods-burstable-pod" UID_ ".slice" });
	expect("/kubepods.slice/kubepods-burstable-pod" UID_ ".slice",
	       (struct want){ .slice = "kubepods-burstable-pod" UID_ ".slice" });
	expect("/kubepods.slice/kubepods-besteffort.slice/"
	       "kubepods-burstable-pod" UID_ ".slice",
	       (struct want){ .slice = "kubepods-burstable-pod" UID_ ".slice",
			      .qos_class = "BestEffort" });
	expect("/system.slice/kubepods-burstable.slice",
	       (struct want){ .slice = "kubepods-burstable.slice" });
	expect("/kubepods.slice/xkubepods-pod" UID_ ".slice",
	       (struct want){ .slice = "xkubepods-pod" UID_ ".slice" });
	/* the systemd driver escapes dashes: a dashed UID is no pod here,
	 * nor an upper-case one */
	expect("/kubepods.slice/kubepods-pod" UID ".slice",
	       (struct want){ .slice = "kubepods-pod" UID ".slice" });
	expect("/kubepods.slice/kubepods-pod0B5C1D6E_7F80_4A91_B2C3_"
	       "D4E5F6A7B8C9.slice",
	       (struct want){ .slice = "kubepods-pod0B5C1D6E_7F80_4A91_B2C3_"
				       "D4E5F6A7B8C9.slice" });
}

static void test_kubepods_cgroupfs(void **state)
{
	(void)state;
	nothing("/kubepods");
	expect("/kubepods/burstable", (struct want){ .qos_class = "Burstable" });
	expect("/kubepods/besteffort",
	       (struct want){ .qos_class = "BestEffort" });
	expect("/kubepods/burstable/pod" UID,
	       (struct want){ .pod_uid = UID, .qos_class = "Burstable" });
	expect("/kubepods/pod" UID,
	       (struct want){ .pod_uid = UID, .qos_class = "Guaranteed" });
	expect("/kubepods/besteffort/pod" UID,
	       (struct want){ .pod_uid = UID, .qos_class = "BestEffort" });
	/* static pod */
	expect("/kubepods/pod" STATIC_UID "/" ID,
	       (struct want){ .container = ID, .qos_class = "Guaranteed" });
	/* near misses */
	nothing("/pod" UID);
	nothing("/other/burstable/pod" UID);
	nothing("/kubepods/guaranteed/pod" UID);
	/* (inside the QoS cgroup: its class, no pod) */
	const struct want bu = { .qos_class = "Burstable" };
	expect("/kubepods/burstable/pod" UID_, bu);
	expect("/kubepods/burstable/pod" UID "x", bu);
	expect("/kubepods/burstable/pod0B5C1D6E-7F80-4A91-B2C3-D4E5F6A7B8C9",
	       bu);
	expect("/kubepods/burstable/pod0b5c1d6e-7f804-a91-b2c3-d4e5f6a7b8c9",
	       bu);
	expect("/kubepods/burstable/burstable",
	       (struct want){ .qos_class = "Burstable" });
}

static void test_nested(void **state)
{
	(void)state;
	/* a kind node (docker, cgroupfs inside): pod and inner container,
	 * never the node's container for the pod's containers */
	expect("/docker/" ID2 "/kubepods/burstable/pod" UID "/" ID,
	       (struct want){ .container = ID, .pod_uid = UID,
			      .qos_class = "Burstable" });
	expect("/docker/" ID2 "/kubepods/burstable/pod" UID,
	       (struct want){ .runtime = "docker", .container = ID2,
			      .container_id = "docker://" ID2, .pod_uid = UID,
			      .qos_class = "Burstable" });
	/* a kind node with systemd inside */
	expect("/system.slice/docker-" ID2 ".scope/kubelet.slice/"
	       "kubelet-kubepods.slice/kubelet-kubepods-pod" UID_ ".slice/"
	       "cri-containerd-" ID ".scope",
	       (struct want){ .unit = "cri-containerd-" ID ".scope",
			      .slice = "kubelet-kubepods-pod" UID_ ".slice",
			      .runtime = "containerd", .container = ID,
			      .container_id = "containerd://" ID,
			      .pod_uid = UID, .qos_class = "Guaranteed" });
	expect("/system.slice/docker-" ID2 ".scope/system.slice/"
	       "containerd.service",
	       (struct want){ .unit = "containerd.service",
			      .slice = "system.slice", .runtime = "docker",
			      .container = ID2,
			      .container_id = "docker://" ID2 });
	/* a CI runner's prefix */
	expect("/actions_job/" ID2 "/kubepods/pod" UID "/crio-" ID,
	       (struct want){ .runtime = "cri-o", .container = ID,
			      .container_id = "cri-o://" ID, .pod_uid = UID,
			      .qos_class = "Guaranteed" });
	/* k3s under a systemd unit, cgroupfs driver */
	expect("/system.slice/k3s.service/kubepods/besteffort/pod" UID "/" ID,
	       (struct want){ .unit = "k3s.service", .slice = "system.slice",
			      .container = ID, .pod_uid = UID,
			      .qos_class = "BestEffort" });
	/* an inner pod replaces an outer one */
	expect("/kubepods/pod" UID "/" ID2 "/kubepods/besteffort/pod"
	       "11111111-2222-4333-8444-555555555555",
	       (struct want){ .runtime = "", .container = ID2,
			      .pod_uid = "11111111-2222-4333-8444-555555555555",
			      .qos_class = "BestEffort" });
}

static void test_hostile(void **state)
{
	(void)state;
	/* ids one digit short or long, upper case, stray bytes */
	nothing("/docker/" ID "0");
	nothing("/docker/" "4f3a1e0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e"
		"8f7a6b5c4d3e2");
	nothing("/docker/4F3A1E0B9C8D7E6F5A4B3C2D1E0F9A8B7C6D5E4F3A2B1C0D9E8F"
		"7A6B5C4D3E2F");
	nothing("/docker/" ID "\n");
	nothing("/docker/\n" ID);
	expect("/system.slice/docker-" ID "\xff.scope",
	       (struct want){ .slice = "system.slice" });
	expect("/system.slice/docker-" ID ".scope\"",
	       (struct want){ .slice = "system.slice" });
	/* unit names: quotes, newlines, spaces, invalid UTF-8, controls */
	expect("/system.slice/fo\"o.service",
	       (struct want){ .slice = "system.slice" });
	expect("/system.slice/foo\n.service",
	       (struct want){ .slice = "system.slice" });
	expect("/system.slice/foo bar.service",
	       (struct want){ .slice = "system.slice" });
	expect("/system.slice/\xc3\xa9t\xe9.service",
	       (struct want){ .slice = "system.slice" });
	expect("/system.slice/a\x01.service",
	       (struct want){ .slice = "system.slice" });
	nothing("/sys\xfftem.slice/foo\\.service");
	/* a hostile name below a good one inherits, never replaces */
	expect("/system.slice/foo.service/\"}\n{evil=\"1",
	       (struct want){ .unit = "foo.service", .slice = "system.slice" });
	/* pod UIDs with bytes around them */
	nothing("/kubepods/pod" UID "\n");
	nothing("/kubepods/pod\"" UID);
	expect("/kubepods.slice/kubepods-pod" UID_ "\".slice",
	       (struct want){ .slice = "kubepods.slice" });
	/* very long names: a unit of 255 bytes is valid, 256 is not */
	char p[5000], name[300];
	memset(name, 'a', 247);
	strcpy(name + 247, ".service"); /* 255 */
	snprintf(p, sizeof(p), "/system.slice/%s", name);
	expect(p, (struct want){ .unit = name, .slice = "system.slice" });
	memset(name, 'a', 248);
	strcpy(name + 248, ".service"); /* 256 */
	snprintf(p, sizeof(p), "/system.slice/%s", name);
	expect(p, (struct want){ .slice = "system.slice" });
	/* a very long path of names */
	size_t at = 0;
	while (at + 20 < sizeof(p)) {
		memcpy(p + at, "/x\\y.slice", 10);
		at += 10;
	}
	p[at] = '\0';
	nothing(p);
	/* every byte value as a one-byte name, and in a unit name */
	for (int b = 1; b < 256; b++) {
		char q[64];
		snprintf(q, sizeof(q), "/docker/%c", b);
		nothing(q);
		snprintf(q, sizeof(q), "/u%cx.service", b);
		CGS_OPTS(cgs_workload, w);
		int n = cgs_workload_from_path(q, &w);
		bool ok = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
			  (b >= '0' && b <= '9') || b == ':' || b == '-' ||
			  b == '_' || b == '.' || b == '@';
		if (b == '/') /* "/u" then "x.service" */
			assert_string_equal(w.unit, "x.service");
		else
			assert_int_equal(n, ok ? 1 : 0);
	}
}

/* The sz convention: NULLs, a result too small, an older caller's. */
static void test_api(void **state)
{
	(void)state;
	CGS_OPTS(cgs_workload, w);
	assert_int_equal(cgs_workload_from_path(NULL, &w), -EINVAL);
	assert_int_equal(cgs_workload_from_path("/", NULL), -EINVAL);
	w.sz = 0;
	assert_int_equal(cgs_workload_from_path("/", &w), -EINVAL);
	/* a caller that knows only sz, unit and slice */
	size_t old = offsetof(struct cgs_workload, runtime);
	memset(&w, 0x5a, sizeof(w));
	w.sz = old;
	assert_int_equal(cgs_workload_from_path("/system.slice/docker-" ID
						".scope", &w), 5);
	assert_int_equal(w.sz, old);
	assert_string_equal(w.unit, "docker-" ID ".scope");
	assert_string_equal(w.slice, "system.slice");
	assert_true(CGS_SZ_HAS(&w, slice));
	assert_false(CGS_SZ_HAS(&w, runtime));
	assert_int_equal((unsigned char)w.runtime[0], 0x5a); /* untouched */
	/* a larger (newer) caller: our size back */
	unsigned char big[sizeof(struct cgs_workload) + 64];
	memset(big, 0, sizeof(big));
	size_t bsz = sizeof(big);
	memcpy(big, &bsz, sizeof(bsz));
	assert_int_equal(cgs_workload_from_path(
				 "/kubepods/pod" UID,
				 (struct cgs_workload *)(void *)big), 2);
	memcpy(&bsz, big, sizeof(bsz));
	assert_int_equal(bsz, sizeof(struct cgs_workload));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_examples),
		cmocka_unit_test(test_systemd),
		cmocka_unit_test(test_docker),
		cmocka_unit_test(test_containerd),
		cmocka_unit_test(test_crio),
		cmocka_unit_test(test_podman),
		cmocka_unit_test(test_kubepods_systemd),
		cmocka_unit_test(test_kubepods_cgroupfs),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_api),
	};
	return CGT_RUN(argc, argv, tests);
}
