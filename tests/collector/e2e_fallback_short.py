#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The /proc fallback names short-lived work: a shell that joins a fresh
cgroup and runs 30 /bin/true is gone ~30 ms later, and its commands'
records must still reach its cgroup (the fallback infers a reaped
process's cgroup from its live parent). The shell itself is often reaped
before its own exit is read; it was read as the parent of one of its
children, else it went to its own parent's cgroup (4 of 12 runs). With the library's adaptive
batch wait (up to 50 ms) most of them went to / (1 of 4 runs named);
the collector waits 1 ms on the fallback (TSC_FALLBACK_BATCH_MS).
Three such shells, each in its own cgroup, with --attribution exact."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check,  # noqa: E402
                     final_rollup, need_live)

B = arg(1, "taskstat-collect")
need_live(B)
N = 30

with Cgroups("fbshort") as cg:
    dirs = [cg.mkdir("s%d" % k) for k in range(3)]
    with Collector(B, ["-f", "jsonl", "--interval", "0.5", "--attribution",
                       "exact"]) as col:
        for d in dirs:
            r = subprocess.run(
                ["sh", "-c", 'echo $$ > "$1/cgroup.procs" || exit 1; i=0; '
                 'while [ $i -lt %d ]; do /bin/true; i=$((i + 1)); done' % N,
                 "sh", d], capture_output=True, text=True, timeout=60)
            check(r.returncode == 0, "the shell failed: %s" % r.stderr)
            time.sleep(0.3)
        time.sleep(0.8)
    roll = final_rollup(col.lines())
    rows = by_path(roll)
    got = [rows.get(cg.path("s%d" % k), {}).get("processes", 0)
           for k in range(3)]
    check(got == [N + 1] * 3, "processes per cgroup %s, want %d each "
          "(attribution %s)" % (got, N + 1, roll.get("attribution")))
print("ok: %d x %d processes named by the /proc fallback" % (3, N + 1))
