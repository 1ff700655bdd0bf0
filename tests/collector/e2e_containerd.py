#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Names on every exit, with the real containerd (Debian's 1.6) driven
over its CRI socket as the kubelet drives it (issue 38).

    e2e_containerd.py COLLECTOR

containerd runs with a private config, root, state and socket under a
temporary folder (tests/e2e/cri_util.py: cgroupfs driver, no CNI), with a
one-layer busybox-static image imported by `ctr images import`. Each run
(CTRD_RUNS of them, default 2) starts the collector (--events -f jsonl,
--listen, --containerd-state on the daemon's state), then:
 - RunPodSandbox: a host-network pod, cgroup_parent
   /kubepods/burstable/pod<uid> as the kubelet's cgroupfs driver makes it;
 - CreateContainer + StartContainer of container "crash", attempts 0 to
   3 (a crash loop of three restarts: each a new container id and cgroup;
   the older dead ones removed as the kubelet's garbage collection does):
   PID 1, a shell, runs cat and seq, a child shell killed by SIGSEGV, and
   exits 1;
 - StopPodSandbox + RemovePodSandbox.
Checked, per run:
 - every --events exit record of a cgroup under the pod names namespace
   and pod, those of the containers' cgroups container_name "crash" and
   the image; the sandbox's its pod, no container;
 - each container's cgroup has its exits (the SIGSEGV, PID 1's exit 1);
 - the restarts fold into one workload series set (namespace/pod/
   container): signaled 4, SIGSEGV 4, cgroups_total 4;
 - the pod's own cgroup (/kubepods/burstable/pod<uid>) is named on its
   JSON rows.
A miss is printed as the exact record and fails the test (a kind put in
KNOWN while its fix is under way is tolerated unless CTRD_STRICT=1; none
is). Everything the test made (pods, containers, shims,
mounts, cgroups, the daemon, its folder) is removed, even on failure,
and checked to be gone at the end.
Skips (77): not root, no taskstats, no containerd/ctr/umoci/busybox-static
or python3-grpcio, or containerd cannot start or run a pod here (its
first RunPodSandbox fails: runc cannot start a container)."""
import atexit
import json
import os
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Collector, arg, check, fail, need_live,  # noqa
                     port_from_stderr, skip, strict_json_lines,
                     wait_workload, workload_value)
from cri_util import (IMAGE, Containerd, busybox_image, exited,  # noqa
                      need_cri, pod_uid, wait_exited)

B = arg(1, "taskstat-collect")
need_cri()  # first: it may run this script again under Debian's python3
need_live(B)
RUNS = int(os.environ.get("CTRD_RUNS", "2"))
STRICT = os.environ.get("CTRD_STRICT") == "1"
NS = "cgs-e2e"
CONTAINER = "crash"
ATTEMPTS = 4  # the first run and three restarts
# busybox's applets; a child shell gets SIGSEGV (PID 1 of a pid
# namespace ignores the signals it has no handler for)
CRASH = ("cat /proc/self/stat >/dev/null; seq 3 >/dev/null; "
         "sh -c 'kill -SEGV $$'; exit 1")
# Misses whose fix is under way: reported, tolerated unless
# CTRD_STRICT=1. Remove an entry when its fix lands.
KNOWN = {}  # none since the names-on-every-exit fix (issues 38.3, 40)


# what a JSON row says of its cgroup's identity (a missed row is printed
# with these; a missed exit record whole)
ID_KEYS = ("cgroup", "workload_kind", "namespace", "pod", "container_name",
           "image", "pod_uid", "qos_class", "container", "runtime")


def sandbox_config(name, uid, podcg):
    return {"metadata": {"name": name, "uid": uid, "namespace": NS,
                         "attempt": 0},
            "labels": {"io.kubernetes.pod.name": name},
            "linux": {"cgroup_parent": podcg, "security_context": {
                # host network (no CNI here); pid and ipc as the kubelet's
                # defaults (NamespaceMode: POD 0, CONTAINER 1, NODE 2)
                "namespace_options": {"network": 2, "pid": 1, "ipc": 0}}}}


def container_config(attempt):
    return {"metadata": {"name": CONTAINER, "attempt": attempt},
            "image": {"image": IMAGE},
            "command": ["/bin/sh", "-c", CRASH],
            "linux": {"resources": {}, "security_context": {
                "namespace_options": {"network": 2, "pid": 1}}}}


def crash_loop(c, sid, cfg):
    """The container's runs, the kubelet's way; their ids."""
    ids = []
    for n in range(ATTEMPTS):
        cid = c.cri("CreateContainer", pod_sandbox_id=sid,
                    config=container_config(n),
                    sandbox_config=cfg).container_id
        c.cri("StartContainer", container_id=cid)
        st = wait_exited(c.cri, cid)
        check(st.state == 2 and st.exit_code == 1,
              "attempt %d: %s, want exit 1" % (n, exited(st)))
        ids.append(cid)
        if n >= 2:  # the kubelet keeps the last dead one
            c.cri("RemoveContainer", container_id=ids[n - 2])
    return ids


def role(g, podcg, sid, cids):
    """Whose cgroup g is, in words."""
    ids = {sid: "the sandbox"}
    ids.update((c, "attempt %d" % n) for n, c in enumerate(cids))
    return ids.get(g[len(podcg) + 1:], "the pod" if g == podcg else "?")


def misses_of(objs, podcg, sid, cids, labels):
    """The misses (kind, whose cgroup, the record) of the pod's exit
    records and rows; and the exit records per cgroup."""
    want_c = {"namespace": NS, "pod": labels["pod"],
              "container_name": CONTAINER, "image": IMAGE}
    want_s = {"namespace": NS, "pod": labels["pod"]}
    cgs = {podcg + "/" + i: i for i in cids}
    per = {p: [] for p in list(cgs) + [podcg + "/" + sid]}
    miss = []
    for o in objs:
        g = o.get("cgroup", "")
        if o.get("type") != "exit" or not (g == podcg or
                                           g.startswith(podcg + "/")):
            continue
        per.setdefault(g, []).append(o)
        if g in cgs:
            want = want_c
        else:
            want = want_s
            if g == podcg + "/" + sid and o.get("container_name"):
                miss.append(("sandbox-container", "sandbox", o))
        if any(o.get(k) != w for k, w in want.items()):
            miss.append(("exit-unnamed", role(g, podcg, sid, cids), o))
    for o in objs:
        for r in o.get("cgroups", []) if o.get("type") == "rollup" else []:
            if r["cgroup"] == podcg and (r.get("namespace") != NS or
                                         r.get("pod") != labels["pod"]):
                miss.append(("pod-cgroup-unnamed", "pod", {
                    k: v for k, v in r.items() if k in ID_KEYS}))
                break
        else:
            continue
        break
    return miss, per


def check_exits(per, sbcg):
    """Each container's cgroup: its exits written, the crash among them;
    the sandbox's: its pause process killed by StopPodSandbox."""
    check(any(e.get("signal") == 9 for e in per[sbcg]),
          "%s: no exit by SIGKILL (the sandbox's) among %d" %
          (sbcg, len(per[sbcg])))
    for p, evs in per.items():
        if p == sbcg:
            continue
        check(any(e.get("signal") == 11 for e in evs),
              "%s: no exit by SIGSEGV among %d" % (p, len(evs)))
        check(any(e.get("exit_code") == 1 and e.get("kind") == "process"
                  and e.get("signal") == 0 for e in evs),
              "%s: no exit 1 (PID 1) among %d: %r" %
              (p, len(evs), [(e.get("comm"), e.get("exit_code"))
                             for e in evs]))
    return sum(len(e) for e in per.values())


def check_folded(hp, labels):
    """The crashes in one workload series set."""
    lab = ",".join('%s="%s"' % kv for kv in labels.items())
    text, v = wait_workload(hp, "process_exits_total",
                            lab + ',outcome="signaled"', ATTEMPTS)
    check(v == ATTEMPTS, "the workload counts %r signaled exits, want %d"
          % (v, ATTEMPTS))
    for name, extra, want in (("process_signals_total", ',signal="SIGSEGV"',
                               ATTEMPTS), ("cgroups_total", "", ATTEMPTS)):
        got = workload_value(text, name, lab + extra)
        check(got == want, "workload %s{%s%s} is %r, want %d" %
              (name, lab, extra, got, want))


def one_run(c, k):
    """One pod's life under a collector of its own; its misses."""
    uid = pod_uid(os.getpid() + (k << 16))
    podcg = "/kubepods/burstable/pod" + uid
    c.track(podcg)
    name = "crashy-%d" % k
    labels = {"kind": "container", "namespace": NS, "pod": name,
              "container": CONTAINER}
    out = os.path.join(c.d, "out-%d.jsonl" % k)
    args = ["--events", "-f", "jsonl", "-o", out, "-i", "0.5",
            "--listen", "127.0.0.1:0", "--containerd-state", c.state]
    with Collector(B, args) as col:
        hp = port_from_stderr(col)
        cfg = sandbox_config(name, uid, podcg)
        try:
            sid = c.run_pod(cfg)
        except c.cri.grpc.RpcError as e:
            if k > 0:
                raise
            skip("containerd cannot run a pod here: %s" % e.details())
        cids = crash_loop(c, sid, cfg)
        check_folded(hp, labels)
        c.remove_pod(sid, podcg)
        time.sleep(1.2)  # the sandbox's exit, a snapshot after
    with open(out, "rb") as f:
        objs = strict_json_lines(f.read())
    os.unlink(out)
    miss, per = misses_of(objs, podcg, sid, cids, labels)
    n = check_exits(per, podcg + "/" + sid)
    left = c.leftovers_of(podcg, [sid] + cids)
    check(not left, "run %d: left after the pod's removal: %s" % (k, left))
    return miss, n


def main():
    tmp = tempfile.mkdtemp(prefix="cgs-ctrd-")  # short: socket paths
    c = Containerd(tmp)
    atexit.register(c.cleanup)  # also on a failure's sys.exit
    signal.signal(signal.SIGTERM, lambda *a: fail("SIGTERM (a timeout?)"))
    try:
        c.start()
        c.import_image(busybox_image(tmp))
        t0 = time.monotonic()
        misses, exits = [], 0
        for k in range(RUNS):
            m, n = one_run(c, k)
            exits += n
            misses += [(k,) + x for x in m]
        dt = time.monotonic() - t0
    finally:
        c.cleanup()
        left = c.leftovers()  # checked after a failure too
        if left:
            print("LEFT after the cleanup: %s" % left)
    check(not left, "left after the test: %s" % left)
    for k, kind, who, o in misses:
        print("MISS run %d, %s of %s%s: %s" % (
            k, kind, who, " (known: %s)" % KNOWN[kind] if kind in KNOWN
            else "", json.dumps(o, separators=(",", ":"))))
    kinds = sorted({m[1] for m in misses})
    print("%s: %d runs (%.1f s), %d exit records of the pods checked; runs "
          "with a miss: %s; cleanup: nothing left" % (
              c.version, RUNS, dt, exits, ", ".join(
                  "%s %d" % (kd, len({m[0] for m in misses if m[1] == kd}))
                  for kd in kinds) or "none"))
    hard = [m for m in misses if STRICT or m[1] not in KNOWN]
    if hard:
        fail("%d misses in %d of %d runs" % (
            len(hard), len({m[0] for m in hard}), RUNS))
    print("OK")


main()
