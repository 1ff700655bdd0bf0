#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Names on every exit, and one scrape's workload series agreeing with its
per-cgroup series (issues 40 and 38.3), with real containers (runc) laid
out as containerd's CRI lays them out (OCI spec with the
io.kubernetes.cri.* annotations in <state>/io.containerd.runtime.v2.task/
k8s.io/<id>/config.json, cgroup kubepods.slice/.../kubepods-burstable-
pod<uid>.slice/cri-containerd-<id>.scope; no kubelet log folders).

    e2e_names_early.py COLLECTOR

1. Crash loop: container 1 runs before the collector starts (it waits for
   a file, sleeping); then it crashes (a shell killed by SIGSEGV) and
   ends, and the container is restarted twice, each a new id and cgroup
   that crashes at once. One scrape 2.5 s after the last crash, the first
   of the run: each cgroup's SIGSEGV series is 1, and the workload's
   crashes, task exits and signals equal the sums of its cgroups' series
   in that same text; the pod's own cgroup is named (a pod workload), not
   counted unnamed. Every --events line of the three cgroups names
   namespace, pod and container (container 1's too: it was there before
   the collector).
2. DaemonSet rollout: a container crashes a shell every 0.1 s for ~3 s;
   collector A (JSON) runs from before it started, collector B (CSV) is
   started when A stops, while it runs: every exit line of either names
   it, and B has some.
