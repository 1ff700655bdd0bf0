#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which binary (issue 39 item 1, a partial): with --events, the exit of
a short-lived system binary names its executable ("exe", from the bin
directories read at start), a binary running when the collector started
and deleted since as "<path> (deleted)"; the rollup line counts the
look-ups known and unknown. CSV's exit rows carry the same path, device
and inode in their exe_* columns."""
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
from tsc_e2e import (Collector, arg, check, final_rollup,  # noqa: E402
                     need_live, skip, strict_json_lines)

B = arg(1, "taskstat-collect")
need_live(B)
sleep = shutil.which("sleep")
if not sleep:
    skip("no sleep(1)")
sleep = os.path.realpath(sleep)
tmp = tempfile.mkdtemp(prefix="tsc-exe-")
gone = os.path.join(tmp, "cgs-exe-gone")
shutil.copy(sleep, gone)
try:
    # the copy runs before the collector starts: its first scan (before it
    # sheds its capabilities) reads root's /proc/<pid>/exe
    b = subprocess.Popen([gone, "4"])
    with Collector(B, ["-f", "jsonl", "-i", "0.3", "--events"]) as col, \
            Collector(B, ["-f", "csv", "-i", "0.3", "--events"]) as colc:
        a = subprocess.Popen([sleep, "0.5"])  # named from /usr/bin
        os.unlink(gone)  # the next scans mark it deleted
        a.wait()
        b.wait()
        time.sleep(0.5)
    objs = strict_json_lines(col.raw())
    # by pid and command: other exits on a busy host reuse pid numbers
    ev = {o["pid"]: o for o in objs if o["type"] == "exit" and
          o["kind"] == "process" and o["comm"] in ("sleep", "cgs-exe-gone")}
    check(a.pid in ev and b.pid in ev, "exits missing")
    for p in (a.pid, b.pid):
        print({k: ev[p].get(k) for k in ("pid", "tgid", "comm", "exe")})
    check(ev[a.pid].get("exe") == sleep, "exe of %s: %r" %
          (sleep, ev[a.pid].get("exe")))
    check(ev[b.pid].get("exe") == gone + " (deleted)",
          "exe of the deleted copy: %r" % ev[b.pid].get("exe"))
    roll = final_rollup(objs)
    n = roll.get("exe")
    check(n and n["known"] >= 2 and n["entries"] >= 2,
          "rollup exe counts: %r" % n)
    print("exe counts", n)
    rows = [r for r in csv.DictReader(io.StringIO(colc.raw().decode()))
            if r["type"] == "exit" and r["kind"] == "process" and
            r["pid"] == str(a.pid) and r["comm"] == "sleep"]
    check(len(rows) == 1, "CSV exit rows of pid %d: %d" % (a.pid, len(rows)))
    st = os.stat(sleep)
    got = {k: rows[0][k] for k in ("exe", "exe_dev", "exe_inode")}
    want = {"exe": sleep, "exe_inode": str(st.st_ino),
            "exe_dev": "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))}
    check(got == want, "CSV exe columns %r, expected %r" % (got, want))
    print("ok")
finally:
    shutil.rmtree(tmp)
