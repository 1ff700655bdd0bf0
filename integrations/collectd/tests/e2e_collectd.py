#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The collectd plugin for real: collectd -f with csv and taskstat, known
workloads in scratch cgroups, then the csv files of their plugin
instances must hold the exact task, process and outcome counts, the
CPU time the kernel reported to wait4() (within a tolerance), Depth
folding, the name mapping of hostile bytes, and nothing outside the
Cgroup glob. A bad option must stop collectd at start-up.

usage: e2e_collectd.py <taskstat.so> <taskstat.types.db> [<preload>]
<preload>: a library for collectd's LD_PRELOAD (the ASan runtime, when
the plugin is an ASan build).
Exit 77 (SKIP) when collectd (collectd-core) is not installed, not root,
or the host cannot deliver exit events.
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "e2e"))
from tsc_e2e import (Cgroups, check, fail, move_self, skip,  # noqa: E402
                     workload)

HOST = "cgs-e2e"
TYPES = "/usr/share/collectd/types.db"
PLUGINS = "/usr/lib/collectd"
KEPT = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
           b"0123456789.-")


def instance(path):
    """docs/collectd.md's mapping, written again from the text (bytes)."""
    if path == b"(unknown)":
        return "unknown"
    out = "".join("_" if c == 0x2f else chr(c) if c in KEPT else
                  "%%%02X" % c for c in path)
    if len(out) <= 127:
        return out
    cut, n = 0, 0
    for c in path:
        n += 1 if c == 0x2f or c in KEPT else 3
        if n > 110:
            break
        cut = n
    h = 0xcbf29ce484222325
    for c in path:
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return out[:cut] + "~%016x" % h


def write_conf(tmp, plugin_block):
    conf = os.path.join(tmp, "collectd.conf")
    with open(conf, "w") as f:
        f.write('Hostname "%s"\nFQDNLookup false\nBaseDir "%s"\n'
                'PIDFile "%s/collectd.pid"\nPluginDir "%s/plugins"\n'
                'TypesDB "%s" "%s"\nInterval 1\n'
                'LoadPlugin logfile\n<Plugin logfile>\n  LogLevel info\n'
                '  File stderr\n</Plugin>\n'
                'LoadPlugin csv\n<Plugin csv>\n  DataDir "%s/data"\n'
                '  StoreRates false\n</Plugin>\n'
                'LoadPlugin taskstat\n<Plugin taskstat>\n%s</Plugin>\n' %
                (HOST, tmp, tmp, tmp, TYPES, OURTYPES, tmp, plugin_block))
    return conf


def csv_last(tmp, inst, type_):
    """The last row of <type>-<date> of plugin instance inst, as a dict
    (None when collectd wrote none)."""
    files = sorted(glob.glob(glob.escape(os.path.join(
        tmp, "data", HOST, "taskstat-" + inst if inst else "taskstat",
        type_)) + "-*"))
    if not files:
        return None
    with open(files[-1]) as f:
        rows = f.read().split("\n")
    head = rows[0].split(",")
    rows = [r for r in rows[1:] if r]
    if not rows:
        return None
    return {k: float(v) for k, v in zip(head, rows[-1].split(","))}


def spin_cpu(cgdir, seconds):
    """A child in cgdir burns `seconds` of CPU and exits 0; returns the
    CPU the kernel says it used (wait4 rusage), us."""
    pid = os.fork()
    if pid == 0:
        try:
            move_self(cgdir)
            t0 = time.process_time()
            while time.process_time() - t0 < seconds:
                pass
            os._exit(0)
        except BaseException:
            os._exit(99)
    _, st, ru = os.wait4(pid, 0)
    check(os.waitstatus_to_exitcode(st) == 0, "spinner failed")
    return (ru.ru_utime + ru.ru_stime) * 1e6


def die_by_signal(cgdir, sig):
    pid = os.fork()
    if pid == 0:
        try:
            move_self(cgdir)
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        finally:
            os._exit(99)
    _, st = os.waitpid(pid, 0)
    check(os.WIFSIGNALED(st) and os.WTERMSIG(st) == sig,
          "child did not die by signal %d" % sig)


def collectd_env():
    env = dict(os.environ)
    if PRELOAD:
        env["LD_PRELOAD"] = PRELOAD
    return env


