#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Top commands per cgroup (--comms N, --prom-comms): a workload in a
scratch cgroup runs distinct commands with known exit counts (alpha x7,
beta x5, gamma x3, delta x2, eps x1, and the workload's own process);
with --comms 3 its JSON "comms" lists exactly alpha 7, beta 5, gamma 3
by exits, exact (the summary never filled: errors 0), then (other) with
the other 4; the table shows the same under the cgroup's row; the
--textfile passes promtool and carries the comm series; bad option
combinations are exit-2 errors naming the option."""
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check,  # noqa: E402
                     final_rollup, need_live, need_tool, promcheck, run_cmd,
                     workload)

B = arg(1, "taskstat-collect")
need_live(B)
need_tool("promtool")
tmp = tempfile.mkdtemp(prefix="tsc-comms-")
textfile = os.path.join(tmp, "taskstat.prom")

RUNS = [(b"alpha", 7), (b"beta", 5), (b"gamma", 3), (b"delta", 2),
        (b"eps", 1)]
PARENT = b"e2e-comms"
# interleaved, so that the order of the ranking is not the order of runs
CHILDREN = [n for k in range(7) for n, c in reversed(RUNS) if k < c]
TOP = [("alpha", 7), ("beta", 5), ("gamma", 3)]
OTHER = sum(c for _, c in RUNS[3:]) + 1  # delta, eps, the parent


def work(d):
    return workload(d, comm=PARENT, child_comms=CHILDREN)


try:
    # the option errors first: no collector runs
    r = run_cmd([B, "-f", "jsonl", "--prom-comms", "-d", "0.1"])
    check(r.rc == 2 and "--prom-comms" in r.err,
          "--prom-comms without --comms: exit %d: %s" % (r.rc, r.err))
    r = run_cmd([B, "-f", "jsonl", "--comms", "1001", "-d", "0.1"])
    check(r.rc == 2 and "--comms" in r.err,
          "--comms 1001: exit %d: %s" % (r.rc, r.err))

    with Cgroups("comms") as cg:
        d = cg.mkdir("w")
        p = cg.path("w")
        with Collector(B, ["-f", "jsonl", "--comms", "3", "--prom-comms",
                           "--textfile", textfile, "-i", "1"]) as col:
            w = work(d)
            time.sleep(1.5)  # a textfile after the work
            with open(textfile, "rb") as f:
                tf = f.read()
        c = by_path(final_rollup(col.lines())).get(p)
        check(c is not None, "cgroup %s missing" % p)
        check(c["processes"] == w.processes == len(CHILDREN) + 1,
              "processes %d, ran %d" % (c["processes"], w.processes))
        cm = c.get("comms")
        check(cm is not None, "no \"comms\": %s" % sorted(c))
        ex = cm["by_exits"]
        got = [(e["comm"], e["exits"], e["error"]) for e in ex[:-1]]
        check(got == [(n, v, 0) for n, v in TOP],
              "by_exits %r, want %r" % (ex, TOP))
        o = ex[-1]
        check(o["comm"] is None and o["other"] is True and
              o["exits"] == OTHER and o["error"] == 0 and
              o["max_each"] == 2, "(other) by exits: %r, want %d exits "
              "(largest folded: delta, 2)" % (o, OTHER))
        check(all("other" not in e for e in ex[:-1]), "other flags: %r" % ex)
        # by CPU: only commands that had CPU (a short task's is often 0
        # ticks), at most 3 named, (other) last if any
        cpu = cm["by_cpu"]
        names = {n.decode() for n, _ in RUNS} | {PARENT.decode()}
        named = [e for e in cpu if "other" not in e]
        had_cpu = c.get("utime_s", 0) + c.get("stime_s", 0) > 0
        check((1 if had_cpu else 0) <= len(named) <= 3 and len(cpu) <= 4 and
              all(e["comm"] in names and e["cpu_s"] > 0 for e in named) and
              all(e.get("other") for e in cpu[len(named):]),
              "by_cpu: %r" % cpu)
        vals = [e["cpu_s"] for e in named]
        check(vals == sorted(vals, reverse=True), "by_cpu order %r" % vals)
        check(all(e["error_s"] == 0 for e in cpu), "by_cpu errors %r" % cpu)
        # the textfile: valid, with the comm series of the cgroup
        promcheck(tf, "--textfile")
        text = tf.decode()
        for n, v in TOP + [("(other commands, not in the top N)", OTHER)]:
            pat = (r'^taskstat_comm_process_exits_total\{cgroup="%s",'
                   r'comm="%s"\} (\S+)$' % (re.escape(p), re.escape(n)))
            m = re.search(pat, text, re.M)
            check(m and float(m.group(1)) == v,
                  "textfile: comm_process_exits_total %s: %s" %
                  (n, m and m.group(1)))
        n_cpu = len(re.findall(r'^taskstat_comm_cpu_seconds_total\{cgroup='
                               r'"%s",comm="[^"]*"\} \S+$' % re.escape(p),
                               text, re.M))
        check(n_cpu == len(cpu), "textfile: %d comm_cpu_seconds_total "
              "series, JSON has %d" % (n_cpu, len(cpu)))
        check("# TYPE taskstat_comm_cpu_seconds_total counter" in text,
              "no TYPE line for comm_cpu_seconds_total")

        # the table: the commands under the cgroup's row
        d2 = cg.mkdir("t")
        with Collector(B, ["-f", "table", "--wide", "--comms", "3", "-i",
                           "1"]) as col:
            work(d2)
            time.sleep(1.5)
        lines = col.raw().decode("utf-8", "replace").splitlines()
        want = "exits: alpha 7, beta 5, gamma 3, (other) %d" % OTHER
        hits = [i for i, l in enumerate(lines) if l.strip() == want]
        check(hits, "no table line %r in:\n%s" % (want,
                                                  "\n".join(lines[-40:])))
        i = hits[-1]
        # (other) there only if more than 3 commands had CPU; no cpu line
        # when none had any (a short task's CPU is often 0 ticks): then
        # the exits line follows the cgroup's own row
        row = i - 2 if lines[i - 1].strip().startswith("cpu:") else i - 1
        check(lines[row].split()[-1] == cg.path("t"),
              "row above the comm lines: %r, want %s (or a cpu line "
              "between)" % (lines[row], cg.path("t")))
        if row == i - 1:
            check(re.search(r" 0\.000 +0\.000 ", lines[row]),
                  "no cpu line, yet the row has CPU: %r" % lines[row])
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
