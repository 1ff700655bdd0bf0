#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The exec program's cost (issue 39): ns per exec of the collector's
cgs_exec (run_time_ns / run_cnt, kernel.bpf_stats_enabled=1) for a known
executable run over and over ("known": this CPU's near cache), 64 known
ones in turn ("known64": mostly the LRU hash look-up) and new ones
("new": a fresh copy per exec: the look-ups, the path walk, the ring
buffer record, the map update).

    bench/run-execcost.py build/cmd/taskstat-collect [--n 2000] [--reps 5]

Root. Other processes' execs meanwhile count too (printed: runs seen
against execs made). Sets kernel.bpf_stats_enabled back as it was."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("collector")
ap.add_argument("--n", type=int, default=2000)
ap.add_argument("--reps", type=int, default=5)
a = ap.parse_args()
STATS = "/proc/sys/kernel/bpf_stats_enabled"


def prog_stats(pid):
    """(run_time_ns, run_cnt) of cgs_exec held by pid."""
    out = subprocess.run(["bpftool", "prog", "show", "-j"],
                         capture_output=True, text=True).stdout
    ids = {p["id"] for p in json.loads(out or "[]")
           if p.get("name") == "cgs_exec"}
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        info = {}
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                for ln in f:
                    k, _, v = ln.partition(":")
                    info[k.strip()] = v.strip()
        except OSError:
            continue
        if info.get("prog_id") and int(info["prog_id"]) in ids:
            return int(info["run_time_ns"]), int(info["run_cnt"])
    sys.exit("no cgs_exec program in the collector (kernel source?)")


def execs(paths):
    for p in paths:
        subprocess.run([p])


with open(STATS) as f:
    was = f.read().strip()
tmp = tempfile.mkdtemp(prefix="execcost-", dir="/var/tmp")
col = subprocess.Popen([a.collector, "--events", "-f", "jsonl", "-o",
                        os.path.join(tmp, "out.jsonl"), "-i", "5"],
                       stderr=subprocess.PIPE)
res = {"known": [], "known64": [], "new": []}
try:
    time.sleep(2)
    with open(STATS, "w") as f:
        f.write("1")
    true = os.path.realpath(shutil.which("true"))
    k64 = []
    for i in range(64):
        k64.append(os.path.join(tmp, "k%d" % i))
        shutil.copy2(true, k64[-1])
    execs(k64)
    for rep in range(a.reps):
        for kind in ("known", "known64", "new"):
            if kind == "known":
                paths = [true] * a.n
            elif kind == "known64":
                paths = (k64 * (a.n // 64 + 1))[:a.n]
            else:
                d = os.path.join(tmp, "r%d" % rep)
                os.mkdir(d)
                paths = []
                for i in range(a.n):
                    p = os.path.join(d, "t%d" % i)
                    shutil.copy2(true, p)
                    paths.append(p)
            t0, c0 = prog_stats(col.pid)
            execs(paths)
            t1, c1 = prog_stats(col.pid)
            ns = (t1 - t0) / max(c1 - c0, 1)
            res[kind].append(ns)
            print("rep %d %-5s %7.1f ns/exec (%d runs, %d execs made)" %
                  (rep, kind, ns, c1 - c0, a.n), flush=True)
finally:
    with open(STATS, "w") as f:
        f.write(was)
    col.terminate()
    col.wait()
    shutil.rmtree(tmp)
for kind, v in res.items():
    print("%-5s median %.1f ns/exec [%.1f-%.1f]" %
          (kind, statistics.median(v), min(v), max(v)))
