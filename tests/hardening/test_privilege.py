#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Least privilege: once the listeners are registered the collector holds
no capability in any thread, read from /proc/<pid>/task/*/status.

user     started as root with --user nobody (full drop: ids, all five
         capability sets, no_new_privs);
ambient  started the way the systemd unit example starts it: an
         unprivileged user whose only capability is an ambient
         CAP_NET_ADMIN (setpriv stands in for DynamicUser= +
         AmbientCapabilities=), no --user: CAP_NET_ADMIN is needed to
         register and for nothing afterwards, so it must be gone from the
         effective, permitted and ambient sets (the bounding set can't
         shrink without CAP_SETPCAP and holds nothing else).
Arguments after the binary select cases (default: both)."""
import os
import pwd
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, fail,  # noqa: E402
                     final_rollup, need_live, skip, workload)

B = arg(1, "taskstat-collect")
need_live(B)
CASES = [a for a in sys.argv[2:] if not a.startswith("-")] or [
    "user", "ambient"]
CAP_NET_ADMIN = 12


def statuses(pid):
    out = {}
    for t in os.listdir("/proc/%d/task" % pid):
        st = {}
        try:
            with open("/proc/%d/task/%s/status" % (pid, t)) as f:
                for line in f:
                    k, _, v = line.partition(":")
                    st[k] = v.split()
        except OSError:
            continue
        out[t] = st
    return out


def caps(st, name):
    return int(st[name][0], 16)


def run_case(case, nobody):
    if case == "user":
        wrap, args = None, ["--user", "nobody"]
    else:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            skip("setpriv (util-linux) not installed")
        wrap = [setpriv, "--reuid=%d" % nobody.pw_uid,
                "--regid=%d" % nobody.pw_gid, "--clear-groups",
                "--inh-caps=-all,+net_admin",
                "--ambient-caps=-all,+net_admin",
                "--bounding-set=-all,+net_admin"]
        args = []
    with Cgroups("priv-" + case) as cg:
        d = cg.mkdir(b"w")
        with Collector(B, args + ["-f", "jsonl", "-i", "0.3"],
                       wrap=wrap) as col:
            time.sleep(0.3)
            sts = statuses(col.p.pid)
            check(len(sts) >= 2, "%s: threads %s" % (case, list(sts)))
            bad = []
            for t, st in sorted(sts.items()):
                check(st["Uid"] == [str(nobody.pw_uid)] * 4,
                      "%s: thread %s Uid %s" % (case, t, st["Uid"]))
                left = {k: st[k][0] for k in ("CapInh", "CapPrm", "CapEff",
                                             "CapAmb") if caps(st, k)}
                bnd = caps(st, "CapBnd")
                if case == "user" and bnd:
                    left["CapBnd"] = st["CapBnd"][0]
                if case == "ambient" and bnd & ~(1 << CAP_NET_ADMIN):
                    left["CapBnd"] = st["CapBnd"][0]
                if left:
                    bad.append("thread %s (%s) keeps %s" %
                               (t, st["Name"][0] if st.get("Name") else "?",
                                left))
                if case == "user":
                    check(st["NoNewPrivs"] == ["1"], "NoNewPrivs not set")
            # and it still collects
            _, tasks, _ = workload(d, procs=2)
            time.sleep(0.6)
        roll = final_rollup(col.lines())
        got = {c["cgroup"]: c["tasks"] for c in roll["cgroups"]}
        check(got.get(cg.path("w")) == tasks,
              "%s: collection after the drop: %s" %
              (case, got.get(cg.path("w"))))
    return bad


def main():
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        skip("no user nobody")
    bad = []
    for case in CASES:
        bad += ["%s: %s" % (case, b) for b in run_case(case, nobody)]
    if bad:
        fail("capabilities remain after registering: " + "; ".join(bad))
    print("ok: %s: no capability left in any thread after registering" %
          ", ".join(CASES))


main()
