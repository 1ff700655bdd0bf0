#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""pid reuse never inherits a dead process's cgroup.

A process P exits in cgroup A; a new process is then forked with the same
pid (via /proc/sys/kernel/ns_last_pid) and joins cgroup B. Its exits must
be counted in B, never in A:
  single   the new process is single-threaded (a process exit record);
  thread   it first runs a thread that exits (a thread record carrying
           tgid P) within the rollup's grace period of P's death;
  late     the same as "thread", 2.5 s after P's death (grace passed).
Arguments after the binary select cases (default: single thread late).
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, fail,  # noqa: E402
                     final_rollup, keep, move_self, need_live, skip,
                     strict_json_lines)

B = arg(1, "taskstat-collect")
need_live(B)
CASES = [a for a in sys.argv[2:] if not a.startswith("-")] or [
    "single", "thread", "late"]
LAST_PID = "/proc/sys/kernel/ns_last_pid"


def child(cmd_r, cgdir, threads):
    """Wait for the parent's verdict: 'x' exit at once, 'g' join cgdir,
    run threads, exit."""
    c = os.read(cmd_r, 1)
    if c != b"g":
        os._exit(0)
    try:
        move_self(cgdir)
        ts = [threading.Thread(target=lambda: None) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        time.sleep(0.05)
    except BaseException as e:
        sys.stderr.write("child: %r\n" % (e,))
        os._exit(99)
    os._exit(0)


def spawn(cgdir, threads, want_pid=None, tries=200):
    """Fork a child (with pid want_pid if given) that runs in cgdir; keep
    it a zombie briefly, reap it, return its pid."""
    for _ in range(tries):
        r, w = os.pipe()
        if want_pid:
            with open(LAST_PID, "w") as f:
                f.write(str(want_pid - 1))
        pid = os.fork()
        if pid == 0:
            os.close(w)
            child(r, cgdir, threads)
        os.close(r)
        if want_pid and pid != want_pid:  # someone else forked first
            os.write(w, b"x")
            os.close(w)
            os.waitpid(pid, 0)
            continue
        os.write(w, b"g")
        os.close(w)
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        time.sleep(0.1)
        _, st = os.waitpid(pid, 0)
        check(os.waitstatus_to_exitcode(st) == 0, "child failed")
        return pid
    skip("could not get pid %d back after %d tries (busy host)" %
         (want_pid, tries))


def main():
    if not os.path.exists(LAST_PID):
        skip("no %s" % LAST_PID)
    with Cgroups("pidreuse") as cg:
        runs = []
        with Collector(B, ["-f", "jsonl", "--events", "-i", "0.5"]) as col:
            for case in CASES:
                a = cg.mkdir(case.encode() + b"-A")
                b = cg.mkdir(case.encode() + b"-B")
                p = spawn(a, 0)
                if case == "late":
                    time.sleep(2.5)
                threads = 0 if case == "single" else 1
                spawn(b, threads, want_pid=p)
                runs.append((case, p, cg.path(case.encode() + b"-A"),
                             cg.path(case.encode() + b"-B"), threads + 1))
            time.sleep(0.8)
    data = col.raw()
    keep("pid_reuse.jsonl", data)
    objs = strict_json_lines(data)
    by = {c["cgroup"]: c for c in final_rollup(objs)["cgroups"]
          if not c["removed"] or c["tasks"]}
    bad = []
    for case, pid, pa, pb, tasks_b in runs:
        ca = by.get(pa.decode(), {}).get("tasks", 0)
        cb = by.get(pb.decode(), {}).get("tasks", 0)
        ev = [(e["kind"], e["cgroup"]) for e in objs
              if e["type"] == "exit" and e["tgid"] == pid]
        if ca != 1 or cb != tasks_b:
            bad.append("%s (pid %d): A has %d tasks (expected 1), B %d "
                       "(expected %d); records of tgid %d: %s" %
                       (case, pid, ca, cb, tasks_b, pid, ev))
    if bad:
        fail("pid reuse inherited a dead process's cgroup: " +
             "; ".join(bad))
    print("ok: %s" % ", ".join("%s (pid %d reused)" % (c, p)
                               for c, p, _, _, _ in runs))


main()
