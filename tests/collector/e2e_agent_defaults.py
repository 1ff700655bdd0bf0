#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The agent of include/cgstats.h's example, every default: it counts
every exit of a workload in its own cgroup.

    e2e_agent_defaults.py AGENT COLLECTOR

AGENT is examples/agent-defaults (cgs_listener_open(&l, NULL),
cgs_rollup_new(&r, NULL), cgs_listener_run(l, cgs_rollup_account_exit, r,
NULL), a snapshot every second). A shell joins a fresh cgroup and runs
100 /bin/true and one seq: 102 exits in that cgroup, the shell's own
included. Each case wants all 102 there, 0 refused and 0 dropped:
 - the defaults, the workload free to run on any CPU;
 - the listener on one CPU (-c N), the workload pinned there (each CPU
   in turn): a cpulist for the listener changes nothing of the rollup's
   defaults;
 - the listener on every CPU named in a cpulist;
 - a rollup made for the listener (cgs_rollup_opts.listener, -L) on one
   CPU;
 - without CAP_BPF/CAP_PERFMON/CAP_SYS_ADMIN (capsh), where the defaults
   fall back to the /proc source: 102 there too (the short-lived children
   inferred from the shell, which is alive).
COLLECTOR only decides whether this host can listen at all (skip, 77)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, arg, check, fail, need_live,  # noqa: E402
                     START_TIMEOUT, STOP_TIMEOUT)

AGENT = arg(1, "agent-defaults taskstat-collect")
need_live(arg(2, "agent-defaults taskstat-collect"))
TRUES = 100
WANT = TRUES + 2
WRAP = os.environ.get("TSC_E2E_WRAP", "").split()


def ncpus():
    with open("/sys/devices/system/cpu/online") as f:
        s = f.read().strip()
    cpus = []
    for part in s.split(","):
        a, _, b = part.partition("-")
        cpus += range(int(a), int(b or a) + 1)
    return cpus


def start(args, prefix=()):
    p = subprocess.Popen(list(prefix) + WRAP + [AGENT, "-i", "1"] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True,
                         # other cgroups (any bytes) are listed too
                         errors="surrogateescape")
    line = ""
    t0 = time.monotonic()
    while time.monotonic() - t0 < START_TIMEOUT:
        line = p.stderr.readline()
        if line.startswith("ready:") or not line:
            break
    check(line.startswith("ready:"),
          "agent %s did not start: %r" % (args, line))
    return p, line.strip()


def workload(cgdir, cpu=None):
    script = ("echo $$ > %s/cgroup.procs && i=0 && "
              "while [ $i -lt %d ]; do /bin/true; i=$((i + 1)); done; "
              "seq 1 1 >/dev/null" % (cgdir, TRUES))
    cmd = ["/bin/sh", "-c", script]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    subprocess.run(cmd, check=True, timeout=60)


def finish(p):
    time.sleep(1.5)  # records read within the runner's batches
    p.send_signal(signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("agent did not stop on SIGTERM")
    check(p.returncode == 0, "agent exit %d: %s" % (p.returncode, err))
    return out


def last_snapshot(out):
    blocks = out.split("\n\n")
    check(len(blocks) >= 2, "no snapshot in %r" % out[-500:])
    tail = blocks[-1]
    refused = int(re.search(r"^refused (\d+)$", tail, re.M).group(1))
    dropped = int(re.search(r"^dropped (\d+)$", tail, re.M).group(1))
    rows = {}
    for line in blocks[-2].splitlines():
        n, _, path = line.partition("\t")
        rows[path] = int(n)
    return rows, refused, dropped


def case(name, cg, rel, args, cpu=None, prefix=()):
    cgdir = cg.mkdir(rel)
    p, ready = start(args, prefix)
    workload(cgdir, cpu)
    rows, refused, dropped = last_snapshot(finish(p))
    got = rows.get(cg.path(rel), 0)
    print("%-28s %s: %d of %d in %s, refused %d, dropped %d" %
          (name, ready, got, WANT, cg.path(rel), refused, dropped))
    check(dropped == 0, "%s: the kernel dropped %d records" % (name, dropped))
    check(refused == 0, "%s: the rollup refused %d records" % (name, refused))
    check(got == WANT, "%s: %d of %d exits counted in %s" %
          (name, got, WANT, cg.path(rel)))


with Cgroups("agent") as cg:
    cpus = ncpus()
    case("defaults", cg, "free", [])
    for c in cpus:
        case("listener on cpu %d" % c, cg, "cpu%d" % c, ["-c", str(c)],
             cpu=c)
    case("listener on %s" % ",".join(map(str, cpus)), cg, "list",
         ["-c", ",".join(map(str, cpus))])
    c = cpus[-1]
    case("rollup for a listener on %d" % c, cg, "for%d" % c,
         ["-L", "-c", str(c)], cpu=c)
    capsh = shutil.which("capsh")
    if capsh:
        case("no CAP_BPF (proc source)", cg, "proc", [],
             prefix=[capsh, "--drop=cap_bpf,cap_perfmon,cap_sys_admin",
                     "--", "-c", 'exec "$0" "$@"'])
    else:
        print("no capsh: the /proc-source case is not run")
print("PASS")
