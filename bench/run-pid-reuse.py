#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What each attribution source makes of a pid handed out again at once.

    bench/run-pid-reuse.py [COLLECTOR [PAIRS [ATTRIBUTION]]]

As root. PAIRS times (default 100): a child joins cgroup first/, exits and
is reaped; ns_last_pid is set back so that the next child, which joins
second/, gets the same pid (as CRIU restores pids). The collector
(--attribution exact by default: the /proc fallback; `kernel` for the
kernel source) writes every exit record (-e); each pid's two process
records are matched with the cgroups they ran in and counted by where
they went (the two told apart by lifetime: the second lives 50 ms) and
the source the collector gave (proc: read from
/proc/<pid>/cgroup, inferred: from a parent, counted as a guess).
A benchmark of a known limit (README "Known limitations"), not a test:
it prints figures and asserts nothing.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

CG2 = "/sys/fs/cgroup/unified"


def pairs_run(base, n):
    first, second = base + "/first", base + "/second"
    for d in (base, first, second):
        os.makedirs(d, exist_ok=True)
    pairs = []
    for _ in range(n):
        a = os.fork()
        if a == 0:
            with open(first + "/cgroup.procs", "w") as f:
                f.write("0")
            os._exit(0)
        os.waitpid(a, 0)
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(a - 1))
        r, w = os.pipe()
        b = os.fork()
        if b == 0:
            os.close(r)
            with open(second + "/cgroup.procs", "w") as f:
                f.write("0")
            os.write(w, b"x")
            time.sleep(0.05)
            os._exit(0)
        os.close(w)
        os.read(r, 1)
        os.close(r)
        os.waitpid(b, 0)
        pairs.append((a, b))
    return pairs


def main():
    collector = sys.argv[1] if len(sys.argv) > 1 else "build/cmd/taskstat-collect"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    attribution = sys.argv[3] if len(sys.argv) > 3 else "exact"
    if not os.path.isdir(CG2):
        sys.exit("no cgroup2 at " + CG2)
    base = "%s/cgs-reuse-%d" % (CG2, os.getpid())
    out = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
    col = subprocess.Popen([collector, "--attribution", attribution, "-e",
                            "-f", "jsonl", "-i", "1", "-o", out],
                           stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    try:
        pairs = pairs_run(base, n)
        time.sleep(1.5)
    finally:
        col.terminate()
        col.wait()
    rel = base[len(CG2):]
    byp = collections.defaultdict(list)
    with open(out) as f:
        for line in f:
            e = json.loads(line)
            if e.get("type") == "exit" and e["kind"] == "process":
                byp[e["pid"]].append(e)
    os.unlink(out)
    for d in ("/first", "/second", ""):
        os.rmdir(base + d)
    same = [(a, b) for a, b in pairs if a == b]
    where = collections.Counter()
    for a, _ in same:
        recs = byp.get(a, [])
        if len(recs) != 2:
            where[("(records missing)", "", "")] += 1
            continue
        # the second sleeps 50 ms, the first exits at once: told apart by
        # lifetime, not by output order (the shards' records interleave)
        recs.sort(key=lambda e: e["etime_s"])
        for who, e in zip(("first", "second"), recs):
            cg = e["cgroup"]
            got = cg[len(rel):] if cg.startswith(rel + "/") else "(elsewhere)"
            where[(who, got.lstrip("/"), e["source"])] += 1
    print("attribution %s: %d pairs, %d with the same pid" %
          (attribution, n, len(same)))
    print("%-8s %-12s %-9s %s" % ("process", "counted in", "source", "exits"))
    for (who, got, src), c in sorted(where.items()):
        print("%-8s %-12s %-9s %d" % (who, got, src, c))


if __name__ == "__main__":
    main()
