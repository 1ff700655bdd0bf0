#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""--record then --replay: the replay (unprivileged) yields the same
per-cgroup counts, totals and events as the live run; damaged captures are
refused with clear messages."""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check,  # noqa: E402
                     final_rollup, need_live, run_cmd, strict_json_lines,
                     workload)

B = arg(1, "taskstat-collect")
need_live(B)
tmp = tempfile.mkdtemp(prefix="tsc-rr-")
os.chmod(tmp, 0o755)
cap = os.path.join(tmp, "exits.tscap")


def replay(args, user=None):
    cmd = [B, "--replay", cap, "-f", "jsonl"] + args
    if user:
        cmd = ["setpriv", "--reuid=" + user, "--regid=nogroup",
               "--clear-groups", "--inh-caps=-all"] + cmd
    return run_cmd(cmd)[:3]


try:
    with Cgroups("rr") as cg:
        d = cg.mkdir("work")
        with Collector(B, ["-f", "jsonl", "-i", "0.3", "--events",
                           "--record", cap]) as col:
            w1 = workload(d, procs=6, threads=3)
            w2 = workload(d, procs=2, threads=5)
            time.sleep(0.5)
        live = col.lines()
        lroll = final_rollup(live)
        p = cg.path("work")
        check(by_path(lroll)[p]["tasks"] == w1.tasks + w2.tasks,
              "live count in %s" % p)

        # Replay without any privilege (as nobody if setpriv exists).
        user = "nobody" if shutil.which("setpriv") else None
        rc, out, err = replay(["--events"], user)
        check(rc == 0, "replay exit %d: %s" % (rc, err))
        rep = strict_json_lines(out)
        rroll = final_rollup(rep)
        check(rroll["replay"] is True, "replay flag not set")
        for k in ("records", "dropped", "malformed"):
            check(rroll[k] == lroll[k], "%s: live %d replay %d" %
                  (k, lroll[k], rroll[k]))
        # Live snapshots may also list cgroups interned without any exit
        # (e.g. read for a process that is still alive); compare those
        # that have records.
        def counted(roll):
            return {p: c for p, c in by_path(roll).items()
                    if c["tasks_subtree"] or c["tgid_records"]}
        lc, rcg = counted(lroll), counted(rroll)
        check(set(lc) == set(rcg), "cgroup sets differ: %s vs %s" %
              (sorted(lc), sorted(rcg)))
        for path, c in lc.items():
            for k in ("tasks", "processes", "tgid_records", "utime_s",
                      "stime_s", "tasks_subtree", "processes_subtree",
                      "read_bytes", "minflt"):
                check(c[k] == rcg[path][k], "%s %s: live %s replay %s" %
                      (path, k, c[k], rcg[path][k]))
        lev = sorted((e["pid"], e["tgid"], e["kind"], e["cgroup"])
                     for e in live if e["type"] == "exit")
        rev = sorted((e["pid"], e["tgid"], e["kind"], e["cgroup"])
                     for e in rep if e["type"] == "exit")
        check(lev == rev, "events differ: %d live, %d replayed" %
              (len(lev), len(rev)))
        # Snapshots follow the recorded clock (several for ~1.5 s at 0.3).
        check(len([o for o in rep if o["type"] == "rollup"]) >= 2,
              "replay wrote only the final snapshot")

        # Replay through the other formats too.
        rc, out, err = replay(["-f", "csv"])
        check(rc == 0 and out.startswith(b"type,time,"),
              "csv replay: %d %s" % (rc, err))

    # Damaged captures.
    data = open(cap, "rb").read()
    bad = os.path.join(tmp, "bad.tscap")

    def refuse(blob, expect_rc, needle, what):
        with open(bad, "wb") as f:
            f.write(blob)
        r = run_cmd([B, "--replay", bad, "-f", "jsonl"], timeout=30)
        check(r.rc == expect_rc, "%s: exit %d (%s)" % (what, r.rc, r.err))
        check(needle in r.err and "--replay" in r.err, "%s: message %r" %
              (what, r.err))
        return r

    refuse(data[:len(data) - 7], 1, "truncated", "truncated file")
    r = refuse(data[:len(data) - 7], 1, "record", "truncated file")
    # ... and what was read before the damage is still reported
    check(b'"final":true' in r.out, "no final snapshot after damage")
    mid = len(data) // 2
    refuse(data[:mid] + bytes([data[mid] ^ 0x55]) + data[mid + 1:], 1,
           "offset", "flipped byte")
    v2 = bytearray(data)
    v2[8] = 9
    refuse(bytes(v2), 2, "version 9 is not supported", "wrong version")
    refuse(b"hello world, not a capture\n", 2, "bad magic", "not a capture")
    refuse(data[:20], 2, "truncated header", "truncated header")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