def start(conf, errf):
    p = subprocess.Popen(["collectd", "-f", "-C", conf],
                         stdout=subprocess.DEVNULL, stderr=errf,
                         stdin=subprocess.DEVNULL, env=collectd_env())
    t0 = time.time()
    while time.time() - t0 < 30:
        with open(errf.name) as f:
            err = f.read()
        if "Initialization complete" in err:
            if "taskstat" in err and "failed" in err:
                p.kill()
                p.wait()
                if any(w in err for w in ("TASKSTATS", "CAP_NET_ADMIN",
                                          "namespace")):
                    skip("collectd cannot listen to exit events here: " +
                         err.strip()[-300:])
                fail("taskstat init failed: " + err)
            return p
        if p.poll() is not None:
            fail("collectd exited (%d): %s" % (p.returncode, err))
        time.sleep(0.1)
    p.kill()
    fail("collectd did not start: " + err)


def bad_option(tmp):
    """A typo in <Plugin taskstat> stops collectd, naming the option."""
    for block, says in (('  Attribution "bpf"\n', 'Attribution "bpf"'),
                        ('  Depht 3\n', 'unknown option "Depht"'),
                        ('  Depth -1\n', 'Depth -1')):
        conf = write_conf(tmp, block)
        # (collectd -t does not run the plugins' config callbacks)
        try:
            r = subprocess.run(["collectd", "-f", "-C", conf],
                               capture_output=True, text=True,
                               timeout=30, stdin=subprocess.DEVNULL,
                               env=collectd_env())
        except subprocess.TimeoutExpired:
            fail("collectd ran with the bad option %r" % block)
        check(r.returncode != 0 and says in r.stderr + r.stdout,
              "collectd with %r: exit %d, %s" % (block, r.returncode,
                                                 r.stderr))


