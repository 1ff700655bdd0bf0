#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Output formats with hostile names: JSON lines and CSV (RFC 4180) stay
parseable whatever bytes a comm or cgroup path holds; the table is aligned
and escaped; the Prometheus text passes promtool; --depth folds;
--no-tgid drops the aggregate records."""
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check,  # noqa: E402
                     final_rollup, name_escape, need_live,
                     strict_json_lines, workload)

B = arg(1, "taskstat-collect")
need_live(B)
COMM = b'q"u,o\\t\n\xffe'          # quote, comma, backslash, LF, bad UTF-8
WEIRD = b'we"ird, na\\me \xfe\x01'  # a cgroup directory name
tmp = tempfile.mkdtemp(prefix="tsc-fmt-")


def run(args, work):
    """work() under a collector run with args: (its result, stdout)."""
    with Collector(B, args) as col:
        res = work()
        time.sleep(0.5)
    return res, col.raw()


try:
    with Cgroups("fmt") as cg:
        wdir = cg.mkdir(WEIRD)
        wpath = cg.path(WEIRD)
        wpath_json = wpath.decode("utf-8", "replace")

        # JSON lines
        w, out = run(["-f", "jsonl", "-i", "0.3", "--events"],
                     lambda: workload(wdir, procs=3, threads=2, comm=COMM))
        objs = strict_json_lines(out)
        roll = final_rollup(objs)
        c = by_path(roll).get(wpath_json)
        check(c is not None, "weird cgroup missing: %s" %
              sorted(by_path(roll)))
        check(bytes.fromhex(c["cgroup_hex"]) == wpath, "cgroup_hex")
        check(c["tasks"] == w.tasks, "weird cgroup tasks %d" % c["tasks"])
        ev = [e for e in objs if e["type"] == "exit" and
              e["cgroup"] == wpath_json and e["kind"] != "tgid"]
        check(len(ev) == w.tasks, "events in weird cgroup: %d" % len(ev))
        check(all(bytes.fromhex(e["comm_hex"]) == COMM for e in ev),
              "comm_hex: %r" % [e.get("comm_hex") for e in ev])
        check(all(e["comm"] == COMM.decode("utf-8", "replace") for e in ev),
              "comm: %r" % ev[0]["comm"])
        check(b"\n" not in out.replace(b"}\n", b""), "raw newline in a line")

        # CSV, RFC 4180
        w, out = run(["-f", "csv", "-i", "0.3", "--events"],
                     lambda: workload(wdir, procs=2, threads=1, comm=COMM))
        check(out.startswith(b"type,time,"), "csv header")
        check(b"\r\n" in out, "CRLF line ends")
        rows = list(csv.reader(io.StringIO(out.decode("utf-8"),
                                           newline="")))
        hdr = rows[0]
        check(len({len(r) for r in rows}) == 1, "ragged csv rows")
        col = {k: i for i, k in enumerate(hdr)}
        for k in ("type", "cgroup", "tasks", "processes", "tasks_subtree",
                  "processes_subtree", "utime_s", "stime_s", "records",
                  "dropped", "unattributed", "malformed", "pid", "comm",
                  "kind", "exit_status"):
            check(k in col, "csv lacks column %s" % k)
        wpath_esc = name_escape(wpath)  # the reversible escape
        cgrows = [r for r in rows if r[col["type"]] == "cgroup" and
                  r[col["cgroup"]] == wpath_esc]
        check(cgrows and int(cgrows[-1][col["tasks"]]) == w.tasks,
              "csv cgroup rows: %r" % cgrows[-1:])
        exits = [r for r in rows if r[col["type"]] == "exit" and
                 r[col["cgroup"]] == wpath_esc]
        check(len(exits) >= w.tasks and
              all(r[col["comm"]] == name_escape(COMM)
                  for r in exits if r[col["kind"]] != "tgid"),
              "csv exit rows")
        check(any(r[col["type"]] == "totals" for r in rows), "totals row")

        # Table: aligned header, escaped path
        w, out = run(["-f", "table", "--wide", "-i", "0.3"],
                     lambda: workload(wdir, procs=2, threads=0))
        text = out.decode("utf-8")
        check("  final  records " in text, "table header line")
        hdrs = [l for l in text.splitlines() if l.lstrip().startswith("TASKS")]
        check(hdrs, "table column header")
        rowsx = [l for l in text.splitlines() if "we\\\"ird" in l]
        check(rowsx and "\\u0001" in rowsx[-1] and "\x01" not in text and
              "na\\\\me \\xfe" in rowsx[-1],
              "table row for the weird cgroup: %r" % rowsx[-1:])
        check(rowsx[-1].index("/cgs-") == hdrs[-1].index("CGROUP"),
              "columns not aligned")

        # Prometheus text with that label
        prom = os.path.join(tmp, "m.prom")
        w, out = run(["-f", "jsonl", "-i", "0.3", "--textfile", prom],
                     lambda: workload(wdir, procs=1, threads=0))
        if shutil.which("promtool"):
            r = subprocess.run(["promtool", "check", "metrics"],
                               stdin=open(prom, "rb"), capture_output=True)
            check(r.returncode == 0, "promtool: %r" % r.stdout)
        t = open(prom, "rb").read().decode("utf-8")
        # value we"ird, na\\me \xfe<01> (the reversible escape), in the
        # exposition format's escapes
        check('we\\"ird, na\\\\\\\\me \\\\xfe\x01' in t,
              "prom label escaping")

        # --depth 1 folds a/b into the test's base cgroup
        deep = cg.mkdir("a/b")
        w, out = run(["-f", "jsonl", "-i", "0.3", "--depth", "1"],
                     lambda: workload(deep, procs=2, threads=1))
        roll = final_rollup(strict_json_lines(out))
        paths = by_path(roll)
        check(not any(p.startswith(cg.path() + "/") for p in paths),
              "--depth 1 left deeper cgroups: %s" % sorted(paths))
        check(paths[cg.path()]["tasks"] == w.tasks, "folded count")
        check(all(c["depth"] <= 1 for c in roll["cgroups"]), "depths")

        # --no-tgid: no aggregate records at all
        w, out = run(["-f", "jsonl", "-i", "0.3", "--events", "--no-tgid"],
                     lambda: workload(deep, procs=1, threads=4))
        objs = strict_json_lines(out)
        check(not [o for o in objs if o.get("kind") == "tgid"],
              "tgid events with --no-tgid")
        check(all(c["tgid_records"] == 0 for c in final_rollup(objs)
                  ["cgroups"]), "tgid_records with --no-tgid")
        os.rmdir(wdir)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
