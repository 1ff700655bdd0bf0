#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Exit-to-output latency of taskstat-collect (a benchmark, not a test;
run by hand as root).

Starts `taskstat-collect --events -f jsonl -i INTERVAL --cgroup
'/cgs-lat-<pid>/*'` with its stdout a pipe, waits for its READY=1 (the
service manager's protocol, $NOTIFY_SOCKET: sent once exits are known to
arrive), makes a scratch cgroup2 tree /cgs-lat-<pid>/{probe,churn} (as
tests/e2e/tsc_e2e.py does: its Cgroups and move_self), then N times
forks a child that joins `probe` and exits at once, notes
time.monotonic() right after waitpid() returns (the exit, and the
kernel's taskstats message, are done by then) and sleeps a random 0 to
--spacing ms. A reader thread reads the pipe in chunks and stamps each
chunk with time.monotonic() on arrival. Per child:

  event latency     its exit line ({"type":"exit",...,"pid":P}, the
                    first with its pid and cgroup arriving after its
                    fork: pids come again within seconds under churn)
                    arrived minus the waitpid time (a line can beat the
                    parent's wake-up: slightly negative values);
  snapshot latency  the first rollup line ({"type":"rollup"}) whose row
                    of `probe` has "processes" >= k (the k-th child's exit
                    counted: children run one at a time) arrived minus
                    the waitpid time.

Children are not held back until their lines arrive: waiting for each
one's snapshot would start every child just after a snapshot tick (a
fixed phase); with random spacing the exits fall at every phase of the
collector's ticks. Each run has its own collector; the runs alternate
the conditions:

  idle   nothing else started;
  churn  a shell loop in `churn` running `bench/churn ARGS` then sleeping
         --churn-pause s, for the whole run (a steady exit load; its rate
         is printed from the churn row's counts).

Prints, per run, min / median / p90 / p99 / max in ms of both latencies,
the collector's loss counters from its final line (dropped, enobufs,
kernel_lost, fork_drops) and whether the expected bounds held: event
<= 50 ms (the receive thread's longest adaptive wait) + 50 ms (the
collector's prompt flush, TSC_EV_PROMPT_NS) + --slack-ms, snapshot <=
INTERVAL + 50 ms + --slack-ms; then a summary table.
Python 3 stdlib only; needs root (taskstats, cgroups).

usage: run-latency.py [--collector build/cmd/taskstat-collect]
       [--churn-bin build/bench/churn] [-n 200] [--runs 2]
       [--conditions idle,churn] [--interval 1] [--spacing 300]
       [--churn-args 'threads -n 100 -r 5'] [--churn-pause 0.1]
       [--slack-ms 20] [--seed S] [--json FILE]
"""
import argparse
import fcntl
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "e2e"))
import tsc_e2e as e  # noqa: E402

# the children only join a cgroup and _exit: fork with the reader thread
# running is safe here
warnings.filterwarnings("ignore", category=DeprecationWarning)

WAIT_MS = 50  # the receive thread's longest adaptive wait (kernel source)
PROMPT_MS = 50  # the collector's prompt flush of exit lines (TSC_EV_PROMPT_NS)


class Reader(threading.Thread):
    """Reads the collector's stdout pipe; keeps (arrival, object) of the
    exit lines of cgroup `probe` and of every rollup line."""

    def __init__(self, fd, probe):
        super().__init__(daemon=True)
        self.fd, self.key = fd, b'"cgroup":' + json.dumps(probe).encode()
        self.exits = {}      # pid -> arrivals of its exit lines (pids
        #                      come again: pid_max 32768 wraps in seconds
        #                      under churn)
        self.rolls = []      # (arrival, rollup object)
        self.lines = 0
        self.bytes = 0
        self.cv = threading.Condition()

    def run(self):
        rest = b""
        while True:
            try:
                d = os.read(self.fd, 1 << 20)
            except OSError:
                d = b""
            t = time.monotonic()
            if not d:
                break
            self.bytes += len(d)
            lines = (rest + d).split(b"\n")
            rest = lines.pop()
            got = []
            for ln in lines:
                if ln.startswith(b'{"type":"exit"'):
                    if self.key in ln:
                        got.append(json.loads(ln))
                elif ln.startswith(b'{"type":"rollup"'):
                    got.append(json.loads(ln))
            with self.cv:
                self.lines += len(lines)
                for o in got:
                    if o["type"] == "exit":
                        if o.get("kind") != "tgid":
                            self.exits.setdefault(o["pid"], []).append(t)
                    else:
                        self.rolls.append((t, o))
                self.cv.notify_all()
        with self.cv:
            self.cv.notify_all()


def ready(sock, p, timeout=15.0):
    """Until the collector sends READY=1 on the notify socket."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if p.poll() is not None:
            e.fail("collector exited early (%d)" % p.returncode)
        sock.settimeout(0.2)
        try:
            msg = sock.recv(4096)
        except socket.timeout:
            continue
        if b"READY=1" in msg.split(b"\n"):
            return
    e.fail("no READY=1 from the collector in %g s" % timeout)


def pct(v, q):
    """Nearest-rank percentile q (0-100) of the sorted list v."""
    if not v:
        return float("nan")
    i = max(0, min(len(v) - 1, int(-(-q * len(v) // 100)) - 1))
    return v[i]


def stats(v):
    v = sorted(v)
    return {"n": len(v), "min": v[0] if v else float("nan"),
            "median": pct(v, 50), "p90": pct(v, 90), "p99": pct(v, 99),
            "max": v[-1] if v else float("nan")}


def fmt(s):
    return "%.1f / %.1f / %.1f / %.1f / %.1f" % (
        s["min"], s["median"], s["p90"], s["p99"], s["max"])


def probe_child(procs):
    """Fork a child that joins the cgroup (cgroup.procs, open) and exits;
    reap it. Returns (pid, monotonic time before the fork, monotonic time
    right after waitpid)."""
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(procs, str(os.getpid()).encode())
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    t = time.monotonic()
    if os.waitstatus_to_exitcode(st) != 0:
        e.fail("probe child %d exited %r" % (pid, st))
    return pid, t0, t


def first_after(ts, t0):
    """The first of the times ts at or after t0, None if none."""
    return next((t for t in ts if t >= t0), None)


def one_run(a, cond, rnd, rng):
    cg = e.Cgroups("lat")
    probe, churn_dir = cg.mkdir("probe"), cg.mkdir("churn")
    probe_path = cg.path("probe")
    name = "cgs-lat-%d-%s-%d" % (os.getpid(), cond, rnd)
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind("\0" + name)
    cmd = [a.collector, "--events", "-f", "jsonl", "-i", "%g" % a.interval,
           "--cgroup", cg.path() + "/*"] + a.collector_arg
    env = dict(os.environ, NOTIFY_SOCKET="@" + name)
    rfd, wfd = os.pipe()
    try:
        fcntl.fcntl(rfd, 1031, 1 << 20)  # F_SETPIPE_SZ: 1 MiB
    except OSError:
        pass
    p = subprocess.Popen(cmd, stdout=wfd, stderr=subprocess.PIPE, env=env)
    os.close(wfd)
    rd = Reader(rfd, probe_path)
    rd.start()
    churn = None
    try:
        ready(ns, p)
        ns.close()
        if cond == "churn":
            churn = subprocess.Popen(
                ["sh", "-c", 'echo $$ > "$1"/cgroup.procs && while :; do '
                 '"$2" $3 > /dev/null || exit 1; sleep "$4"; done', "sh",
                 churn_dir, a.churn_bin, a.churn_args, "%g" % a.churn_pause],
                stdout=subprocess.DEVNULL)
        time.sleep(1.0)  # the new cgroups known, the churn going
        load0 = os.getloadavg()[0]
        procs = os.open(os.path.join(probe, "cgroup.procs"), os.O_WRONLY)
        t_start = time.monotonic()
        kids = []
        for _ in range(a.n):
            kids.append(probe_child(procs))
            time.sleep(rng.uniform(0, a.spacing / 1000.0))
        t_end = time.monotonic()
        os.close(procs)
        # until every child's two lines came (or 2 intervals + 2 s)
        deadline = time.monotonic() + 2 * a.interval + 2
        with rd.cv:
            while time.monotonic() < deadline:
                if (all(first_after(rd.exits.get(pid, ()), t0) is not None
                        for pid, t0, _ in kids) and
                        any(row(o, probe_path, "processes") >= a.n
                            for _, o in rd.rolls)):
                    break
                rd.cv.wait(0.1)
        load1 = os.getloadavg()[0]
        if churn:
            churn.terminate()
            churn.wait()
            churn = None
    finally:
        if churn:
            churn.kill()
            churn.wait()
        if p.poll() is None:
            p.terminate()
        try:
            err = p.communicate(timeout=60)[1].decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            p.kill()
            err = p.communicate()[1].decode("utf-8", "replace")
        rd.join(10)
        os.close(rfd)
        cg.cleanup()
    if p.returncode != 0:
        e.fail("collector exit %d: %s" % (p.returncode, err))

    ev, sn, miss_ev, miss_sn = [], [], 0, 0
    churn_rows = [(t, row(o, cg.path("churn"), "tasks"))
                  for t, o in rd.rolls]
    for k, (pid, t0, t) in enumerate(kids, 1):
        te = first_after(rd.exits.get(pid, ()), t0)
        if te is not None:
            ev.append((te - t) * 1000)
        else:
            miss_ev += 1
        ts = next((tr for tr, o in rd.rolls
                   if tr >= t and row(o, probe_path, "processes") >= k),
                  None)
        if ts is None:
            miss_sn += 1
        else:
            sn.append((ts - t) * 1000)
    final = rd.rolls[-1][1] if rd.rolls and rd.rolls[-1][1].get("final") \
        else {}
    at = final.get("attribution", {})
    loss = {"dropped": final.get("dropped"), "enobufs": final.get("enobufs"),
            "kernel_lost": at.get("kernel_lost"),
            "kernel_expired": at.get("kernel_expired"),
            "fork_drops": final.get("fork_drops"),
            "unattributed": final.get("unattributed")}
    inwin = [(t, c) for t, c in churn_rows if t_start <= t <= t_end]
    rate = ((inwin[-1][1] - inwin[0][1]) / (inwin[-1][0] - inwin[0][0])
            if len(inwin) >= 2 and inwin[-1][0] > inwin[0][0] else 0.0)
    tot = [(t, o["records"]) for t, o in rd.rolls
           if t_start <= t <= t_end and "records" in o]
    all_rate = ((tot[-1][1] - tot[0][1]) / (tot[-1][0] - tot[0][0])
                if len(tot) >= 2 and tot[-1][0] > tot[0][0] else 0.0)
    return {"condition": cond, "round": rnd, "n": a.n,
            "event_ms": ev, "snapshot_ms": sn,
            "missing_event": miss_ev, "missing_snapshot": miss_sn,
            "loss": loss, "source": final.get("attribution_source"),
            "records_total": final.get("records"),
            "churn_tasks_per_s": rate, "records_per_s": all_rate,
            "lines": rd.lines, "bytes": rd.bytes,
            "seconds": t_end - t_start, "load": [load0, load1],
            "stderr": err.strip()}


def row(o, path, field):
    """A cgroup's field in a rollup line (-1: the line has no row for it:
    --stream changes writes changed rows only)."""
    for c in o.get("cgroups", ()):
        if c["cgroup"] == path:
            return c[field]
    return -1


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collector", default=os.path.join(
        here, "..", "build", "cmd", "taskstat-collect"))
    ap.add_argument("--churn-bin", default=None,
                    help="bench/churn (default: next to --collector's "
                    "build, BUILD/bench/churn)")
    ap.add_argument("-n", type=int, default=200, help="children per run")
    ap.add_argument("--runs", type=int, default=2,
                    help="runs of each condition, alternating")
    ap.add_argument("--conditions", default="idle,churn")
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--spacing", type=float, default=300.0,
                    help="random pause after each child, 0 to this ms")
    ap.add_argument("--churn-args", default="threads -n 100 -r 5")
    ap.add_argument("--churn-pause", type=float, default=0.1)
    ap.add_argument("--slack-ms", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--json", help="write every sample here")
    ap.add_argument("--collector-arg", action="append", default=[],
                    help="one more collector argument (repeatable)")
    a = ap.parse_args()
    if a.churn_bin is None:
        a.churn_bin = os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(a.collector))), "bench", "churn")
    conds = [c for c in a.conditions.split(",") if c]
    for c in conds:
        if c not in ("idle", "churn"):
            ap.error("unknown condition %r" % c)
    if "churn" in conds and not os.access(a.churn_bin, os.X_OK):
        ap.error("no churn binary at %s (--churn-bin)" % a.churn_bin)
    e.need_live(a.collector)
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    print("collector %s, interval %g s, %d children a run spaced 0-%g ms, "
          "seed %d, %d CPUs" % (a.collector, a.interval, a.n, a.spacing,
                                seed, os.cpu_count()), flush=True)
    ev_bound = WAIT_MS + PROMPT_MS + a.slack_ms
    sn_bound = a.interval * 1000 + WAIT_MS + a.slack_ms
    results = []
    for rnd in range(a.runs):
        for cond in conds:
            r = one_run(a, cond, rnd, rng)
            results.append(r)
            es, ss = stats(r["event_ms"]), stats(r["snapshot_ms"])
            lost = any(v for k, v in r["loss"].items()
                       if k in ("dropped", "enobufs", "kernel_lost",
                                "fork_drops"))
            print("\n%s run %d: %.0f s, load %.1f -> %.1f, attribution %s, "
                  "%.0f records/s (churn cgroup %.0f tasks/s)" %
                  (cond, rnd + 1, r["seconds"], r["load"][0], r["load"][1],
                   r["source"], r["records_per_s"], r["churn_tasks_per_s"]))
            print("  event    ms min/med/p90/p99/max %s  (n %d, missing %d, "
                  "> %g ms: %d)" % (fmt(es), es["n"], r["missing_event"],
                                    ev_bound, sum(1 for v in r["event_ms"]
                                                  if v > ev_bound)))
            print("  snapshot ms min/med/p90/p99/max %s  (n %d, missing %d, "
                  "> %g ms: %d)" % (fmt(ss), ss["n"], r["missing_snapshot"],
                                    sn_bound, sum(1 for v in r["snapshot_ms"]
                                                  if v > sn_bound)))
            print("  loss: %s -> %s" % (
                " ".join("%s %s" % kv for kv in r["loss"].items()),
                "RECORDS DROPPED" if lost else "no record dropped"))
            if r["stderr"]:
                print("  collector stderr: " + r["stderr"].replace(
                    "\n", "\n    "))
            sys.stdout.flush()
    print("\n| condition, run | event ms min / median / p90 / p99 / max | "
          "snapshot ms min / median / p90 / p99 / max | records/s | "
          "dropped |")
    print("|---|---|---|---|---|")
    for r in results:
        print("| %s, %d | %s | %s | %.0f | %s |" % (
            r["condition"], r["round"] + 1, fmt(stats(r["event_ms"])),
            fmt(stats(r["snapshot_ms"])), r["records_per_s"],
            r["loss"]["dropped"]))
    ev_all = [v for r in results for v in r["event_ms"]]
    sn_all = [v for r in results for v in r["snapshot_ms"]]
    ev_ok = bool(ev_all) and max(ev_all) <= ev_bound
    sn_ok = bool(sn_all) and max(sn_all) <= sn_bound
    print("\nbound: event <= %g ms: %s (%d of %d above); snapshot <= %g ms: "
          "%s (%d of %d above)" % (
              ev_bound, "held" if ev_ok else "NOT held",
              sum(1 for v in ev_all if v > ev_bound), len(ev_all),
              sn_bound, "held" if sn_ok else "NOT held",
              sum(1 for v in sn_all if v > sn_bound), len(sn_all)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "seed": seed, "runs": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
