#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Scrapers that ask and then read slowly (or never) hold the collector's
memory only within a budget (cmd/collect/http/http.c, "answers being sent"), whatever
they ask for: the text, protobuf, gzip, /snapshot.

The collector exports a few MB (--prom-level full, CGROUPS cgroups with an
exit each). READERS connections (a small receive buffer each) send a
request and read nothing. Meanwhile a scraper asks every 0.25 s, as
Prometheus would. Checks:
  - the collector's RSS stays within the budget (64 MiB, or 8 answers of
    the size asked) plus a margin over its start, where a copy per reader
    would be READERS x the text;
  - the scraper's requests are answered in full (after the first second,
    when the oldest slow readers become old enough to be cut);
  - cuts are counted (connections_cut_total{reason="memory"}), and once
    the readers are gone the bytes in flight are back to 0;
  - readers were cut for memory (each reads 512 bytes every 0.3 s; the
    answers queued in the kernel for it stay unsent, so libmicrohttpd's
    5 s idle timeout closes them later), none waited for the deadline.
    A cut needs an answer older than HTTP_SLOW_MS (1 s) when room is
    asked for: the first READERS may all be answered within a second (or,
    on a slow machine, fill the budget only after the last one asked), so
    a second wave of WAVE2 readers asks for the text 1.2 s after the last
    of the first, when every answer of the first is old enough.

