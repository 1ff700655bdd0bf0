#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Memory stays bounded when exits walk a large pid space.

With kernel.pid_max = 4194304 (saved and restored, also on failure or a
signal), a walker in a scratch cgroup forks N children (default 2000)
spread over the whole space: before fork k it writes k * STRIDE - 1 to
/proc/sys/kernel/ns_last_pid (STRIDE = 4194304 // N), and each child
exits at once. Under the collector (one run per --attribution mode given,
default: kernel exact) every child's exit must be attributed to the
scratch cgroup, and the collector's VmRSS at the end must be <= 32 MiB
and have grown by at most 8 MiB during the walk (VmSize and VmHWM are
printed too).
Arguments after the binary: modes (kernel, exact, auto, fast), -n N.
"""
import atexit
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, fail,  # noqa: E402
                     final_rollup, keep, move_self, need_live, sanitized,
                     skip, strict_json_lines)

B = arg(1, "taskstat-collect")
ARGS = sys.argv[2:]
N = int(ARGS[ARGS.index("-n") + 1]) if "-n" in ARGS else 2000
MODES = [a for i, a in enumerate(ARGS)
         if not a.startswith("-") and (i == 0 or ARGS[i - 1] != "-n")] or [
    "kernel", "exact"]
PID_MAX = "/proc/sys/kernel/pid_max"
LAST_PID = "/proc/sys/kernel/ns_last_pid"
BIG = 4194304
STRIDE = BIG // N
RSS_MAX_KIB = 32 * 1024
# growth during the walk: the bounded pid tables are at most ~3 MiB (dense
# per-pid arrays grew by ~25 MiB here: one page per exit and array)
GROWTH_MAX_KIB = 8 * 1024


def read(path):
    with open(path) as f:
        return f.read().strip()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


SAVED = None


def restore():
    global SAVED
    if SAVED is not None:
        try:
            write(PID_MAX, SAVED)
        except OSError as e:
            sys.stderr.write("could not restore %s to %s: %s\n" %
                             (PID_MAX, SAVED, e))
        else:
            SAVED = None


def on_signal(sig, frame):
    restore()
    sys.exit(128 + sig)


def status(pid):
    """VmRSS, VmSize, VmHWM of pid, KiB."""
    out = {}
    for line in read("/proc/%d/status" % pid).splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmSize", "VmHWM"):
            out[k] = int(v.split()[0])
    return out


def walk(cgdir):
    """In a forked walker that joins cgdir: N children, child k forked
    right after ns_last_pid was set to k * STRIDE - 1. Returns the pids
    (those that got another pid because the host forked in between
    still count: they are exits in the cgroup all the same)."""
    r, w = os.pipe()
    walker = os.fork()
    if walker == 0:
        os.close(r)
        code = 0
        try:
            move_self(cgdir)
            pids = []
            for k in range(1, N + 1):
                write(LAST_PID, str(k * STRIDE - 1))
                pid = os.fork()
                if pid == 0:
                    os._exit(0)
                pids.append(pid)
                os.waitpid(pid, 0)
            os.write(w, (" ".join(map(str, pids)) + "\n").encode())
        except BaseException as e:
            sys.stderr.write("walker: %r\n" % (e,))
            code = 99
        os._exit(code)
    os.close(w)
    data = b""
    while True:
        b = os.read(r, 1 << 16)
        if not b:
            break
        data += b
    os.close(r)
    _, st = os.waitpid(walker, 0)
    check(os.waitstatus_to_exitcode(st) == 0, "walker failed")
    return walker, [int(x) for x in data.split()]


def run(cg, mode):
    d = cg.mkdir(mode)
    path = cg.path(mode)
    col = Collector(B, ["-f", "jsonl", "--events", "-i", "1",
                        "--attribution", mode])
    with col:
        before = status(col.p.pid)
        t0 = time.time()
        walker, pids = walk(d)
        took = time.time() - t0
        time.sleep(1.5)  # the last records, a snapshot
        after = status(col.p.pid)
    data = col.raw()
    keep("pid_space-%s.jsonl" % mode, data)
    objs = strict_json_lines(data)
    # the walker's children only: another process of the host may hold
    # one of their pids at another time (seen in CI: a second record of
    # pid 2862405, in "/"), its parent is not the walker
    ev = {}
    for e in objs:
        if e["type"] == "exit" and e.get("ppid") == walker:
            ev.setdefault(e["tgid"], []).append(e["cgroup"])
    wrong = ["%d: %s" % (p, ev.get(p)) for p in pids
             if not ev.get(p) or any(c != path for c in ev[p])]
    roll = {c["cgroup"]: c for c in final_rollup(objs)["cgroups"]}
    procs = roll.get(path, {}).get("processes", 0)
    hit = sum(1 for k, p in enumerate(pids, 1) if p == k * STRIDE)
    print("%s: %d forks in %.1fs, %d at their target pid, max pid %d; "
          "collector VmRSS %d -> %d KiB, VmSize %d -> %d KiB, VmHWM %d KiB"
          % (mode, len(pids), took, hit, max(pids), before["VmRSS"],
             after["VmRSS"], before["VmSize"], after["VmSize"],
             after["VmHWM"]))
    check(len(pids) == N, "%s: %d children, expected %d" % (mode,
                                                            len(pids), N))
    check(max(pids) > BIG - 2 * STRIDE and hit >= N // 2,
          "%s: the pids did not cover the space (max %d, %d of %d at "
          "their target): ns_last_pid ignored?" % (mode, max(pids), hit, N))
    check(not wrong, "%s: %d of %d exits not attributed to %s: %s" %
          (mode, len(wrong), N, path, "; ".join(wrong[:10])))
    check(procs == N + 1, "%s: %s counts %d processes, expected %d "
          "(the walker and its children)" % (mode, path, procs, N + 1))
    if sanitized():
        print("NOTE: %s: memory not compared under ASan (shadow memory, "
              "quarantine): VmRSS %d -> %d KiB" % (mode, before["VmRSS"],
                                                   after["VmRSS"]))
        return
    check(after["VmRSS"] <= RSS_MAX_KIB,
          "%s: collector VmRSS %d KiB > %d KiB after the walk" %
          (mode, after["VmRSS"], RSS_MAX_KIB))
    check(after["VmRSS"] - before["VmRSS"] <= GROWTH_MAX_KIB,
          "%s: collector VmRSS grew by %d KiB (> %d) during the walk" %
          (mode, after["VmRSS"] - before["VmRSS"], GROWTH_MAX_KIB))


def main():
    global SAVED
    need_live(B)
    if os.geteuid() != 0:
        skip("not root (pid_max, ns_last_pid)")
    for f in (PID_MAX, LAST_PID):
        if not os.path.exists(f):
            skip("no %s" % f)
    SAVED = read(PID_MAX)
    atexit.register(restore)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    try:
        write(PID_MAX, str(BIG))
    except OSError as e:
        skip("cannot set %s to %d: %s" % (PID_MAX, BIG, e))
    check(int(read(PID_MAX)) == BIG, "pid_max did not change")
    try:
        with Cgroups("pidspace") as cg:
            for mode in MODES:
                run(cg, mode)
    finally:
        restore()
    print("ok: %d exits over pid_max %d attributed, RSS <= %d MiB (%s)" %
          (N, BIG, RSS_MAX_KIB // 1024, ", ".join(MODES)))


main()
