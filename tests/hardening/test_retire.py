#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Removed cgroups wait for a consumer only so long (issue 28): with
--listen, a removed cgroup is retired once a scrape fetched its final
counts, or after --retire-after, and at most --retire-max wait at once;
what went unserved is counted (retired_unserved, retired_forced,
removed_waiting in JSON lines; taskstat_collector_* in Prometheus).

    test_retire.py TASKSTAT_COLLECT CGROUP_CHURN MODE

cgroup_churn (tests/hardening/cgroup_churn.c) makes the cgroups, one
process exit each (-t 0), 4 alive at once, and logs each when removed.
MODE:
  noscrape  three rounds of RETIRE_ROUND (2000) cgroups at 200/s, nothing
            ever fetches /metrics (--retire-after 4, --retire-max 300): the
            cgroups of a round are gone a few seconds after it, the run's
            cgroups tracked never exceed the alive + the bound + those
            removed too recently to retire, removed_waiting <= the bound,
            VmRSS after round 3 within 8 MiB of after round 1 (unbounded,
            each round added ~15 KiB per cgroup); retired_unserved counts
            exactly the removed cgroups with exits that left the snapshots
            (all of them unserved), retired_forced > 0.
  scrape    2000 cgroups, /metrics fetched every second (--retire-after 6):
            every cgroup's final counts were scraped (the exits scraped
            add up to the exits run), none retired unserved, the run's
            cgroups retired within seconds of their removal.
  halfway   3000 cgroups, scraped every 0.5 s until half of them were
            removed, then never (--retire-after 4, --retire-max 300): the
            bounds hold, and retired_unserved is at least the run's
            cgroups no scrape saw with their final counts, and at most
            that plus the other cgroups of the host that left the
            snapshots meanwhile (exact on a quiet host).
  soak      the issue's "done when": RETIRE_SOAK (100,000) cgroups at
            RETIRE_SOAK_RATE (1000/s; 0: flat out), --listen, no scraper, the default
            --retire-after 300 and --retire-max 10000, table output: VmRSS
            after the first RETIRE_WARMUP (20,000) cgroups and at the end,
            the largest growth within RETIRE_SOAK_MIB (32 MiB); figures as
            one JSON line (~100 s: ctest label soak).
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "e2e"))
from tsc_e2e import (Collector, Cgroups, Seen, StreamRebuild,  # noqa: E402
                     arg, check, churn_prom_counts, fail, need_live, port_from_stderr,
                     sanitized, scrape, short, vm_rss_kb)

B = arg(1, "taskstat-collect cgroup_churn MODE")
DRIVER = arg(2, "taskstat-collect cgroup_churn MODE")
MODE = sys.argv[3] if len(sys.argv) > 3 else "noscrape"
ROUND = int(os.environ.get("RETIRE_ROUND", "2000"))
SOAK = int(os.environ.get("RETIRE_SOAK", "100000"))
WARMUP = int(os.environ.get("RETIRE_WARMUP", "20000"))
SOAK_MIB = float(os.environ.get("RETIRE_SOAK_MIB", "32"))
SOAK_RATE = os.environ.get("RETIRE_SOAK_RATE", "1000")  # 0: flat out
RATE = 200.0      # cgroups/s of the driver
ALIVE = 4
INTERVAL = 1.0    # --interval
GRACE_S = 2.0     # the rollup's grace_ms: a removed cgroup stays that long
SLACK_S = 4.0 if sanitized() else 1.5  # a loaded 2-core host, ASan


# --- what the JSON lines say ----------------------------------------------

