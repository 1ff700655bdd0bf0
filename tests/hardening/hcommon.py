# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers of the hardening tests (python3 stdlib only).

Every test script takes the taskstat-collect binary as argv[1] (and, for
some, more paths), exits 0 on success, 1 on failure, 77 when the host can't
run it (not root, no taskstats, no cgroup2, a tool missing).
"""
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
PR_SET_NAME = 15
_libc = ctypes.CDLL(None, use_errno=True)


def skip(why):
    print("SKIP:", why)
    sys.exit(SKIP)


def fail(why):
    print("FAIL:", short(why, 2000))
    sys.exit(1)


def short(x, n=160):
    """repr-ish text of x cut in the middle to n characters."""
    s = x if isinstance(x, str) else repr(x)
    return s if len(s) <= n else "%s...(%d chars)...%s" % (
        s[:n // 2], len(s), s[-n // 2:])


def keep(name, data):
    """Save an output for a post-mortem when $HARDENING_KEEP names a dir."""
    d = os.environ.get("HARDENING_KEEP")
    if d:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def check(cond, why):
    if not cond:
        fail(why)


def arg(i, what):
    if len(sys.argv) <= i:
        fail("usage: %s %s" % (sys.argv[0], what))
    return os.path.abspath(sys.argv[i])


def need_live(bin_):
    """Skip unless this host can run a live collector."""
    if os.geteuid() != 0:
        skip("not root")
    r = subprocess.run([bin_, "-f", "jsonl", "-d", "0.2"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        err = r.stderr.strip()
        if ("TASKSTATS" in err or "CAP_NET_ADMIN" in err
                or "namespace" in err or "self-test" in err):
            skip("live collection impossible here: " + err)
        fail("trial run failed (%d): %s" % (r.returncode, err))


def need_tool(name):
    p = shutil.which(name)
    if not p:
        skip("%s not installed" % name)
    return p


def cgroup2_root():
    """Mount point of cgroup2 (hybrid hosts: /sys/fs/cgroup/unified)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[0] == "cgroup2":
                return left.split()[4]
    skip("no cgroup2 mount")


def set_comm(name):
    """prctl(PR_SET_NAME): any bytes but NUL, 15 kept."""
    if _libc.prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NAME)")


def move_self(cgdir):
    """Join a cgroup given as a directory path (bytes) or an open
    directory fd (for paths longer than PATH_MAX)."""
    if isinstance(cgdir, int):
        fd = os.open("cgroup.procs", os.O_WRONLY, dir_fd=cgdir)
    else:
        fd = os.open(os.path.join(cgdir, b"cgroup.procs"), os.O_WRONLY)
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)


class Cgroups:
    """A private cgroup2 tree <root>/cgs-<tag>-<pid> (paths as bytes, so
    names may hold any byte), removed with everything below on exit."""

    def __init__(self, tag):
        self.root = os.fsencode(cgroup2_root())
        self.name = b"cgs-%s-%d" % (tag.encode(), os.getpid())
        self.base = os.path.join(self.root, self.name)
        os.mkdir(self.base)

    def path(self, rel=b""):
        """Cgroup path as /proc/<pid>/cgroup shows it (bytes)."""
        return b"/" + self.name + (b"/" + rel if rel else b"")

    def mkdir(self, rel):
        d = os.path.join(self.base, rel)
        os.makedirs(d, exist_ok=True)
        return d

    def rmtree(self, d):
        for dirpath, _, _ in sorted(os.walk(d),
                                    key=lambda t: -t[0].count(b"/")):
            try:
                with open(os.path.join(dirpath, b"cgroup.procs")) as f:
                    pids = f.read().split()
            except OSError:
                pids = []
            for pid in pids:
                try:
                    with open(os.path.join(self.root, b"cgroup.procs"),
                              "w") as r:
                        r.write(pid)
                except OSError:
                    pass
            for _ in range(100):
                try:
                    os.rmdir(dirpath)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)

    def cleanup(self):
        self.rmtree(self.base)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.cleanup()


