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
         shrink without CAP_SETPCAP and holds nothing else); a
         container's state (containerd's bundle, 0700 root) stays
         unreadable: no names;
read     the same with CAP_DAC_READ_SEARCH granted too (the unit's
         drop-in for workload names): it alone stays, permitted and
         effective, in every thread, and the container is named.
Arguments after the binary select cases (default: all three)."""
import json
import os
import pwd
import shutil
import tempfile
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, fail,  # noqa: E402
                     final_rollup, need_live, skip, workload)

B = arg(1, "taskstat-collect")
need_live(B)
CASES = [a for a in sys.argv[2:] if not a.startswith("-")] or [
    "user", "ambient", "read"]
CAP_NET_ADMIN = 12
CAP_DAC_READ_SEARCH = 2
CID = "%064x" % (0x5eed0000 + os.getpid())
NAMES = {"namespace": "priv-ns", "pod": "priv-pod", "container_name": "app",
         "image": "registry.example/priv:1"}


def containerd_state(tmp):
    """A CRI container's bundle with containerd's modes: the state root
    and its folders 0711, the bundle 0700, all root's."""
    state = os.path.join(tmp, "containerd")
    d = os.path.join(state, "io.containerd.runtime.v2.task", "k8s.io", CID)
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"annotations": {
            "io.kubernetes.cri.container-type": "container",
            "io.kubernetes.cri.container-name": NAMES["container_name"],
            "io.kubernetes.cri.sandbox-name": NAMES["pod"],
            "io.kubernetes.cri.sandbox-namespace": NAMES["namespace"],
            "io.kubernetes.cri.sandbox-uid":
                "0c1d2e3f-4a5b-4c6d-8e7f-000000000001",
            "io.kubernetes.cri.image-name": NAMES["image"]}}, f)
    os.chmod(tmp, 0o755)
    for p in (state, os.path.join(state, "io.containerd.runtime.v2.task"),
              os.path.dirname(d)):
        os.chmod(p, 0o711)
    os.chmod(d, 0o700)
    return state


POD_CG = ("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-"
          "pod0c1d2e3f_4a5b_4c6d_8e7f_000000000001.slice/"
          "cri-containerd-%s.scope" % CID)


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


def run_case(case, nobody, tmp):
    if case == "user":
        wrap, args = None, ["--user", "nobody"]
    else:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            skip("setpriv (util-linux) not installed")
        cs = "+net_admin" + (",+dac_read_search" if case == "read" else "")
        wrap = [setpriv, "--reuid=%d" % nobody.pw_uid,
                "--regid=%d" % nobody.pw_gid, "--clear-groups",
                "--inh-caps=-all," + cs, "--ambient-caps=-all," + cs,
                "--bounding-set=-all," + cs]
        args = ["--containerd-state", containerd_state(tmp)]
    keep = (1 << CAP_DAC_READ_SEARCH) if case == "read" else 0
    with Cgroups("priv-" + case) as cg:
        d = cg.mkdir(b"w")
        pod = cg.mkdir(POD_CG) if case != "user" else None
        with Collector(B, args + ["-f", "jsonl", "-i", "0.3"],
                       wrap=wrap) as col:
            time.sleep(0.3)
            sts = statuses(col.p.pid)
            check(len(sts) >= 2, "%s: threads %s" % (case, list(sts)))
            bad = []
            for t, st in sorted(sts.items()):
                check(st["Uid"] == [str(nobody.pw_uid)] * 4,
                      "%s: thread %s Uid %s" % (case, t, st["Uid"]))
                left = {k: st[k][0] for k in ("CapInh", "CapAmb")
                        if caps(st, k)}
                left.update({k: st[k][0] for k in ("CapPrm", "CapEff")
                             if caps(st, k) != keep})
                bnd = caps(st, "CapBnd")
                if case == "user" and bnd:
                    left["CapBnd"] = st["CapBnd"][0]
                if case != "user" and bnd & ~(1 << CAP_NET_ADMIN | keep):
                    left["CapBnd"] = st["CapBnd"][0]
                if left:
                    bad.append("thread %s (%s) keeps %s" %
                               (t, st["Name"][0] if st.get("Name") else "?",
                                left))
                if case == "user":
                    check(st["NoNewPrivs"] == ["1"], "NoNewPrivs not set")
            # and it still collects
            _, tasks, _ = workload(d, procs=2)
            if pod:
                workload(pod, procs=1)
            time.sleep(0.6)
        roll = final_rollup(col.lines())
        got = {c["cgroup"]: c["tasks"] for c in roll["cgroups"]}
        check(got.get(cg.path("w")) == tasks,
              "%s: collection after the drop: %s" %
              (case, got.get(cg.path("w"))))
        if pod:
            row = [c for c in roll["cgroups"] if c["cgroup"] ==
                   cg.path(POD_CG)]
            check(row, "%s: no row for the container" % case)
            named = {k: row[0].get(k) for k in NAMES}
            if case == "read":
                check(named == NAMES, "read: the container is named %s, "
                      "want %s" % (named, NAMES))
            else:
                check(not any(named.values()), "ambient: named %s from a "
                      "bundle it cannot read" % named)
    return bad


def main():
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        skip("no user nobody")
    bad = []
    with tempfile.TemporaryDirectory(prefix="tsc-priv-") as tmp:
        for case in CASES:
            sub = os.path.join(tmp, case)
            os.mkdir(sub)
            bad += ["%s: %s" % (case, b)
                    for b in run_case(case, nobody, sub)]
    if bad:
        fail("capabilities remain after registering: " + "; ".join(bad))
    print("ok: %s: no capability left in any thread after registering "
          "(but a granted CAP_DAC_READ_SEARCH, which names the container)" %
          ", ".join(CASES))


main()