class Rollups:
    """Reads the collector's JSON lines as they grow; keeps per rollup
    its time (CLOCK_MONOTONIC, from the line's wall time), the totals,
    and the run's cgroups {path: (tasks, processes, removed)}. Counts
    the removed cgroups with exits that left the snapshots (`vanished`,
    the run's and the others), as the collector retires them."""

    def __init__(self, path, prefix):
        self.path, self.prefix, self.off = path, prefix + "/", 0
        self.run_re = re.compile(re.escape(prefix) + r"/[^/]+/c\d+$")
        self.rolls = []
        self.stream = StreamRebuild()  # --stream changes: full states
        self.best = {}  # the run's cgroups: largest (tasks, processes)
        self.shown_removed = set()
        self.vanished = {"run": 0, "other": 0}
        self._removed = collections.Counter()
        self._mono = time.time() - time.monotonic()

    def poll(self):
        with open(self.path, "rb") as f:
            f.seek(self.off)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.off += end
        for line in data[:end].split(b"\n"):
            if line:
                self._add(self.stream.add(json.loads(line)))
        return self.rolls[-1] if self.rolls else None

    def _add(self, o):
        if o.get("type") != "rollup":
            return
        ours, removed = {}, collections.Counter()
        for c in o["cgroups"]:
            p = c["cgroup"]
            if c["removed"] and c["tasks"] + c["tgid_records"] > 0:
                removed[p] += 1
            if not self.run_re.match(p):
                continue
            v = (c["tasks"], c["processes"])
            ours[p] = v + (c["removed"],)
            b = self.best.get(p, (0, 0))
            self.best[p] = (max(b[0], v[0]), max(b[1], v[1]))
            if c["removed"]:
                self.shown_removed.add(p)
        for p, n in (self._removed - removed).items():
            self.vanished["run" if p.startswith(self.prefix)
                          else "other"] += n
        self._removed = removed
        self.rolls.append({
            "t": o["time"] - self._mono, "final": o["final"],
            "ncgroups": o["ncgroups"], "ours": ours,
            "waiting": o["removed_waiting"],
            "unserved": o["retired_unserved"],
            "forced": o["retired_forced"]})


def removed_within(times, t, window):
    """How many of the sorted removal times lie in (t - window, t]."""
    import bisect
    return bisect.bisect_right(times, t) - bisect.bisect_right(times,
                                                               t - window)


# --- the churn -------------------------------------------------------------

