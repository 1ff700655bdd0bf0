#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Workload identity and restarts folded, with real containers (runc).

    e2e_identity.py COLLECTOR

A pod laid out as the kubelet's systemd cgroup driver and containerd's CRI
lay it out (kubepods.slice/kubepods-burstable.slice/kubepods-burstable-
pod<uid>.slice/cri-containerd-<id>.scope, below a private cgroup2 tree;
runc's cgroupsPath makes the directories), its container's OCI spec with
the CRI annotations in the containerd task state folder the collector is
pointed at (--containerd-state). The container crashes three times, as in
CrashLoopBackOff: each restart a new container id and a new cgroup, each
run's child killed by SIGSEGV. Checked:
 - every JSON row of the three cgroups names namespace, pod,
   container_name and image;
 - one workload series set (namespace/pod/container) counts the three
   crashes: process_exits_total{outcome="signaled"} 3,
   process_signals_total{signal="SIGSEGV"} 3, cgroups_total 3;
 - its first sample already counts the first crash, as the cgroup's own
   series of the same scrape does (issue 40: it used to show 0 until a
   scrape had served it, disagreeing with the per-cgroup series);
 - the kubelet's log link alone names a container whose spec is gone;
 - the table's WORKLOAD column says namespace/pod/container.
Skips (77) without runc or where it cannot start a container here."""
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, need_live,  # noqa
                     port_from_stderr, scrape, strict_json_lines,
                     wait_workload, workload_value)
from runc_util import bundle, need_runc, probe, runc, v1_leftovers  # noqa

B = arg(1, "taskstat-collect")
need_live(B)
need_runc()
UID = "0b5c1d6e-7f80-4a91-b2c3-%012x" % (os.getpid() & 0xffffffffffff)
POD = ("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s"
       ".slice" % UID.replace("-", "_"))
# a child shell killed by SIGSEGV (PID 1 of the container ignores it)
CRASH = "cgsr-true; cgsr-sh -c 'kill -SEGV $$'; exit 1"
LABELS = 'kind="container",namespace="prod",pod="shop-7d9f",container="web"'


def spec_annotations(cid):
    return {
        "io.kubernetes.cri.container-type": "container",
        "io.kubernetes.cri.container-name": "web",
        "io.kubernetes.cri.sandbox-id": "f" * 64,
        "io.kubernetes.cri.sandbox-name": "shop-7d9f",
        "io.kubernetes.cri.sandbox-namespace": "prod",
        "io.kubernetes.cri.sandbox-uid": UID,
        "io.kubernetes.cri.image-name": "registry.example/shop:1.4",
    }


def run_container(tmp, cg, cid, state):
    """One run of the container, its spec where containerd keeps it."""
    d = os.path.join(state, "io.containerd.runtime.v2.task", "k8s.io", cid)
    cgpath = cg.path(POD + "/cri-containerd-%s.scope" % cid)
    bundle(d, cgpath, CRASH, spec_annotations(cid))
    r = runc(d, "cgs-id-%d-%s" % (os.getpid(), cid[:8]))
    check(r.returncode == 1, "runc run: exit %d (want the script's 1): %s"
          % (r.returncode, r.stderr.strip()))
    return cgpath


with tempfile.TemporaryDirectory() as tmp, Cgroups("ident") as cg:
    try:
        probe(tmp, cg.path("probe"))
        state = os.path.join(tmp, "containerd")
        logs = os.path.join(tmp, "log")
        os.makedirs(os.path.join(logs, "containers"))
        os.makedirs(os.path.join(logs, "pods"))
        out = os.path.join(tmp, "out.jsonl")
        with Collector(B, ["--listen", "127.0.0.1:0", "-i", "0.5", "-f",
                           "jsonl", "-o", out, "--containerd-state", state,
                           "--kubelet-logs", logs]) as col:
            hp = port_from_stderr(col)
            paths, first = [], None
            for k in range(3):
                cid = cid0 = secrets.token_hex(32)
                paths.append(run_container(tmp, cg, cid, state))
                if k == 0:  # the first sample: as the cgroup's series
                    t0 = time.time()
                    while first is None and time.time() - t0 < 30:
                        t = scrape(hp)
                        first = workload_value(t, "process_exits_total",
                                               LABELS + ',outcome="signaled"')
                        time.sleep(0.2)
                    own = re.search(r'^taskstat_process_signals_total\{'
                                    r'cgroup="%s",signal="SIGSEGV"\} (\d+)$'
                                    % re.escape(paths[0]), t, re.M)
                    check(first == 1 and own and own.group(1) == "1",
                          "the new workload's first sample is %r, its "
                          "cgroup's SIGSEGV series %s, want 1 and 1" %
                          (first, own and own.group(1)))
                text, v = wait_workload(hp, "process_exits_total",
                                        LABELS + ',outcome="signaled"',
                                        k + 1)
                check(v == k + 1, "after %d crashes the workload counts %r"
                      % (k + 1, v))
            sig = workload_value(text, "process_signals_total",
                                 LABELS + ',signal="SIGSEGV"')
            check(sig == 3, "SIGSEGV exits of the workload: %r, want 3" % sig)
            check(workload_value(text, "cgroups_total", LABELS) == 3,
                  "cgroups_total: %r, want 3" %
                  workload_value(text, "cgroups_total", LABELS))
            check(re.search(r'^taskstat_workload_info\{%s,image="registry'
                            r'\.example/shop:1\.4"\} 1$' % re.escape(LABELS),
                            text, re.M), "no workload_info with the image")
            # lean: a named container's cgroup has the outcomes seen (its
            # zeros are the workload's, which has all five from 0)
            check(workload_value(text, "process_exits_total",
                                 LABELS + ',outcome="core_dumped"') == 0,
                  "the workload has no core_dumped at 0")
            own = dict(ln.split("outcome=")[1].split("} ")
                       for ln in text.splitlines()
                       if ln.startswith('taskstat_process_exits_total{cgroup='
                                        '"%s",' % paths[-1]))
            check(own.get('"signaled"') == "1" and "0" not in own.values(),
                  "the last cgroup's own outcomes: %r, want signaled 1 and "
                  "no zeros" % own)
            # the kubelet's log link alone: no spec for this one
            cid = secrets.token_hex(32)
            open(os.path.join(logs, "containers", "shop-7d9f_prod_side-%s"
                              ".log" % cid), "w").close()
            d = os.path.join(tmp, "nospec")
            cgpath = cg.path(POD + "/cri-containerd-%s.scope" % cid)
            bundle(d, cgpath, "cgsr-true")
            r = runc(d, "cgs-id-%d-side" % os.getpid())
            check(r.returncode == 0, "runc run: %s" % r.stderr.strip())
            side = 'kind="container",namespace="prod",pod="shop-7d9f",' \
                   'container="side"'
            text, v = wait_workload(hp, "task_exits_total", side, 1)
            check(v is not None and v >= 1, "the kubelet's link named no "
                  "workload: %r" % v)
            time.sleep(1.2)
        rows = {}
        with open(out, "rb") as f:
            for o in strict_json_lines(f.read()):
                for g in o.get("cgroups", []):
                    rows[g["cgroup"]] = g
        for p in paths:
            g = rows.get(p)
            check(g is not None, "no JSON row of %s" % p)
            want = {"namespace": "prod", "pod": "shop-7d9f",
                    "container_name": "web",
                    "image": "registry.example/shop:1.4",
                    "workload_kind": "container"}
            for k, w in want.items():
                check(g.get(k) == w, "%s: %s is %r, want %r" %
                      (p, k, g.get(k), w))
        # the table: a process of the last container's cgroup, again
        d = cg.mkdir(POD + "/cri-containerd-%s.scope" % cid0)
        with Collector(B, ["-f", "table", "--wide", "-i", "0.5", "-d", "3",
                           "--top", "0", "--containerd-state",
                           state]) as col:
            time.sleep(1)
            subprocess.run(["sh", "-c", "echo $$ > %s/cgroup.procs; "
                            "/bin/true" % d], check=True)
            col.p.wait(timeout=30)
        rows = [ln for ln in col.raw().decode().splitlines()
                if ln.endswith("cri-containerd-%s.scope" % cid0)]
        check(rows and " prod/shop-7d9f/web " in rows[-1],
              "table: no WORKLOAD prod/shop-7d9f/web in %r" % rows[-1:])
        print("3 crashes in 3 cgroups: one workload, signaled 3, SIGSEGV 3,"
              " first sample 0; JSON rows named; kubelet link named 'side'")
    finally:
        v1_leftovers(cg.name)
print("OK")
