#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The metrics endpoint under load: scrapers on 127.0.0.1 while slow
clients on other loopback addresses (127.0.0.2 and up) hold connections
that send nothing, half a request header, or a byte a second, and
reconnect as soon as they are closed; plus malformed requests. The attack
exceeds both the per-address limit (one address opens more than 64) and
the connection table (the collector runs with a low RLIMIT_NOFILE, so
its table is smaller than the attack).

Checks: every scrape answered 200 within 1 s; idle and half-header
connections closed after the idle timeout, trickling ones by the request
deadline; every malformed request answered or closed within 7 s;
the collector still collects (records grow, dropped 0); after the attack
its fd count is back to the baseline, the heap used by the connections
was given back (taskstat_collector_http_memory_trims_total grew) and RSS
is within 1 MiB of its start. A second, shorter attack (--seconds2) must
not grow it further (within 512 KiB): the connections' memory is neither
leaked nor kept at the first attack's high water.

The collector's stderr is a pipe nobody reads during the attacks:
libmicrohttpd's messages (a line per refused or broken connection) are
rate-limited (at most LOG_BURST + one a second + a summary every 10 s,
checked when the pipe is read after the first attack), and before the
second the test fills the pipe, so every write to it would block: the
scrapes still must be answered within 1 s, and what had no room is
counted (taskstat_collector_http_log_suppressed_total{reason="blocked"}).

usage: test_http_load.py TASKSTAT_COLLECT [--seconds S] [--seconds2 S]
       [--scrapers N] [--slow N] [--nofile N] [--report FILE]