def run_in(cgdir, comm=None, procs=0, threads=0, code=0, linger=0.3):
    """Fork a child that joins cgroup cgdir (bytes), sets its comm (bytes,
    via prctl), forks `procs` children that exit at once (they inherit the
    comm), runs `threads` threads, and exits with `code`. The parent keeps
    it a zombie for `linger` s (so /proc/<pid>/cgroup stays readable),
    reaps it and returns (pid, tasks, processes) it caused."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            move_self(cgdir)
            if comm is not None:
                set_comm(comm)
            for _ in range(procs):
                c = os.fork()
                if c == 0:
                    os._exit(0)
                os.waitpid(c, 0)
            ts = [threading.Thread(target=lambda: None)
                  for _ in range(threads)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            time.sleep(0.05)
            os.write(w, b"k")
            os._exit(code)
        except BaseException as e:  # never return into the test
            sys.stderr.write("child: %r\n" % (e,))
            os._exit(99)
    os.close(w)
    ok = os.read(r, 1)
    os.close(r)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    time.sleep(linger)
    _, st = os.waitpid(pid, 0)
    if ok != b"k" or os.waitstatus_to_exitcode(st) != code:
        fail("child in %r failed" % (cgdir,))
    return pid, procs + threads + 1, procs + 1


class Collector:
    """taskstat-collect as a subprocess, stdout and stderr to files."""

    def __init__(self, bin_, args, wrap=None):
        fd, self.out = tempfile.mkstemp(prefix="tsc-h-out-")
        os.close(fd)
        fd, self.errf = tempfile.mkstemp(prefix="tsc-h-err-")
        os.close(fd)
        cmd = (wrap or []) + [bin_] + args
        self.p = subprocess.Popen(cmd, stdout=open(self.out, "wb"),
                                  stderr=open(self.errf, "wb"))

    def wait_started(self, timeout=15):
        """Until the listener threads exist (self-test passed)."""
        t0 = time.time()
        while time.time() - t0 < timeout:
            if self.p.poll() is not None:
                fail("collector exited early (%d): %s" %
                     (self.p.returncode, self.stderr()))
            try:
                n = len(os.listdir("/proc/%d/task" % self.p.pid))
            except OSError:
                n = 0
            if n >= 2:
                time.sleep(0.2)
                return
            time.sleep(0.05)
        fail("collector did not start: " + self.stderr())

    def stderr(self):
        with open(self.errf, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail("collector did not stop within %ds" % timeout)

    def raw(self):
        with open(self.out, "rb") as f:
            return f.read()

    def cleanup(self):
        for f in (self.out, self.errf):
            try:
                os.unlink(f)
            except OSError:
                pass


def strict_json_lines(data):
    """Every line: valid UTF-8, one JSON object (control characters in
    strings rejected, duplicate keys rejected)."""
    def no_dups(pairs):
        keys = [k for k, _ in pairs]
        check(len(keys) == len(set(keys)), "duplicate JSON keys %s" % keys)
        return dict(pairs)
    objs = []
    for i, line in enumerate(data.split(b"\n")):
        if not line:
            continue
        try:
            text = line.decode("utf-8", "strict")
            o = json.loads(text, object_pairs_hook=no_dups, strict=True)
        except (UnicodeDecodeError, ValueError) as e:
            fail("line %d is not UTF-8 JSON: %s: %r" % (i + 1, e,
                                                        line[:300]))
        check(isinstance(o, dict) and "type" in o,
              "line %d is not an object with a type" % (i + 1))
        objs.append(o)
    return objs


def final_rollup(objs):
    rolls = [o for o in objs if o["type"] == "rollup"]
    check(rolls and rolls[-1].get("final") is True, "no final rollup line")
    return rolls[-1]


def utf8_lossy(b):
    """The collector's rendering of arbitrary bytes (cmd/escape.h): valid
    UTF-8 sequences kept, every byte that does not start one becomes
    U+FFFD (one per byte, where Python's 'replace' would use one per
    maximal invalid subpart)."""
    out, i = [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                out.append(b[i:i + n].decode("utf-8", "strict"))
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append("\ufffd")
            i += 1
    return "".join(out)
