#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Top executables per cgroup (--exes N, --prom-exes; issue 39 item 1): in
a scratch cgroup 30 x true, 10 x sh killing itself with SIGSEGV and one
sha256sum burning CPU for a second (under timeout). With --exes 3 the
JSON names them by exits (true 30, sh 10 exact, error 0), by crashes (sh
10, nothing else) and by CPU (sha256sum first), each by the path, device
and inode of the binary that ran; the --textfile passes promtool and has
the same counts on exe="<path>" series; CSV has an "exe" row per entry
with every row as wide as its header; bad option combinations are exit-2
errors naming the option. Per workload: a unit (wx.service) of its own
cgroup and a child removed, then another child (a restart): the JSON
"workloads" entry ranks true's exits over all three, exact."""
import csv
import io
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check,  # noqa: E402
                     final_rollup, need_live, need_tool, promcheck, run_cmd,
                     skip, strict_json_lines)

B = arg(1, "taskstat-collect")
need_live(B)
need_tool("promtool")
BINS = {}
for name in ("true", "sh", "sha256sum", "timeout"):
    p = shutil.which(name)
    if not p:
        skip("no %s(1)" % name)
    BINS[name] = os.path.realpath(p)
tmp = tempfile.mkdtemp(prefix="tsc-topexe-")
textfile = os.path.join(tmp, "taskstat.prom")


def ident(path):
    st = os.stat(path)
    return "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)), st.st_ino


