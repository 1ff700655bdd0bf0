#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fleet-scale figures of taskstat-collect (issue 22 item 6; a benchmark,
not a test; root, cgroup2 at /sys/fs/cgroup/unified).

For each size N (1,000, 10,000, 100,000 by default) a fresh collector is
started as a user runs it, `--listen 127.0.0.1:PORT --interval 1 -o FILE`
with its defaults otherwise, then N cgroup2 cgroups are made below
/sys/fs/cgroup/unified/benchh-scale-N, each with E process exits (a forked
child moves itself in and exits; E-1 more children of it exit there too).
Then, R rounds interleaved:

* a quiet window of Q seconds with no scrape: collector CPU (utime+stime
  from /proc/PID/stat) over the snapshots written in it (their "seq" in
  the JSON lines file) = CPU per snapshot;
* S scrapes (at least --scrapes, for at least --scrape-time s) of /metrics
  back to back as text, with `Accept-Encoding: gzip`
  and asking for protobuf (`Accept: application/vnd.google.protobuf;
  proto=io.prometheus.client.MetricFamily; encoding=delimited`): the CPU of
  that window less the snapshots in it (at the quiet median), over S = CPU
  per scrape. Protobuf counts only when the answer's Content-Type says
  protobuf; otherwise "n/a".

A quiet window of 62 s or more (`--quiet 62`) holds one periodic full
line (`--full-every 60`, the default) besides the change-only ones: the
CPU per snapshot with the full lines' share in it. After the rounds the
cgroups are removed with the collector running, /metrics is scraped once
(the final values served) and VmRSS is read --removed-wait s later.

Series and bytes come from one scrape of each kind: series of the bench's
cgroups (lines with cgroup="/benchh-scale-N/..."), cgroups of them
exported, series per exported cgroup, the whole scrape's bytes, cgroups
cut by --prom-max-series. RSS per cgroup = (VmRSS after the cgroups and
the quiet windows - VmRSS before the cgroups) / N, and VmRSS after the
scrapes. Every cgroup's exits are checked in the state rebuilt from the
stream (its last full line and the change-only lines after it; exits
counted / expected). The JSON lines file is removed and reopened (SIGHUP,
logrotate's way) before each window, so at 100,000 cgroups (~160 MB a
snapshot) the disk holds one window's worth.

The machine is shared: other work's exits and cgroups land in the same
collector (the figures count the bench's cgroups only; CPU and RSS are the
collector's whole). Prints a markdown table; --json FILE keeps the raw
figures.

  python3 bench/run-scale.py [--build build] [--sizes 1000,10000,100000]
      [--port 41700] [--exits 1] [--rounds 3] [--quiet 10] [--scrapes 3]
      [--scrape-time 4]
      [--collector-arg=--prom-max-series=0 ...] [--json FILE]
"""
import argparse
import ctypes
import gzip
import http.client
import json
import mmap
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "e2e"))
import tsc_e2e  # noqa: E402  (StreamRebuild)

U = "/sys/fs/cgroup/unified"
PROTO_ACCEPT = ("application/vnd.google.protobuf; "
                "proto=io.prometheus.client.MetricFamily; encoding=delimited")
LINE0 = b'{"type":"rollup"'
TICK = os.sysconf("SC_CLK_TCK")


def log(*a):
    print("[run-scale %s]" % time.strftime("%H:%M:%S"), *a,
          file=sys.stderr, flush=True)


def cpu_s(pid):
    """utime + stime of pid in seconds (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fl = st[st.rindex(")") + 2:].split()
    return (int(fl[11]) + int(fl[12])) / TICK


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1]) / 1024
    return float("nan")


