#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Cgroup names that a lossy or suffix-stripping rendering confuses.

deleted  a live cgroup named "x (deleted)" (cgroupfs allows it) must be
         reported as ".../x (deleted)", not as ".../x" (the kernel appends
         " (deleted)" to the /proc/<pid>/cgroup line of a removed cgroup2
         directory, and the parser strips that suffix unconditionally);
dup      two cgroups whose names differ only in invalid UTF-8 bytes
         (".../dup\\xff", ".../dup\\xfe") must stay two distinct keys in
         every format: JSON has cgroup_hex; CSV rows and Prometheus label
         values carry the reversible escape (\\xff, \\xfe; cmd/common/escape.h),
         each with its own 2 tasks and no duplicate series.
Arguments after the binary select cases (default: both)."""
import csv
import io
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, fail,  # noqa: E402
                     final_rollup, keep, name_escape, name_unescape,
                     need_live, strict_json_lines, workload)

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
        # each name under its own rendering, which decodes back to it
        wants = {n: name_escape(cg.path(n)) for n in (b"dup\xff", b"dup\xfe")}
        check(len(set(wants.values())) == 2, "renderings collide: %s" % wants)
        for n, w in wants.items():
            check(name_unescape(w) == cg.path(n), "%r does not decode" % w)
        table = list(csv.reader(io.StringIO(cdata.decode(), newline="")))
        col = {k: i for i, k in enumerate(table[0])}
        rows = [r for r in table[1:] if r[col["type"]] == "cgroup" and
                r[col["final"]] == "true"]
        for n, w in wants.items():
            got = [r for r in rows if r[col["cgroup"]] == w]
            if not got or got[-1][col["tasks"]] != "2":
                seen = {r[col["cgroup"]] for r in rows}
                bad.append("dup: final CSV rows for %r: %s (dup rows: %s)" %
                           (w, got[-1:], sorted(c for c in seen
                                                if "dup" in c)))
        series, keys = {}, set()
        for line in pdata.decode().split("\n"):
            if not line.startswith("taskstat_task_exits_total{"):
                continue
            key, value = line.rsplit(" ", 1)
            if key in keys:
                bad.append("dup: duplicate series %s" % key)
            keys.add(key)
            m = re.match(r'taskstat_task_exits_total\{cgroup="((?:[^"\\]|'
                         r'\\.)*)"\}$', key)
            if m:
                v = re.sub(r"\\(.)", lambda e: {"n": "\n"}.get(
                    e.group(1), e.group(1)), m.group(1))
                series[v] = float(value)
        for n, w in wants.items():
            if series.get(w) != 2:
                bad.append("dup: Prometheus series for %r: %s (dup series: "
                           "%s)" % (w, series.get(w),
                                    [k for k in series if "dup" in k]))
    if bad:
        fail("; ".join(bad))
    print("ok: %s" % ", ".join(CASES))


main()
