#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Delay peaks on the real kernel (issue 39): a cgroup with a known long
run-queue wait (short CPU-bound tasks pinned to one CPU beside two CPU
hogs pinned to it) shows a cpu delay peak (delay_max_s) that is the
longest per-task cpu_delay_max of its records, read independently from
the raw netlink messages of --record (struct taskstats v16/v17 at its
own offsets, not the collector's decoder), and at least a millisecond;
the Prometheus text has it as taskstat_delay_max_seconds{class="cpu"},
and as the workload's (the cgroup is a systemd unit's)."""
import os
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, by_path, check,  # noqa: E402
                     fail, final_rollup, fork_child, move_self, need_live,
                     port_from_stderr, scrape, set_comm, skip,
                     strict_json_lines)

B = arg(1, "taskstat-collect")
need_live(B)
cpus = sorted(os.sched_getaffinity(0))
if len(cpus) < 1:
    skip("no CPU to pin to")
CPU = cpus[-1]
HOG_S = 1.5
VICTIMS = 8


def spin(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1


def task(cgdir, comm, seconds):
    def run():
        move_self(cgdir)
        os.sched_setaffinity(0, {CPU})
        set_comm(comm.encode())
        spin(seconds)
    return fork_child(run)


def reap(pids):
    for p in pids:
        _, st = os.waitpid(p, 0)
        check(os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0,
              "child %d: status %#x" % (p, st))


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def nla(b, start, end):
    """(type, data offset, data length) of the attributes in b[start:end]."""
    o = start
    while o + 4 <= end:
        ln, ty = u16(b, o), u16(b, o + 2) & 0x3fff
        if ln < 4 or o + ln > end:
            fail("bad attribute at %d" % o)
        yield ty, o + 4, ln - 4
        o += (ln + 3) & ~3


def cpu_max_by_pid(cap, comms):
    """pid -> (cpu_delay_max ns, version) of the PID records of the
    capture whose comm is in comms (AGGR_PID nests only: TGID aggregates
    carry the last thread's max; other processes of a busy host reuse
    the pid numbers)."""
    with open(cap, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89TSCAP\r\n", "not a capture")
    o = u32(data, 12)
    out = {}
    while o + 16 <= len(data):
        marker, ty, blen = u32(data, o), u32(data, o + 4), u32(data, o + 8)
        check(marker == 0x52435354, "record marker at %d" % o)
        body = o + 16
        if ty == 1:  # an exit: u64, u32, u32 raw_len, u16, u16, u32, raw
            raw = body + 24
            rlen = u32(data, body + 12)
            for t, d, dl in nla(data, raw + 20, raw + rlen):
                if t != 4:
                    continue
                pid = stats = None
                for t2, d2, dl2 in nla(data, d, d + dl):
                    if t2 == 1:
                        pid = u32(data, d2)
                    elif t2 == 3:
                        stats = (d2, dl2)
                ver = u16(data, stats[0])
                if ver not in (16, 17) or stats[1] < 560:
                    skip("the kernel sends struct taskstats v%d, not "
                         "v16/v17 (no delay max at offset 432)" % ver)
                comm = data[stats[0] + 80:stats[0] + 112].split(b"\0")[0]
                if comm in comms:
                    out[pid] = (struct.unpack_from("<Q", data,
                                                   stats[0] + 432)[0], ver)
        o = body + blen
    return out


tmp = tempfile.mkdtemp(prefix="tsc-peaks-")
cap = os.path.join(tmp, "peaks.tscap")
prom = os.path.join(tmp, "peaks.prom")
try:
    with Cgroups("peaks") as cg:
        # a systemd unit's name: the workload view folds it in too
        unit = "cgs-pk%d.service" % os.getpid()
        d = cg.mkdir(unit)
        with Collector(B, ["-f", "jsonl", "-i", "0.5", "--record", cap,
                           "--textfile", prom, "--listen",
                           "127.0.0.1:0"]) as col:
            hp = port_from_stderr(col)
            hogs = [task(d, "cgs-hog", HOG_S) for _ in range(2)]
            time.sleep(0.2)  # the hogs hold the CPU
            victims = []
            for _ in range(VICTIMS):
                victims.append(task(d, "cgs-victim", 0.03))
                time.sleep(0.05)
            reap(victims + hogs)
            time.sleep(0.8)
            # a new workload shows zeros until served once: a scrape,
            # then the next snapshot's text has its values
            scrape(hp)
            time.sleep(1.2)
            metrics = scrape(hp)
        roll = final_rollup(strict_json_lines(col.raw()))
        path = cg.path(unit)
        row = by_path(roll).get(path)
        check(row is not None, "no row for %s" % path)
        check(row["tasks"] == len(hogs) + len(victims),
              "%s: %d tasks, expected %d" % (path, row["tasks"],
                                             len(hogs) + len(victims)))
        indep = cpu_max_by_pid(cap, (b"cgs-hog", b"cgs-victim"))
        mine = [indep.get(p) for p in hogs + victims]
        check(all(m is not None for m in mine),
              "a child's record is missing from the capture")
        longest = max(m[0] for m in mine)
        peak = row.get("delay_max_s", {}).get("cpu")
        check(peak is not None, "no delay_max_s.cpu in %s" % row)
        got = round(peak * 1e9)
        print("cgroup cpu peak %.6f s, longest per-task max %.6f s "
              "(v%d records), victims' maxima %s ms" %
              (peak, longest / 1e9, mine[0][1],
               [round(m[0] / 1e6, 2) for m in mine[2:]]))
        check(got >= longest, "cgroup peak %d ns < the longest per-task "
              "max %d ns" % (got, longest))
        check(got == longest, "cgroup peak %d ns is no task's max "
              "(longest %d ns)" % (got, longest))
        check(longest >= 1000000, "no wait of 1 ms beside two hogs on one "
              "CPU (longest %d ns)" % longest)
        # the lean Prometheus text: the cpu class, the same value
        with open(prom) as f:
            text = f.read()
        want = 'taskstat_delay_max_seconds{cgroup="%s",class="cpu"} ' % path
        line = [ln for ln in text.splitlines() if ln.startswith(want)]
        check(line and abs(float(line[0].split()[-1]) - peak) < 1e-9,
              "Prometheus: %r not %s" % (line, peak))
        # ... and the workload's (the unit's), the same
        wl = [ln for ln in metrics.splitlines()
              if ln.startswith("taskstat_workload_delay_max_seconds{") and
              'unit="%s"' % unit in ln and 'class="cpu"' in ln]
        check(wl and abs(float(wl[0].split()[-1]) - peak) < 1e-9,
              "Prometheus workload: %r not %s" % (wl, peak))
        # --no-delay-peaks: the same waits, no peak anywhere
        d2 = cg.mkdir("off")
        with Collector(B, ["-f", "jsonl", "-i", "0.5", "--textfile", prom,
                           "--no-delay-peaks"]) as col:
            hogs = [task(d2, "cgs-hog", 0.5) for _ in range(2)]
            time.sleep(0.1)
            reap([task(d2, "cgs-victim", 0.03) for _ in range(3)] + hogs)
            time.sleep(0.8)
        roll = final_rollup(strict_json_lines(col.raw()))
        row = by_path(roll).get(cg.path("off"))
        check(row is not None and row["tasks"] == 5,
              "--no-delay-peaks: row %s" % row)
        check(all("delay_max_s" not in r and "delay_max_delta_s" not in r
                  for r in roll["cgroups"]),
              "--no-delay-peaks: a row has peaks")
        with open(prom) as f:
            check("taskstat_delay_max_seconds{" not in f.read(),
                  "--no-delay-peaks: taskstat_delay_max_seconds written")
    print("ok")
finally:
    for n in (cap, prom):
        if os.path.exists(n):
            os.unlink(n)
    os.rmdir(tmp)
