#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""--user nobody: after registering, every thread runs as nobody with no
capabilities at all, and the collector keeps collecting, serving /metrics
and writing its textfile."""
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check,  # noqa: E402
                     expect_counts, final_rollup, need_live, need_tool,
                     port_from_stderr, skip, workload)

B = arg(1, "taskstat-collect")
need_live(B)
try:
    nobody = pwd.getpwnam("nobody")
except KeyError:
    skip("no user nobody")
curl = need_tool("curl")

tmp = tempfile.mkdtemp(prefix="tsc-priv-")
os.chmod(tmp, 0o755)
tdir = os.path.join(tmp, "textfiles")
os.mkdir(tdir)
os.chown(tdir, nobody.pw_uid, nobody.pw_gid)
textfile = os.path.join(tdir, "taskstat.prom")


def status(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.split()
    return out


try:
    # The textfile directory must be writable by the dropped user: checked
    # up front, exit 2.
    r = subprocess.run([B, "--user", "nobody", "--textfile",
                        os.path.join(tmp, "root-only.prom"), "-d", "1"],
                       capture_output=True, timeout=10)
    check(r.returncode == 2 and b"--textfile" in r.stderr and
          b"--user" in r.stderr, "unwritable textfile for --user: %d %r" %
          (r.returncode, r.stderr))

    with Cgroups("priv") as cg:
        d = cg.mkdir("w")
        with Collector(B, ["--user", "nobody", "-f", "jsonl", "-i", "0.3",
                           "--events", "--listen", "127.0.0.1:0",
                           "--textfile", textfile]) as col:
            hostport = port_from_stderr(col)
            tasks = os.listdir("/proc/%d/task" % col.p.pid)
            check(len(tasks) >= 2, "threads: %s" % tasks)
            for t in tasks:
                st = status("/proc/%d/task/%s/status" % (col.p.pid, t))
                check(st["Uid"] == [str(nobody.pw_uid)] * 4,
                      "thread %s Uid %s" % (t, st["Uid"]))
                check(st["Gid"] == [str(nobody.pw_gid)] * 4,
                      "thread %s Gid %s" % (t, st["Gid"]))
                for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd",
                            "CapAmb"):
                    check(int(st[cap][0], 16) == 0, "thread %s %s %s" %
                          (t, cap, st[cap]))
                check(st["NoNewPrivs"] == ["1"], "NoNewPrivs")
            w = workload(d, procs=5, threads=3)
            time.sleep(0.8)
            r = subprocess.run([curl, "-sS", "--max-time", "10",
                                "http://%s/metrics" % hostport],
                               capture_output=True, timeout=30)
            check(r.returncode == 0, "curl after the drop: %r" % r.stderr)
            m = re.search(r'^taskstat_task_exits_total\{cgroup="%s"\} (\d+)' %
                          re.escape(cg.path("w")), r.stdout.decode(), re.M)
            check(m and int(m.group(1)) == w.tasks,
                  "/metrics after the drop: %s" % (m and m.group(0)))
            st = os.stat(textfile)
            check(st.st_uid == nobody.pw_uid, "textfile not written by "
                  "nobody")
        roll = final_rollup(col.lines())
        expect_counts(roll, cg.path("w"), w.tasks, w.processes,
                      "after --user nobody")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
