#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Faults around the collector (issue 13, items 5 and 6), as root on the
real kernel. argv: taskstat-collect, then one mode:

  disk      --output, --record and --textfile on a 128 KiB tmpfs that fills
            up: messages naming each file, the output_errors metric, the
            collection and /metrics go on, retries resume after space is
            freed, every file ends with a complete line / record / version,
            exit status 3
  sighup    rename the outputs, SIGHUP: new files get the next snapshot and
            a capture header, the old ones end complete; with --user nobody
            a file it cannot create is reported and the old one kept
  clobber   --record onto a non-empty file is refused (exit 2, file kept);
            --force replaces it
  cutcap    replay of a capture cut inside a record: what was complete,
            one line saying where it stopped, exit 1
  starttime process_start_time_seconds is the start, and grows on restart
  starved   the collector in a cgroup v1 CPU quota of 5% during soak_churn
            (argv[3]; STARVED_SECONDS, default 15): drops counted exactly
            for the churn's own exits, recovery after the load, no crash
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check, fail,  # noqa
                     final_rollup, need_live, port_from_stderr, run_cmd,
                     scrape, skip, strict_json_lines, workload)

B = arg(1, "taskstat-collect")
MODE = sys.argv[2] if len(sys.argv) > 2 else "disk"


def metric(text, name, labels=""):
    m = re.search(r"^%s%s (\S+)$" % (re.escape(name), re.escape(labels)),
                  text, re.M)
    return float(m.group(1)) if m else None


def wait_for(cond, what, timeout=20):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return
        time.sleep(0.1)
    fail("timed out waiting for " + what)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def replay(cap):
    return run_cmd([B, "--replay", cap, "-f", "jsonl"])


def complete_lines(data, what):
    check(not data or data.endswith(b"\n"), "%s does not end with a complete line: %r"
          % (what, data[-80:]))
    return strict_json_lines(data)


class Tmpfs:
    """A small tmpfs in a temp dir, unmounted on exit."""

    def __init__(self, size="64k"):
        self.dir = tempfile.mkdtemp(prefix="tsc-h-faults-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size,
                            "tmpfs", self.dir], capture_output=True)
        if r.returncode:
            os.rmdir(self.dir)
            skip("cannot mount a tmpfs: " + r.stderr.decode().strip())

    def __enter__(self):
        return self

    def __exit__(self, *a):
        subprocess.run(["umount", "-l", self.dir])
        shutil.rmtree(self.dir, ignore_errors=True)


