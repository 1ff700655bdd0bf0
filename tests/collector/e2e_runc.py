#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A container started by a real runtime (runc), with either attribution
source: its exits in the container's cgroup.

    e2e_runc.py COLLECTOR

runc creates the container's cgroup (cgroupsPath, below a private
cgroup2 tree), starts `runc init` in a new pid namespace, which joins the
cgroup, then execs the container's process: sh runs 100 true and a seq,
each forked and reaped at once. The rootfs is made of the host's sh,
true and seq, named cgsr-sh, cgsr-true and cgsr-seq (comms no other
process of the host has; and no shell's builtin true), and the
libraries ldd names. The collector writes every exit record (--events):
 - kernel source (where it loads): the shell, seq and the 100 true, each
   once, in the container's cgroup;
 - /proc fallback (--attribution exact): each once, in the container's
   cgroup or counted as a guess (source "inferred"), never elsewhere as
   read from /proc.
Skips (77) without runc, or where it cannot start a container here
(no mount namespaces, a container without the privileges), saying why."""
import collections
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, exits_written,  # noqa
                     need_live)
from runc_util import bundle, need_runc, probe, runc, v1_leftovers  # noqa

B = arg(1, "taskstat-collect")
need_live(B)
need_runc()
TRUES = 100
WANT = {"cgsr-sh": 1, "cgsr-seq": 1, "cgsr-true": TRUES}
SCRIPT = ("i=0; while [ $i -lt %d ]; do cgsr-true; i=$((i + 1)); done; "
          "cgsr-seq 1 1 >/dev/null" % TRUES)


def run(cg, attribution, tmp):
    """The container under a collector; Counter of (comm, cgroup is the
    container's, source) over its process exits."""
    ctr = cg.path("ctr")
    d = os.path.join(tmp, attribution)
    bundle(d, ctr, SCRIPT)
    name = "cgs-runc-%d-%s" % (os.getpid(), attribution)
    with Collector(B, ["--attribution", attribution, "--events", "-f",
                       "jsonl", "-i", "1"]) as col:
        r = runc(d, name)
        check(r.returncode == 0, "runc run: exit %d: %s" %
              (r.returncode, r.stderr.strip()))
        exits_written(col, "cgsr-true", TRUES)
    got = collections.Counter()
    for e in col.lines():
        if (e.get("type") == "exit" and e["kind"] == "process" and
                e["comm"] in WANT):
            got[(e["comm"], e["cgroup"] == ctr, e["source"])] += 1
    print("attribution %s:" % attribution)
    for (comm, own, src), n in sorted(got.items()):
        print("  %-9s %-16s %-9s %d" % (comm, "in the container" if own
                                         else "elsewhere", src, n))
    for comm, n in WANT.items():
        seen = sum(c for (k, _, _), c in got.items() if k == comm)
        check(seen >= n, "%s: %d exits of %s, %d ran" %
              (attribution, seen, comm, n))
    return got


with tempfile.TemporaryDirectory() as tmp, Cgroups("runc") as cg:
    try:
        probe(tmp, cg.path("probe"))  # can runc start one here at all?
        got = run(cg, "auto", tmp)
        if any(src == "kernel" for (_, _, src) in got):
            for (comm, own, src), n in got.items():
                check(own and src == "kernel",
                      "kernel source: %d exits of %s %s (%s)" %
                      (n, comm, "in the container" if own else "elsewhere",
                       src))
            for comm, n in WANT.items():
                check(got[(comm, True, "kernel")] == n,
                      "kernel source: %d exits of %s, %d ran" %
                      (got[(comm, True, "kernel")], comm, n))
        else:
            print("(the kernel source did not load: auto used /proc)")
        got = run(cg, "exact", tmp)
        for (comm, own, src), n in got.items():
            check(own or src == "inferred",
                  "/proc fallback: %d exits of %s outside the container, "
                  "source %s, not as a guess" % (n, comm, src))
    finally:
        v1_leftovers(cg.name)
print("OK")