def run_in(cgdir, argv):
    """argv in cgroup cgdir (the child joins it before exec), no core."""
    def pre():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with open(os.path.join(cgdir, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    return subprocess.run(argv, preexec_fn=pre, cwd=tmp,
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode


def work(cgdir, trues, crashes, burn):
    for k in range(max(trues, crashes)):
        if k < trues:
            check(run_in(cgdir, [BINS["true"]]) == 0, "true failed")
        if k < crashes:
            rc = run_in(cgdir, [BINS["sh"], "-c", "kill -SEGV $$"])
            check(rc == -11, "sh did not die of SIGSEGV: %d" % rc)
    if burn:
        run_in(cgdir, [BINS["timeout"], "1", BINS["sha256sum"],
                       "/dev/zero"])


def gone_by(textfile, cgpath, limit=15):
    """Wait until the textfile has no series of cgpath (removed, then
    retired: 2 s grace; longer on a loaded host)."""
    label = 'cgroup="%s"' % cgpath
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        time.sleep(0.5)
        try:
            with open(textfile, encoding="utf-8") as f:
                if label not in f.read():
                    return
        except OSError:
            pass
    check(False, "%s still in the textfile %d s after its removal" %
          (cgpath, limit))


def entry(e, path):
    """e names the binary at path: its device and inode, and its path
    (any name of that file: /bin is /usr/bin here)."""
    dev, ino = ident(path)
    return (e.get("dev") == dev and e.get("inode") == ino and
            e.get("exe") is not None and
            os.path.realpath(e["exe"]) == path)


try:
    r = run_cmd([B, "-f", "jsonl", "--prom-exes", "-d", "0.1"])
    check(r.rc == 2 and "--prom-exes" in r.err,
          "--prom-exes without --exes: exit %d: %s" % (r.rc, r.err))
    r = run_cmd([B, "-f", "jsonl", "--exes", "1001", "-d", "0.1"])
    check(r.rc == 2 and "--exes" in r.err,
          "--exes 1001: exit %d: %s" % (r.rc, r.err))

    with Cgroups("topexe") as cg:
        d = cg.mkdir("w")
        p = cg.path("w")
        ua = cg.mkdir("wx.service")
        with Collector(B, ["-f", "jsonl", "--exes", "3", "--prom-exes",
                           "--textfile", textfile, "-i", "1"]) as col:
            work(d, 30, 10, True)
            # the unit: 2 exits in its cgroup, 3 in a child that goes,
            # then 4 in the next child (a restart)
            work(ua, 2, 0, False)
            work(cg.mkdir("wx.service/r1"), 3, 0, False)
            time.sleep(1.5)  # a snapshot of r1
            cg.rmtree(cg.dir("wx.service/r1"))
            gone_by(textfile, cg.path("wx.service/r1"))
            work(cg.mkdir("wx.service/r2"), 4, 0, False)
            time.sleep(1.5)  # a textfile after the work
            with open(textfile, "rb") as f:
                tf = f.read().decode()
        roll = final_rollup(strict_json_lines(col.raw()))
        check(cg.path("wx.service/r1") not in by_path(roll),
              "r1 still in the last snapshot")
        wl = [x for x in roll.get("workloads", [])
              if x.get("unit") == "wx.service"]
        check(len(wl) == 1, "workloads: %r" % roll.get("workloads"))
        e = wl[0]["exes"]["by_exits"]
        check(wl[0]["cgroups_seen"] == 3 and wl[0]["cgroups_live"] == 2 and
              len(e) == 1 and entry(e[0], BINS["true"]) and
              e[0]["exits"] == 9 and e[0]["error"] == 0,
              "workload wx.service: %r (want true 9 exits, 3 cgroups "
              "seen, 2 live)" % wl[0])
        c = by_path(roll).get(p)
        check(c is not None, "cgroup %s missing" % p)
        ex = c.get("exes")
        check(ex is not None, "no \"exes\": %s" % sorted(c))
        # exits: true 30, sh 10, then timeout and sha256sum 1 each: the
        # third listed is one of those, (other) the other one
        e = ex["by_exits"]
        check(len(e) == 4 and entry(e[0], BINS["true"]) and
              e[0]["exits"] == 30 and entry(e[1], BINS["sh"]) and
              e[1]["exits"] == 10 and e[2]["exits"] == 1 and
              any(entry(e[2], BINS[n]) for n in ("timeout", "sha256sum")) and
              all(x["error"] == 0 for x in e) and e[3].get("other") is True
              and e[3]["exe"] is None and e[3]["exits"] == 1,
              "by_exits: %r" % e)
        k = ex["by_crashes"]
        check(len(k) == 1 and entry(k[0], BINS["sh"]) and
              k[0]["crashes"] == 10 and k[0]["error"] == 0,
              "by_crashes: %r (want sh 10, nothing else)" % k)
        u = ex["by_cpu"]
        check(u and entry(u[0], BINS["sha256sum"]) and u[0]["cpu_s"] >= 0.1,
              "by_cpu: %r (want sha256sum first, >= 0.1 s on a busy host)" % u)
        cpu = [x["cpu_s"] for x in u if not x.get("other")]
        check(cpu == sorted(cpu, reverse=True), "by_cpu order %r" % cpu)
        check(roll.get("exe", {}).get("known", 0) > 0,
              "exe map counts: %r" % roll.get("exe"))
        # the textfile: valid, the same counts by path
        promcheck(tf.encode(), "--textfile")
        for fam, path, want in (("exits", BINS["true"], 30),
                                ("exits", BINS["sh"], 10),
                                ("crashes", BINS["sh"], 10)):
            pat = (r'^taskstat_exe_process_%s_total\{cgroup="%s",'
                   r'exe="([^"]*)"\} (\S+)$' % (fam, re.escape(p)))
            got = [float(v) for x, v in re.findall(pat, tf, re.M)
                   if x.startswith("/") and os.path.realpath(x) == path]
            check(got == [want], "textfile: exe_process_%s_total %s: %r" %
                  (fam, path, got))
        # the unit's workload series: true's 9 exits, one series a path
        pat = (r'^taskstat_workload_exe_process_exits_total\{kind="unit",'
               r'unit="wx.service",exe="([^"]*)"\} (\S+)$')
        got = [(os.path.realpath(x), float(v))
               for x, v in re.findall(pat, tf, re.M) if x.startswith("/")]
        check(got == [(BINS["true"], 9.0)],
              "textfile: workload_exe_process_exits_total: %r" % got)
        n = len(re.findall(r'^taskstat_exe_process_crashes_total\{cgroup='
                           r'"%s",' % re.escape(p), tf, re.M))
        check(n == 1, "textfile: %d crash series for %s, want 1" % (n, p))

        # CSV: an "exe" row per entry, each row as wide as the header
        d2 = cg.mkdir("c")
        with Collector(B, ["-f", "csv", "--exes", "2", "-i", "1"]) as col:
            work(d2, 3, 2, False)
            time.sleep(1.5)
        rows = list(csv.reader(io.StringIO(col.raw().decode())))
        h = rows[0]
        check(h[-6:] == ["exe_rank", "exe", "exe_dev", "exe_inode",
                         "exe_value", "exe_error"] or
              h[-7:-1] == ["exe_rank", "exe", "exe_dev", "exe_inode",
                           "exe_value", "exe_error"],
              "CSV header ends %r" % h[-8:])
        check(all(len(x) == len(h) for x in rows),
              "CSV rows of other widths than the header's %d" % len(h))
        # cumulative: the latest (largest) value of each (rank, path); a
        # line of --stream changes has only the cgroups that changed
        got = set()
        for x in rows[1:]:
            x = dict(zip(h, x))
            if x["type"] == "exe" and x["cgroup"] == cg.path("c") and \
                    x["exe"].startswith("/"):
                got.add((x["exe_rank"], os.path.realpath(x["exe"]),
                         float(x["exe_value"])))
        for want in (("exits", BINS["true"], 3.0), ("exits", BINS["sh"], 2.0),
                     ("crashes", BINS["sh"], 2.0)):
            check(want in got, "CSV exe rows %r lack %r" % (got, want))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