def test_disk():
    # 128 KiB, 96 of them a filler freed later: 32 KiB for the three
    # outputs at first, room for a complete textfile of a busy host's
    # cgroups (with 64 and 40 KiB it sometimes never fitted once)
    with Tmpfs("128k") as fs, Cgroups("faults") as cg:
        d = cg.mkdir("disk")
        out, cap, prom = (os.path.join(fs.dir, n)
                          for n in ("out.jsonl", "c.tscap", "m.prom"))
        filler = os.path.join(fs.dir, "filler")
        with open(filler, "wb") as f:  # room to free later
            f.write(b"x" * 98304)
        # --no-histograms: snapshot lines small enough for a small disk
        # no --events: the host's other exits would refill the disk
        col = Collector(B, ["-f", "jsonl", "-i", "0.3", "-o", out,
                            "--no-histograms",
                            "--record", cap, "--textfile", prom,
                            "--listen", "127.0.0.1:0"])
        try:
            col.wait_started()
            hp = port_from_stderr(col)
            # fill the disk: every output fails at some point
            msgs = ["--%s: %s: write failed: No space left on device" %
                    (o, p) for o, p in (("output", out), ("record", cap),
                                        ("textfile", prom))]
            t0 = time.monotonic()
            while (not all(m in col.stderr() for m in msgs) and
                   time.monotonic() - t0 < 30):
                workload(d, procs=200, linger=0)
            for m in msgs:
                check(m in col.stderr(), "no message %r: %s" %
                      (m, col.stderr()))
            check(col.p.poll() is None, "collector exited on a full disk: "
                  + col.stderr())
            time.sleep(0.7)  # the next snapshot counts the last failure
            text = scrape(hp)  # the endpoint goes on, and counts
            for o in ("output", "record", "textfile"):
                v = metric(text, "taskstat_collector_output_errors_total",
                           '{output="%s"}' % o)
                check(v is not None and v > 0, "output_errors_total{%s} "
                      "is %r while failing" % (o, v))
            # the textfile holds its last complete version, no temp left
            t = read(prom).decode()
            check(t.rstrip().split("\n")[-1].startswith(
                "taskstat_collector_output_errors_total") or
                "process_start_time_seconds" in t, "textfile incomplete")
            check(t.endswith("\n"), "textfile does not end complete")
            left = [n for n in os.listdir(fs.dir) if n.endswith(".tmp")]
            check(not left, "temp files left: %s" % left)
            # free space: the outputs are retried and resume
            def rollups():  # in complete lines only
                data = read(out)
                return data[:data.rfind(b"\n") + 1].count(b'"type":"rollup"')
            cut, cap_before = rollups(), os.path.getsize(cap)
            os.unlink(filler)
            w = workload(d, procs=20)
            # on a busy host the capture of everyone's exits may take the
            # freed space first: either output resuming shows the retry
            wait_for(lambda: rollups() > cut or
                     os.path.getsize(cap) > cap_before + 2000,
                     "an output to resume after space was freed")
            time.sleep(1)
            text = scrape(hp)
            check(metric(text, "taskstat_collector_records_total") > 0,
                  "no records counted")
            rc = col.stop()
        finally:
            col.cleanup()
        check(rc == 3, "exit status %d after output errors, expected 3: %s"
              % (rc, col.stderr()))
        check(re.search(r"--record: .*: \d+ writes failed", col.stderr()),
              "no final tally: " + col.stderr())
        objs = complete_lines(read(out), "--output")
        # (empty when no snapshot ever fitted: the disk was full at once)
        check(not objs or any(o["type"] == "rollup" for o in objs),
              "no snapshot: %d lines, %s" % (len(objs), col.stderr()))
        r = replay(cap)
        check(r.rc == 0, "replay of the capture written on a full disk: "
              "exit %d: %s" % (r.rc, r.err))
        roll = final_rollup(strict_json_lines(r.out))
        check(roll["records"] > 0, "empty capture")
        t = read(prom).decode()
        check("process_start_time_seconds" in t and t.endswith("\n"),
              "final textfile incomplete")
        print("disk: %d output lines, %d replayed records, last workload "
              "%d tasks" % (len(objs), roll["records"], w.tasks))


def test_sighup():
    with Cgroups("faults") as cg:
        d = cg.mkdir("hup")
        tmp = tempfile.mkdtemp(prefix="tsc-h-hup-")
        out, cap = os.path.join(tmp, "out.jsonl"), os.path.join(tmp, "c.tscap")

        def seqs(path):
            return [o["seq"] for o in complete_lines(read(path), path)
                    if o["type"] == "rollup"]
        with Collector(B, ["-f", "jsonl", "-i", "0.3", "-o", out,
                           "--record", cap]) as col:
            workload(d, procs=5)
            wait_for(lambda: os.path.getsize(out) > 0 and seqs(out),
                     "a first snapshot")
            os.rename(out, out + ".1")
            os.rename(cap, cap + ".1")
            col.p.send_signal(signal.SIGHUP)
            wait_for(lambda: os.path.exists(out) and
                     os.path.getsize(out) > 0, "the reopened --output")
            w = workload(d, procs=7)
            time.sleep(0.8)
            check(col.p.poll() is None, "SIGHUP stopped the collector")
        check("--output: reopened %s" % out in col.stderr(),
              "no reopen message: " + col.stderr())
        old, new = seqs(out + ".1"), seqs(out)
        check(old and new and new[0] == old[-1] + 1,
              "snapshots %s then %s: the next one must go to the new file"
              % (old, new))
        for c in (cap + ".1", cap):
            r = replay(c)
            check(r.rc == 0, "replay %s: exit %d: %s" % (c, r.rc, r.err))
        roll = final_rollup(strict_json_lines(replay(cap).out))
        got = by_path(roll).get(cg.path("hup"), {}).get("tasks")
        check(got == w.tasks, "new capture: %r tasks of the second "
              "workload, expected %d" % (got, w.tasks))
        shutil.rmtree(tmp)

        # --user nobody: the directory is root's, so the new file can't be
        # created; the old one is kept and goes on
        tmp = tempfile.mkdtemp(prefix="tsc-h-hupu-")
        os.chmod(tmp, 0o755)
        out = os.path.join(tmp, "out.jsonl")
        with Collector(B, ["-f", "jsonl", "-i", "0.3", "-o", out,
                           "--user", "nobody"]) as col:
            time.sleep(0.5)
            os.rename(out, out + ".1")
            col.p.send_signal(signal.SIGHUP)
            wait_for(lambda: "keeping the old file" in col.stderr(),
                     "the refused reopen")
            n = len(seqs(out + ".1"))
            time.sleep(1)
            check(len(seqs(out + ".1")) > n, "the old file stopped "
                  "getting snapshots")
        check("--output: cannot reopen %s: Permission denied" % out in
              col.stderr(), "message: " + col.stderr())
        shutil.rmtree(tmp)
        print("sighup: snapshots %s | %s; second capture %d tasks; --user "
              "kept the old file" % (old, new, got))


