#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A pid handed out again at once, as CRIU restores pids: never a silent
wrong answer, with either attribution source.

    e2e_pid_reuse.py COLLECTOR [PAIRS]

PAIRS times (default 100): a child joins first/, exits and is reaped;
the next child, which joins second/, is given the same pid (clone3's
set_tid, or ns_last_pid set back). The collector writes every exit record (--events); each
pid's two process exits (told apart by comm, which each child sets: not
by lifetime, as a cgroup.procs write can take longer than the second
child's 50 ms) are compared with the cgroups they ran in, per source,
and printed as a table (bench/README.md "A pid handed out again at once").
 - kernel source (where it loads): every exit in its own cgroup;
 - /proc fallback (--attribution exact): an exit is in its own cgroup,
   or counted as a guess (source "inferred"); never in the other child's
   cgroup, or anywhere else, as read from /proc ("proc"). The first child
   is reaped before its record is read, so /proc/<pid> is the second
   child's (or, before it moved, the parent's cgroup).

Robust to other processes forking meanwhile (a pid churn beside it):
hand_on() forks the second child with the pid by clone3(set_tid), as
CRIU does (ns_last_pid where that is refused), and retries while another
process holds the pid; a second child that got another pid (ns_last_pid
raced by another fork) exits before it sets its comm, and each pid's
exits are picked by the children's comms, so that a process of the host
that had the pid before or after (it is handed out again by the
rewinds) is not mistaken for a child."""
import collections
import ctypes
import errno
import functools
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check,  # noqa
                     exits_written, fork_child, move_self, need_live, set_comm, skip,
                     stop_wait)

B = arg(1, "taskstat-collect")
N = int(sys.argv[2]) if len(sys.argv) > 2 else 100
need_live(B)
NS_LAST_PID = "/proc/sys/kernel/ns_last_pid"
COMM = {"first": "cgsr-first", "second": "cgsr-second"}
LAGGED = 20  # pairs read late (lagged_run)
if not os.access(NS_LAST_PID, os.W_OK):
    skip(NS_LAST_PID + " is not writable here")


def child(comm, cgdir, ready=None, go=None, life=0.0, want=None):
    """What a child of a pair runs: set comm, join cgdir, write a byte to
    `ready`, wait for the pipe `go` (read end, write end: closed here) to
    be closed by the parent, live `life` s more. A child that did not get
    the pid `want` (another process of the host took it) only writes its
    byte and exits: it never has a pair's comm."""
    def run():
        if want is not None and os.getpid() != want:
            if ready is not None:
                os.write(ready, b"x")
            return
        if go is not None:
            os.close(go[1])
        set_comm(COMM[comm].encode())
        move_self(cgdir)
        if ready is not None:
            os.write(ready, b"x")
        if go is not None:
            os.read(go[0], 1)
        time.sleep(life)
    return run


def started(fn):
    """fork_child(fn(ready)) and wait for its byte."""
    r, w = os.pipe()
    pid = fork_child(fn(w))
    os.close(w)
    ok = os.read(r, 1)
    os.close(r)
    check(ok == b"x", "a child failed before joining its cgroup")
    return pid


HAND_ON_TRIES = 50
SYS_CLONE3 = 435  # the same number on every architecture
_py = ctypes.pythonapi  # calls keep the GIL, as os.fork() does
_py.syscall.restype = ctypes.c_long
_py.syscall.argtypes = [ctypes.c_long, ctypes.c_void_p, ctypes.c_size_t]


class CloneArgs(ctypes.Structure):
    """struct clone_args up to set_tid_size (CLONE_ARGS_SIZE_VER1)."""
    _fields_ = [(f, ctypes.c_uint64) for f in (
        "flags", "pidfd", "child_tid", "parent_tid", "exit_signal", "stack",
        "stack_size", "tls", "set_tid", "set_tid_size")]


