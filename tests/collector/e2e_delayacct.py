#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""kernel.task_delayacct: the start-up warning when it is off, the
"delayacct" snapshot field and taskstat_collector_delayacct_enabled (both
re-read at each snapshot), --enable-delayacct, and its clear failure
without CAP_SYS_ADMIN. The sysctl's original value is put back."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import Collector, arg, check, need_live, need_tool, skip  # noqa

SYSCTL = "/proc/sys/kernel/task_delayacct"
WARN = "kernel.task_delayacct is 0"
METRIC = "taskstat_collector_delayacct_enabled"

B = arg(1, "taskstat-collect")
if not os.path.exists(SYSCTL):
    skip("kernel without %s" % SYSCTL)
need_live(B)
promtool = need_tool("promtool")


def get():
    with open(SYSCTL) as f:
        return f.read().strip()


def put(v):
    with open(SYSCTL, "w") as f:
        f.write(v + "\n")


def flags(col):
    return [o["delayacct"] for o in col.lines() if o.get("type") == "rollup"]


def metric(path):
    with open(path, "rb") as f:
        text = f.read()
    r = subprocess.run([promtool, "check", "metrics"], input=text,
                       capture_output=True, timeout=30)
    check(r.returncode == 0, "promtool: %s %s" % (r.stdout, r.stderr))
    m = re.search(r"^%s (\S+)$" % METRIC, text.decode(), re.M)
    check(m, "no %s in %s" % (METRIC, text[:400]))
    check(re.search(r"^# TYPE %s gauge$" % METRIC, text.decode(), re.M),
          "no TYPE gauge for " + METRIC)
    return float(m.group(1))


orig = get()
tmp = tempfile.mkdtemp(prefix="tsc-delayacct-")
tf = os.path.join(tmp, "t.prom")
try:
    # Off: one warning, snapshots say false, then true once switched on
    # during the run (re-read at each snapshot).
    put("0")
    with Collector(B, ["-f", "jsonl", "-i", "0.2",
                       "--textfile", tf]) as col:
        time.sleep(0.5)
        check(metric(tf) == 0, "metric not 0 while off")
        put("1")
        time.sleep(0.6)
        check(metric(tf) == 1, "metric not 1 after switching on")
    f = flags(col)
    check(f and f[0] is False and f[-1] is True,
          "delayacct in snapshots: %s" % f)
    check(col.stderr().count(WARN) == 1, "warning: " + col.stderr())

    # --enable-delayacct: written while privileged, said on stderr.
    put("0")
    with Collector(B, ["-f", "jsonl", "-i", "0.2",
                       "--enable-delayacct"]) as col:
        time.sleep(0.5)
    check(get() == "1", "sysctl after --enable-delayacct: " + get())
    f = flags(col)
    check(f and all(x is True for x in f), "delayacct: %s" % f)
    err = col.stderr()
    check("--enable-delayacct: set kernel.task_delayacct=1" in err,
          "no notice: " + err)
    check(WARN not in err, "warned although enabled: " + err)

    # On already: no warning, nothing written or said.
    with Collector(B, ["-f", "jsonl", "-i", "0.2",
                       "--enable-delayacct"]) as col:
        time.sleep(0.3)
    check("task_delayacct" not in col.stderr(), "said: " + col.stderr())

    # Without CAP_SYS_ADMIN the write fails, naming the option, exit 1.
    setpriv = shutil.which("setpriv")
    if setpriv:
        put("0")
        r = subprocess.run([setpriv, "--bounding-set", "-sys_admin",
                            "--inh-caps", "-sys_admin", "--", B, "-f",
                            "jsonl", "-d", "0.3", "--enable-delayacct"],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 1, "exit %d: %s" % (r.returncode, r.stderr))
        check("--enable-delayacct: cannot write kernel.task_delayacct"
              in r.stderr, "error: " + r.stderr)
        check(get() == "0", "sysctl written without CAP_SYS_ADMIN")
    else:
        print("note: setpriv missing, refused write not tested")

    # --replay: no meaning, a usage error.
    r = subprocess.run([B, "--replay", "/dev/null", "--enable-delayacct"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 2 and "--enable-delayacct" in r.stderr,
          "with --replay: %d %s" % (r.returncode, r.stderr))
finally:
    put(orig)
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
