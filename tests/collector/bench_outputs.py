#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Cost of the collector's optional outputs (not a ctest test; run by hand
as root): CPU time of taskstat-collect per exit record with no extra output,
with --events, with --record and with both, under the same fork/exit churn.
Runs the configurations interleaved, N rounds, and prints medians.

  python3 tests/collector/bench_outputs.py build/cmd/taskstat-collect [rounds] [forks]
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

B = os.path.abspath(sys.argv[1])
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
FORKS = int(sys.argv[3]) if len(sys.argv) > 3 else 4000
tmp = tempfile.mkdtemp(prefix="tsc-bench-")
CONFIGS = {
    "base": [],
    "events": ["--events"],
    "record": ["--record", os.path.join(tmp, "c.tscap"), "--force"],
    "events+record": ["--events", "--record", os.path.join(tmp, "c.tscap"),
                      "--force"],
}


def churn(n):
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)


def one(args):
    out = os.path.join(tmp, "out.jsonl")
    p = subprocess.Popen([B, "-f", "jsonl", "-i", "1", "-o", out] + args,
                         stderr=subprocess.DEVNULL)
    while len(os.listdir("/proc/%d/task" % p.pid)) < 2:
        time.sleep(0.02)
    time.sleep(0.1)
    churn(FORKS)
    time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    _, st, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(st)
    last = None
    with open(out) as f:
        for line in f:
            if line.startswith('{"type":"rollup"'):
                last = line
    roll = json.loads(last)
    return (ru.ru_utime + ru.ru_stime), roll["records"], roll["dropped"]


res = {k: [] for k in CONFIGS}
for r in range(ROUNDS):
    for k, a in CONFIGS.items():
        cpu, recs, dropped = one(a)
        res[k].append((cpu / recs * 1e6, recs, dropped))
base = statistics.median(x[0] for x in res["base"])
print("config          us CPU/record (median)  ratio  records  dropped")
for k, v in res.items():
    m = statistics.median(x[0] for x in v)
    print("%-15s %10.2f %16.2f %8d %8d" % (k, m, m / base,
                                          statistics.median(x[1] for x in v),
                                          max(x[2] for x in v)))
