#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Cgroup churn (issue 13 item 2): cgroups created, used and removed under
the collector, every exit reported under its own path in every output,
memory and the kernel-side state bounded.

    test_cgroup_churn.py TASKSTAT_COLLECT CGROUP_CHURN

The collector runs with JSON lines (--output, --interval), --textfile
(polled) and --listen (scraped); cgroup_churn (tests/hardening/
cgroup_churn.c) creates CHURN_CGROUPS cgroups (default 4000) at CHURN_RATE
per second (200; 0: as fast as it can), CHURN_ALIVE (4) alive at once, each with one process of two threads put there by
clone3(CLONE_INTO_CGROUP) or a write to cgroup.procs, and logs what it ran.
Checks:
 - JSON lines: every cgroup the driver ran, and no other below the scratch
   parent, with exactly its task and process exits (the last cumulative
   value and the sum of the *_delta fields), shown removed at least once;
   nothing in the parent itself; 0 dropped;
 - the textfile (at least one version seen) and the scrapes (at least
   one): every cgroup with its final counts;
 - cgroups of the run the collector still shows <= the alive ones + those
   removed in the last few intervals (retirement keeps up), none left at
   the end; the gauge taskstat_collector_cgroups reported;
 - VmRSS over the second half of the churn grows by <= CHURN_RSS_MIB
   (4 MiB; not under ASan);
 - the collector's BPF maps (from /proc/<pid>/fdinfo): the same maps with
   the same max_entries at the end as at the start (fixed-size arrays and
   rings; a map of another type is counted with bpftool); the kernel
   source's id -> path table (taskstat_collector_kernel_cgroup_ids) grows
   by no more than the cgroups of the run removed in the last
   CGSI_CGID_KEEP_MS, or, past CGSI_CGID_REMOVED_MAX of them, the cap + those
   removed in the last CGSI_CGID_KEEP_MIN_MS (+ a quarter of slack), + noise.
CHURN_HIERARCHY=cpu runs on cgroup v1 /sys/fs/cgroup/cpu (--hierarchy
cpu, the /proc fallback); CHURN_REPORT=file.json writes the figures
(bench/run-cgroup-churn.sh).
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "e2e"))
from tsc_e2e import (Collector, Cgroups, Seen, arg, check, fail,  # noqa: E402
                     keep, need_live, port_from_stderr, churn_prom_counts,
                     sanitized, scrape, short, skip, strict_json_lines,
                     vm_rss_kb)

B = arg(1, "taskstat-collect cgroup_churn")
DRIVER = arg(2, "taskstat-collect cgroup_churn")
N = int(os.environ.get("CHURN_CGROUPS", "4000"))
ALIVE = int(os.environ.get("CHURN_ALIVE", "4"))
RATE = float(os.environ.get("CHURN_RATE", "200"))  # cgroups/s, 0: flat out
HIER = os.environ.get("CHURN_HIERARCHY", "v2")
INTERVAL = float(os.environ.get("CHURN_INTERVAL", "0.5"))
RSS_MIB = float(os.environ.get("CHURN_RSS_MIB", "4"))
REPORT = os.environ.get("CHURN_REPORT")
SCRAPE_S = 0.2
# lib/attribute/cgid.h: a removed cgroup's path is kept CGSI_CGID_KEEP_MS,
# or CGSI_CGID_KEEP_MIN_MS while more than CGSI_CGID_REMOVED_MAX are held
# (+ a quarter for the purges, which run with events)
KEEP_S, KEEP_MIN_S, REMOVED_MAX = 60 * 1.25, 2 * 1.25, 8192
# how far retirement may lag behind the window's intervals, scrapes and
# grace when the collector is busy (the full benchmark sets more)
TRACK_SLACK_S = float(os.environ.get("CHURN_TRACK_SLACK_S", "1.0"))
PATH_RE = r"/cgs-churn-\d+/c\d+"


# --- what the collector shows --------------------------------------------

def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


FIXED_MAPS = {2: "array", 6: "percpu_array", 27: "ringbuf"}


