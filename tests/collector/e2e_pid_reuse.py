#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A pid handed out again at once, as CRIU restores pids: never a silent
wrong answer, with either attribution source.

    e2e_pid_reuse.py COLLECTOR [PAIRS]

PAIRS times (default 100): a child joins first/, exits and is reaped;
ns_last_pid is set back so that the next child, which joins second/, gets
the same pid. The collector writes every exit record (--events); each
pid's two process exits (told apart by lifetime: the second lives 50 ms)
are compared with the cgroups they ran in, per source, and printed as a
table (bench/README.md "A pid handed out again at once").
 - kernel source (where it loads): every exit in its own cgroup;
 - /proc fallback (--attribution exact): an exit is in its own cgroup,
   or counted as a guess (source "inferred"); never in the other child's
   cgroup, or anywhere else, as read from /proc ("proc"). The first child
   is reaped before its record is read, so /proc/<pid> is the second
   child's (or, before it moved, the parent's cgroup)."""
import collections
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import Cgroups, Collector, arg, check, need_live, skip  # noqa

B = arg(1, "taskstat-collect")
N = int(sys.argv[2]) if len(sys.argv) > 2 else 100
need_live(B)
NS_LAST_PID = "/proc/sys/kernel/ns_last_pid"
if not os.access(NS_LAST_PID, os.W_OK):
    skip(NS_LAST_PID + " is not writable here")


def join(cgdir):
    with open(os.path.join(cgdir, "cgroup.procs"), "w") as f:
        f.write("0")


def pairs_run(first, second, n):
    """n pairs; returns the pids the two children of each pair had."""
    pairs = []
    for _ in range(n):
        a = os.fork()
        if a == 0:
            join(first)
            os._exit(0)
        os.waitpid(a, 0)
        with open(NS_LAST_PID, "w") as f:
            f.write(str(a - 1))
        r, w = os.pipe()
        b = os.fork()
        if b == 0:
            os.close(r)
            join(second)
            os.write(w, b"x")
            time.sleep(0.05)
            os._exit(0)
        os.close(w)
        os.read(r, 1)
        os.close(r)
        os.waitpid(b, 0)
        pairs.append((a, b))
    return pairs


def where(cg, objs, pairs):
    """Counter of (child, cgroup it was counted in, source) over the pids
    both children had."""
    byp = collections.defaultdict(list)
    for e in objs:
        if e.get("type") == "exit" and e["kind"] == "process":
            byp[e["pid"]].append(e)
    out = collections.Counter()
    for a, b in pairs:
        recs = byp.get(a, [])
        if a != b or len(recs) != 2:
            continue  # the pid went elsewhere, or a third process had it
        recs.sort(key=lambda e: e["etime_s"])
        for who, e in zip(("first", "second"), recs):
            got = "(elsewhere)"
            for rel in ("first", "second"):
                if e["cgroup"] == cg.path(rel):
                    got = rel
            out[(who, got, e["source"])] += 1
    return out


def run(cg, attribution):
    first, second = cg.mkdir("first"), cg.mkdir("second")
    with Collector(B, ["--attribution", attribution, "--events", "-f",
                       "jsonl", "-i", "1"]) as col:
        pairs = pairs_run(first, second, N)
        time.sleep(1.0)
    got = where(cg, col.lines(), pairs)
    same = sum(1 for a, b in pairs if a == b)
    print("attribution %s: %d pairs, %d with the same pid, %d of them "
          "with exactly two exits" % (attribution, N, same,
                                      sum(got.values()) // 2))
    print("  %-8s %-12s %-9s %s" % ("child", "counted in", "source",
                                     "exits"))
    for (who, rel, src), c in sorted(got.items()):
        print("  %-8s %-12s %-9s %d" % (who, rel, src, c))
    check(sum(got.values()) >= N, "%s: only %d exits of pids both children "
          "had (ns_last_pid ignored?)" % (attribution, sum(got.values())))
    return got


with Cgroups("reuse-k") as cg:
    got = run(cg, "auto")
    if any(src == "kernel" for (_, _, src) in got):
        for (who, rel, src), c in got.items():
            check(rel == who and src == "kernel",
                  "kernel source: %d exits of the %s child in %s (%s)" %
                  (c, who, rel, src))
    else:
        print("(the kernel source did not load: auto used /proc)")

with Cgroups("reuse-p") as cg:
    got = run(cg, "exact")
    for (who, rel, src), c in got.items():
        check(rel == who or src == "inferred",
              "/proc fallback: %d exits of the %s child counted in %s, "
              "source %s, not as a guess" % (c, who, rel, src))
print("OK")