Skips (77) without runc, the kernel source, or where runc cannot start a
container here."""
import csv
import io
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, need_live,  # noqa
                     port_from_stderr, scrape, skip, strict_json_lines)
from runc_util import RUNC, bundle, need_runc, probe, v1_leftovers  # noqa

B = arg(1, "taskstat-collect")
need_live(B)
need_runc()
UID = "40e1a2b3-4d5e-4f60-8a7b-%012x" % (os.getpid() & 0xffffffffffff)
POD = ("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s"
       ".slice" % UID.replace("-", "_"))
NAMES = {"namespace": "shop", "pod": "cart-5f6d", "container_name": "app"}
CRASH = "cgsr-sh -c 'kill -SEGV $$'; "
WAIT = "while [ ! -e /go ]; do cgsr-sleep 0.05; done; "


def annotations(name):
    return {
        "io.kubernetes.cri.container-type": "container",
        "io.kubernetes.cri.container-name": name,
        "io.kubernetes.cri.sandbox-id": "f" * 64,
        "io.kubernetes.cri.sandbox-name": NAMES["pod"],
        "io.kubernetes.cri.sandbox-namespace": NAMES["namespace"],
        "io.kubernetes.cri.sandbox-uid": UID,
        "io.kubernetes.cri.image-name": "registry.example/app:1",
    }


class Ctr:
    """A container of the pod: its bundle, cgroup, and `runc run`."""

    def __init__(self, cg, state, script, name="app"):
        self.cid = secrets.token_hex(32)
        self.dir = os.path.join(state, "io.containerd.runtime.v2.task",
                                "k8s.io", self.cid)
        self.path = cg.path(POD + "/cri-containerd-%s.scope" % self.cid)
        bundle(self.dir, self.path, script, annotations(name), ("sleep",))
        self.p = subprocess.Popen(
            [RUNC, "run", "--bundle", self.dir,
             "cgs-ne-%d-%s" % (os.getpid(), self.cid[:8])],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)

    def go(self):
        open(os.path.join(self.dir, "rootfs", "go"), "w").close()

    def wait(self):
        """Its end; the bundle goes, as containerd deletes it."""
        _, err = self.p.communicate(timeout=60)
        shutil.rmtree(self.dir)
        check(self.p.returncode == 0, "runc run: exit %d: %s" %
              (self.p.returncode, err.decode(errors="replace").strip()))


def series(text, name):
    """[(labels dict, value)] of one family in a Prometheus text."""
    out = []
    for m in re.finditer(r"^%s\{(.*)\} (\S+)$" % name, text, re.M):
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
        out.append((labels, float(m.group(2))))
    return out


def per_cgroup(text, name, paths, **want):
    return sum(v for lab, v in series(text, name)
               if lab.get("cgroup") in paths and
               all(lab.get(k) == w for k, w in want.items()))


def of_workload(text, name, kind="container", **want):
    vals = [v for lab, v in series(text, name)
            if lab.get("kind") == kind and lab.get("pod") == NAMES["pod"] and
            all(lab.get(k) == w for k, w in want.items())]
    check(len(vals) <= 1, "%s: %d series" % (name, len(vals)))
    return vals[0] if vals else None


def check_events(objs, paths, what):
    n = 0
    for o in objs:
        if o.get("type") != "exit" or o.get("cgroup") not in paths:
            continue
        n += 1
        for k, w in NAMES.items():
            check(o.get(k) == w, "%s: exit of %s (pid %s) in %s: %s is %r, "
                  "want %r" % (what, o.get("comm"), o.get("pid"),
                               o["cgroup"][-20:], k, o.get(k), w))
    return n


def crash_loop(cg, state):
    c1 = Ctr(cg, state, WAIT + "cgsr-true; " + CRASH + "exit 0")
    time.sleep(1.0)  # running, its cgroup there, before the collector
    args = ["--listen", "127.0.0.1:0", "--events", "-f", "jsonl", "-i", "1",
            "--containerd-state", state]
    with Collector(B, args) as col:
        hp = port_from_stderr(col)
        time.sleep(1.5)
        c1.go()
        c1.wait()
        paths = [c1.path]
        for _ in range(2):  # restarted: a new id, a new cgroup
            time.sleep(0.5)
            c = Ctr(cg, state, "cgsr-true; " + CRASH + "exit 0")
            c.wait()
            paths.append(c.path)
        time.sleep(2.5)
        text = scrape(hp)
    objs = strict_json_lines(col.raw())
    if not any(o.get("attribution_source") == "kernel" for o in objs
               if o.get("type") == "rollup"):
        skip("the kernel source is not in use here")
    for p in paths:
        n = per_cgroup(text, "taskstat_process_signals_total", [p],
                       signal="SIGSEGV")
        check(n == 1, "%s: %d SIGSEGV in the scrape, want 1" % (p, n))
    crashes = of_workload(text, "taskstat_workload_crashes_total",
                          container="app")
    segv = of_workload(text, "taskstat_workload_process_signals_total",
                       container="app", signal="SIGSEGV")
    tasks = of_workload(text, "taskstat_workload_task_exits_total",
                        container="app")
    ctasks = per_cgroup(text, "taskstat_task_exits_total", paths)
    check(crashes == 3 and segv == 3,
          "workload crashes %s, SIGSEGV %s in the scrape that shows 3 "
          "cgroups with one each" % (crashes, segv))
    check(tasks == ctasks and tasks > 0, "workload task exits %s, its "
          "cgroups' %s in the same scrape" % (tasks, ctasks))
    pod = of_workload(text, "taskstat_workload_cgroups_total", kind="pod")
    check(pod == 1, "the pod's own cgroup is no pod workload: %s" % pod)
    unnamed = [v for lab, v in series(
        text, "taskstat_collector_workload_cgroups_left_out_total")
        if lab.get("reason") == "unnamed"]
    check(unnamed == [0], "cgroups left out unnamed: %s" % unnamed)
    n = check_events(objs, paths, "crash loop")
    n1 = check_events(objs, paths[:1], "crash loop")
    check(n1 >= 3, "%d exits of the container there before the collector"
          % n1)
    print("crash loop: one scrape shows 3 cgroups with a SIGSEGV each and "
          "the workload with crashes %d, task exits %d (its cgroups' %d); "
          "%d exit lines named (%d of the first container)" %
          (crashes, tasks, ctasks, n, n1))


def csv_exits(data, paths):
    rd = list(csv.reader(io.StringIO(data.decode())))
    ci, ni = rd[0].index("cgroup"), rd[0].index("namespace")
    got = [r for r in rd[1:] if r[0] == "exit" and r[ci] in paths]
    want = [NAMES["namespace"], NAMES["pod"], NAMES["container_name"]]
    for r in got:
        check(r[ni:ni + 3] == want, "rollout, collector B (CSV): exit row "
              "names %r, want %r" % (r[ni:ni + 3], want))
    return len(got)


def rollout(cg, state):
    script = ("i=0; while [ $i -lt 30 ]; do cgsr-sleep 0.1; " + CRASH +
              "i=$((i + 1)); done")
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "b.csv")
        with Collector(B, ["--events", "-f", "jsonl", "-i", "1",
                           "--containerd-state", state]) as a:
            c = Ctr(cg, state, script)
            time.sleep(1.0)
        with Collector(B, ["--events", "-f", "csv", "-i", "1", "-o", out,
                           "--containerd-state", state]):
            c.wait()
            time.sleep(0.5)
        with open(out, "rb") as f:
            nb = csv_exits(f.read(), [c.path])
    na = check_events(strict_json_lines(a.raw()), [c.path], "rollout, A")
    check(na > 0 and nb >= 5, "rollout: %d exits seen by A, %d by B" %
          (na, nb))
    print("rollout: %d exit lines of A, %d CSV rows of B (started while "
          "the container ran and crashed), all named" % (na, nb))


with tempfile.TemporaryDirectory() as tmp, Cgroups("names40") as cg:
    try:
        probe(tmp, cg.path("probe"))
        state = os.path.join(tmp, "containerd")
        os.makedirs(state)
        crash_loop(cg, state)
        rollout(cg, state)
    finally:
        v1_leftovers(cg.name)
print("OK")