"""
import argparse
import http.client
import json
import os
import re
import selectors
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Collector, check, fail, need_live,  # noqa: E402
                     need_tool, sanitized)

ap = argparse.ArgumentParser()
ap.add_argument("bin")
ap.add_argument("--seconds", type=float, default=10)
ap.add_argument("--seconds2", type=float)
ap.add_argument("--scrapers", type=int, default=20)
ap.add_argument("--slow", type=int, default=200)
ap.add_argument("--nofile", type=int, default=256)
ap.add_argument("--report")
A = ap.parse_args()
if A.seconds2 is None:
    A.seconds2 = A.seconds / 2
RSS_BOUND_KIB = 1024   # after the attack, above the start
RSS_ROUND2_KIB = 512   # after the second attack, above the first
LOG_BURST, LOG_PER_S, LOG_SUMMARY_S = 5, 1, 10  # cmd/collect/http/ratelimit.h
HOST_EXITS = 3  # records per exit of ours past which the host is churning
need_live(A.bin)
PRLIMIT = need_tool("prlimit")
# the test's own sockets: slow clients, scrapers, margin
try:
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = A.slow + A.scrapers + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(want, hard), max(want, hard)))
except (ValueError, OSError) as e:
    fail("cannot raise RLIMIT_NOFILE for the clients: %s" % e)

HALF = b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Ag"
TRICKLE = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"a" * 200
MALFORMED = [
    b"\x00\xff\xfe garbage\r\n\r\n",
    b"GET /metrics HTTP/9.9\r\n\r\n",
    b"GET\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 40000 + b"\r\n\r\n",
    b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\nab",
    b"GET /metr\x00ics HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"\r\n\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\n Host: folded\r\n\r\n",
]


def proc_stat(pid):
    fds = len(os.listdir("/proc/%d/fd" % pid))
    with open("/proc/%d/status" % pid) as f:
        st = f.read()
    rss = int(re.search(r"VmRSS:\s+(\d+)", st).group(1))
    return fds, rss


def rss_parts(pid):
    """Resident KiB by kind: the main arena ([heap]), the threads' malloc
    arenas (anonymous, 64 MiB-aligned), other anonymous maps (blocks
    malloc mmapped, stacks), and the rest (files, the BPF ring)."""
    parts = {"heap": 0, "arenas": 0, "anon_maps": 0, "other": 0}
    kind = "other"
    with open("/proc/%d/smaps" % pid) as f:
        for ln in f:
            w = ln.split()
            if "-" in w[0] and not w[0].endswith(":"):
                lo = int(w[0].split("-")[0], 16)
                kind = ("heap" if w[-1] == "[heap]" else "other"
                        if len(w) > 5 else "arenas"
                        if lo % (64 << 20) == 0 else "anon_maps")
            elif w[0] == "Rss:":
                parts[kind] += int(w[1])
    return parts


def metric(text, name):
    m = re.search(r"^taskstat_%s(?:\{[^}]*\})? (\S+)$" % re.escape(name),
                  text, re.M)
    return float(m.group(1)) if m else None


def scrape(host, port, timeout=5):
    c = http.client.HTTPConnection(host, port, timeout=timeout,
                                   source_address=("127.0.0.1", 0))
    try:
        c.request("GET", "/metrics")
        r = c.getresponse()
        return r.status, r.read().decode("utf-8", "replace")
    finally:
        c.close()


class Slow:
    """A = args.slow connections of three kinds, reconnecting when closed;
    one selector thread. Each closed connection's lifetime is recorded."""

    KINDS = ("silent", "half", "trickle")

    def __init__(self, port, n, stop, flood=True):
        self.port, self.n, self.stop = port, n, stop
        self.sel = selectors.DefaultSelector()
        self.life = {k: [] for k in self.KINDS}
        self.refused = 0
        self.opened = 0
        # a third from 127.0.0.2, over the per-address limit; the rest
        # from 127.0.0.3 and up, 40 per address
        self.addrs = []
        for i in range(n):
            if not flood:
                self.addrs.append("127.0.0.%d" % (100 + i // 20))
            elif i < n // 3:
                self.addrs.append("127.0.0.2")
            else:
                self.addrs.append("127.0.0.%d" % (3 + (i - n // 3) // 40))

    def open(self, i):
        kind = self.KINDS[i % 3]
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.addrs[i], 0))
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", self.port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            return False
        st = {"i": i, "kind": kind, "t0": time.monotonic(), "sent": 0,
              "hello": False}
        self.sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE,
                          st)
        self.opened += 1
        return True

    def closed(self, s, st):
        self.sel.unregister(s)
        s.close()
        t = time.monotonic() - st["t0"]
        self.life[st["kind"]].append(t)
        if t < 0.5:
            self.refused += 1
        st["again"] = time.monotonic() + 0.05

    def run(self):
        pending = []
        for i in range(self.n):
            self.open(i)
        tick = time.monotonic()
        while not self.stop.is_set():
            for key, ev in self.sel.select(0.1):
                s, st = key.fileobj, key.data
                if ev & selectors.EVENT_WRITE and not st["hello"]:
                    st["hello"] = True
                    self.sel.modify(s, selectors.EVENT_READ, st)
                    try:
                        if st["kind"] == "half":
                            s.send(HALF)
                    except OSError:
                        self.closed(s, st)
                        pending.append(st)
                        continue
                if ev & selectors.EVENT_READ:
                    try:
                        d = s.recv(65536)
                    except BlockingIOError:
                        continue
                    except OSError:
                        d = b""
                    if not d:
                        self.closed(s, st)
                        pending.append(st)
            now = time.monotonic()
            if now - tick >= 1.0:  # a byte a second
                tick = now
                for key in list(self.sel.get_map().values()):
                    st = key.data
                    if st["kind"] == "trickle" and st["hello"]:
                        try:
                            key.fileobj.send(TRICKLE[st["sent"] %
                                                     len(TRICKLE):][:1])
                            st["sent"] += 1
                        except OSError:
                            pass
            for st in [p for p in pending if p["again"] <= now]:
                pending.remove(st)
                if not self.open(st["i"]):
                    st["again"] = now + 0.2
                    pending.append(st)
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()


def malformed(port, stop, out):
    """Each request: answered or closed within 7 s (a request line the
    parser still waits on is closed by the 5 s idle timeout)."""
    i = 0
    while not stop.is_set():
        req = MALFORMED[i % len(MALFORMED)]
        i += 1
        s = socket.socket()
        s.bind(("127.0.0.250", 0))
        s.settimeout(7.0)
        t0 = time.monotonic()
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(req)
            d = s.recv(64)
            # closed, refused (4xx/5xx) or, where the parser is lenient
            # (folded header, negative Content-Length), answered
            ok = not d or re.match(rb"HTTP/1\.[01] \d\d\d", d) is not None
            why = d[9:12] if d else b"closed"
        except socket.timeout:
            ok, why = False, "no answer within 7 s"
        except OSError as e:  # reset: closed on us, fine
            ok, why = True, str(e)
        finally:
            s.close()
        out.append((ok, time.monotonic() - t0, req[:30], why))
        time.sleep(0.05)


def scraper(port, stop, lat, bad):
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            st, body = scrape("127.0.0.1", port, timeout=5)
            dt = time.monotonic() - t0
            if st != 200 or "taskstat_collector_records_total" not in body:
                bad.append("status %d" % st)
            lat.append(dt)
        except OSError as e:
            bad.append("%s after %.2f s" % (e, time.monotonic() - t0))
        time.sleep(0.2)


def workload(stop, n):
    while not stop.is_set():
        subprocess.run(["/bin/true"])
        n[0] += 1
        time.sleep(0.02)


col = Collector(A.bin, ["--listen", "127.0.0.1:0", "-i", "1", "-f", "jsonl",
                        "-o", "/dev/null"],
                wrap=[PRLIMIT, "--nofile=%d:%d" % (A.nofile, A.nofile), "--"],
                err_pipe=True)


def log_suppressed(text):
    return {r: metric_l(text, "collector_http_log_suppressed_total",
                        'reason="%s"' % r) for r in ("rate", "blocked")}


def metric_l(text, name, labels):
    m = re.search(r"^taskstat_%s\{%s\} (\S+)$" % (re.escape(name),
                                                  re.escape(labels)),
                  text, re.M)
    return float(m.group(1)) if m else None


def fill_pipe(fd):
    """Write into the pipe until it is full (pages, then the last bytes
    one at a time); returns the bytes written."""
    os.set_blocking(fd, False)
    n = 0
    for chunk in (b"#" * 4095 + b"\n", b"#"):
        while True:
            try:
                n += os.write(fd, chunk)
            except BlockingIOError:
                break
    return n


with col:
    t0 = time.time()
    port = None
    while time.time() - t0 < 10 and not port:
        m = re.search(r"serving metrics on http://127\.0\.0\.1:(\d+)/",
                      col.stderr())
        port = int(m.group(1)) if m else None
        time.sleep(0.05)
    check(port, "no 'serving metrics' line: " + col.stderr())
    pid = col.p.pid
    for _ in range(30):  # warm up: buffers and pools at their size
        st, text = scrape("127.0.0.1", port)
        check(st == 200, "warm-up scrape: %d" % st)
    time.sleep(1.5)
    st, text = scrape("127.0.0.1", port)
    limit = metric(text, "collector_http_connection_limit")
    check(limit is not None, "no taskstat_collector_http_connection_limit")
    rec0 = metric(text, "collector_records_total")
    fd0, rss0 = proc_stat(pid)
    parts = [rss_parts(pid)]
    cg0 = metric(text, "collector_cgroups")
    ids0 = metric(text, "collector_kernel_cgroup_ids")
    check(A.slow > limit, "the attack (%d) must exceed the connection "
          "table (%d): lower --nofile" % (A.slow, limit))

    lat, bad, mal, spawned = [], [], [], [0]
    peak = {"fd": fd0, "rss": rss0, "conn": 0}

    def attack(seconds, under_capacity):
        """Scrapers and a workload throughout; first (under_capacity) 60
        slow clients the table has room for, for 12 s; then the flood and
        the malformed requests for `seconds`. Returns the Slow objects."""
        stop = threading.Event()
        th = [threading.Thread(target=scraper, args=(port, stop, lat, bad))
              for _ in range(A.scrapers)]
        th += [threading.Thread(target=workload, args=(stop, spawned))]
        for t in th:
            t.start()
        few = None
        if under_capacity:  # the idle timeout and the deadline
            stop1 = threading.Event()
            few = Slow(port, 60, stop1, flood=False)
            t1 = threading.Thread(target=few.run)
            t1.start()
            time.sleep(12)
            stop1.set()
            t1.join(30)
        slow = Slow(port, A.slow, stop)
        th += [threading.Thread(target=slow.run),
               threading.Thread(target=malformed, args=(port, stop, mal))]
        for t in th[-2:]:
            t.start()
        t_end = time.monotonic() + seconds
        while time.monotonic() < t_end:
            time.sleep(1)
            f, r = proc_stat(pid)
            peak["fd"], peak["rss"] = max(peak["fd"], f), max(peak["rss"], r)
            try:
                _, tx = scrape("127.0.0.1", port)
                peak["conn"] = max(peak["conn"], metric(
                    tx, "collector_http_connections") or 0)
            except OSError:
                pass
        stop.set()
        for t in th:
            t.join(30)
        return few, slow

    def settle(trims_before):
        """Until the fds are back to the baseline (at most 6.5 s: past the
        idle timeout anything left is a leak) and the heap was given back:
        the trim counter grew and then held for longer than the trims'
        rate limit (2 s: one may have come while connections were still
        closing). Returns fds, RSS, cgroups and trims as then."""
        t_fd = time.monotonic() + 6.5
        while time.monotonic() < t_fd and proc_stat(pid)[0] > fd0:
            time.sleep(0.2)
        trims, t_end = trims_before, time.monotonic() + 10
        while time.monotonic() < t_end:
            st, tx = scrape("127.0.0.1", port)
            now = metric(tx, "collector_http_memory_trims_total") or 0
            if now > trims_before and now == trims:
                break
            trims = now
            time.sleep(2.3)
        # before the next scrape, whose own connection may still be
        # closing when it returns (seen: one fd more, once)
        time.sleep(0.2)
        f, r = proc_stat(pid)
        st, tx = scrape("127.0.0.1", port)
        cg = metric(tx, "collector_cgroups") if st == 200 else None
        ids_seen.append(metric(tx, "collector_kernel_cgroup_ids"))
        parts.append(rss_parts(pid))
        return f, r, cg, trims

    ids_seen = [ids0]  # the id table of host cgroups (kernel source)
    trims0 = metric(text, "collector_http_memory_trims_total")
    check(trims0 is not None, "no taskstat_collector_http_memory_trims_total")
    sup0 = log_suppressed(text)
    check(None not in sup0.values(),
          "no taskstat_collector_http_log_suppressed_total")
    err0 = len(col.stderr().splitlines())  # then nobody reads it
    t_log = time.monotonic()
    few, slow = attack(A.seconds, True)
    fd1, rss1, cg1, trims1 = settle(trims0)
    log1 = col.stderr().splitlines()[err0:]
    log_s = time.monotonic() - t_log
    sup1 = log_suppressed(scrape("127.0.0.1", port)[1])
    filled = fill_pipe(col.err_w)  # now every write to stderr would block
    _, slow2 = attack(A.seconds2, False)
    fd2, rss2, cg2, trims2 = settle(trims1)
    sup2 = log_suppressed(scrape("127.0.0.1", port)[1])
    col.stderr()  # read: the collector's last words must not block
    time.sleep(1.5)  # the next snapshot counts the workload's last exits
    st, text = scrape("127.0.0.1", port)

lat.sort()
n = len(lat)
p = (lambda q: lat[min(n - 1, int(q * n))] if n else float("nan"))
def lives(*ss):
    life = {k: sum((s.life[k] for s in ss), []) for k in Slow.KINDS}
    return {k: {"closed": len(v), "mean": round(sum(v) / len(v), 2)
                if v else 0, "max": round(max(v), 2) if v else 0}
            for k, v in life.items()}


statuses = {}
for m_ in mal:
    statuses[m_[3].decode() if isinstance(m_[3], bytes) else "error"] = \
        statuses.get(m_[3].decode() if isinstance(m_[3], bytes) else
                     "error", 0) + 1
rep = {
    "seconds": [A.seconds, A.seconds2], "scrapers": A.scrapers, "slow_clients": A.slow,
    "connection_limit": limit, "per_address_limit": 64,
    "scrapes": n, "scrape_failures": len(bad),
    "scrape_p50_ms": round(p(0.5) * 1000, 1),
    "scrape_p99_ms": round(p(0.99) * 1000, 1),
    "scrape_max_ms": round(lat[-1] * 1000, 1) if n else None,
    "slow_connections_opened": slow.opened + slow2.opened,
    "slow_closed_within_0.5s": slow.refused + slow2.refused,
    "under_capacity_lifetime_s": lives(few),
    "flood_lifetime_s": lives(slow, slow2),
    "malformed": len(mal), "malformed_bad": sum(1 for m in mal if not m[0]),
    "malformed_answers": statuses,
    "malformed_max_s": round(max((m[1] for m in mal), default=0), 2),
    "peak_connections": peak["conn"],
    "cut_deadline": metric(text, 'collector_http_connections_cut_total'),
    "shed": None,
    "cgroups": [cg0, cg1, cg2],
    "kernel_cgroup_ids": ids_seen,
    # before, peak, after the first attack, after the second
    "fds": [fd0, peak["fd"], fd1, fd2],
    "rss_kib": [rss0, peak["rss"], rss1, rss2],
    # before, after the first attack, after the second
    "rss_parts_kib": parts,
    "memory_trims": [trims0, trims1, trims2],
    "exits_spawned": spawned[0],
    "records": [rec0, metric(text, "collector_records_total")],
    "dropped": metric(text, "collector_dropped_total"),
    "log_lines_first_attack": len(log1),
    "log_first_attack_s": round(log_s, 1),
    "log_suppressed": [sup0, sup1, sup2],
    "pipe_filled_bytes": filled,
    "log_sample": log1[:8],
}
m = re.search(r'cut_total\{reason="shed"\} (\d+)', text)
rep["shed"] = int(m.group(1)) if m else None
m = re.search(r'cut_total\{reason="deadline"\} (\d+)', text)
rep["cut_deadline"] = int(m.group(1)) if m else None
print(json.dumps(rep, indent=1))
if A.report:
    with open(A.report, "w") as f:
        json.dump(rep, f, indent=1)

check(n > A.scrapers * A.seconds, "too few scrapes: %d" % n)
check(not bad, "%d of %d scrapes failed: %s" % (len(bad), n + len(bad),
                                               bad[:5]))
check(lat[-1] < 1.0, "slowest scrape took %.3f s (p99 %.3f s)" %
      (lat[-1], p(0.99)))
check(all(m[0] for m in mal), "malformed requests not refused: %s" %
      [m for m in mal if not m[0]][:5])
tr = few.life["trickle"]
check(tr and 9 < min(tr) and max(tr) < 12, "trickling clients held their "
      "connections %s s (deadline 10 s)" % tr[:5])
for k in ("silent", "half"):
    v = few.life[k]
    check(v and 4 < min(v) and max(v) < 7, "%s clients held their "
          "connections %s s (idle timeout 5 s)" % (k, v[:5]))
for k in Slow.KINDS:
    v = slow.life[k] + slow2.life[k]
    check(v and max(v) < 12, "in the flood, a %s client held its "
          "connection %.1f s" % (k, max(v or [0])))
check(rep["shed"] and rep["shed"] > 0, "nothing was shed: the attack did "
      "not fill the table")
check(fd1 <= fd0 and fd2 <= fd0, "fds grew: %d before, %d after the "
      "attack, %d after the second" % (fd0, fd1, fd2))
check(trims1 > trims0 and trims2 > trims1, "the heap was not given back "
      "after an attack (memory_trims_total %s)" % rep["memory_trims"])
if sanitized():
    print("NOTE: RSS not compared under ASan (shadow memory, quarantine): "
          "%d -> %d -> %d KiB" % (rss0, rss1, rss2))
elif None not in (cg1, cg2) and max(abs(cg1 - cg0), abs(cg2 - cg0)) <= 50 \
        and (None in ids_seen or max(ids_seen) - min(ids_seen) <= 50) \
        and rep["records"][1] - rep["records"][0] <= HOST_EXITS * spawned[0]:
    check(rss1 - rss0 <= RSS_BOUND_KIB, "RSS grew by %d KiB (%d -> %d)" %
          (rss1 - rss0, rss0, rss1))
    check(rss2 - rss1 <= RSS_ROUND2_KIB, "RSS grew by %d KiB more in the "
          "second attack (%d -> %d)" % (rss2 - rss1, rss1, rss2))
else:
    # others' cgroups came and went meanwhile, or their exits flooded the
    # receive path: their rollup memory, the kernel source's id table
    # (every cgroup created on the host) and the listener shards' buffers
    # are not the endpoint's; the fd count still must come back
    print("NOTE: RSS not compared (%s -> %s -> %s cgroups tracked, %s "
          "cgroup ids known, %d records for %d exits of ours: host churn): "
          "%d -> %d -> %d KiB" % (cg0, cg1, cg2, ids_seen,
                                  rep["records"][1] - rep["records"][0],
                                  spawned[0], rss0, rss1, rss2))
check(rep["dropped"] == 0, "dropped %s" % rep["dropped"])
# a summary every LOG_SUMMARY_S, and a few of the collector's own lines
log_bound = LOG_BURST + LOG_PER_S * log_s + log_s / LOG_SUMMARY_S + 8
mhd = [ln for ln in log1 if ln.startswith("taskstat-collect: --listen: ")]
check(len(log1) <= log_bound, "%d lines on stderr in %.0f s of attack "
      "(at most %d): %s" % (len(log1), log_s, log_bound, log1[:8]))
check(sup1["rate"] > sup0["rate"], "no libmicrohttpd message was "
      "suppressed in the first attack (%s): did it log at all? %s" %
      (rep["log_suppressed"], mhd[:5]))
check(any("messages not printed" in ln for ln in mhd), "no summary of "
      "the suppressed messages: %s" % mhd[:8])
check(sup2["blocked"] > sup1["blocked"], "with stderr full, no message "
      "was counted as blocked (%s)" % rep["log_suppressed"])
check(rep["records"][1] - rep["records"][0] >= spawned[0],
      "records grew by %d, %d processes exited" %
      (rep["records"][1] - rep["records"][0], spawned[0]))
print("PASS: %d scrapes (max %.0f ms) under %d slow clients and %d "
      "malformed requests" % (n, lat[-1] * 1000, A.slow, len(mal)))
