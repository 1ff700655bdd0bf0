#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Change-only streams (issue 22 item 4, --stream changes, the default):

- the first JSON line is full, the next ones hold only the cgroups that
  changed (none while nothing exits), a cgroup with exits is in the line
  after them (and in the one after: its deltas go back to 0);
- SIGUSR2 makes the next line full; so does SIGHUP's reopen (the new
  file starts with a full line) and --full-every N (every N-th line);
  the final line is full;
- the full state rebuilt from the stream (tests/e2e StreamRebuild, the
  recipe of docs/streams.md and examples/stream-rebuild.jq) equals
  /snapshot of the same snapshot, from the start and from a reopened
  file;
- --replay of the live run's capture gives the same final state in both
  stream modes, and the live run's totals;
- CSV has a last column "stream", the table a header note.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check,  # noqa: E402
                     final_rollup, need_live, port_from_stderr,
                     rebuild_stream, run_cmd, scrape, strict_json_lines,
                     workload)

B = arg(1, "taskstat-collect")
need_live(B)
tmp = tempfile.mkdtemp(prefix="streamh-")
os.chmod(tmp, 0o755)
cap = os.path.join(tmp, "exits.tscap")
out = os.path.join(tmp, "stream.jsonl")
JQ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                  "examples", "stream-rebuild.jq")


def rollups(path, rebuild=False):
    """The complete rollup lines of a file."""
    with open(path, "rb") as f:
        data = f.read()
    data = data[:data.rfind(b"\n") + 1]
    return [o for o in strict_json_lines(data, rebuild)
            if o["type"] == "rollup"]


def wait_lines(path, n, timeout=20):
    t0 = time.time()
    while time.time() - t0 < timeout:
        r = rollups(path)
        if len(r) >= n:
            return r
        time.sleep(0.05)
    check(False, "%s: fewer than %d rollup lines" % (path, n))


def same_as_snapshot(path, hp, what):
    """/snapshot now equals the state rebuilt from path at its seq."""
    snap = json.loads(scrape(hp, "/snapshot"))
    rolls = wait_lines(path, 1)
    t0 = time.time()
    while rolls[-1]["seq"] < snap["seq"] and time.time() - t0 < 10:
        time.sleep(0.05)
        rolls = rollups(path)
    full = {o["seq"]: o for o in rebuild_stream(rolls)}
    check(snap["seq"] in full, "%s: no line of seq %d" % (what, snap["seq"]))
    check(snap.get("stream") == "full", "%s: /snapshot stream %r" %
          (what, snap.get("stream")))
    got = full[snap["seq"]]
    check(got == snap, "%s: rebuilt seq %d differs from /snapshot: %s" %
          (what, snap["seq"], sorted(k for k in snap if snap[k] !=
                                     got.get(k))))
    # the jq recipe of docs/streams.md says the same
    if shutil.which("jq"):
        r = subprocess.run(["jq", "-c", "-n", "-f", JQ], stdin=open(path),
                           capture_output=True, timeout=60)
        check(r.returncode == 0, "jq: %s" % r.stderr.decode())
        byseq = {}
        for line in r.stdout.decode().splitlines():
            o = json.loads(line)
            byseq[o["seq"]] = o
        check(byseq.get(snap["seq"]) == snap,
              "%s: jq's rebuilt seq %d differs from /snapshot" %
              (what, snap["seq"]))
    return snap


