#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Make the replay corpus: run taskstat-collect --record while a known
workload (forks, threads, exit codes, a signal, named commands) runs in a
few cgroups, and write the capture. Needs root and a live taskstats.

usage: record.py TASKSTAT-COLLECT OUT.tscap [collector args...]

The capture holds every exit on the host while it runs (the collector
records unfiltered), so record on a quiet host; check.sh renders it."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import Cgroups, Collector, fork_child, move_self, set_comm, workload  # noqa: E402,E501

B, OUT = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
if os.path.exists(OUT):
    os.unlink(OUT)


def killed(cgdir):
    """A child in cgdir that is killed by SIGKILL (a signalled exit)."""
    def child():
        move_self(cgdir)
        set_comm(b"cgs-victim")
        time.sleep(30)
    pid = fork_child(child)
    time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


with Cgroups("replay") as cg:
    web = cg.mkdir("web")
    api = cg.mkdir("web/api")
    deep = cg.mkdir("batch/a/b/c")
    with Collector(B, ["-f", "jsonl", "-i", "0.2", "--record", OUT] +
                   extra) as col:
        workload(web, procs=4, threads=2, comm=b"cgs-web")
        workload(api, procs=2, threads=6, comm=b"cgs-api", code=3,
                 child_comms=(b"cgs-curl", b"cgs-sh"))
        time.sleep(0.3)  # a second snapshot interval
        workload(deep, procs=5, comm=b"cgs-batch", child_comms=(b"x y",))
        workload(web, threads=3, comm=b"cgs-web")
        killed(api)
        time.sleep(0.4)
print("%s: %d bytes" % (OUT, os.path.getsize(OUT)))