class Collector:
    def __init__(self, binary, port, out, extra, logf):
        self.port, self.out = port, out
        self.args = [binary, "--listen", "127.0.0.1:%d" % port,
                     "--interval", "1", "-o", out] + extra
        self.err = open(logf, "w")
        self.p = subprocess.Popen(self.args, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=self.err)
        t = time.time() + 30
        while time.time() < t:
            if self.p.poll() is not None:
                raise SystemExit("collector exited %d: %s" %
                                 (self.p.returncode, open(logf).read()))
            try:
                self.get({})
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise SystemExit("collector does not answer on port %d" % port)

    def get(self, headers, timeout=600):
        """One scrape: (status, Content-Type, raw body bytes)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port,
                                       timeout=timeout)
        try:
            c.request("GET", "/metrics", headers=headers)
            r = c.getresponse()
            body = r.read()
            return r.status, r.getheader("Content-Type", ""), \
                r.getheader("Content-Encoding", ""), body
        finally:
            c.close()

    def cpu(self):
        return cpu_s(self.p.pid)

    def rss(self):
        return rss_mib(self.p.pid)

    def rotate(self):
        """Remove the JSON lines file and make the collector reopen it."""
        try:
            os.unlink(self.out)
        except FileNotFoundError:
            pass
        self.p.send_signal(signal.SIGHUP)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(120)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()


def seq_before(path, pos):
    """seq of the last snapshot line that starts before file offset pos
    (None if none)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        pos = min(pos, size)
        if pos <= 0:
            return None
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
            i = m.rfind(LINE0, 0, pos)
            if i < 0:
                return None
            head = m[i:i + 200]
    finally:
        os.close(fd)
    mo = re.search(rb'"seq":(\d+)', head)
    return int(mo.group(1)) if mo else None


def fsize(path):
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def window(col, fn):
    """Run fn() and return (collector CPU seconds, snapshots begun, wall
    seconds) over it."""
    p0 = fsize(col.out)
    s0 = seq_before(col.out, p0 + 1)
    c0, t0 = col.cpu(), time.time()
    fn()
    c1, t1 = col.cpu(), time.time()
    p1 = fsize(col.out)
    s1 = seq_before(col.out, p1 + 1)
    if s0 is None:  # the file was new: its first line counts
        s0 = (seq_first(col.out) or 1) - 1 if s1 is not None else 0
    return c1 - c0, (s1 - s0) if s1 is not None else 0, t1 - t0


def seq_first(path):
    with open(path, "rb") as f:
        mo = re.search(rb'"seq":(\d+)', f.read(200))
    return int(mo.group(1)) if mo else None


class CloneArgs(ctypes.Structure):
    _fields_ = [(f, ctypes.c_uint64) for f in (
        "flags", "pidfd", "child_tid", "parent_tid", "exit_signal", "stack",
        "stack_size", "tls", "set_tid", "set_tid_size", "cgroup")]


LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_INTO_CGROUP = 0x200000000
SYS_CLONE3 = 435  # x86_64 and the generic table alike


def spawn_in(d):
    """A child born in cgroup directory d (clone3 CLONE_INTO_CGROUP: no
    migration, which costs an RCU grace period per write to cgroup.procs);
    returns its pid in the parent and 0 in the child. Falls back to fork
    and a write to cgroup.procs."""
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        ca = CloneArgs(flags=CLONE_INTO_CGROUP, exit_signal=signal.SIGCHLD,
                       cgroup=fd)
        pid = LIBC.syscall(SYS_CLONE3, ctypes.byref(ca), ctypes.sizeof(ca))
        if pid >= 0:
            return pid
    finally:
        if pid != 0:
            os.close(fd)
    pid = os.fork()
    if pid == 0:
        fd = os.open(d + "/cgroup.procs", os.O_WRONLY)
        os.write(fd, b"0")
    return pid


def make_cgroups(root, n, exits, col):
    """n cgroups below root, each with `exits` process exits in it."""
    os.makedirs(root, exist_ok=True)
    t0 = time.time()
    for i in range(n):
        d = "%s/c%d" % (root, i)
        os.mkdir(d)
        pid = spawn_in(d)
        if pid == 0:
            try:
                for _ in range(exits - 1):
                    k = os.fork()
                    if k == 0:
                        os._exit(0)
                    os.waitpid(k, 0)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        if i % 2000 == 1999:
            if fsize(col.out) > 1 << 30:
                col.rotate()
            log("  %d cgroups, %.0f s" % (i + 1, time.time() - t0))
    return time.time() - t0


def remove_cgroups(root):
    if not os.path.isdir(root):
        return
    for name in os.listdir(root):
        d = os.path.join(root, name)
        if os.path.isdir(d):
            try:
                os.rmdir(d)
            except OSError as ex:
                log("rmdir %s: %s" % (d, ex))
    try:
        os.rmdir(root)
    except OSError as ex:
        log("rmdir %s: %s" % (root, ex))


