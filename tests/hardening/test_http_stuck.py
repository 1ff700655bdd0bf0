#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A scrape must not wait behind connections that send nothing while
libmicrohttpd has stopped accepting. It stops at its connection limit,
and also below it when accept() fails for want of fds (then until a
connection closes): the collector's RLIMIT_NOFILE is lowered (prlimit)
to leave room for ROOM connections, far below the table's shed
threshold, and SILENT connections that never send a byte are opened, so
the rest of them and the scrape wait in the listen queue. Without the
watchdog's unsticking (cmd/collect/http/http.c) the scrape waited for
the silent connections' 5 s idle timeout (4.0 s after a 1 s wait).

Checks: each scrape answered within 1 s; the collector holds all the
fds it may (the path was taken); the silent connections were shed
(taskstat_collector_http_connections_cut_total{reason="shed"} grew).

usage: test_http_stuck.py TASKSTAT_COLLECT
"""
import http.client
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Collector, check, need_live, need_tool,  # noqa: E402
                     port_from_stderr)

ROOM, SILENT, WAIT_S, BOUND_S = 30, 40, 1.0, 1.0
if len(sys.argv) != 2:
    sys.exit(__doc__)
BIN = sys.argv[1]
need_live(BIN)
PRLIMIT = need_tool("prlimit")


def scrape(port):
    """(status, body, seconds) of GET /metrics from 127.0.0.1."""
    t0 = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        c.request("GET", "/metrics")
        r = c.getresponse()
        body = r.read().decode("utf-8", "replace")
        return r.status, body, time.monotonic() - t0
    finally:
        c.close()


def shed(text):
    m = re.search(r'^taskstat_collector_http_connections_cut_total'
                  r'\{reason="shed"\} (\d+)$', text, re.M)
    return int(m.group(1)) if m else None


def nofile(pid, soft=None):
    """Its soft RLIMIT_NOFILE set (the hard one kept: it dropped the
    capability to raise that again); returns the soft limit before."""
    with open("/proc/%d/limits" % pid) as f:
        m = re.search(r"^Max open files\s+(\d+)\s+(\d+)", f.read(), re.M)
    if soft is not None:
        subprocess.run([PRLIMIT, "--pid", str(pid), "--nofile=%d:%s" %
                        (soft, m.group(2))], check=True)
    return int(m.group(1))


col = Collector(BIN, ["--listen", "127.0.0.1:0", "-i", "1", "-f", "jsonl",
                      "-o", "/dev/null"])
with col:
    port = int(port_from_stderr(col).rsplit(":", 1)[1])
    pid = col.p.pid
    for _ in range(5):  # its fds at their number (snapshots, sockets)
        scrape(port)
    time.sleep(1.5)
    st, text, _ = scrape(port)
    shed0 = shed(text)
    check(st == 200 and shed0 is not None,
          "no taskstat_collector_http_connections_cut_total: %d" % st)
    time.sleep(0.2)  # the scrape's connection closed
    fds = len(os.listdir("/proc/%d/fd" % pid))
    soft = fds + ROOM
    soft0 = nofile(pid, soft)
    socks, lat = [], []
    try:
        for _ in range(SILENT):
            s = socket.socket()
            s.bind(("127.0.0.2", 0))  # under the 64 per address
            s.connect(("127.0.0.1", port))
            socks.append(s)
        time.sleep(WAIT_S)  # older than the 250 ms a victim must be
        held = len(os.listdir("/proc/%d/fd" % pid))
        for _ in range(3):
            st, text, dt = scrape(port)
            check(st == 200, "scrape answered %d" % st)
            lat.append(dt)
    finally:
        for s in socks:
            s.close()
        nofile(pid, soft0)
    shed1 = shed(text)
    print("fds %d, limit set to %d, held %d; scrapes %s s; shed %s -> %s" %
          (fds, soft, held, ["%.3f" % x for x in lat], shed0, shed1))
    check(held >= soft - 2, "the collector held %d fds of %d: accept() "
          "did not run out of fds, the case is not tested" % (held, soft))
    check(max(lat) < BOUND_S, "a scrape waited %.3f s behind %d silent "
          "connections (libmicrohttpd not accepting)" % (max(lat), SILENT))
    check(shed1 > shed0, "no silent connection was shed (%s -> %s)" %
          (shed0, shed1))
print("PASS: scrapes within %.3f s while accept() was out of fds" % max(lat))
