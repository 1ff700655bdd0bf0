#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""taskstat-query against the real kernel: a CPU spinner queried once
(CPU grows, cpu delays counted, averages = total/count), --tgid of a
multi-threaded process (the group >= the sum of its threads, --threads
lists /proc's threads), the collector's JSON names and units (utime_s,
delay_cpu_s; --json-names 1.2 the old ones), syscalls as the kernel's
ranges of 1024, --watch deltas (two JSON intervals, numbers
non-negative, running + waiting = the wall time of a spinner), --cgroup on
a v1 cpu cgroup with a sleeping process and on a cgroup2 directory (exit
4), a missing pid (exit 3, ESRCH), option errors (exit 2 naming the
option), the refusal without CAP_NET_ADMIN (as nobody: exit 1; --cgroup
works), the kernel.task_delayacct warning (the sysctl is put back), a
clean stop on SIGTERM and the end of a watched process.

argv[1]: the taskstat-query binary."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading  # noqa: F401 (the threaded workload below)
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import arg, check, fail, run_cmd, skip, strict_json_lines  # noqa

Q = arg(1, "taskstat-query")
SYSCTL = "/proc/sys/kernel/task_delayacct"
NO_PID = 4194304 + 17  # above the largest pid_max: cannot exist
WARN = "kernel.task_delayacct is 0"

if os.geteuid() != 0:
    skip("not root")

children = []


def spawn(code):
    """A python3 child running `code`, killed at the end of the test."""
    p = subprocess.Popen([sys.executable, "-c", code],
                         stdin=subprocess.DEVNULL)
    children.append(p)
    return p


def query(*args):
    return run_cmd([Q] + [str(a) for a in args], timeout=30)


def query_json(*args):
    r = query("--json", *args)
    check(r.rc == 0, "%s: exit %d: %s" % (args, r.rc, r.err))
    objs = strict_json_lines(r.out)
    check(len(objs) == 1, "%s: %d objects" % (args, len(objs)))
    return objs[0]


def cpu_us(o):
    return round((o["utime_s"] + o["stime_s"]) * 1e6)


def ns(o, k):
    """A "_s" field (exact decimal seconds) in ns."""
    return round(o[k] * 1e9)


def delays(o):
    """The flat delay_<class>_* fields (the collector's names, issue 38)
    per class, in ns: {class: {count, total_ns, avg_ns, [max_ns, min_ns],
    percent}}."""
    out = {}
    for k in o:
        if k.startswith("delay_") and k.endswith("_count"):
            c = k[len("delay_"):-len("_count")]
            d = {"count": o[k], "total_ns": ns(o, "delay_%s_s" % c),
                 "avg_ns": ns(o, "delay_%s_avg_s" % c),
                 "percent": o["delay_%s_percent" % c]}
            if "delay_%s_max_s" % c in o:
                d["max_ns"] = ns(o, "delay_%s_max_s" % c)
                d["min_ns"] = ns(o, "delay_%s_min_s" % c)
            out[c] = d
    return out


# the collector's names (its JSON exit events); none of 1.2's units
COLLECTOR_NAMES = ("btime", "etime_s", "utime_s", "stime_s",
                   "cpu_run_real_s", "cpu_run_virtual_s", "read_char_bytes",
                   "write_char_bytes", "read_syscalls", "hiwater_rss_bytes",
                   "hiwater_vm_bytes", "delay_cpu_count", "delay_cpu_s")


def non_negative(x, where):
    if isinstance(x, dict):
        for k, v in x.items():
            non_negative(v, where + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            non_negative(v, "%s[%d]" % (where, i))
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        check(x >= 0, "%s = %r is negative" % (where, x))


def mounts(fstype):
    """(mount point, options) of every mount of fstype."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            r = right.split()
            if r[0] == fstype:
                out.append((left.split()[4], r[2].split(",")))
    return out


def v1_cpu_mount():
    for mp, opts in mounts("cgroup"):
        if "cpu" in opts:
            return mp
    return None


def environment():
    """Skip when the kernel cannot answer (no taskstats: exit 4; not in
    the initial namespaces)."""
    r = query(os.getpid())
    if r.rc == 4:
        skip("no taskstats: " + r.err.strip())
    if r.rc != 0:
        fail("query of our own pid: exit %d: %s" % (r.rc, r.err))


def test_usage():
    for args, opt in ((["--watch", "x", "1"], "--watch"),
                      (["--watch", "0", "1"], "--watch"),
                      (["--bogus", "1"], "--bogus"),
                      (["-Z", "1"], "-Z"),
                      ([], "PID"),
                      (["abc"], "PID"),
                      (["0"], "PID"),
                      (["1", "2"], "2"),
                      (["--tgid"], "--tgid"),
                      (["--tgid", "-5"], "--tgid"),
                      (["--json-names", "1.2", "1"], "--json-names"),
                      (["--json", "--json-names", "2.0", "1"],
                       "--json-names"),
                      (["--threads", "1"], "--threads"),
                      (["--count", "3", "1"], "--count"),
                      (["--tgid", "1", "--cgroup", "/x"], "--cgroup"),
                      (["--cgroup", "", ], "--cgroup"),
                      (["--cgroup", "/nonexistent-tsq"], "--cgroup"),
                      (["--cgroup", "/tmp"], "--cgroup")):
        r = query(*args)
        check(r.rc == 2, "%s: exit %d, expected 2: %s" % (args, r.rc, r.err))
        check(r.err.startswith("taskstat-query: %s: " % opt),
              "%s: error does not name %s: %r" % (args, opt, r.err))
        check(not r.out, "%s: wrote to stdout" % args)
    r = query("--help")
    check(r.rc == 0 and b"--watch" in r.out, "--help: %d" % r.rc)
    r = query("--version")
    check(r.rc == 0 and r.out.startswith(b"taskstat-query "),
          "--version: %r" % r.out)


def test_spinner():
    p = spawn("while True: pass")
    time.sleep(0.4)
    a = query_json(p.pid)
    time.sleep(0.3)
    b = query_json(p.pid)
    for o in (a, b):
        check(o["type"] == "task" and o["pid"] == p.pid and
              o["tgid"] == p.pid and o["ppid"] == os.getpid() and
              o["uid"] == 0, "identity: %s" % o)
        check(o["comm"].startswith("python"), "comm %r" % o["comm"])
        check(o["version"] >= 1, "version %d" % o["version"])
        non_negative(o, "task")
        for k in COLLECTOR_NAMES:
            check(k in o, "no %s in %s" % (k, sorted(o)))
        check(not [k for k in o if k.endswith(("_us", "_ns", "_kb"))] and
              "delays" not in o, "1.2 names in %s" % sorted(o))
        for name, d in delays(o).items():
            check(d["avg_ns"] == (d["total_ns"] // d["count"]
                                  if d["count"] else 0),
                  "%s: avg %d != total/count" % (name, d["avg_ns"]))
            # the kernel's min leaves out waits of 0 ns (a task picked at
            # once still counts in cpu_count): the average may be below it
            if "max_ns" in d and d["count"]:
                check(d["min_ns"] <= d["max_ns"] and
                      d["avg_ns"] <= d["max_ns"],
                      "%s: min/avg/max %s" % (name, d))
    check(cpu_us(b) > cpu_us(a) > 0, "CPU did not grow: %d then %d" %
          (cpu_us(a), cpu_us(b)))
    check(b["delay_cpu_count"] > 0, "no cpu delay counted")
    check(b["delay_cpu_count"] >= a["delay_cpu_count"],
          "cpu delay count went back")
    # --json-names 1.2: the names before 1.3, for one release
    old = query_json("--json-names", "1.2", p.pid)
    # the kernel derives btime at each query (the wall clock's second
    # minus the whole seconds elapsed): two queries may differ by one
    check(cpu_us(b) <= old["utime_us"] + old["stime_us"] and
          abs(old["btime_s"] - b["btime"]) <= 1 and
          old["delays"]["cpu"]["count"] >= b["delay_cpu_count"] and
          "total_ns" in old["delays"]["cpu"] and "hiwater_rss_kb" in old and
          "read_char" in old and "utime_s" not in old,
          "--json-names 1.2: %s" % old)
    # The text form: the header, the identity and the delay table.
    r = query(p.pid)
    check(r.rc == 0, "text: %d %s" % (r.rc, r.err))
    t = r.out.decode()
    check(t.startswith("pid %d (python" % p.pid), "text: %r" % t[:200])
    check("avg ms" in t and "\n  cpu " in t, "no delay table: %r" % t)
    # syscalls in the kernel's steps of 1024: a range, said so
    check(re.search(r"\n  written: \d+ bytes in (\d+)-(\d+) calls", t) and
          "steps of 1024" in t, "written line: %r" % t)
    m = re.search(r"\n  read: \d+ bytes in (\d+)-(\d+) calls", t)
    check(m and int(m.group(2)) - int(m.group(1)) == 1023 and
          int(m.group(1)) % 1024 == 0, "read calls: %r" % t)
    return p


def test_watch(p):
    r = query("--watch", "0.5", "--count", "2", "--json", p.pid)
    check(r.rc == 0, "--watch: exit %d: %s" % (r.rc, r.err))
    objs = strict_json_lines(r.out)
    check(len(objs) == 2, "--watch --count 2: %d objects" % len(objs))
    check([o["seq"] for o in objs] == [1, 2], "seq %s" %
          [o["seq"] for o in objs])
    check(objs[1]["time"] > objs[0]["time"], "time did not advance")
    for o in objs:
        check(o["type"] == "interval" and o["pid"] == p.pid, "%s" % o)
        non_negative(o, "interval")
        wall = ns(o, "wall_s")
        check(0.45e9 <= wall <= 1.5e9, "wall %d ns for 0.5 s" % wall)
        check(abs(o["cpu_percent"] - 100.0 * cpu_us(o) * 1000 / wall)
              < 0.01, "cpu_percent %s inconsistent" % o["cpu_percent"])
        cpu = delays(o)["cpu"]
        check(abs(cpu["percent"] - 100.0 * cpu["total_ns"] / wall) < 0.01,
              "cpu delay percent %s inconsistent" % cpu["percent"])
        # a spinner is on a CPU or waiting for one: together the wall time
        run = ns(o, "cpu_run_virtual_s")
        busy = run + cpu["total_ns"]
        check(abs(busy - wall) < 0.25 * wall,
              "running %d + waiting %d ns vs wall %d ns" %
              (run, cpu["total_ns"], wall))
        # tick-sampled user+system time agrees with the exact run time
        check(abs(cpu_us(o) * 1000 - run) < 0.25 * wall,
              "utime+stime %d us vs run %d ns" % (cpu_us(o), run))
    # Text: a header, then one row per interval.
    r = query("-w", "0.3", "-n", "2", p.pid)
    lines = r.out.decode().splitlines()
    check(r.rc == 0 and len(lines) == 4 and lines[0].startswith("# pid") and
          lines[1].startswith("time") and "cpu%" in lines[1],
          "text --watch: %d %r" % (r.rc, lines))


def test_tgid():
    p = spawn("import threading, time\n"
              "def spin():\n"
              "    while True: sum(range(1000))\n"
              "for _ in range(3):\n"
              "    threading.Thread(target=spin, daemon=True).start()\n"
              "time.sleep(600)\n")
    task = "/proc/%d/task" % p.pid
    for _ in range(100):
        if len(os.listdir(task)) == 4:
            break
        time.sleep(0.05)
    tids = sorted(int(t) for t in os.listdir(task))
    check(len(tids) == 4, "threads: %s" % tids)
    time.sleep(0.3)
    # each thread alone first, then the group: the group's CPU is at
    # least their sum (every thread is alive and its counters only grow)
    alone = sum(cpu_us(query_json(t)) for t in tids)
    g = query_json("--tgid", p.pid)
    check(g["type"] == "tgid" and g["tgid"] == p.pid, "group: %s" % g)
    check(g["comm"].startswith("python"), "group comm %r" % g["comm"])
    non_negative(g, "tgid")
    check(cpu_us(g) >= alone > 0, "group CPU %d < sum of threads %d" %
          (cpu_us(g), alone))
    g = query_json("--tgid", p.pid, "--threads")
    got = [t["pid"] for t in g["threads"]]
    check(got == tids, "--threads: %s, /proc: %s" % (got, tids))
    check(all(t["tgid"] == p.pid for t in g["threads"]), "tgid of threads")
    r = query("--tgid", p.pid, "--threads")
    check(r.rc == 0 and r.out.decode().startswith("thread group %d" % p.pid)
          and all((" %d " % t).encode() in r.out for t in tids),
          "text --threads: %r" % r.out[:600])
    # a thread's id is not a thread group
    r = query("--tgid", tids[-1])
    check(r.rc == 2 and "--tgid" in r.err and "thread group %d" % p.pid
          in r.err, "--tgid of a thread: %d %s" % (r.rc, r.err))
    # the group, watched: deltas of a process with three spinning threads
    r = query("--json", "-w", "0.3", "-n", "2", "--tgid", p.pid)
    check(r.rc == 0, "--watch --tgid: %d %s" % (r.rc, r.err))
    objs = strict_json_lines(r.out)
    check(len(objs) == 2 and all(o["tgid"] == p.pid for o in objs),
          "--watch --tgid: %s" % objs)
    for o in objs:
        non_negative(o, "tgid interval")
        check(cpu_us(o) > 0, "no CPU in a tgid interval: %s" % o)
    p.kill()


def test_cgroup():
    v1 = v1_cpu_mount()
    if not v1:
        print("note: no cgroup v1 cpu hierarchy, --cgroup v1 not tested")
    else:
        d = os.path.join(v1, "tsq-e2e-%d" % os.getpid())
        os.mkdir(d)
        # Sleeping in a pipe read (TASK_INTERRUPTIBLE). Not sleep(1): the
        # kernel counts a task in nanosleep (TASK_INTERRUPTIBLE |
        # TASK_FREEZABLE since 6.1) in none of cgroupstats' states.
        s = subprocess.Popen(["cat"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL)
        children.append(s)
        try:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(s.pid))
            time.sleep(0.1)
            o = query_json("--cgroup", d)
            check(o["type"] == "cgroup" and o["cgroup"] == d, "%s" % o)
            check(o["nr_sleeping"] >= 1, "nr_sleeping %d" % o["nr_sleeping"])
            check(sum(o[k] for k in ("nr_sleeping", "nr_running",
                                     "nr_stopped", "nr_uninterruptible"))
                  == 1, "one task in %s: %s" % (d, o))
            r = query("--cgroup", d, "-w", "0.2", "-n", "2", "--json")
            objs = strict_json_lines(r.out)
            check(r.rc == 0 and [x["seq"] for x in objs] == [1, 2] and
                  all(x["nr_sleeping"] == 1 for x in objs),
                  "--cgroup --watch: %d %s" % (r.rc, objs))
            r = query("--cgroup", d)
            check(r.rc == 0 and b"sleeping 1," in r.out, "text: %r" % r.out)
            s.kill()
            s.wait()
        finally:
            s.kill()
            for _ in range(100):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.05)
    for mp, _ in mounts("cgroup2")[:1]:
        r = query("--cgroup", mp)
        check(r.rc == 4, "cgroup2 %s: exit %d, expected 4: %s" %
              (mp, r.rc, r.err))
        check("--cgroup" in r.err and "cgroup2" in r.err and
              "cgroup v1" in r.err, "cgroup2 message: %r" % r.err)
        check(not r.out, "cgroup2: wrote to stdout")


def test_missing():
    for args, what in (([NO_PID], "pid"), (["--tgid", NO_PID], "tgid")):
        r = query(*args)
        check(r.rc == 3, "%s: exit %d, expected 3: %s" % (args, r.rc, r.err))
        check("%s %d" % (what, NO_PID) in r.err and "ESRCH" in r.err,
              "%s: message %r" % (args, r.err))
        check(not r.out, "%s: wrote to stdout" % args)


def test_nobody(spinner):
    setpriv = shutil.which("setpriv")
    if not setpriv:
        print("note: setpriv missing, permissions not tested")
        return
    tmp = tempfile.mkdtemp(prefix="tsq-e2e-")
    try:
        os.chmod(tmp, 0o755)
        b = os.path.join(tmp, "taskstat-query")
        shutil.copy(Q, b)  # the build tree may not be open to nobody
        os.chmod(b, 0o755)
        nobody = [setpriv, "--reuid=65534", "--regid=65534",
                  "--clear-groups", "--", b]
        for args, what in (([spinner.pid], "pid"),
                           (["--tgid", spinner.pid], "tgid"),
                           ([NO_PID], "pid")):
            r = run_cmd(nobody + [str(a) for a in args], timeout=30)
            check(r.rc == 1, "nobody %s: exit %d: %s" % (args, r.rc, r.err))
            check("%s %s: permission denied" % (what, args[-1]) in r.err and
                  "CAP_NET_ADMIN" in r.err, "nobody: %r" % r.err)
        # root without CAP_NET_ADMIN: the same
        r = run_cmd([setpriv, "--inh-caps", "-net_admin", "--bounding-set",
                     "-net_admin", "--", b, str(spinner.pid)], timeout=30)
        check(r.rc == 1 and "CAP_NET_ADMIN" in r.err,
              "without CAP_NET_ADMIN: %d %s" % (r.rc, r.err))
        # cgroupstats asks for no capability
        v1 = v1_cpu_mount()
        if v1:
            r = run_cmd(nobody + ["--json", "--cgroup", v1], timeout=30)
            check(r.rc == 0, "nobody --cgroup: %d %s" % (r.rc, r.err))
            check(strict_json_lines(r.out)[0]["nr_running"] >= 1,
                  "nobody --cgroup: %r" % r.out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_delayacct(spinner):
    if not os.path.exists(SYSCTL):
        print("note: no %s, warning not tested" % SYSCTL)
        return
    with open(SYSCTL) as f:
        orig = f.read().strip()
    try:
        for v, warned in (("0", True), ("1", False)):
            with open(SYSCTL, "w") as f:
                f.write(v + "\n")
            r = query(spinner.pid)
            check(r.rc == 0, "delayacct=%s: %d %s" % (v, r.rc, r.err))
            check((WARN in r.err) == warned and r.err.count(WARN) <= 1,
                  "delayacct=%s: stderr %r" % (v, r.err))
            if v == "0":
                r = query("--cgroup", "/", "--count", "1", "-w", "1")
                check(WARN not in r.err, "warned for --cgroup: %r" % r.err)
    finally:
        with open(SYSCTL, "w") as f:
            f.write(orig + "\n")


def test_stops(spinner):
    # SIGTERM while watching: a clean stop, exit 0, whole lines only
    w = subprocess.Popen([Q, "--json", "-w", "0.2", str(spinner.pid)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.7)
    w.send_signal(signal.SIGTERM)
    try:
        out, err = w.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        w.kill()
        fail("--watch did not stop on SIGTERM")
    check(w.returncode == 0, "SIGTERM: exit %d %s" % (w.returncode, err))
    check(len(strict_json_lines(out)) >= 1, "SIGTERM: no interval")
    # the watched process exits: said, exit 0
    # (not our child: a zombie is still there to be queried until reaped)
    sh = subprocess.run(["sh", "-c", "sleep 0.5 >/dev/null & echo $!"],
                        capture_output=True, text=True, timeout=10)
    pid = int(sh.stdout)
    r = query("-w", "0.2", pid)
    check(r.rc == 0 and "pid %d has exited" % pid in r.err,
          "watched exit: %d %r" % (r.rc, r.err))


try:
    environment()
    test_usage()
    spinner = test_spinner()
    test_watch(spinner)
    test_tgid()
    test_cgroup()
    test_missing()
    test_nobody(spinner)
    test_delayacct(spinner)
    test_stops(spinner)
finally:
    for c in children:
        c.kill()
        c.wait()
print("ok")
