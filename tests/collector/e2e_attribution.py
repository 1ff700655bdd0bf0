#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attribution sources of the collector, as an operator meets them:
 - default (auto) with CAP_BPF/CAP_PERFMON: the kernel source, said on
   stderr and in every snapshot (attribution_source), every event line
   naming its source; a workload that moves itself into its cgroup right
   after fork and whose children are reaped at once lands exactly there,
   also under --user nobody (the program is loaded before privileges go);
 - without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (capsh drops them): auto
   falls back to /proc with a one-line reason naming what is missing, and
   the snapshot says "proc"; --attribution kernel exits 1 with a message;
 - Prometheus text carries the source and the kernel counters."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check,  # noqa: E402
                     final_rollup, need_live, need_tool, skip, workload)

B = arg(1, "taskstat-collect")
need_live(B)
CAPSH = need_tool("capsh")
# capsh runs a shell after "--": exec the collector with its arguments
DROP = ["--drop=cap_bpf,cap_perfmon,cap_sys_admin", "--", "-c",
        'exec "$0" "$@"']


def self_moving(cgdir, children=40):
    """A child that joins cgdir right after fork, forks `children` that
    exit at once and are reaped at once, and exits; reaped at once (no
    linger: /proc/<pid>/cgroup is gone before a /proc reader could look,
    only the kernel source knows). Returns the tasks it caused."""
    return workload(cgdir, procs=children, linger=0).tasks


def run(args, wrap=None, work=None):
    """work() under a collector run with args (exit 0 required): its
    JSON lines, its stderr and what work() returned."""
    with Collector(B, args, wrap=wrap) as col:
        n = work() if work else 0
        time.sleep(0.4)
    return col.lines(), col.stderr(), n


with Cgroups("attr") as cg:
    k = cg.mkdir("k")
    objs, err, n = run(["-f", "jsonl", "-i", "0.3", "--events"],
                       work=lambda: self_moving(k))
    if "attribution: kernel" not in err:
        skip("the kernel source does not load here: " + err.strip())
    roll = final_rollup(objs)
    check(roll.get("attribution_source") == "kernel",
          "attribution_source %r" % roll.get("attribution_source"))
    c = by_path(roll).get(cg.path("k"))
    check(c is not None and c["tasks"] == n and c["processes"] == n,
          "kernel source: %s holds %r, want %d" % (cg.path("k"), c, n))
    check(c["inferred"] == 0, "inferred %d with the kernel source" %
          c["inferred"])
    att = roll["attribution"]
    check(att["kernel"] + att["kernel_unmatched"] == roll["records"],
          "attribution %r, records %d" % (att, roll["records"]))
    # ours all from the kernel (the host's exits between registering and
    # loading the program have no entry: the fallback counts them)
    exits = [o for o in objs if o["type"] == "exit"
             and o["cgroup"] == cg.path("k")]
    check(len(exits) == n and all(e["source"] == "kernel" for e in exits),
          "event sources in %s: %r" % (cg.path("k"),
                                       [e["source"] for e in exits]))
    print("ok: kernel source: %d/%d in %s, every event 'kernel'" %
          (c["tasks"], n, cg.path("k")))

    # Loaded before the privileges are dropped.
    u = cg.mkdir("u")
    objs, err, n = run(["-f", "jsonl", "-i", "0.3", "--user", "nobody"],
                       work=lambda: self_moving(u))
    roll = final_rollup(objs)
    c = by_path(roll).get(cg.path("u"))
    check(roll.get("attribution_source") == "kernel" and c and
          c["tasks"] == n, "--user nobody: %r in %s" % (c, cg.path("u")))
    print("ok: --user nobody keeps the kernel source (%d/%d)" %
          (c["tasks"], n))

    # No BPF privilege: auto falls back, saying why; kernel refuses.
    objs, err, _ = run(["-f", "jsonl", "-i", "0.3"], wrap=[CAPSH] + DROP)
    line = [l for l in err.splitlines() if "attribution:" in l]
    check(line and "exact" in line[0] and "CAP_BPF" in line[0],
          "fallback message: %r" % err)
    roll = final_rollup(objs)
    check(roll.get("attribution_source") == "proc",
          "attribution_source %r" % roll.get("attribution_source"))
    print("ok: without CAP_BPF: %s" % line[0])
    r = subprocess.run([CAPSH] + DROP + [B, "--attribution", "kernel", "-f",
                                         "jsonl", "-d", "1"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and "--attribution kernel" in r.stderr and
          "CAP_BPF" in r.stderr, "--attribution kernel without CAP_BPF: "
          "exit %d, %r" % (r.returncode, r.stderr))
    print("ok: --attribution kernel without CAP_BPF: exit 1: %s" %
          r.stderr.strip())

    # Prometheus text names the source.
    tf = "/tmp/tsc-attr-%d.prom" % os.getpid()
    try:
        run(["-f", "jsonl", "-i", "0.3", "--textfile", tf])
        with open(tf) as f:
            prom = f.read()
    finally:
        if os.path.exists(tf):
            os.unlink(tf)
    for want in ('taskstat_collector_attribution_source{source="kernel"} 1',
                 'taskstat_collector_attributed_total{via="kernel"}',
                 "taskstat_collector_kernel_lost_total 0"):
        check(want in prom, "metrics lack %r" % want)
    # taskstat_inferred_records_total: at the lean default only from a
    # cgroup's first inferred record on (a record the kernel source had no
    # entry for, on a busy host), so neither its presence nor its absence
    # says anything here; test_collect_units checks the rule
    print("ok: metrics name the source")
