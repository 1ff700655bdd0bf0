#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Workload names from cgroup paths, end to end: real cgroups shaped as
systemd, docker, containerd, CRI-O, podman and both kubelet drivers make
(below the test's own cgroup, so nested under another prefix), a workload
in each, then the collector's JSON fields and, with
--prom-workload-labels, its Prometheus labels (promtool check metrics);
a hostile name names nothing; without the option no label is added."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check,  # noqa: E402
                     final_rollup, name_escape, need_live, need_tool,
                     run_cmd, utf8_lossy, workload)

B = arg(1, "taskstat-collect")
need_live(B)
promtool = need_tool("promtool")

ID = "4f3a1e0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"
UID = "0b5c1d6e-7f80-4a91-b2c3-d4e5f6a7b8c9"
UID_ = UID.replace("-", "_")
KPOD = ("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s"
        ".slice" % UID_)
GPOD = "kubepods.slice/kubepods-pod%s.slice" % UID_

# cgroup below the test's base -> what the JSON must say (absent: omitted)
SHAPES = {
    "system.slice/foo.service":
        dict(unit="foo.service", slice="system.slice"),
    "system.slice/system-getty.slice/getty@tty1.service":
        dict(unit="getty@tty1.service", slice="system-getty.slice"),
    "system.slice/docker-%s.scope" % ID:
        dict(unit="docker-%s.scope" % ID, slice="system.slice",
             runtime="docker", container=ID, container_id="docker://" + ID),
    "docker/%s" % ID:
        dict(runtime="docker", container=ID, container_id="docker://" + ID),
    KPOD + "/cri-containerd-%s.scope/sub" % ID:
        dict(unit="cri-containerd-%s.scope" % ID,
             slice="kubepods-burstable-pod%s.slice" % UID_,
             runtime="containerd", container=ID,
             container_id="containerd://" + ID, pod_uid=UID,
             qos_class="Burstable"),
    GPOD + "/crio-conmon-%s.scope" % ID:
        dict(unit="crio-conmon-%s.scope" % ID,
             slice="kubepods-pod%s.slice" % UID_, pod_uid=UID,
             qos_class="Guaranteed"),
    GPOD + "/crio-%s.scope" % ID:
        dict(unit="crio-%s.scope" % ID, slice="kubepods-pod%s.slice" % UID_,
             runtime="cri-o", container=ID, container_id="cri-o://" + ID,
             pod_uid=UID, qos_class="Guaranteed"),
    "kubepods/besteffort/pod%s/%s" % (UID, ID):
        dict(container=ID, pod_uid=UID, qos_class="BestEffort"),
    "machine.slice/libpod-%s.scope" % ID:
        dict(unit="libpod-%s.scope" % ID, slice="machine.slice",
             runtime="podman", container=ID, container_id="podman://" + ID),
    "machine.slice/libpod-conmon-%s.scope" % ID:
        dict(unit="libpod-conmon-%s.scope" % ID, slice="machine.slice"),
}
HOSTILE = b'system.slice/b"a d\t\xff\\x2.service'  # only the slice
# (cgroup2 refuses a newline in a name: the unit test has those)
KEYS = ("unit", "slice", "runtime", "container", "container_id", "pod_uid",
        "qos_class")
PROM_KEYS = ("unit", "slice", "container_id", "pod_uid", "qos_class")


def prom_labels(text, metric):
    """{cgroup: {label: value}} of one metric's series."""
    out = {}
    pair = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
    for line in text.splitlines():
        if not line.startswith(metric + "{"):
            continue
        inner = line[len(metric) + 1:line.rindex("}")]
        labels = {k: re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(
            m.group(1), m.group(1)), v) for k, v in pair.findall(inner)}
        out[labels["cgroup"]] = labels
    return out


def promcheck(data, what):
    r = subprocess.run([promtool, "check", "metrics"], input=data,
                       capture_output=True, timeout=30)
    check(r.returncode == 0, "promtool on %s: %s %s" %
          (what, r.stdout.decode(), r.stderr.decode()))


# the option alone is an error naming it
r = run_cmd([B, "--prom-workload-labels", "-d", "0.1"])
check(r.rc == 2 and "--prom-workload-labels" in r.err,
      "--prom-workload-labels without --listen/--textfile: %d %s" %
      (r.rc, r.err))

