#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Workload names looked up when the cgroup appears (issue 24), with a real
container (runc) whose runtime state is deleted as soon as it exits.

    e2e_identity_early.py COLLECTOR

A short container laid out as containerd's CRI lays it out (its OCI spec in
<state>/io.containerd.runtime.v2.task/k8s.io/<id>/config.json, its cgroup
kubepods.slice/.../cri-containerd-<id>.scope), run while the collector runs
with the kernel source and a long snapshot interval: the bundle folder is
deleted right after `runc run` returns (as containerd deletes it when the
task exited), before any snapshot could show the cgroup. Checked:
 - the JSON row of its cgroup names namespace, pod, container_name, image
   (looked up at the cgroup's mkdir, cached, not read at the snapshot);
 - every --events record of its exits carries the same names (the shard's
   own table of the cache);
 - CSV (-f csv --events): its exit rows end in namespace,pod,
   container_name,image; the header ends with those four columns;
 - with --attribution exact (no mkdir events) the same container stays
   unnamed, as docs/dashboards.md says.
Skips (77) without runc, the kernel source, or where runc cannot start a
container here."""
import csv
import io
import os
import secrets
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, need_live,  # noqa
                     port_from_stderr, skip, strict_json_lines)
from runc_util import bundle, need_runc, probe, runc, v1_leftovers  # noqa

B = arg(1, "taskstat-collect")
need_live(B)
need_runc()
UID = "7c1e2a3b-4d5e-4f60-8a7b-%012x" % (os.getpid() & 0xffffffffffff)
POD = ("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod%s"
       ".slice" % UID.replace("-", "_"))
# Its exits come after ~0.2 s of the shell's own work (builtins: no
# exit), as a real entrypoint takes its time to start: the names are
# looked up by a thread of their own when the cgroup appears, and an exit
# record written before that look-up ends carries none (under ASan the
# first exits came first in 4 runs of 10).
SCRIPT = ("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; "
          "cgsr-true; cgsr-true; cgsr-sh -c 'exit 3'")
WANT = {"namespace": "batch", "pod": "report-28731", "container_name": "job",
        "image": "registry.example/report:2.0"}


def annotations():
    return {
        "io.kubernetes.cri.container-type": "container",
        "io.kubernetes.cri.container-name": "job",
        "io.kubernetes.cri.sandbox-id": "e" * 64,
        "io.kubernetes.cri.sandbox-name": "report-28731",
        "io.kubernetes.cri.sandbox-namespace": "batch",
        "io.kubernetes.cri.sandbox-uid": UID,
        "io.kubernetes.cri.image-name": "registry.example/report:2.0",
    }


def short_container(cg, state, tag):
    """Run it; delete its bundle the moment it is done. Its cgroup path."""
    cid = secrets.token_hex(32)
    d = os.path.join(state, "io.containerd.runtime.v2.task", "k8s.io", cid)
    cgpath = cg.path(POD + "/cri-containerd-%s.scope" % cid)
    bundle(d, cgpath, SCRIPT, annotations())
    r = runc(d, "cgs-ide-%d-%s" % (os.getpid(), tag))
    shutil.rmtree(d)  # as containerd does once the task exited
    check(r.returncode == 3, "runc run: exit %d (want 3): %s" %
          (r.returncode, r.stderr.strip()))
    return cgpath


def collect(fmt, state, cg, tag, extra=()):
    """A collector run (-i 4: no snapshot before the bundle is gone) and
    the container; its output and the cgroup path."""
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "out")
        args = ["--listen", "127.0.0.1:0", "-i", "4", "-f", fmt, "--events",
                "-o", out, "--containerd-state", state] + list(extra)
        with Collector(B, args) as col:
            port_from_stderr(col)
            col.wait_started()
            time.sleep(0.3)
            cgpath = short_container(cg, state, tag)
            time.sleep(5)  # a snapshot after the bundle went
            col.stop()
        with open(out, "rb") as f:
            return f.read(), cgpath, col


def check_unnamed(data):
    """Without the mkdir events: no row and no event names the container
    (where the /proc fallback put its short-lived exits is its business,
    not this test's)."""
    n = 0
    for o in strict_json_lines(data):
        for g in [o] + o.get("cgroups", []):
            n += 1
            for k in WANT:
                check(g.get(k) != WANT[k], "%s named %s=%r without the "
                      "mkdir events" % (g.get("cgroup"), k, g.get(k)))
    check(n > 1, "no output")


def check_jsonl(data, cgpath):
    rows, evs = [], []
    for o in strict_json_lines(data):
        if o.get("type") == "exit" and o.get("cgroup") == cgpath:
            evs.append(o)
        for g in o.get("cgroups", []):
            if g["cgroup"] == cgpath:
                rows.append(g)
    check(rows, "no JSON row of %s" % cgpath)
    check(len(evs) >= 3, "%d exit events in %s, want >= 3" %
          (len(evs), cgpath))
    for what, objs in (("row", rows), ("event", evs)):
        for o in objs:
            for k, w in WANT.items():
                check(o.get(k) == w, "%s of %s (comm %s): %s is %r, want %r"
                      % (what, cgpath, o.get("comm"), k, o.get(k), w))
    return len(rows), len(evs)


def check_csv(data, cgpath):
    rd = list(csv.reader(io.StringIO(data.decode())))
    names = ["namespace", "pod", "container_name", "image"]
    ni = rd[0].index("namespace") if "namespace" in rd[0] else -1
    check(ni > 0 and rd[0][ni:ni + 4] == names,
          "CSV header has the four names: %r" % rd[0][-6:])
    ci = rd[0].index("cgroup")
    exits = [r for r in rd[1:] if r[0] == "exit" and r[ci] == cgpath]
    check(len(exits) >= 3, "%d CSV exit rows of %s" % (len(exits), cgpath))
    want = [WANT[k] for k in ("namespace", "pod", "container_name",
                              "image")]
    for r in exits + [r for r in rd[1:] if r[0] == "cgroup" and
                      r[ci] == cgpath]:
        check(len(r) == len(rd[0]), "CSV row of %d columns, header %d" %
              (len(r), len(rd[0])))
        check(r[ni:ni + 4] == want, "CSV %s row names %r, want %r" %
              (r[0], r[ni:ni + 4], want))
    return len(exits)


with tempfile.TemporaryDirectory() as tmp, Cgroups("id2h-early") as cg:
    try:
        probe(tmp, cg.path("probe"))
        state = os.path.join(tmp, "containerd")
        os.makedirs(state)
        data, cgpath, col = collect("jsonl", state, cg, "j")
        objs = strict_json_lines(data)
        if not any(o.get("attribution_source") == "kernel" for o in objs
                   if o.get("type") == "rollup"):
            skip("the kernel source is not in use here")
        nr, ne = check_jsonl(data, cgpath)
        data, cgpath, _ = collect("csv", state, cg, "c")
        nc = check_csv(data, cgpath)
        data, cgpath, _ = collect("jsonl", state, cg, "p",
                                  ["--attribution", "exact"])
        check_unnamed(data)
        print("bundle deleted at exit: %d JSON rows and %d events named, %d "
              "CSV exit rows named; unnamed with --attribution exact" %
              (nr, ne, nc))
    finally:
        v1_leftovers(cg.name)
print("OK")
