# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared helpers of the taskstat-collect end-to-end tests (stdlib only).

Each test script takes the taskstat-collect binary as argv[1], exits 0 on
success, 1 on failure and 77 when the host can't run it (not root, no
taskstats, no cgroup2 mount, a tool missing).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77


def skip(why):
    print("SKIP:", why)
    sys.exit(SKIP)


def fail(why):
    print("FAIL:", why)
    sys.exit(1)


def check(cond, why):
    if not cond:
        fail(why)


def binary():
    if len(sys.argv) < 2:
        fail("usage: %s path/to/taskstat-collect" % sys.argv[0])
    return os.path.abspath(sys.argv[1])


def need_root_taskstats(bin_):
    """Skip unless this host can run a live collector."""
    if os.geteuid() != 0:
        skip("not root")
    r = subprocess.run([bin_, "-f", "jsonl", "-d", "0.2"],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        err = r.stderr.strip()
        if ("TASKSTATS" in err or "CAP_NET_ADMIN" in err
                or "namespace" in err):
            skip("live collection impossible here: " + err)
        fail("trial run failed (%d): %s" % (r.returncode, err))


def need_tool(name):
    p = shutil.which(name)
    if not p:
        skip("%s not installed" % name)
    return p


def cgroup2_root():
    """Mount point of cgroup2 (hybrid: /sys/fs/cgroup/unified)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[0] == "cgroup2":
                return left.split()[4]
    skip("no cgroup2 mount")


class Cgroups:
    """A private cgroup tree /<root>/cgs-e2e-<pid>, removed on exit."""

    def __init__(self, tag="e2e"):
        self.root = cgroup2_root()
        self.name = "cgs-%s-%d" % (tag, os.getpid())
        self.base = os.path.join(self.root, self.name)
        os.mkdir(self.base)

    def path(self, rel=""):
        """Cgroup path as /proc/<pid>/cgroup shows it."""
        return "/" + self.name + ("/" + rel if rel else "")

    def mkdir(self, rel):
        d = os.path.join(self.base, rel)
        os.makedirs(d, exist_ok=True)
        return d

    def cleanup(self):
        # Deepest first; move any leftover process to the root.
        for dirpath, dirnames, _ in sorted(os.walk(self.base),
                                           key=lambda t: -t[0].count("/")):
            try:
                with open(os.path.join(dirpath, "cgroup.procs")) as f:
                    for pid in f.read().split():
                        try:
                            with open(os.path.join(self.root, "cgroup.procs"),
                                      "w") as r:
                                r.write(pid)
                        except OSError:
                            pass
            except OSError:
                pass
            for _ in range(50):
                try:
                    os.rmdir(dirpath)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.cleanup()


def workload(cgdir, procs=5, threads=3, comm=None):
    """Run a known workload in cgroup directory cgdir and wait for it.

    A forked child joins the cgroup, forks `procs` processes that exit at
    once, starts and joins `threads` threads, then exits. Its own exit
    stays a zombie for a moment (waitid WNOWAIT) so the collector can read
    its cgroup before it is reaped. Expected: tasks = procs + threads + 1,
    processes = procs + 1.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            with open(os.path.join(cgdir, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            if comm is not None:
                with open("/proc/self/comm", "wb") as f:
                    f.write(comm)
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
            time.sleep(0.05)  # let the threads' exits complete
            os.write(w, b"k")
            os._exit(3)
        except BaseException as e:  # noqa: never return into the test
            sys.stderr.write("workload child: %r\n" % (e,))
            os._exit(99)
    os.close(w)
    ok = os.read(r, 1)
    os.close(r)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    time.sleep(0.3)  # zombie: /proc/<pid>/cgroup still readable
    _, st = os.waitpid(pid, 0)
    if ok != b"k" or os.waitstatus_to_exitcode(st) != 3:
        fail("workload in %s failed" % cgdir)
    return {"tasks": procs + threads + 1, "processes": procs + 1,
            "pid": pid}


class Collector:
    """taskstat-collect as a subprocess; stdout to a file."""

    def __init__(self, bin_, args, out=None, env=None, preexec=None,
                 wrap=None):
        self.out = out or tempfile.NamedTemporaryFile(
            prefix="tsc-out-", delete=False).name
        self.errf = tempfile.NamedTemporaryFile(prefix="tsc-err-",
                                                delete=False).name
        # TSC_E2E_WRAP="valgrind -q" etc. runs the collector under a tool.
        pre = os.environ.get("TSC_E2E_WRAP", "").split()
        cmd = (wrap or []) + pre + [bin_] + args
        self.p = subprocess.Popen(cmd, stdout=open(self.out, "wb"),
                                  stderr=open(self.errf, "wb"), env=env)

    def wait_started(self, timeout=10):
        """Until the collector has registered (self-test done). It writes
        to stderr only on trouble, so watch its listener threads."""
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

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail("collector did not stop within %ds" % timeout)
        return rc

    def text(self):
        with open(self.out, "rb") as f:
            return f.read()

    def lines(self):
        """Parsed JSON lines; every line must be one object with a type."""
        objs = []
        for i, line in enumerate(self.text().split(b"\n")):
            if not line:
                continue
            try:
                o = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                fail("line %d is not UTF-8 JSON: %s: %r" % (i + 1, e,
                                                            line[:200]))
            check(isinstance(o, dict) and "type" in o,
                  "line %d has no type" % (i + 1))
            objs.append(o)
        return objs

    def cleanup(self):
        for f in (self.out, self.errf):
            try:
                os.unlink(f)
            except OSError:
                pass


def final_rollup(objs):
    rolls = [o for o in objs if o["type"] == "rollup"]
    check(rolls, "no rollup line")
    check(rolls[-1].get("final") is True, "last rollup is not final")
    check(sum(1 for o in rolls if o.get("final")) == 1,
          "more than one final rollup")
    return rolls[-1]


def by_path(roll):
    return {c["cgroup"]: c for c in roll["cgroups"]}


def expect_counts(roll, path, tasks, processes, what=""):
    cg = by_path(roll).get(path)
    check(cg is not None, "%s: cgroup %s missing from the snapshot" %
          (what, path))
    check(cg["tasks"] == tasks and cg["processes"] == processes,
          "%s: %s: tasks %d processes %d, expected %d and %d" %
          (what, path, cg["tasks"], cg["processes"], tasks, processes))
    return cg


def port_from_stderr(col, timeout=10):
    t0 = time.time()
    while time.time() - t0 < timeout:
        m = re.search(r"serving metrics on http://(\S+)/metrics",
                      col.stderr())
        if m:
            return m.group(1)
        if col.p.poll() is not None:
            fail("collector exited: " + col.stderr())
        time.sleep(0.05)
    fail("no 'serving metrics' line on stderr")
