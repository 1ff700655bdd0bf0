#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Cgroup names that a lossy or suffix-stripping rendering confuses.

deleted  a live cgroup named "x (deleted)" (cgroupfs allows it) must be
         reported as ".../x (deleted)", not as ".../x" (the kernel appends
         " (deleted)" to the /proc/<pid>/cgroup line of a removed cgroup2
         directory, and the parser strips that suffix unconditionally);
dup      two cgroups whose names differ only in invalid UTF-8 bytes
         (".../dup\\xff", ".../dup\\xfe") must stay two distinct keys in
         every format: JSON has cgroup_hex, but CSV rows and Prometheus
         label sets must not collide either (a scrape with two samples of
         one series is rejected).
Arguments after the binary select cases (default: both)."""
import csv
import io
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, fail,  # noqa: E402
                     final_rollup, keep, need_live, strict_json_lines,
                     utf8_lossy, workload)

B = arg(1, "taskstat-collect")
need_live(B)
CASES = [a for a in sys.argv[2:] if not a.startswith("-")] or [
    "deleted", "dup"]


def main():
    bad = []
    with Cgroups("ambig") as cg:
        names = []
        if "deleted" in CASES:
            names.append(b"x (deleted)")
        if "dup" in CASES:
            names += [b"dup\xff", b"dup\xfe"]
        dirs = [(cg.mkdir(n), cg.path(n)) for n in names]
        prom = tempfile.mktemp(prefix="tsc-h-prom-")
        try:
            with Collector(B, ["-f", "jsonl", "-i", "0.5", "--textfile",
                               prom]) as cj, \
                    Collector(B, ["-f", "csv", "-i", "0.5"]) as cc:
                for d, _ in dirs:
                    workload(d, procs=1)
                time.sleep(0.8)
            jdata, cdata = cj.raw(), cc.raw()
            with open(prom, "rb") as f:
                pdata = f.read()
        finally:
            if os.path.exists(prom):
                os.unlink(prom)
    keep("ambiguous.jsonl", jdata)
    keep("ambiguous.csv", cdata)
    keep("ambiguous.prom", pdata)

    roll = final_rollup(strict_json_lines(jdata))
    paths = [(c["cgroup"], c.get("cgroup_hex"), c["tasks"])
             for c in roll["cgroups"]]
    if "deleted" in CASES:
        want = cg.path(b"x (deleted)").decode()
        got = [p for p in paths if p[0] == want and p[2] == 2]
        if not got:
            bad.append("deleted: no %r with 2 tasks; cgroups: %s" %
                       (want, [p for p in paths if "ambig" in p[0]]))
    if "dup" in CASES:
        want = utf8_lossy(cg.path(b"dup\xff"))
        rows = [r for r in csv.reader(io.StringIO(cdata.decode(),
                                                  newline=""))
                if r and r[0] == "cgroup" and r[3] == "true" and
                r[8] == want]
        # columns: type,time,seq,final,...,cgroup (index 8)
        if len(rows) == 2 and rows[0][8] == rows[1][8]:
            bad.append("dup: CSV has two final rows with the same cgroup "
                       "field %r" % want)
        series = [line for line in pdata.decode().split("\n")
                  if line.startswith("taskstat_task_exits_total{") and
                  want in line]
        if len(set(s.rsplit(" ", 1)[0] for s in series)) != 2:
            bad.append("dup: Prometheus series %s collide" % series)
    if bad:
        fail("; ".join(bad))
    print("ok: %s" % ", ".join(CASES))


main()