def last_line(path):
    """The last complete snapshot line of the file, parsed."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        with mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ) as m:
            end = m.rfind(b"\n", 0, size)
            if end < 0:
                return None
            i = m.rfind(LINE0, 0, end)
            return json.loads(m[i:end])


def rebuilt_state(path):
    """The full state at the file's last complete line: its last full
    line and the change-only lines after it folded in (docs/streams.md,
    tsc_e2e.StreamRebuild), or None."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if not size:
            return None
        with mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ) as m:
            end = m.rfind(b"\n", 0, size)
            full = m.rfind(b'"stream":"full"', 0, end)
            if end < 0 or full < 0:
                return None
            i = m.rfind(LINE0, 0, full)
            rb = tsc_e2e.StreamRebuild()
            state = None
            for ln in m[i:end].split(b"\n"):
                if ln.startswith(LINE0):
                    state = rb.add(json.loads(ln))
            return state


def check_exits(col, rel, n, exits):
    """(cgroups of rel with the right process exits, their exits)."""
    roll = rebuilt_state(col.out)
    if roll is None:
        return 0, 0
    ok = total = 0
    for g in roll.get("cgroups", []):
        if not g.get("cgroup", "").startswith(rel + "/"):
            continue
        sel = g.get("self", g)
        p = sel.get("processes", 0)
        total += p
        ok += p == exits
    return ok, total


# --- text and protobuf exposition --------------------------------------