usage: test_slow_readers.py TASKSTAT_COLLECT [--cgroups N] [--readers N]
"""
import argparse
import os
import re
import socket
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, check, fail, need_live,  # noqa: E402
                     port_from_stderr, sanitized, vm_rss_kb, workload)

ap = argparse.ArgumentParser()
ap.add_argument("bin")
ap.add_argument("--cgroups", type=int, default=250)
ap.add_argument("--readers", type=int, default=48)
ap.add_argument("--wave2", type=int, default=8)
A = ap.parse_args()

PB = ("application/vnd.google.protobuf; proto=io.prometheus.client."
      "MetricFamily; encoding=delimited")
# what the readers ask for, in turn
ASKS = [("/metrics", "text/plain", None), ("/metrics", PB, None),
        ("/metrics", "text/plain", None), ("/snapshot", "*/*", None),
        ("/metrics", "text/plain", None), ("/metrics", "*/*", "gzip")]


def metric(text, name):
    m = re.search(r"^%s (\d+)$" % re.escape(name), text, re.M)
    check(m is not None, "no %s in the text" % name)
    return int(m.group(1))


def get(hp, path="/metrics", accept="text/plain", timeout=10):
    req = urllib.request.Request("http://%s%s" % (hp, path),
                                 headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def slow_reader(hp, i):
    """A connection that asks and reads nothing (4 KiB receive buffer)."""
    path, accept, enc = ASKS[i % len(ASKS)]
    host, port = hp.rsplit(":", 1)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind(("127.0.0.%d" % (20 + i // 40), 0))  # 40 per address
    s.connect((host, int(port)))
    req = "GET %s HTTP/1.1\r\nHost: x\r\nAccept: %s\r\n" % (path, accept)
    if enc:
        req += "Accept-Encoding: %s\r\n" % enc
    s.sendall((req + "\r\n").encode())
    return s


def trickle(s):
    """Read a little (a reader that is slow, not stalled: the idle
    timeout does not close it); False once the collector closed it."""
    s.setblocking(False)
    try:
        return s.recv(512) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def main():
    need_live(A.bin)
    with Cgroups("slowrd") as cg:
        args = ["--listen", "127.0.0.1:0", "--interval", "1",
                "--prom-level", "full", "--prom-max-series", "0",
                "--format", "jsonl", "--output", "/dev/null",
                # the test's cgroups only: other work on the host does not
                # change the sizes
                "--cgroup", cg.path() + "/*"]
        with Collector(A.bin, args) as col:
            hp = port_from_stderr(col)
            for i in range(A.cgroups):
                workload(cg.mkdir("c%d" % i), linger=0)
            size = 0
            for _ in range(100):  # until the collector has seen them all
                _, body = get(hp)
                size = len(body)
                if body.count(b'cgroup="%s/c' % cg.path().encode()) >= \
                        A.cgroups:
                    break
                time.sleep(0.2)
            check(size > 2 << 20, "the text is only %d bytes" % size)
            _, snap = get(hp, "/snapshot")
            biggest = max(size, len(snap))
            budget = max(64 << 20, 8 * biggest)
            rss0 = vm_rss_kb(col.p.pid) * 1024
            print("text %d bytes, /snapshot %d, budget %d, rss %d" %
                  (size, len(snap), budget, rss0))
            check(A.readers * biggest > 2 * budget,
                  "too few readers (%d) to pass the budget" % A.readers)

            stop = threading.Event()
            res = {"ok": 0, "bad": [], "peak": rss0}

            def scraper():
                t0 = time.monotonic()
                while not stop.is_set():
                    t = time.monotonic()
                    try:
                        st, b = get(hp)
                        good = st == 200 and len(b) > size // 2
                    except Exception as e:  # noqa: BLE001 (any failure)
                        good, st, b = False, str(e), b""
                    if good:
                        res["ok"] += 1
                        m = re.findall(rb'answer_bytes\{state="(\w+)"\} '
                                       rb'(\d+)', b)
                        res.setdefault("held", []).append(
                            (round(t - t0, 1), [int(v) >> 20 for _, v in m],
                             vm_rss_kb(col.p.pid) >> 10))
                    elif t - t0 > 1.5:
                        res["bad"].append((round(t - t0, 2), st, len(b)))
                    stop.wait(0.25)

            def watch():
                while not stop.is_set():
                    res["peak"] = max(res["peak"],
                                      vm_rss_kb(col.p.pid) * 1024)
                    stop.wait(0.05)

            ths = [threading.Thread(target=scraper),
                   threading.Thread(target=watch)]
            for t in ths:
                t.start()
            readers = []
            t_open = time.monotonic()
            for i in range(A.readers):
                readers.append(slow_reader(hp, i))
                time.sleep(0.02)
            live = set(range(A.readers))
            t_wave2 = time.monotonic() + 1.2  # HTTP_SLOW_MS and a margin
            while time.monotonic() < t_wave2:
                live = {i for i in live if trickle(readers[i])}
                time.sleep(0.1)
            for i in range(A.wave2):
                # the text (ASKS[0]), each from a new address block
                readers.append(slow_reader(hp, 6 * (A.readers // 6 + i)))
                live.add(len(readers) - 1)
                time.sleep(0.02)
            while time.monotonic() - t_open < 7:  # before the deadline
                live = {i for i in live if trickle(readers[i])}
                time.sleep(0.3)
            n_gone = len(readers) - len(live)
            stop.set()
            for t in ths:
                t.join()
            secs = time.monotonic() - t_open
            for s in readers:
                s.close()
            time.sleep(1)
            try:
                _, body = get(hp)
            except Exception as e:  # noqa: BLE001
                fail("no answer once the readers were gone: %r" % e)
            text = body.decode()
            cut = metric(text, 'taskstat_collector_http_connections_cut_'
                         'total{reason="memory"}')
            deadline = metric(text, 'taskstat_collector_http_connections_'
                              'cut_total{reason="deadline"}')
            print("seconds, [MiB sending, MiB cut], RSS MiB:",
                  res.get("held"))
            left = metric(text, 'taskstat_collector_http_answer_bytes'
                          '{state="sending"}') + \
                metric(text, 'taskstat_collector_http_answer_bytes'
                       '{state="cut"}')
            grew = res["peak"] - rss0
            print("peak rss +%d bytes (a copy per reader: %d), %d of %d "
                  "readers seen closed in %.1f s (cut for memory %d, deadline %d), %d "
                  "scrapes ok, bytes in flight after: %d" %
                  (grew, len(readers) * biggest, n_gone, len(readers),
                   secs, cut, deadline, res["ok"], left))
            print("(a reader's close is seen only after the data queued "
                  "for it: the 'closed' figure is a lower bound)")
            held = res.get("held", [])
            sending = max([h[1][0] for h in held] or [0]) << 20
            cutb = max([h[1][1] for h in held] or [0]) << 20
            check(sending <= budget and cutb <= budget,
                  "answers counted in flight %d (cut: %d), over the budget"
                  " %d" % (sending, cutb, budget))
            # the budget, the answer being made and its gzip copy, cut
            # answers not yet freed, the heap's slack
            slack = 4 * biggest + (32 << 20)
            if sanitized():  # ASan's quarantine keeps what was freed
                print("RSS not checked under the sanitizers")
            else:
                check(grew <= budget + slack,
                      "RSS grew by %d bytes, over the budget %d + %d" %
                      (grew, budget, slack))
            check(not res["bad"], "scrapes not answered in full: %r" %
                  res["bad"][:10])
            check(res["ok"] >= 8, "only %d scrapes answered" % res["ok"])
            check(cut > 0, "no reader was cut for memory")
            check(deadline == 0, "%d connections waited for the deadline"
                  % deadline)
            check(left == 0, "%d bytes still counted in flight with no "
                  "reader left" % left)
    print("ok")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        fail("interrupted")