def test_clobber():
    tmp = tempfile.mkdtemp(prefix="tsc-h-clob-")
    cap = os.path.join(tmp, "c.tscap")
    with open(cap, "wb") as f:
        f.write(b"precious")
    r = run_cmd([B, "-f", "jsonl", "-d", "0.3", "--record", cap])
    check(r.rc == 2, "exit %d onto an existing capture, expected 2" % r.rc)
    check("--record" in r.err and "--force" in r.err and cap in r.err,
          "message: " + r.err)
    check(read(cap) == b"precious", "the existing file was touched")
    r = run_cmd([B, "-f", "jsonl", "-d", "0.3", "--record", cap, "--force"])
    check(r.rc == 0, "--force: exit %d: %s" % (r.rc, r.err))
    check(read(cap)[:8] == b"\x89TSCAP\r\n", "--force did not record")
    shutil.rmtree(tmp)
    print("clobber: refused without --force, replaced with it")


def test_cutcap():
    with Cgroups("faults") as cg:
        d = cg.mkdir("cut")
        tmp = tempfile.mkdtemp(prefix="tsc-h-cut-")
        cap = os.path.join(tmp, "c.tscap")
        with Collector(B, ["-f", "jsonl", "-i", "0.3", "--record", cap]):
            for _ in range(3):
                workload(d, procs=10, linger=0.1)
        full = replay(cap)
        check(full.rc == 0, "replay: " + full.err)
        data = read(cap)
        with open(cap, "wb") as f:
            f.write(data[:len(data) - 7])
        r = replay(cap)
        check(r.rc == 1, "cut capture: exit %d, expected 1" % r.rc)
        m = re.search(r"--replay: .*: record (\d+) at offset (\d+): "
                      r"truncated record", r.err)
        check(m, "no line saying where it stopped: " + r.err)
        a = final_rollup(strict_json_lines(full.out))["records"]
        b = final_rollup(strict_json_lines(r.out))["records"]
        check(0 < b <= a, "cut replay: %d records, full %d" % (b, a))
        shutil.rmtree(tmp)
        print("cutcap: stopped at record %s offset %s, %d of %d records"
              % (m.group(1), m.group(2), b, a))


def test_starttime():
    vals = []
    for _ in range(2):
        t0 = time.time()
        with Collector(B, ["-f", "jsonl", "--listen", "127.0.0.1:0"]) as c:
            t1 = time.time()
            v = metric(scrape(port_from_stderr(c)),
                       "process_start_time_seconds")
        check(v is not None and t0 - 1 <= v <= t1 + 1,
              "process_start_time_seconds %r, started in [%f, %f]" %
              (v, t0, t1))
        vals.append(v)
        time.sleep(1.1)
    check(vals[1] > vals[0] + 1, "restart: %s" % vals)
    print("starttime: %s" % vals)


def cpu_v1():
    for d in ("/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"):
        if os.path.exists(os.path.join(d, "cpu.cfs_quota_us")):
            return d
    skip("no cgroup v1 cpu controller (cpu.cfs_quota_us)")


def cpu_seconds(pid):
    """utime + stime of a process, seconds."""
    f = read("/proc/%d/stat" % pid).decode().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def test_starved():
    global CHURN
    CHURN = arg(3, "taskstat-collect starved soak_churn")
    secs = float(os.environ.get("STARVED_SECONDS", "15"))
    forkers = int(os.environ.get("STARVED_SPAWNERS", "2"))
    quota = os.path.join(cpu_v1(), "tsc-starved-%d" % os.getpid())
    os.mkdir(quota)
    try:
        with open(os.path.join(quota, "cpu.cfs_period_us"), "w") as f:
            f.write("100000")
        with open(os.path.join(quota, "cpu.cfs_quota_us"), "w") as f:
            f.write("5000")
        run_starved(quota, secs, forkers)
    finally:
        for _ in range(50):
            try:
                os.rmdir(quota)
                break
            except OSError:
                time.sleep(0.1)