def fork_with_pid(a, fn):
    """fork_child(fn) as pid a, by clone3() with set_tid (Linux 5.5, as
    CRIU restores pids): the pid or nothing, whatever else forks on the
    host meanwhile. The child, like os.fork()'s, runs Python after
    PyOS_AfterFork_Child(). Returns the pid, or -errno (-EEXIST: a holds
    a process; -ENOSYS, -EPERM, -EINVAL: no set_tid here)."""
    tid = (ctypes.c_int * 1)(a)
    ca = CloneArgs(exit_signal=signal.SIGCHLD,
                   set_tid=ctypes.addressof(tid), set_tid_size=1)
    _py.PyOS_BeforeFork()
    r = _py.syscall(SYS_CLONE3, ctypes.addressof(ca), ctypes.sizeof(ca))
    if r == 0:
        _py.PyOS_AfterFork_Child()
        try:
            fn()
            os._exit(0)
        except BaseException as e:
            sys.stderr.write("child: %r\n" % (e,))
            os._exit(99)
    err = _errno() if r < 0 else 0  # before anything else may set it
    _py.PyOS_AfterFork_Parent()
    return -err if r < 0 else r


_libc = ctypes.CDLL(None)
_libc.__errno_location.restype = ctypes.POINTER(ctypes.c_int)


def _errno():
    """errno of the last call (ctypes.pythonapi does not save it)."""
    return _libc.__errno_location()[0]


def hand_on(a, fn, ready=None):
    """Fork fn (made by child(..., want=a)) with pid a. clone3(set_tid)
    where it can; else ns_last_pid, set just before a fork: another
    process of the host may fork in between (that child does not get a,
    exits at once, after its byte on `ready` if given, is reaped, and it
    is tried again). Either way a may still be held by a short-lived
    process of the host (the rewinds hand pids out again): tried again
    after a pause, HAND_ON_TRIES times at most; then the pair is left out
    (the pid returned is not a). Returns the child's pid."""
    b = -1
    for t in range(HAND_ON_TRIES):
        b = fork_with_pid(a, fn) if hand_on.clone3 else -errno.ENOSYS
        if b == a:
            return b
        if b == -errno.EEXIST:
            time.sleep(0.002 * (t + 1))
            continue
        if b < 0:
            hand_on.clone3 = False
            with open(NS_LAST_PID, "w") as f:
                f.write(str(a - 1))
            b = fork_child(fn)
            if b == a:
                return b
            if ready is not None:
                os.read(ready, 1)
            reap(b)
        time.sleep(0.002 * (t + 1))
    return -1


hand_on.clone3 = True


def reap(pid):
    _, st = os.waitpid(pid, 0)
    check(os.waitstatus_to_exitcode(st) == 0, "child %d failed" % pid)


def pairs_run(col, first, second, n):
    """n pairs; returns the pids the two children of each pair had."""
    pairs = []
    for _ in range(n):
        a = fork_child(child("first", first))
        reap(a)
        r, w = os.pipe()
        b = hand_on(a, child("second", second, ready=w, life=0.05, want=a),
                    ready=r)
        os.close(w)
        os.read(r, 1)  # b"" (every writer gone) when b < 0
        os.close(r)
        if b > 0:
            reap(b)
        pairs.append((a, b))
    return pairs