def bpf_maps(pid):
    """The BPF maps the process holds fds of: [(id, type, max_entries,
    entries or None for fixed-size ones)], from fdinfo."""
    out = []
    d = "/proc/%d/fd" % pid
    for fd in os.listdir(d):
        try:
            if os.readlink(os.path.join(d, fd)) != "anon_inode:bpf-map":
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        mid, typ = int(info["map_id"]), int(info["map_type"])
        n = None
        if typ not in FIXED_MAPS:  # a table whose fill can vary: count it
            r = subprocess.run(["bpftool", "-j", "map", "dump", "id",
                                str(mid)], capture_output=True, text=True)
            n = len(json.loads(r.stdout)) if r.returncode == 0 else -1
        out.append((mid, FIXED_MAPS.get(typ, str(typ)),
                    int(info["max_entries"]), n))
    return sorted(set(out))


# --- the run ---------------------------------------------------------------

def watch(col, hostport, textfile, prefix, stop, w):
    """Scrape every SCRAPE_S, poll the textfile every 50 ms, sample RSS and
    CPU every 0.25 s, until stop is set."""
    last_tf, next_scrape, next_rss = None, 0.0, 0.0
    while not stop.is_set():
        now = time.monotonic()
        if now >= next_scrape:
            next_scrape = now + SCRAPE_S
            try:
                text = scrape(hostport)
            except OSError as e:
                w["errors"].append("scrape: %r" % (e,))
                text = None
            if text is not None:
                got, g = churn_prom_counts(text, prefix)
                w["scrape"].add(got)
                w["tracked"].append((time.monotonic(), len(got),
                                     g.get("cgroups", -1),
                                     g.get("kernel_cgroup_ids", -1),
                                     g.get("cgroups_not_exported", 0)))
        try:
            st = os.stat(textfile)
            key = (st.st_ino, st.st_mtime_ns)
        except FileNotFoundError:
            key = None
        if key and key != last_tf:
            with open(textfile) as f:
                text = f.read()
            last_tf = key
            got, g = churn_prom_counts(text, prefix)
            w["textfile"].add(got)
            w["tf_times"].append(g.get("last_snapshot_timestamp_seconds"))
        if now >= next_rss:
            next_rss = now + 0.25
            w["rss"].append((now, vm_rss_kb(col.p.pid), cpu_s(col.p.pid)))
        time.sleep(0.05)


def removed_within(times, t, window):
    """How many of the sorted removal times lie in (t - window, t]."""
    import bisect
    return bisect.bisect_right(times, t) - bisect.bisect_right(times,
                                                               t - window)


def main():
    need_live(B)
    if HIER == "v2":
        cg = Cgroups("churn")
        mount, parent = cg.root, cg.path()
        hargs = []
    else:
        mount = "/sys/fs/cgroup/" + HIER
        if not os.path.isdir(mount):
            skip("no cgroup v1 %s hierarchy at %s" % (HIER, mount))
        cg, parent = None, "/cgs-churn-%d" % os.getpid()
        hargs = ["--hierarchy", HIER]
    tmp = tempfile.mkdtemp(prefix="tsc-churn-")
    out, tf, log = (os.path.join(tmp, n) for n in
                    ("snap.jsonl", "churn.prom", "driver.log"))
    args = ["-f", "jsonl", "-o", out, "--interval", str(INTERVAL),
            "--textfile", tf, "--listen", "127.0.0.1:0",
            "--prom-max-series", "0", "--no-histograms"] + hargs
    w = {"scrape": Seen(), "textfile": Seen(), "tracked": [], "rss": [],
         "tf_times": [], "errors": []}
    try:
        with Collector(B, args) as col:
            hostport = port_from_stderr(col)
            stop = threading.Event()
            th = threading.Thread(target=watch, daemon=True,
                                  args=(col, hostport, tf, parent, stop, w))
            th.start()
            time.sleep(max(1.0, 2 * INTERVAL))
            maps0, rss0 = bpf_maps(col.p.pid), vm_rss_kb(col.p.pid)
            t_start = time.monotonic()
            r = subprocess.run([DRIVER, "-c", str(ALIVE), "-r", str(RATE),
                                mount, parent,
                                str(N), log], capture_output=True,
                               text=True, timeout=3600)
            t_end = time.monotonic()
            check(r.returncode == 0, "cgroup_churn failed (%d): %s" %
                  (r.returncode, r.stderr))
            drv = json.loads(r.stdout)
            # retirement catches up: no cgroup of the run left
            t0 = time.monotonic()
            while time.monotonic() - t0 < 20:
                time.sleep(SCRAPE_S)
                tr = w["tracked"]
                if tr and tr[-1][0] > t_end + 2 * INTERVAL and \
                        tr[-1][1] == 0:
                    break
            maps1, rss_end = bpf_maps(col.p.pid), vm_rss_kb(col.p.pid)
            cpu_end = cpu_s(col.p.pid)
            stop.set()
            th.join()
            rc = col.stop(signal.SIGINT)
            check(rc == 0, "collector exit %d: %s" % (rc, col.stderr()))
            attribution = re.search(r"attribution: (\w+)", col.stderr())
        with open(out, "rb") as f:
            data = f.read()
        keep("cgroup_churn.jsonl", data)
        verify(drv, log, parent, strict_json_lines(data), w, maps0, maps1,
               rss0, rss_end, cpu_end, t_start, t_end,
               attribution.group(1) if attribution else "?")
    finally:
        if cg:
            cg.cleanup()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