def run_starved(quota, secs, forkers):
    with Cgroups("starved") as cg:
        d, after = cg.mkdir("churn"), cg.mkdir("after")
        col = Collector(B, ["-f", "jsonl", "-i", "1", "--rcvbuf", "65536",
                            "--listen", "127.0.0.1:0"])
        try:
            col.wait_started()
            hp = port_from_stderr(col)
            with open(os.path.join(quota, "cgroup.procs"), "w") as f:
                f.write(str(col.p.pid))  # v1: moves every thread
            cpu0 = cpu_seconds(col.p.pid)
            # soak_churn in the churn cgroup: it counts the task exits it
            # causes (threads, children, spawners, itself)
            # (under ASan, LeakSanitizer's exit-time thread would be one
            # task exit soak_churn does not count)
            env = dict(os.environ)
            if env.get("ASAN_OPTIONS"):
                env["ASAN_OPTIONS"] += ":detect_leaks=0"
            r = subprocess.run(["sh", "-c", 'echo $$ > "$0/cgroup.procs" '
                                '&& exec "$@"', d, CHURN, "%g" % secs,
                                str(forkers)], capture_output=True,
                               timeout=secs + 120, env=env)
            check(r.returncode == 0, "soak_churn: %s" % r.stderr.decode())
            expected = json.loads(r.stdout.decode().splitlines()[-1])[
                "tasks"]
            cpu1 = cpu_seconds(col.p.pid)
            check(col.p.poll() is None, "collector died: " + col.stderr())

            # recovery: once the backlog is drained, every exit is received
            def drops():
                return metric(scrape(hp), "taskstat_collector_dropped_total")
            last, t0 = drops(), time.monotonic()
            while time.monotonic() - t0 < 60:
                time.sleep(2)
                v = drops()
                if v == last:
                    break
                last = v
            w = workload(after, procs=50)
            time.sleep(3)
            rc = col.stop()
        finally:
            col.cleanup()
        check(rc == 0, "exit %d: %s" % (rc, col.stderr()))
        roll = final_rollup(col.lines())
        got = by_path(roll).get(cg.path("churn"), {}).get("tasks", 0)
        dropped = roll["dropped"]
        lost = expected - got
        check(got <= expected, "%d exits received of %d: invented" %
              (got, expected))
        check(lost > 0, "no drop at all: %d exits in %.0f s did not exceed "
              "5%% of a CPU (use more STARVED_SPAWNERS)" % (expected, secs))
        # the counter counts every lost exit message host-wide: at least
        # the churn's own, at most those plus what else exited meanwhile
        # (measured: the records of every other cgroup, which the
        # collector received, bound the others it may have lost)
        others = sum(c["tasks"] for c in roll["cgroups"]) - got
        check(lost <= dropped, "dropped %d < %d churn exits not received"
              % (dropped, lost))
        check(dropped - lost <= max(others, 50),
              "dropped %d, churn lost %d, other exits %d: drops invented" %
              (dropped, lost, others))
        rec = by_path(roll).get(cg.path("after"), {}).get("tasks")
        check(rec == w.tasks, "after the load: %r of %d exits received" %
              (rec, w.tasks))
        cpu = (cpu1 - cpu0) / secs * 100
        print("starved: %d exits in %.0f s (%d/s), received %d, lost %d, "
              "dropped_total %d (+%d beyond the churn's own; %d other "
              "exits received), collector CPU %.1f%%, recovered: %d/%d" %
              (expected, secs, expected / secs, got, lost, dropped,
               dropped - lost, others, cpu, rec, w.tasks))
        report = os.environ.get("STARVED_REPORT")
        if report:
            with open(report, "w") as f:
                json.dump({"seconds": secs, "expected": expected,
                           "received": got, "lost": lost,
                           "dropped": dropped, "cpu_percent": cpu}, f)


def main():
    if os.geteuid() != 0:
        skip("needs root")
    modes = {"disk": test_disk, "sighup": test_sighup,
             "clobber": test_clobber, "cutcap": test_cutcap,
             "starttime": test_starttime, "starved": test_starved}
    if MODE not in modes:
        fail("unknown mode %r" % MODE)
    need_live(B)
    modes[MODE]()


if __name__ == "__main__":
    main()
