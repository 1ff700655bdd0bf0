#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The collectd plugin's Identity option for real (issue 24): collectd -f
with write_log (Format JSON) and taskstat (Identity true, ContainerdState
pointed at a fixture of containerd's CRI task state), a cgroup laid out as
a CRI container's (kubepods.slice/.../cri-containerd-<id>.scope) made while
collectd runs, a workload in it, then its spec deleted (as containerd
deletes a finished task's bundle). Every value list of that cgroup must
carry the meta data namespace, pod, container and image; a cgroup that is
no container carries none.

usage: e2e_collectd_identity.py <taskstat.so> <taskstat.types.db> [<preload>]
Exit 77 (SKIP) as e2e_collectd.py, or without write_log.so.
"""
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "e2e"))
import e2e_collectd as base  # noqa: E402
from tsc_e2e import Cgroups, check, fail, skip, workload  # noqa: E402

UID = "5d4c3b2a-1908-4f7e-8d6c-%012x" % (os.getpid() & 0xffffffffffff)
POD = ("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s"
       ".slice" % UID.replace("-", "_"))
META = {"namespace": "prod", "pod": "shop-7d9f", "container": "web",
        "image": "registry.example/shop:1.4"}


def spec(cid):
    return {"ociVersion": "1.1.0", "annotations": {
        "io.kubernetes.cri.container-type": "container",
        "io.kubernetes.cri.container-name": "web",
        "io.kubernetes.cri.sandbox-id": "f" * 64,
        "io.kubernetes.cri.sandbox-name": "shop-7d9f",
        "io.kubernetes.cri.sandbox-namespace": "prod",
        "io.kubernetes.cri.sandbox-uid": UID,
        "io.kubernetes.cri.image-name": "registry.example/shop:1.4"}}


def value_lists(err):
    """The JSON value lists write_log logged (each line a JSON array)."""
    out = []
    for m in re.finditer(r"write_log values:\s*(\[.*\])\s*$", err, re.M):
        try:
            out.extend(json.loads(m.group(1)))
        except ValueError:
            pass
    return out


def main():
    if len(sys.argv) < 3:
        fail("usage: e2e_collectd_identity.py <taskstat.so> "
             "<taskstat.types.db> [<preload>]")
    so, base.OURTYPES = map(os.path.abspath, sys.argv[1:3])
    base.PRELOAD = sys.argv[3] if len(sys.argv) > 3 else ""
    if os.geteuid() != 0:
        skip("not root")
    if not shutil.which("collectd"):
        skip("collectd not installed (Debian: collectd-core)")
    for p in ("write_log.so", "logfile.so", "csv.so"):
        if not os.path.exists(os.path.join(base.PLUGINS, p)):
            skip("collectd plugin %s not installed" % p)
    ldd = subprocess.run(["ldd", os.path.join(base.PLUGINS, "write_log.so")],
                         capture_output=True, text=True).stdout
    if "not found" in ldd:
        skip("write_log.so cannot load (libyajl2 missing?): " +
             " ".join(ln.strip() for ln in ldd.splitlines()
                      if "not found" in ln))
    tmp = tempfile.mkdtemp(prefix="cgs-collectd-id-")
    try:
        os.mkdir(os.path.join(tmp, "plugins"))
        for p in (os.path.join(base.PLUGINS, "write_log.so"),
                  os.path.join(base.PLUGINS, "csv.so"),
                  os.path.join(base.PLUGINS, "logfile.so"), so):
            shutil.copy(p, os.path.join(tmp, "plugins"))
        with Cgroups("id2h-collectd") as cg:
            run(tmp, cg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS: collectd's value lists of a container carry its names")


def run(tmp, cg):
    state = os.path.join(tmp, "containerd")
    cid = secrets.token_hex(32)
    d = os.path.join(state, "io.containerd.runtime.v2.task", "k8s.io", cid)
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(spec(cid), f)
    rel = POD + "/cri-containerd-%s.scope" % cid
    cg.mkdir("plain")
    conf = base.write_conf(tmp, '  Hierarchy "v2"\n  Cgroup "%s/*"\n'
                           '  Identity true\n  ContainerdState "%s"\n'
                           '  KubeletLogs "%s/nolog"\n' %
                           (cg.path(), state, tmp))
    with open(conf, "a") as f:
        f.write('LoadPlugin write_log\n<Plugin write_log>\n  Format JSON\n'
                '</Plugin>\n')
    errp = os.path.join(tmp, "collectd.err")
    with open(errp, "w") as errf:
        p = base.start(conf, errf)
        try:
            time.sleep(0.5)
            cgdir = cg.mkdir(rel)  # while collectd runs: its mkdir event
            time.sleep(0.5)
            workload(cgdir, procs=2, code=0)
            shutil.rmtree(d)  # the bundle goes once the task is done
            workload(cg.dir("plain"), procs=1, code=0)
            time.sleep(3.5)
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            try:
                p.wait(60)
            except Exception:
                p.kill()
                fail("collectd did not stop on SIGTERM")
    with open(errp) as f:
        err = f.read()
    vls = [v for v in value_lists(err) if v.get("plugin") == "taskstat"]
    inst = base.instance(os.fsencode(cg.path(rel)))
    plain = base.instance(os.fsencode(cg.path("plain")))
    ours = [v for v in vls if v.get("plugin_instance") == inst]
    other = [v for v in vls if v.get("plugin_instance") == plain]
    if not vls and "write_log" in err and '"meta"' not in err:
        skip("write_log wrote no JSON value lists here")
    check(ours, "no value list of %s (of %d taskstat lists)" %
          (inst, len(vls)))
    check(other, "no value list of %s" % plain)
    for v in ours:
        check(v.get("meta") == META, "%s/%s: meta %r, want %r" %
              (inst, v.get("type"), v.get("meta"), META))
    for v in other:
        check(not v.get("meta"), "%s: meta %r on a cgroup that is no "
              "container" % (plain, v.get("meta")))
    print("%d value lists of the container named, %d of a plain cgroup "
          "without names" % (len(ours), len(other)))


if __name__ == "__main__":
    main()