def verify(drv, log, parent, objs, w, maps0, maps1, rss0, rss_end, cpu_end,
           t_start, t_end, attribution):
    exp, removed_at = {}, []
    with open(log) as f:
        for line in f:
            p, t, pr, when = line.rstrip("\n").split("\t")
            exp[p] = (int(t), int(pr))
            removed_at.append(float(when))
    removed_at.sort()
    check(len(exp) == N and drv["cgroups"] == N,
          "driver logged %d cgroups of %d" % (len(exp), N))
    check(not w["errors"], "watcher: %s" % short(w["errors"], 600))

    # JSON lines: last cumulative value, sums of deltas, removed shown
    rolls = [o for o in objs if o["type"] == "rollup"]
    check(rolls and rolls[-1].get("final"), "no final rollup")
    last, dsum, shown_removed, parent_self = {}, {}, set(), 0
    sub = parent + "/"
    for roll in rolls:
        for c in roll["cgroups"]:
            p = c["cgroup"]
            if p == parent:
                parent_self = max(parent_self, c["tasks"])
            if not p.startswith(sub):
                continue
            last[p] = (c["tasks"], c["processes"])
            d = dsum.setdefault(p, [0, 0])
            d[0] += c["tasks_delta"]
            d[1] += c["processes_delta"]
            if c["removed"] and last[p] == exp.get(p):
                shown_removed.add(p)
    fin = rolls[-1]
    invented = sorted(set(last) - set(exp))
    missing = sorted(set(exp) - set(last))
    wrong = sorted(p for p in exp if p in last and
                   (last[p] != exp[p] or tuple(dsum[p]) != exp[p]))
    check(not invented, "JSON lines: %d cgroups the driver never ran: %s" %
          (len(invented), short(invented)))
    check(not missing, "JSON lines: %d of %d cgroups never shown: %s" %
          (len(missing), N, short(missing)))
    check(not wrong, "JSON lines: %d cgroups with wrong counts, e.g. %s: "
          "last %s, deltas %s, ran %s" % (
              len(wrong), wrong[0], last[wrong[0]], dsum[wrong[0]],
              exp[wrong[0]]) if wrong else "")
    check(parent_self == 0, "%d task exits in the scratch parent itself"
          % parent_self)
    not_removed = sorted(set(exp) - shown_removed)
    check(not not_removed, "%d cgroups never shown removed with their "
          "final counts (retired unseen), e.g. %s" %
          (len(not_removed), short(not_removed)))
    check(fin["dropped"] == 0, "%d records dropped" % fin["dropped"])

    # the textfile and the scrapes: final counts at least once each
    for what in ("textfile", "scrape"):
        best = w[what].best
        bad = sorted(p for p in exp if tuple(best.get(p, ())) != exp[p])
        gaps = ""
        if what == "textfile":
            ts = [t for t in w["tf_times"] if t]
            big = [b - a for a, b in zip(ts, ts[1:]) if b - a > 1.5 *
                   INTERVAL]
            gaps = " (the poller missed %d versions: the host stalled it)" \
                % len(big) if big else ""
        check(not bad, "%s: %d of %d cgroups never shown with their final "
              "counts%s, e.g. %s: %s, ran %s" % (
                  what, len(bad), N, gaps, bad[0] if bad else "",
                  best.get(bad[0]) if bad else "",
                  exp[bad[0]] if bad else ""))
        invented = sorted(set(best) - set(exp))
        check(not invented, "%s: cgroups the driver never ran: %s" %
              (what, short(invented)))

    # cgroups of the run tracked: the alive ones + those awaiting retirement
    # (+ the rollup's grace_ms, 2 s: a removed cgroup is kept that long
    # for exits still on their way)
    window = 3 * INTERVAL + 2 * SCRAPE_S + 2.0 + TRACK_SLACK_S
    over = [(t, n, ALIVE + removed_within(removed_at, t, window))
            for t, n, _, _, _ in w["tracked"]
            if n > ALIVE + removed_within(removed_at, t, window)]
    tr = w["tracked"]
    check(tr and tr[-1][1] == 0, "%d cgroups of the run still tracked at "
          "the end" % (tr[-1][1] if tr else -1))
    check(all(t[4] == 0 for t in tr), "--prom-max-series 0 cut cgroups")
    ours_peak = max(t[1] for t in tr)
    gauge = [t[2] for t in tr]
    ids = [(t[0], t[3]) for t in tr if t[3] >= 0]

    # RSS: flat over the second half of the churn
    rs = [(t, kb, c) for t, kb, c in w["rss"] if t_start <= t <= t_end]
    check(len(rs) >= 4, "too few RSS samples (%d)" % len(rs))
    half = rs[len(rs) // 2][1]
    second_max = max(kb for _, kb, _ in rs[len(rs) // 2:])
    rss_peak = max(kb for _, kb, _ in w["rss"])
    growth_mib = (second_max - half) / 1024.0

    # kernel-side state
    fixed = lambda ms: [(i, t, m) for i, t, m, _ in ms]  # noqa: E731
    check(fixed(maps0) == fixed(maps1), "BPF maps changed: %s -> %s" %
          (maps0, maps1))
    counted = [m for m in maps1 if m[3] is not None]
    ids_over = []
    if ids:
        base = ids[0][1]
        for t, n in ids:
            held = min(removed_within(removed_at, t, KEEP_S),
                       REMOVED_MAX + removed_within(removed_at, t,
                                                    KEEP_MIN_S))
            bound = base + ALIVE + held + \
                200  # other sessions' cgroups created meanwhile
            if n > bound:
                ids_over.append((round(t - t_start, 1), n, bound))

    secs = t_end - t_start
    summary = {
        "cgroups": N, "alive": ALIVE, "hierarchy": HIER,
        "attribution": attribution, "mode": drv["mode"],
        "driver_seconds": drv["seconds"],
        "cgroups_per_s": round(N / drv["seconds"]),
        "task_exits": drv["tasks"], "process_exits": drv["processes"],
        "snapshot_lines": len(rolls), "textfile_versions":
        w["textfile"].versions, "scrapes": w["scrape"].versions,
        "run_cgroups_tracked_peak": ours_peak,
        "collector_cgroups_gauge_start_peak_end": [gauge[0], max(gauge),
                                                   gauge[-1]],
        "kernel_cgroup_ids_start_peak_end": [ids[0][1], max(
            n for _, n in ids), ids[-1][1]] if ids else None,
        "bpf_maps": [{"id": i, "type": t, "max_entries": m,
                      "entries": n} for i, t, m, n in maps1],
        "rss_mib_start": round(rss0 / 1024, 1),
        "rss_mib_half": round(half / 1024, 1),
        "rss_mib_peak": round(rss_peak / 1024, 1),
        "rss_mib_end": round(rss_end / 1024, 1),
        "rss_growth_mib_second_half": round(growth_mib, 2),
        "collector_cpu_s": round(cpu_end - w["rss"][0][2], 2),
        "seconds": round(secs, 1),
    }
    if REPORT:
        with open(REPORT, "w") as f:
            json.dump(summary, f, indent=1)
    print(json.dumps(summary))
    check(not over, "%d scrapes showed more cgroups of the run than alive "
          "+ removed in the last %.1f s, e.g. %s" % (len(over), window,
                                                      over[:3]))
    check(not ids_over, "kernel id table beyond live + removed recently "
          "(%.0f s, or %d + the last %.1f s): %s" %
          (KEEP_S, REMOVED_MAX, KEEP_MIN_S, ids_over[:3]))
    check(not counted or all(m[3] >= 0 for m in counted),
          "bpftool could not count a map: %s" % counted)
    if not sanitized():
        check(growth_mib <= RSS_MIB, "RSS grew %.1f MiB over the second "
              "half of the churn (bound %.1f)" % (growth_mib, RSS_MIB))
    print("PASS: %d cgroups, %d task exits, each under its own path in "
          "JSON lines, textfile and scrapes" % (N, drv["tasks"]))


if __name__ == "__main__":
    main()