def lagged_run(col, first, second, n, life, stopped):
    """n pairs read late, while the pid's new holder is a zombie: n first
    children join first/ and wait; after `life` s the collector is stopped
    (SIGSTOP) and they exit and are reaped; `stopped` s later each pid is
    handed to a second child, which joins second/ and exits, left
    unreaped; the collector goes on (SIGCONT), and the zombies are reaped
    only once it wrote the first children's exits, so that it read them
    while /proc/<pid> showed the zombies. The fallback can tell the zombie
    from the process of the record when that one lived longer than the
    records' lag (`life`), or started a second or more before the zombie
    did (`stopped`). Returns the pairs' pids."""
    go_r, go_w = os.pipe()
    firsts = [started(lambda w: child("first", first, ready=w,
                                      go=(go_r, go_w)))
              for _ in range(n)]
    os.close(go_r)
    time.sleep(life)
    stop_wait(col.p.pid)
    pairs = []
    try:
        os.close(go_w)
        for a in firsts:
            reap(a)
        time.sleep(stopped)
        pairs = [(a, hand_on(a, child("second", second, want=a)))
                 for a in firsts]
        for a, b in pairs:  # zombies, all of them
            if b > 0:
                os.waitid(os.P_PID, b, os.WEXITED | os.WNOWAIT)
    finally:
        os.kill(col.p.pid, signal.SIGCONT)
    exits_written(col, COMM["first"], n)
    for a, b in pairs:
        if b > 0:
            reap(b)
    return pairs


def where(cg, objs, pairs):
    """Counter of (child, cgroup it was counted in, source) over the pids
    both children had. A pid's exits are those of the children's comms:
    other processes of the host may have had the pid too."""
    byp = collections.defaultdict(list)
    for e in objs:
        if (e.get("type") == "exit" and e["kind"] == "process" and
                e["comm"] in COMM.values()):
            byp[e["pid"]].append(e)
    out = collections.Counter()
    for a, b in pairs:
        recs = byp.get(a, [])
        if a != b or len(recs) != 2:
            continue  # the pid went elsewhere, or two pairs had it
        by = {e["comm"]: e for e in recs}
        if sorted(by) != sorted(COMM.values()):
            continue  # not one exit of each child
        for who in COMM:
            e = by[COMM[who]]
            got = "(elsewhere)"
            for rel in ("first", "second"):
                if e["cgroup"] == cg.path(rel):
                    got = rel
            out[(who, got, e["source"])] += 1
    return out


def run(cg, attribution, what, pairs_fn, n):
    first, second = cg.mkdir("first"), cg.mkdir("second")
    with Collector(B, ["--attribution", attribution, "--events", "-f",
                       "jsonl", "-i", "1"]) as col:
        pairs = pairs_fn(col, first, second, n)
        time.sleep(1.0)
    got = where(cg, col.lines(), pairs)
    same = sum(1 for a, b in pairs if a == b)
    print("attribution %s, %s: %d pairs, %d with the same pid, %d of them "
          "with exactly two exits" % (attribution, what, n, same,
                                      sum(got.values()) // 2))
    print("  %-8s %-12s %-9s %s" % ("child", "counted in", "source",
                                     "exits"))
    for (who, rel, src), c in sorted(got.items()):
        print("  %-8s %-12s %-9s %d" % (who, rel, src, c))
    check(sum(got.values()) >= n, "%s, %s: only %d exits of pids both "
          "children had (ns_last_pid ignored?)" %
          (attribution, what, sum(got.values())))
    return got


SCENARIOS = (
    ("at once", pairs_run, N),
    ("late, zombie, 1st lived 2 s",
     functools.partial(lagged_run, life=2.0, stopped=0), LAGGED),
    ("late, zombie, 2nd 1.5 s after",
     functools.partial(lagged_run, life=0, stopped=1.5), LAGGED))
for what, fn, n in SCENARIOS:
    with Cgroups("reuse-k") as cg:
        got = run(cg, "auto", what, fn, n)
        if any(src == "kernel" for (_, _, src) in got):
            for (who, rel, src), c in got.items():
                check(rel == who and src == "kernel",
                      "kernel source, %s: %d exits of the %s child in %s "
                      "(%s)" % (what, c, who, rel, src))
        else:
            print("(the kernel source did not load: auto used /proc)")
    with Cgroups("reuse-p") as cg:
        got = run(cg, "exact", what, fn, n)
        for (who, rel, src), c in got.items():
            check(rel == who or src == "inferred",
                  "/proc fallback, %s: %d exits of the %s child counted in "
                  "%s, source %s, not as a guess" % (what, c, who, rel, src))
print("OK")