try:
    with Cgroups("streamh") as cg:
        a, b = cg.mkdir("a"), cg.mkdir("b")
        # only the test's cgroups: the host's exit all the time
        mine = ["--cgroup", cg.path() + "*"]
        col = Collector(B, ["-f", "jsonl", "-i", "0.3", "--full-every", "0",
                            "--listen", "127.0.0.1:0", "--record", cap,
                            "-o", out] + mine)
        with col:
            hp = port_from_stderr(col)
            workload(a, procs=3, threads=2)
            workload(b, procs=2)
            n0 = len(wait_lines(out, 1))
            rolls = wait_lines(out, n0 + 4)
            raw = rolls
            check(raw[0]["stream"] == "full", "first line: %s" %
                  raw[0]["stream"])
            check(all(o["stream"] == "changes" for o in raw[1:]),
                  "--full-every 0: a full line without a cause: %s" %
                  [o["stream"] for o in raw])
            check(any(not o["cgroups"] for o in raw[1:]),
                  "no empty change-only line while nothing exits: %s" %
                  [len(o["cgroups"]) for o in raw])
            # exits in a: its row comes in the next line, b's does not
            n = len(rollups(out))
            workload(a, procs=2)
            time.sleep(0.1)
            rolls = wait_lines(out, n + 3)
            later = [o for o in rolls[n:]
                     if cg.path("a") in by_path(o)]
            check(later, "a's exits: no change-only line with a")
            check(all(cg.path("b") not in by_path(o) for o in later),
                  "b unchanged but written: %s" %
                  [sorted(by_path(o)) for o in later])
            same_as_snapshot(out, hp, "stream from the start")

            # SIGUSR2: the next line is full
            n = len(rollups(out))
            col.p.send_signal(signal.SIGUSR2)
            rolls = wait_lines(out, n + 3)
            check(any(o["stream"] == "full" for o in rolls[n:n + 2]),
                  "SIGUSR2: no full line after it: %s" %
                  [o["stream"] for o in rolls[n:]])

            # SIGHUP after a rotation: the new file starts full
            os.rename(out, out + ".1")
            col.p.send_signal(signal.SIGHUP)
            t0 = time.time()
            while not os.path.exists(out) and time.time() - t0 < 10:
                time.sleep(0.05)
            workload(b, procs=1)
            rot = wait_lines(out, 3)
            check(rot[0]["stream"] == "full", "reopened file starts %s" %
                  rot[0]["stream"])
            same_as_snapshot(out, hp, "reopened file")
            rolls = wait_lines(out, len(rot) + 1)
        check(col.p.returncode == 0, "collector exit %s" % col.p.returncode)
        live = rollups(out + ".1", True) + rollups(out, True)
        lroll = final_rollup(rebuild_stream(rollups(out)))

        # --full-every 3: lines 1, 4, 7, ... full, the others changes
        out3 = os.path.join(tmp, "every3.jsonl")
        with Collector(B, ["-f", "jsonl", "-i", "0.2", "--full-every", "3",
                           "-o", out3]):
            wait_lines(out3, 8)
        kinds = [o["stream"] for o in rollups(out3)]
        check(all((k == "full") == (i % 3 == 0) for i, k in
                  enumerate(kinds[:-1])) and kinds[-1] == "full",
              "--full-every 3 (and a full final line): %s" % kinds)

        # --replay, both modes: one final state, the live totals
        def replay(args):
            rc, o, e = run_cmd([B, "--replay", cap, "-f", "jsonl"] +
                               args)[:3]
            check(rc == 0, "replay %s: %s" % (args, e))
            return o
        ch = strict_json_lines(replay(["-i", "0.3", "--full-every", "4"] +
                                      mine), rebuild=False)
        rch = [o for o in ch if o["type"] == "rollup"]
        check(any(o["stream"] == "changes" for o in rch),
              "replay --stream changes wrote no change-only line")
        fch = final_rollup(rebuild_stream(ch))
        ffu = final_rollup(strict_json_lines(replay(["-i", "0.3", "--stream",
                                                     "full"] + mine)))
        check("stream" not in ffu, "--stream full: a stream field")
        fch.pop("stream")
        check(fch == ffu, "replay: changes and full differ: %s" %
              sorted(k for k in ffu if ffu[k] != fch.get(k)))
        for k in ("records", "dropped", "malformed"):
            check(ffu[k] == lroll[k], "replay %s %d, live %d" %
                  (k, ffu[k], lroll[k]))
        for p in (cg.path("a"), cg.path("b")):
            check(by_path(ffu)[p]["tasks"] == by_path(lroll)[p]["tasks"],
                  "replay tasks of %s" % p)

        # CSV: a last column; the table: a header note
        text = run_cmd([B, "--replay", cap, "-f", "csv", "-i", "0.3"])[1]
        rows = text.decode().split("\r\n")
        check(rows[0].endswith(",delay_irq_max_delta_s,stream") and
              ",cgroups_filtered,namespace,pod,container_name,image,"
              in rows[0],
              "CSV header: %s" % rows[0][-40:])
        kinds = [r.rsplit(",", 1)[1] for r in rows[1:]
                 if r.startswith("totals,")]
        check(kinds and kinds[0] == "full" and "changes" in kinds,
              "CSV totals stream column: %s" % kinds)
        tab = run_cmd([B, "--replay", cap, "-f", "table", "-i", "0.3"])[1]
        check(b"  (full)\n" in tab and b"(changes only: " in tab,
              "table header notes missing")
        del live
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