tmp = tempfile.mkdtemp(prefix="tsc-wl-")
try:
    with Cgroups("wl") as cg:
        dirs = {rel: cg.mkdir(rel) for rel in SHAPES}
        hostile = cg.mkdir(HOSTILE)
        tf = os.path.join(tmp, "wl.prom")
        plain = os.path.join(tmp, "plain.prom")
        lean = os.path.join(tmp, "lean.prom")
        with Collector(B, ["-f", "jsonl", "-i", "0.3", "--textfile", tf,
                           "--prom-workload-labels", "--prom-level",
                           "full"]) as col, \
                Collector(B, ["-f", "jsonl", "-i", "0.3", "--textfile",
                              plain]) as col2, \
                Collector(B, ["-f", "jsonl", "-i", "0.3", "--textfile",
                              lean, "--prom-workload-labels"]):
            for rel in SHAPES:
                workload(dirs[rel], procs=1)
            workload(hostile, procs=1)
            time.sleep(1.0)  # a snapshot after the work
        roll = by_path(final_rollup(col.lines()))
        for rel, want in SHAPES.items():
            got = roll.get(cg.path(rel))
            check(got is not None, "%s missing from the snapshot" % rel)
            check(got["tasks"] == 2, "%s: %d tasks" % (rel, got["tasks"]))
            have = {k: got[k] for k in KEYS if k in got}
            check(have == want, "%s: JSON names %s, want %s" %
                  (rel, have, want))
        # the test's own base names nothing; the hostile name inherits
        base = roll.get(cg.path())
        check(base is not None and not any(k in base for k in KEYS),
              "base cgroup: %s" % {k: base.get(k) for k in KEYS})
        hp = utf8_lossy(cg.path(HOSTILE))
        h = roll.get(hp)
        check(h is not None and h["tasks"] == 2, "hostile cgroup missing")
        check({k: h[k] for k in KEYS if k in h} == {"slice": "system.slice"},
              "hostile cgroup: %s" % {k: h[k] for k in KEYS if k in h})

        with open(tf, "rb") as f:
            data = f.read()
        promcheck(data, "--prom-workload-labels textfile")
        series = prom_labels(data.decode(), "taskstat_task_exits_total")
        for rel, want in SHAPES.items():
            lab = series.get(cg.path(rel))
            check(lab is not None, "no series for %s" % rel)
            wantp = {k: want[k] for k in PROM_KEYS if k in want}
            have = {k: v for k, v in lab.items() if k != "cgroup"}
            check(have == wantp, "%s: labels %s, want %s" %
                  (rel, have, wantp))
        hpe = name_escape(cg.path(HOSTILE))  # the label value's escape
        check(hpe in series, "hostile cgroup's series missing")
        check(set(series[hpe]) == {"cgroup", "slice"},
              "hostile labels: %s" % series[hpe])
        # every per-cgroup family carries them, not only one
        for m in ("taskstat_process_exits_total", "taskstat_delays_total",
                  "taskstat_process_lifetime_seconds_count"):
            lab = prom_labels(data.decode(), m)
            key = cg.path("docker/" + ID)
            check(lab.get(key, {}).get("container_id") == "docker://" + ID,
                  "%s without container_id: %s" % (m, lab.get(key)))
        # lean (the default): every label once, on taskstat_cgroup_info;
        # the series have cgroup, and unit unless it is a container's
        with open(lean, "rb") as f:
            ldata = f.read()
        promcheck(ldata, "lean --prom-workload-labels textfile")
        info = prom_labels(ldata.decode(), "taskstat_cgroup_info")
        lser = prom_labels(ldata.decode(), "taskstat_task_exits_total")
        for rel, want in SHAPES.items():
            wantp = {k: want[k] for k in PROM_KEYS if k in want}
            have = {k: v for k, v in info.get(cg.path(rel), {}).items()
                    if k != "cgroup"}
            check(have == wantp, "lean %s: info labels %s, want %s" %
                  (rel, have, wantp))
            unit = ({"unit": want["unit"]} if "unit" in want and
                    "container_id" not in want else {})
            have = {k: v for k, v in lser[cg.path(rel)].items()
                    if k != "cgroup"}
            check(have == unit, "lean %s: series labels %s" % (rel, have))
        with open(plain, "rb") as f:
            pdata = f.read()
        promcheck(pdata, "plain textfile")
        for lab in prom_labels(pdata.decode(),
                               "taskstat_task_exits_total").values():
            check(set(lab) == {"cgroup"}, "labels without the option: %s"
                  % lab)
        # the plain collector still writes the JSON names
        roll2 = by_path(final_rollup(col2.lines()))
        got = roll2.get(cg.path("docker/" + ID), {})
        check(got.get("container_id") == "docker://" + ID,
              "JSON names need no option: %s" % got.get("container_id"))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