class Run:
    """One collector (JSON lines, --listen) and the churn under it."""

    def __init__(self, col, out, cg, tmp):
        self.col, self.cg, self.tmp = col, cg, tmp
        self.hostport = port_from_stderr(col)
        self.rolls = Rollups(out, cg.path())
        self.exp, self.removed_at = {}, []

    def churn(self, name, n, rate=RATE, during=None):
        """n cgroups below <base>/<name>; during(log) is called every
        0.1 s while the driver runs. Adds what ran to exp and
        removed_at."""
        log = os.path.join(self.tmp, name + ".log")
        p = subprocess.Popen([DRIVER, "-c", str(ALIVE), "-t", "0", "-r",
                              str(rate), self.cg.root,
                              self.cg.path(name), str(n), log],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        while p.poll() is None:
            if during:
                during(log)
            self.rolls.poll()
            time.sleep(0.1)
        out, err = p.communicate()
        check(p.returncode == 0, "cgroup_churn failed (%d): %s" %
              (p.returncode, err))
        drv = json.loads(out)
        check(drv["cgroups"] == n, "driver ran %d of %d" %
              (drv["cgroups"], n))
        with open(log) as f:
            for line in f:
                path, t, pr, when = line.rstrip("\n").split("\t")
                self.exp[path] = (int(t), int(pr))
                self.removed_at.append(float(when))
        self.removed_at.sort()
        return drv

    def wait_gone(self, timeout):
        """Until a rollup shows none of the run's cgroups; the seconds
        it took."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            r = self.rolls.poll()
            if r and r["t"] > t0 and not r["ours"]:
                return time.monotonic() - t0
            time.sleep(0.2)
        r = self.rolls.rolls[-1]
        fail("%d of the run's cgroups still tracked %.0f s after the churn "
             "(removed_waiting %d)" % (len(r["ours"]), timeout,
                                       r["waiting"]))

    def check_bounds(self, retire_max, window):
        """Every rollup: removed_waiting <= retire_max; the run's cgroups
        tracked <= the alive + retire_max + those removed in the last
        `window` s (not retirable yet). retire_max None: scraped, nothing
        waits longer than `window`."""
        over = []
        for r in self.rolls.rolls:
            bound = ALIVE + (retire_max or 0) + removed_within(
                self.removed_at, r["t"], window)
            if len(r["ours"]) > bound or (retire_max is not None and
                                          r["waiting"] > retire_max):
                over.append((round(r["t"], 1), len(r["ours"]), bound,
                             r["waiting"]))
        check(not over, "%d rollups over the bound (t, run's cgroups, "
              "bound, removed_waiting): %s" % (len(over), over[:5]))
        return max(len(r["ours"]) for r in self.rolls.rolls)

    def check_json_complete(self):
        """JSON lines, an output that waits for nobody: every cgroup run
        shown removed with its final counts, none invented."""
        best = self.rolls.best
        bad = sorted(p for p in self.exp if best.get(p) != self.exp[p])
        check(not bad, "JSON lines: %d of %d cgroups never shown with their "
              "final counts, e.g. %s: %s" % (len(bad), len(self.exp),
                                            bad[:1], best.get(bad[0])
                                            if bad else None))
        extra = sorted(set(best) - set(self.exp))
        check(not extra, "JSON lines: cgroups never run: %s" % short(extra))
        never = sorted(set(self.exp) - self.rolls.shown_removed)
        check(not never, "JSON lines: %d cgroups never shown removed" %
              len(never))


def collector_args(out, *extra):
    return ["-f", "jsonl", "-o", out, "--interval", str(INTERVAL),
            "--listen", "127.0.0.1:0", "--prom-max-series", "0"] + \
        list(extra)


def with_run(extra, body):
    need_live(B)
    tmp = tempfile.mkdtemp(prefix="tsc-retire-")
    out = os.path.join(tmp, "snap.jsonl")
    try:
        with Cgroups("retire") as cg:
            with Collector(B, collector_args(out, *extra)) as col:
                time.sleep(2 * INTERVAL)
                run = Run(col, out, cg, tmp)
                body(run)
            run.rolls.poll()  # the final line
            fin = run.rolls.rolls[-1]
            check(fin["final"], "no final rollup")
            return run, col.stderr()
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


# --- the modes ------------------------------------------------------------

def mode_noscrape():
    retire_after, retire_max = 4, 300
    rss, settle = [], []

    def body(run):
        rss.append(vm_rss_kb(run.col.p.pid))
        for i in range(3):
            run.churn("r%d" % i, ROUND)
            settle.append(round(run.wait_gone(
                retire_after + GRACE_S + 3 * INTERVAL + 10), 1))
            rss.append(vm_rss_kb(run.col.p.pid))
    run, err = with_run(["--retire-after", str(retire_after),
                         "--retire-max", str(retire_max)], body)
    run.check_json_complete()
    peak = run.check_bounds(retire_max, GRACE_S + 2 * INTERVAL + SLACK_S)
    fin = run.rolls.rolls[-1]
    v = run.rolls.vanished
    summary = {"mode": MODE, "cgroups": len(run.exp),
               "rss_kib_start_and_after_each_round": rss,
               "seconds_to_level_off": settle, "run_cgroups_peak": peak,
               "ncgroups_end": fin["ncgroups"],
               "retired_unserved": fin["unserved"],
               "retired_forced": fin["forced"], "vanished": v}
    print(json.dumps(summary))
    check(len(run.exp) == 3 * ROUND, "ran %d cgroups" % len(run.exp))
    # nothing was ever served: every cgroup with exits that left the
    # snapshots went unserved, the run's 3 * ROUND among them
    check(v["run"] == 3 * ROUND, "%d of the run's cgroups left the "
          "snapshots, expected %d" % (v["run"], 3 * ROUND))
    check(fin["unserved"] == v["run"] + v["other"],
          "retired_unserved %d, but %d removed cgroups with exits left the "
          "snapshots (%d of the run)" % (fin["unserved"],
                                         v["run"] + v["other"], v["run"]))
    check(0 < fin["forced"] <= fin["unserved"],
          "retired_forced %d (of %d unserved): --retire-max %d never "
          "forced anything out" % (fin["forced"], fin["unserved"],
                                   retire_max))
    check("--retire-" in err and "retired_unserved_total" in err,
          "no word on stderr of cgroups retired unserved: %r" % err)
    if not sanitized():
        growth = (rss[3] - rss[1]) / 1024.0
        check(growth <= 8, "VmRSS grew %.1f MiB from round 1 to round 3 "
              "(%s KiB)" % (growth, rss))
    print("PASS: 3 rounds of %d cgroups, nothing scraped, gone %s s after "
          "each round, %d retired unserved (%d forced by --retire-max)" %
          (ROUND, settle, fin["unserved"], fin["forced"]))


def scraper(run, period, seen, errors, stop):
    """Fetch /metrics every `period` s until stop is set."""
    while not stop.is_set():
        try:
            seen.add(churn_prom_counts(scrape(run.hostport),
                                       run.cg.path("s"))[0])
        except OSError as e:
            errors.append(repr(e))
        stop.wait(period)


def scraped(run, period, n, stop_after=None, then=None):
    """Churn n cgroups under <base>/s with a scraper every `period` s,
    stopped once stop_after cgroups were removed, else after then()
    returned (called once the churn is done). Returns what the scrapes
    saw."""
    seen, errors, stop = Seen(), [], threading.Event()
    th = threading.Thread(target=scraper, daemon=True,
                          args=(run, period, seen, errors, stop))
    th.start()

    def during(log):
        if stop_after is not None and not stop.is_set() and \
                os.path.exists(log):
            with open(log) as f:
                if sum(1 for _ in f) >= stop_after:
                    stop.set()
    try:
        run.churn("s", n, during=during)
        if then:
            then()
    finally:
        stop.set()
        th.join()
    check(not errors, "scrapes failed: %s" % short(errors))
    check(seen.versions >= 3, "only %d scrapes" % seen.versions)
    return seen


def mode_scrape():
    retire_after, n = 6, ROUND
    got = {}

    def body(run):
        def gone():
            got["settle"] = run.wait_gone(GRACE_S + 3 * INTERVAL + 10)
        got["seen"] = scraped(run, 1.0, n, then=gone)
    run, _ = with_run(["--retire-after", str(retire_after)], body)
    run.check_json_complete()
    best = got["seen"].best
    lost = sorted(p for p in run.exp if tuple(best.get(p, ())) !=
                  run.exp[p])
    ran = sum(t for t, _ in run.exp.values())
    saw = sum(b[0] for b in best.values())
    fin = run.rolls.rolls[-1]
    # served within a scrape period: tracked no longer than the grace,
    # two intervals and a scrape period after the removal
    peak = run.check_bounds(None, GRACE_S + 2 * INTERVAL + 1.0 + SLACK_S)
    print(json.dumps({"mode": MODE, "cgroups": n, "scrapes":
                      got["seen"].versions, "task_exits_run": ran,
                      "task_exits_scraped": saw, "run_cgroups_peak": peak,
                      "retired_unserved": fin["unserved"],
                      "seconds_to_level_off": round(got["settle"], 1)}))
    check(not lost, "%d of %d cgroups retired before a scrape got their "
          "final counts, e.g. %s: scraped %s, ran %s" % (
              len(lost), n, lost[:1], best.get(lost[0]) if lost else None,
              run.exp[lost[0]] if lost else None))
    check(saw == ran, "scrapes: %d task exits, %d ran" % (saw, ran))
    check(fin["unserved"] == 0 and fin["forced"] == 0,
          "scraped every second, yet %d retired unserved (%d forced)" %
          (fin["unserved"], fin["forced"]))
    print("PASS: %d cgroups scraped every second: every final value "
          "served (%d task exits), none retired unserved" % (n, ran))


def mode_halfway():
    retire_after, retire_max, n = 4, 300, int(1.5 * ROUND)
    got = {}

    def body(run):
        got["seen"] = scraped(run, 0.5, n, stop_after=n // 2)
        run.wait_gone(retire_after + GRACE_S + 3 * INTERVAL + 10)
    run, _ = with_run(["--retire-after", str(retire_after),
                       "--retire-max", str(retire_max)], body)
    run.check_json_complete()
    peak = run.check_bounds(retire_max, GRACE_S + 2 * INTERVAL + SLACK_S)
    best = got["seen"].best
    unseen = sum(1 for p in run.exp if tuple(best.get(p, ())) !=
                 run.exp[p])
    fin = run.rolls.rolls[-1]
    other = run.rolls.vanished["other"]
    print(json.dumps({"mode": MODE, "cgroups": n, "scrapes":
                      got["seen"].versions, "run_cgroups_peak": peak,
                      "run_final_never_scraped": unseen,
                      "retired_unserved": fin["unserved"],
                      "retired_forced": fin["forced"],
                      "other_cgroups_vanished": other}))
    check(n // 3 <= unseen <= n - n // 3, "%d of %d cgroups never scraped "
          "with their final counts: the scraper did not stop half-way" %
          (unseen, n))
    check(unseen <= fin["unserved"] <= unseen + other,
          "retired_unserved %d: %d of the run's cgroups went unscraped, "
          "%d other removed cgroups left the snapshots" %
          (fin["unserved"], unseen, other))
    check(0 < fin["forced"] <= fin["unserved"],
          "retired_forced %d of %d unserved" % (fin["forced"],
                                                fin["unserved"]))
    print("PASS: the scraper stopped half-way: bounds held, %d retired "
          "unserved (%d of the run's never scraped)" % (fin["unserved"],
                                                       unseen))


def mode_soak():
    """The issue's "done when" (~100 s at 1,000 cgroups/s)."""
    need_live(B)
    tmp = tempfile.mkdtemp(prefix="tsc-retire-soak-")
    out, log = (os.path.join(tmp, n) for n in ("table.txt", "churn.log"))
    samples = []  # (cgroups removed so far, VmRSS KiB)
    try:
        with Cgroups("retire-soak") as cg:
            with Collector(B, ["-f", "table", "--top", "1", "-o", out,
                               "--interval", str(INTERVAL), "--listen",
                               "127.0.0.1:0"]) as col:
                port_from_stderr(col)
                t0 = time.monotonic()
                p = subprocess.Popen([DRIVER, "-c", str(ALIVE), "-t", "0",
                                      "-r", SOAK_RATE, cg.root,
                                      cg.path("soak"), str(SOAK), log],
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
                while p.poll() is None:
                    time.sleep(1)
                    with open(log, "rb") as f:
                        done = f.read().count(b"\n")
                    samples.append((done, vm_rss_kb(col.p.pid)))
                o, e = p.communicate()
                check(p.returncode == 0, "cgroup_churn: %s" % e)
                secs = time.monotonic() - t0
                with open(out) as f:
                    table = f.read()
        heads = re.findall(r"cgroups (\d+)(?: \((\d+) retired unserved\))?",
                           table)
        warm = [kb for d, kb in samples if d >= WARMUP]
        check(len(warm) >= 3, "too few samples after the warm-up: %s" %
              samples[-3:])
        growth = (max(warm) - warm[0]) / 1024.0
        print(json.dumps({
            "mode": MODE, "cgroups": SOAK, "seconds": round(secs),
            "rss_mib_at_warmup": round(warm[0] / 1024, 1),
            "rss_mib_peak_after": round(max(warm) / 1024, 1),
            "rss_mib_end": round(warm[-1] / 1024, 1),
            "growth_mib": round(growth, 1),
            "rss_mib_per_10000": [round(kb / 1024, 1) for d, kb in (
                next(x for x in samples if x[0] >= k)
                for k in range(0, SOAK, 10000))],
            "ncgroups_peak": max(int(c) for c, _ in heads),
            "ncgroups_end": int(heads[-1][0]),
            "retired_unserved_end": int(heads[-1][1] or 0),
            "driver": json.loads(o)}))
        check(sanitized() or growth <= SOAK_MIB, "VmRSS grew %.1f MiB "
              "after the warm-up (bound %.0f)" % (growth, SOAK_MIB))
    finally:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


MODES = {"noscrape": mode_noscrape, "scrape": mode_scrape,
         "halfway": mode_halfway, "soak": mode_soak}

if __name__ == "__main__":
    if MODE not in MODES:
        fail("unknown mode %r (%s)" % (MODE, ", ".join(MODES)))
    MODES[MODE]()