def main():
    global OURTYPES, PRELOAD
    if len(sys.argv) < 3:
        fail("usage: e2e_collectd.py <taskstat.so> <taskstat.types.db> "
             "[<preload>]")
    so, OURTYPES = map(os.path.abspath, sys.argv[1:3])
    PRELOAD = sys.argv[3] if len(sys.argv) > 3 else ""
    if os.geteuid() != 0:
        skip("not root")
    if not shutil.which("collectd"):
        skip("collectd not installed (Debian: collectd-core)")
    for p in ("csv.so", "logfile.so"):
        if not os.path.exists(os.path.join(PLUGINS, p)):
            skip("collectd plugin %s not installed" % p)
    if not os.path.exists(TYPES):
        skip(TYPES + " not installed")

    tmp = tempfile.mkdtemp(prefix="cgs-collectd-")
    try:
        # collectd takes regular files only from its one PluginDir
        os.mkdir(os.path.join(tmp, "plugins"))
        for p in (os.path.join(PLUGINS, "csv.so"),
                  os.path.join(PLUGINS, "logfile.so"), so):
            shutil.copy(p, os.path.join(tmp, "plugins"))
        bad_option(tmp)
        with Cgroups("collectd") as cg:
            run(tmp, cg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS: collectd wrote the exact per-cgroup counts")


def run(tmp, cg):
    weird = b"we_ird %~\x01\xff"
    long_ = "L" * 200  # a path over 127 bytes: a hashed instance name
    for rel in ("exits", "cpu", "fold/x/y/z", long_):
        cg.mkdir(rel)
    cg.mkdir(weird)
    conf = write_conf(tmp, '  Hierarchy "v2"\n  Depth 3\n'
                      '  Cgroup "%s/*"\n  IgnoreSelected false\n' %
                      cg.path())
    with open(os.path.join(tmp, "collectd.err"), "w") as errf:
        p = start(conf, errf)
        try:
            w1 = workload(cg.dir("exits"), procs=4, code=0)
            w2 = workload(cg.dir("exits"), procs=2, code=3)
            die_by_signal(cg.dir("exits"), signal.SIGTERM)
            cpu_us = spin_cpu(cg.dir("cpu"), 0.6)
            w3 = workload(cg.dir("fold/x/y/z"), procs=1)
            w4 = workload(cg.dir("fold/x"), procs=0)
            w5 = workload(cg.dir(weird), procs=1)
            w6 = workload(cg.dir(long_), procs=2)
            want = {
                cg.path("exits"): (w1.tasks + w2.tasks + 1,
                                   w1.processes + w2.processes + 1),
                cg.path("cpu"): (1, 1),
                cg.path("fold/x"): (w3.tasks + w4.tasks,
                                    w3.processes + w4.processes),
                os.fsdecode(cg.path(weird)): (w5.tasks, w5.processes),
                cg.path(long_): (w6.tasks, w6.processes),
            }
            names = {instance(os.fsencode(k)): v for k, v in want.items()}
            # at least two intervals, then until every count is in
            time.sleep(2.5)
            t0 = time.time()
            while time.time() - t0 < 20:
                got = {n: csv_last(tmp, n, "taskstat_exits")
                       for n in names}
                if all(g and (g["tasks"], g["processes"]) == v
                       for g, v in zip(got.values(), names.values())):
                    break
                time.sleep(0.5)
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                fail("collectd did not stop on SIGTERM")
    with open(os.path.join(tmp, "collectd.err")) as f:
        err = f.read()
    check(rc == 0, "collectd exit %d after SIGTERM: %s" % (rc, err))
    check("Exiting normally" in err, "no clean shutdown: " + err)

    for n, (tasks, procs) in names.items():
        g = csv_last(tmp, n, "taskstat_exits")
        check(g is not None, "no taskstat_exits for instance %s; dirs: %s"
              % (n, os.listdir(os.path.join(tmp, "data", HOST))))
        check((g["tasks"], g["processes"]) == (tasks, procs),
              "%s: tasks %d processes %d, expected %d and %d" %
              (n, g["tasks"], g["processes"], tasks, procs))
        for t in ("ps_cputime", "taskstat_run_time", "ps_pagefaults",
                  "ps_disk_octets", "taskstat_outcomes",
                  "taskstat_delay-cpu"):
            check(csv_last(tmp, n, t) is not None, "%s: no %s" % (n, t))

    o = csv_last(tmp, instance(os.fsencode(cg.path("exits"))),
                 "taskstat_outcomes")
    check((o["clean"], o["nonzero"], o["signaled"], o["core_dumped"]) ==
          (w1.processes + w2.processes - 1, 1, 1, 0),
          "exits: outcomes %r" % o)
    c = csv_last(tmp, instance(os.fsencode(cg.path("cpu"))), "ps_cputime")
    got = c["user"] + c["syst"]
    # taskstats' utime/stime are the raw tick-sampled times, wait4's are
    # scaled to the exact run time: on a busy VM ticks charged after the
    # host stole the CPU make them differ by up to a third
    check(abs(got - cpu_us) <= 0.5 * cpu_us + 50000,
          "cpu: %d us reported, wait4 said %d us" % (got, cpu_us))
    # the "virtual" run time is the scheduler's exact sum_exec_runtime,
    # which wait4's total is scaled to ("real" is utime + stime again)
    rt = csv_last(tmp, instance(os.fsencode(cg.path("cpu"))),
                  "taskstat_run_time")
    check(abs(rt["virtual_ns"] / 1000 - cpu_us) <= 0.02 * cpu_us + 5000,
          "cpu: run time %r, wait4 said %d us" % (rt, cpu_us))
    pf = csv_last(tmp, instance(os.fsencode(cg.path("cpu"))),
                  "ps_pagefaults")
    check(pf["minflt"] > 0, "cpu: no minor faults %r" % pf)

    # folding: nothing deeper than Depth 3; selection: nothing outside
    # the glob but the plugin's own totals
    dirs = set(os.listdir(os.path.join(tmp, "data", HOST)))
    extra = dirs - {"taskstat-" + n for n in names} - {"taskstat"}
    check(not extra, "instances outside the selection or below Depth: %s"
          % sorted(extra))
    t = csv_last(tmp, "", "taskstat_loss")
    check(t is not None and t["dropped"] == 0, "loss %r" % t)
    print("exits %r, cpu %d us, run time %d us (wait4 %d us), "
          "instances %s" % (names, got, rt["virtual_ns"] / 1000, cpu_us,
                            sorted(dirs)))


if __name__ == "__main__":
    main()
