#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which identity sources work with which privileges (issue 24).

    id_privs.py ID_RESOLVE

State trees laid out with the permission bits the runtimes give them (all
owned by root):
 - containerd: <state> 0711, io.containerd.runtime.v2.task and k8s.io
   0711, the bundle <id> 0700, config.json 0644 (containerd's
   core/runtime/v2/bundle.go: MkdirAll(parent, 0711), Mkdir(bundle, 0700));
 - CRI-O: the storage run root 0700 (containers/storage), overlay-
   containers/<id>/userdata 0700, config.json 0644;
 - Docker: /var/lib/docker 0710, containers 0710, <id> 0700,
   config.v2.json 0600;
 - the kubelet: /var/log/pods and /var/log/containers 0755, the pod
   folders 0755, the log links' names.
The resolver (id_resolve, the library's public API) runs as root, as root
without any capability (the DaemonSet: uid 0, no file capabilities), as
nobody (the systemd unit's dynamic user once the collector shed its
capabilities), and as nobody with CAP_DAC_READ_SEARCH (setpriv). Checked,
per case, which source names each container:
  root, root without caps, nobody+CAP_DAC_READ_SEARCH: every runtime's file;
  nobody: only the kubelet's folders (names, no image; a container
  without a log link only its pod), EACCES counted.
Skips (77) when not root or without setpriv."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import arg, check, skip  # noqa: E402

BIN = arg(1, "id_resolve")
if os.geteuid() != 0:
    skip("not root (the trees must be root's)")
if not shutil.which("setpriv"):
    skip("setpriv not installed (util-linux)")

UID = "3e2d1c0b-a998-4877-8665-544332211000"
POD = ("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s"
       ".slice" % UID.replace("-", "_"))
CID = {k: (c * 64) for k, c in (("ctrd", "a"), ("crio", "b"),
                                ("dock", "c"), ("kube", "d"))}
CG = {"ctrd": POD + "/cri-containerd-%s.scope" % CID["ctrd"],
      "crio": POD + "/crio-%s.scope" % CID["crio"],
      "dock": "/system.slice/docker-%s.scope" % CID["dock"],
      "kube": POD + "/cri-containerd-%s.scope" % CID["kube"],
      "pod": POD}
IMAGE = "registry.example/shop:1.4"


def oci(name):
    return json.dumps({"annotations": {
        "io.kubernetes.cri.container-type": "container",
        "io.kubernetes.cri.container-name": name,
        "io.kubernetes.cri.sandbox-name": "shop-7d9f",
        "io.kubernetes.cri.sandbox-namespace": "prod",
        "io.kubernetes.cri.sandbox-uid": UID,
        "io.kubernetes.cri.image-name": IMAGE,
        "io.kubernetes.cri-o.ContainerType": "container",
        "io.kubernetes.cri-o.ImageName": IMAGE,
        "io.kubernetes.cri-o.Labels": json.dumps({
            "io.kubernetes.pod.name": "shop-7d9f",
            "io.kubernetes.pod.namespace": "prod",
            "io.kubernetes.pod.uid": UID,
            "io.kubernetes.container.name": name})}})


def put(root, rel_modes, text, mode):
    """Folders (name, mode) below root, then the file in the last one."""
    d = root
    for name, m in rel_modes[:-1]:
        d = os.path.join(d, name)
        os.makedirs(d, exist_ok=True)
        os.chmod(d, m)
    p = os.path.join(d, rel_modes[-1][0])
    with open(p, "w") as f:
        f.write(text)
    os.chmod(p, mode)


def layout(t):
    put(t, [("containerd", 0o711), ("io.containerd.runtime.v2.task", 0o711),
            ("k8s.io", 0o711), (CID["ctrd"], 0o700), ("config.json", 0)],
        oci("web"), 0o644)
    put(t, [("crio", 0o700), ("overlay-containers", 0o700),
            (CID["crio"], 0o700), ("userdata", 0o700), ("config.json", 0)],
        oci("api"), 0o644)
    put(t, [("docker", 0o710), ("containers", 0o710), (CID["dock"], 0o700),
            ("config.v2.json", 0)],
        json.dumps({"Name": "/db", "Config": {"Image": "postgres:16"}}),
        0o600)
    logs = os.path.join(t, "log")
    for sub in ("containers", "pods"):
        os.makedirs(os.path.join(logs, sub))
        os.chmod(os.path.join(logs, sub), 0o755)
    os.chmod(logs, 0o755)
    for name, cid in (("web", CID["ctrd"]), ("side", CID["kube"])):
        os.symlink("/nonexistent", os.path.join(
            logs, "containers", "shop-7d9f_prod_%s-%s.log" % (name, cid)))
    pd = os.path.join(logs, "pods", "prod_shop-7d9f_%s" % UID)
    os.mkdir(pd)
    os.chmod(pd, 0o755)


def run(t, wrap):
    # the pod first: once a container of it is named, its names name the
    # pod from the cache (source containerd), not from its folder
    keys = ["pod", "ctrd", "crio", "dock", "kube"]
    r = subprocess.run(wrap + [BIN, os.path.join(t, "containerd"),
                               os.path.join(t, "crio"),
                               os.path.join(t, "docker"),
                               os.path.join(t, "log")] +
                       [CG[k] for k in keys],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "%s: exit %d: %s" % (wrap, r.returncode,
                                                  r.stderr))
    lines = r.stdout.splitlines()
    got = dict(zip(keys, lines))
    got["io_error"] = int(lines[-1].split()[1])
    return got


FULL = {"ctrd": "containerd\tprod/shop-7d9f/web\t" + IMAGE,
        "crio": "cri-o\tprod/shop-7d9f/api\t" + IMAGE,
        "dock": "docker\t//db\tpostgres:16",
        "kube": "kubelet\tprod/shop-7d9f/side\t",
        "pod": "kubelet\tprod/shop-7d9f/\t"}
# nobody: the kubelet's link names the containerd container (no image),
# the pod's folder names CRI-O's container's pod only, Docker's nothing
NOBODY = dict(FULL, ctrd="kubelet\tprod/shop-7d9f/web\t",
              crio="kubelet\tprod/shop-7d9f/\t", dock="-")
NOBODY_ID = ["setpriv", "--reuid", "65534", "--regid", "65534",
             "--clear-groups"]
CASES = [
    ("root", [], FULL, False),
    ("root without capabilities",
     ["setpriv", "--bounding-set", "-all", "--inh-caps", "-all"], FULL,
     False),
    ("nobody", NOBODY_ID, NOBODY, True),
    ("nobody with CAP_DAC_READ_SEARCH", NOBODY_ID +
     ["--inh-caps", "+dac_read_search", "--ambient-caps",
      "+dac_read_search"], FULL, False),
]

t = tempfile.mkdtemp(prefix="cgs-id2h-privs-")
try:
    os.chmod(t, 0o755)
    layout(t)
    for what, wrap, want, denied in CASES:
        got = run(t, wrap)
        for k, w in want.items():
            check(got.get(k) == w, "%s: %s named %r, want %r" %
                  (what, k, got.get(k), w))
        check((got["io_error"] > 0) == denied, "%s: io_error %d" %
              (what, got["io_error"]))
        print("%-32s containerd %-10s cri-o %-10s docker %-7s kubelet ok"
              % (what, got["ctrd"].split("\t")[0], got["crio"].split("\t")[0],
                 got["dock"].split("\t")[0]))
finally:
    shutil.rmtree(t)
print("OK")
