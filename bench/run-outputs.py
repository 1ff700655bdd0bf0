#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Cost of the collector's optional outputs (a benchmark, not a test; run
by hand as root): CPU time of taskstat-collect per exit record with no
extra output, with --events, with --record and with both, under the same
fork/exit churn. Runs the configurations interleaved, N rounds, and prints
medians. The collector is run and its output read with the e2e tests'
module (tests/e2e/tsc_e2e.py).

  python3 bench/run-outputs.py build/cmd/taskstat-collect [rounds] [forks]
"""
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "e2e"))
import tsc_e2e as e  # noqa: E402

B = e.arg(1, "TASKSTAT_COLLECT [rounds] [forks]")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
FORKS = int(sys.argv[3]) if len(sys.argv) > 3 else 4000


def churn(n):
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)


def one(args):
    """CPU seconds (rusage), records and drops of one run."""
    col = e.Collector(B, ["-f", "jsonl", "-i", "1"] + args)
    try:
        col.wait_started()
        churn(FORKS)
        time.sleep(0.1)  # the last records reach the listener
        col.p.send_signal(signal.SIGTERM)
        _, st, ru = os.wait4(col.p.pid, 0)
        col.p.returncode = os.waitstatus_to_exitcode(st)
        e.check(col.p.returncode == 0, "taskstat-collect %s: exit %d: %s" %
                (" ".join(args), col.p.returncode, col.stderr()))
        roll = e.final_rollup(col.lines())
    finally:
        col.cleanup()
    return ru.ru_utime + ru.ru_stime, roll["records"], roll["dropped"]


def main():
    e.need_live(B)
    tmp = tempfile.mkdtemp(prefix="tsc-bench-")
    cap = os.path.join(tmp, "c.tscap")
    configs = {
        "base": [],
        "events": ["--events"],
        "record": ["--record", cap, "--force"],
        "events+record": ["--events", "--record", cap, "--force"],
    }
    res = {k: [] for k in configs}
    try:
        for _ in range(ROUNDS):
            for k, a in configs.items():
                cpu, recs, dropped = one(a)
                res[k].append((cpu / recs * 1e6, recs, dropped))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = statistics.median(x[0] for x in res["base"])
    print("config          us CPU/record (median)  ratio  records  dropped")
    for k, v in res.items():
        m = statistics.median(x[0] for x in v)
        print("%-15s %10.2f %16.2f %8d %8d" % (
            k, m, m / base, statistics.median(x[1] for x in v),
            max(x[2] for x in v)))


main()