def text_series(body, rel):
    """(all series, bench series, bench cgroups exported, not exported)."""
    allser = ours = 0
    cgs = set()
    cut = None
    pat = re.compile(r'cgroup="%s/[^"]*"' % re.escape(rel))
    for ln in body.decode("utf-8", "replace").splitlines():
        if not ln or ln[0] == "#":
            continue
        allser += 1
        if ln.startswith("taskstat_collector_cgroups_not_exported "):
            cut = int(float(ln.split()[1]))
        mo = pat.search(ln)
        if mo and ln.startswith("taskstat_"):
            ours += 1
            cgs.add(mo.group(0))
    return allser, ours, len(cgs), cut


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of one protobuf message."""
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 2:
            ln, i = varint(b, i)
            v, i = b[i:i + ln], i + ln
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % w)
        yield f, w, v


def proto_series(body, rel):
    """Delimited MetricFamily messages: (all series, bench series, bench
    cgroups, native histograms) as Prometheus with native histograms
    counts them: a histogram with a schema is one series, a classic one
    its buckets + 3 (+Inf, _sum, _count), a summary its quantiles + 2."""
    allser = ours = native = 0
    cgs = set()
    pre = (rel + "/").encode()
    i = 0
    while i < len(body):
        ln, i = varint(body, i)
        mf = body[i:i + ln]
        i += ln
        for f, _, m in fields(mf):
            if f != 4:
                continue
            cg, n = None, 1
            for g, _, v in fields(m):
                if g == 1:
                    lab = dict((h, x) for h, _, x in fields(v))
                    if lab.get(1) == b"cgroup":
                        cg = lab.get(2, b"")
                elif g == 7:  # histogram
                    hf = [h for h, _, _ in fields(v)]
                    if 5 in hf or 12 in hf or 13 in hf:
                        native += 1
                    else:
                        n = hf.count(3) + 3
                elif g == 4:  # summary: quantiles, _sum, _count
                    n = [h for h, _, _ in fields(v)].count(3) + 2
            allser += n
            if cg is not None and cg.startswith(pre):
                ours += n
                cgs.add(cg)
    return allser, ours, len(cgs), native


# --- one size -----------------------------------------------------------

MODES = {
    "text": {},
    "gzip": {"Accept-Encoding": "gzip"},
    "proto": {"Accept": PROTO_ACCEPT},
}


def one_size(a, n, tmp):
    rel = "/%s-%d" % (a.prefix, n)
    root = U + rel
    out = os.path.join(tmp, "out-%d.jsonl" % n)
    remove_cgroups(root)
    col = Collector(a.binary, a.port, out, a.collector_arg,
                    os.path.join(tmp, "collector-%d.log" % n))
    r = {"cgroups": n, "exits_each": a.exits}
    try:
        time.sleep(3)
        r["rss_start_mib"] = col.rss()
        log("N=%d: making the cgroups" % n)
        r["make_s"] = make_cgroups(root, n, a.exits, col)
        log("N=%d: made in %.0f s" % (n, r["make_s"]))
        col.rotate()
        time.sleep(3)
        quiet, scr = [], {m: [] for m in MODES}
        meta = {}
        for m, h in MODES.items():  # the shapes, one scrape each
            st, ct, ce, body = col.get(h)
            meta[m] = (st, ct, ce, body)
        proto_ok = "protobuf" in meta["proto"][1]
        for rd in range(a.rounds):
            col.rotate()
            time.sleep(2)
            cpu, snaps, wall = window(col, lambda: time.sleep(a.quiet))
            quiet.append((cpu, snaps, wall))
            log("N=%d round %d quiet: %.2f s CPU, %d snapshots in %.1f s" %
                (n, rd, cpu, snaps, wall))
            if rd == 0:
                r["rss_live_mib"] = col.rss()
            for m, h in MODES.items():
                if m == "proto" and not proto_ok:
                    continue
                col.rotate()
                time.sleep(1)

                done = [0]

                def scrapes():
                    t = time.time() + a.scrape_time
                    while done[0] < a.scrapes or time.time() < t:
                        col.get(h)
                        done[0] += 1
                cpu, snaps, wall = window(col, scrapes)
                scr[m].append((cpu, snaps, wall, done[0]))
        r["rss_scraped_mib"] = col.rss()
        per_snap = [c / s for c, s, _ in quiet if s > 0]
        r["cpu_per_snapshot_ms"] = 1e3 * statistics.median(per_snap) \
            if per_snap else None
        r["snapshots_per_s"] = statistics.median(s / w for _, s, w in quiet)
        ps = r["cpu_per_snapshot_ms"] or 0
        for m in MODES:
            v = [(c - s * ps / 1e3) / k for c, s, _, k in scr[m]]
            r["cpu_per_scrape_ms_" + m] = 1e3 * statistics.median(v) \
                if v else None
            r["wall_per_scrape_ms_" + m] = \
                1e3 * statistics.median(w / k for _, _, w, k in scr[m]) \
                if scr[m] else None
            r["raw_" + m] = scr[m]
        r["raw_quiet"] = quiet
        st, ct, _, body = meta["text"]
        r["text_bytes"] = len(body)
        (r["series_all"], r["series"], r["exported"],
         r["cut"]) = text_series(body, rel)
        st, ct, ce, body = meta["gzip"]
        r["gzip_bytes"] = len(body) if ce == "gzip" else None
        st, ct, ce, body = meta["proto"]
        r["proto_content_type"] = ct
        if proto_ok:
            if ce == "gzip":
                body = gzip.decompress(body)
            r["proto_bytes"] = len(body)
            try:
                (r["proto_series_all"], r["proto_series"],
                 r["proto_exported"], r["proto_native"]) = \
                    proto_series(body, rel)
            except (ValueError, IndexError) as ex:
                log("protobuf not parsed: %s" % ex)
        r["exits_ok"], r["exits_total"] = check_exits(col, rel, n, a.exits)
        # removed and retired: the rmdir seen at the next snapshots, a
        # scrape serves the final values (--retire-after does not wait
        # for what was served), retirement and the heap trim follow
        log("N=%d: removing the cgroups, collector running" % n)
        remove_cgroups(root)
        time.sleep(5)
        col.get({})
        time.sleep(a.removed_wait)
        r["rss_removed_mib"] = col.rss()
        log("N=%d: VmRSS %.1f MiB %g s after the removal" %
            (n, r["rss_removed_mib"], 5 + a.removed_wait))
    finally:
        col.stop()
        log("N=%d: removing the cgroups" % n)
        remove_cgroups(root)
        try:
            os.unlink(out)
        except FileNotFoundError:
            pass
    return r


def fmt(v, f="{:,}"):
    if v is None:
        return "n/a"
    if isinstance(v, float) and v != v:
        return "n/a"
    return f.format(v)


def table(rs, a):
    h = ("| cgroups | series (bench's) | exported cgroups | series per "
         "cgroup | cut by --prom-max-series | text bytes | gzip bytes | "
         "protobuf bytes (series) | CPU per snapshot | snapshots/s | "
         "CPU per scrape: text / gzip / protobuf | VmRSS start -> live -> "
         "scraped -> removed | RSS per cgroup | exits seen |")
    print(h)
    print("|" + "---:|" * h.count(" |"))
    for r in rs:
        ms = lambda k: fmt(r.get(k), "{:.1f}")  # noqa: E731
        pb = "n/a"
        if r.get("proto_bytes") is not None:
            pb = "%s (%s)" % (fmt(r["proto_bytes"]),
                              fmt(r.get("proto_series")))
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s ms | %s | "
              "%s / %s / %s ms | %s -> %s -> %s -> %s MiB | %s KiB | %s/%s |" % (
                  fmt(r["cgroups"]), fmt(r["series"]), fmt(r["exported"]),
                  fmt(r["series"] / r["exported"] if r["exported"] else None,
                      "{:.1f}"),
                  fmt(r["cut"]), fmt(r["text_bytes"]), fmt(r["gzip_bytes"]),
                  pb, ms("cpu_per_snapshot_ms"),
                  fmt(r["snapshots_per_s"], "{:.2f}"),
                  ms("cpu_per_scrape_ms_text"), ms("cpu_per_scrape_ms_gzip"),
                  ms("cpu_per_scrape_ms_proto"),
                  fmt(r["rss_start_mib"], "{:.1f}"),
                  fmt(r["rss_live_mib"], "{:.1f}"),
                  fmt(r["rss_scraped_mib"], "{:.1f}"),
                  fmt(r.get("rss_removed_mib"), "{:.1f}"),
                  fmt((r["rss_live_mib"] - r["rss_start_mib"]) * 1024 /
                      r["cgroups"], "{:.2f}"),
                  fmt(r["exits_ok"]), fmt(r["cgroups"])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--binary", help="taskstat-collect (default: "
                    "BUILD/cmd/taskstat-collect)")
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--port", type=int, default=41700)
    ap.add_argument("--prefix", default="benchh-scale")
    ap.add_argument("--exits", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--removed-wait", type=float, default=15,
                    help="seconds after the scrape that follows the "
                    "removal before VmRSS is read")
    ap.add_argument("--quiet", type=float, default=10,
                    help="seconds of each quiet window")
    ap.add_argument("--scrapes", type=int, default=3,
                    help="scrapes per mode and round, at least")
    ap.add_argument("--scrape-time", type=float, default=4,
                    help="seconds of scraping per mode and round, at least")
    ap.add_argument("--collector-arg", action="append", default=[])
    ap.add_argument("--json", help="write the raw figures here")
    ap.add_argument("--tmp", default="/var/tmp",
                    help="where the JSON lines file goes (disk)")
    a = ap.parse_args()
    a.binary = a.binary or os.path.join(a.build, "cmd", "taskstat-collect")
    if not os.access(U + "/cgroup.procs", os.W_OK):
        print("needs root and cgroup2 at %s" % U, file=sys.stderr)
        return 77
    tmp = tempfile.mkdtemp(prefix="benchh-scale-", dir=a.tmp)
    rs = []
    try:
        for n in [int(x) for x in a.sizes.split(",") if x]:
            rs.append(one_size(a, n, tmp))
            if a.json:
                with open(a.json, "w") as f:
                    json.dump(rs, f, indent=1)
    finally:
        for x in os.listdir(tmp):
            os.unlink(os.path.join(tmp, x))
        os.rmdir(tmp)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print("collector: %s --listen 127.0.0.1:%d --interval 1 -o FILE %s" %
          (a.binary, a.port, " ".join(a.collector_arg)))
    print("%d exit(s) per cgroup; %d rounds of a %g s quiet window and "
          ">= %d scrapes (>= %g s) per mode; load average at the end %s; "
          "%d CPUs" % (a.exits, a.rounds, a.quiet, a.scrapes, a.scrape_time,
                       " ".join(load),
           os.cpu_count()))
    print()
    table(rs, a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
