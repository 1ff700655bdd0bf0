#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The README's quick start in a terminal (issue 38): taskstat-collect
--format table in tmux panes of 80 and 120 columns, exits in a cgroup
with a container-long path: no line of the screen is wrapped (the pane
captured with wrapped lines joined is never wider than the pane), the
table is there, and the long path is shortened visibly (its end after
'...'). The same table with --wide is wider than 120 columns (every
column); at 120 the WORKLOAD column names the container. Skips without
tmux or a live collector.

argv[1]: the taskstat-collect binary."""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import Cgroups, arg, check, need_live, skip  # noqa: E402

B = os.path.abspath(arg(1, "taskstat-collect"))
need_live(B)
TMUX = shutil.which("tmux")
if not TMUX:
    skip("no tmux")
UID = "0b5c1d6e_7f80_4a91_b2c3_%012x" % (os.getpid() & 0xffffffffffff)
LEAF = "cri-containerd-%064x.scope" % os.getpid()
POD = ("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s"
       ".slice/%s" % (UID, LEAF))


def tmux(*args, check_rc=True):
    r = subprocess.run([TMUX, "-L", "tsc-tw-%d" % os.getpid()] +
                       list(args), capture_output=True, timeout=20)
    if check_rc:
        check(r.returncode == 0, "tmux %s: %r" % (args, r.stderr))
    return r.stdout.decode("utf-8", "replace")


def screen(width, extra):
    """The pane of `width` columns after the collector's 3 s run."""
    name = "w%d" % width
    cmd = "%s --format table --interval 1 -d 3 %s; sleep 60" % (B, extra)
    tmux("new-session", "-d", "-s", name, "-x", str(width), "-y", "60",
         cmd)
    try:
        time.sleep(4.5)
        return tmux("capture-pane", "-p", "-J", "-S", "-", "-t", name)
    finally:
        tmux("kill-session", "-t", name, check_rc=False)


with Cgroups("tw") as cg:
    d = cg.mkdir(POD)
    work = subprocess.Popen(
        ["sh", "-c", "echo $$ > %s/cgroup.procs; end=$(($(date +%%s) + 6));"
         " while [ $(date +%%s) -lt $end ]; do /bin/true; sleep 0.05; done"
         % d])
    try:
        for width in (80, 120):
            text = screen(width, "")
            lines = text.rstrip("\n").splitlines()
            wide = [ln for ln in lines if len(ln.rstrip()) > width]
            check(not wide, "%d columns: wrapped lines: %r" % (width, wide))
            check(any(ln.lstrip().startswith("TASKS") and "CGROUP" in ln
                      for ln in lines), "%d: no table: %r" % (width, text))
            rows = [ln for ln in lines if ln.rstrip().endswith(LEAF[-12:])]
            check(rows and all(" ..." in r and LEAF not in r for r in rows),
                  "%d: the long path not shortened visibly: %r" %
                  (width, rows or text[-2000:]))
            if width == 120:  # room for the names: the container's
                check(all(" containerd:%012x " % 0 in r for r in rows),
                      "120: no WORKLOAD name: %r" % rows)
        text = screen(200, "--wide")
        check(any(len(ln.rstrip()) > 120 for ln in text.splitlines()),
              "--wide: no line over 120 columns")
    finally:
        work.kill()
        work.wait()
        tmux("kill-server", check_rc=False)
print("PASS: the table fits 80 and 120 columns without a wrapped line")
