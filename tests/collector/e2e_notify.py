#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Type=notify: the collector tells the service manager it is ready only
after its self-test (exit events arrive) and its threads run, pings the
watchdog at half of WATCHDOG_USEC from its main loop, says STOPPING=1 on
SIGTERM; a watchdog meant for another pid is ignored, an unusable
NOTIFY_SOCKET is said on stderr and the run goes on. The shipped unit is
Type=notify with a watchdog (systemd-analyze verify where installed).
argv: taskstat-collect, the unit file."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import Collector, arg, check, need_live  # noqa: E402

B = arg(1, "taskstat-collect unit-file")
UNIT = arg(2, "taskstat-collect unit-file")
need_live(B)
tmp = tempfile.mkdtemp(prefix="tsc-notify-")


def listen(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(addr)
    s.settimeout(0.2)
    return s


def collect(s, seconds, until=None):
    """(monotonic time, message) received for `seconds`, or until a
    message containing `until`."""
    got = []
    t_end = time.monotonic() + seconds
    while time.monotonic() < t_end:
        try:
            m = s.recv(4096).decode()
        except socket.timeout:
            continue
        got.append((time.monotonic(), m))
        if until and until in m:
            break
    return got


def run(addr, env, seconds):
    """Run the collector with env set; messages before and after SIGTERM,
    and its stderr."""
    old = dict(os.environ)
    os.environ.update(env)
    try:
        col = Collector(B, ["-f", "jsonl", "-i", "0.5"])
    finally:
        os.environ.clear()
        os.environ.update(old)
    with col:
        before = collect(addr, seconds)
    after = collect(addr, 2, until="STOPPING=1")
    return before, after, col.stderr()


def check_unit():
    keys = {}
    with open(UNIT) as f:
        for line in f:
            k, sep, v = line.strip().partition("=")
            if sep and not k.startswith("#"):
                keys[k] = v
    check(keys.get("Type") == "notify", "unit: Type=%s" % keys.get("Type"))
    check(keys.get("NotifyAccess") == "main",
          "unit: NotifyAccess=%s" % keys.get("NotifyAccess"))
    check(keys.get("WatchdogSec"), "unit: no WatchdogSec")
    sa = shutil.which("systemd-analyze")
    if not sa:
        print("note: systemd-analyze not installed, unit not verified")
        return
    # verify wants the ExecStart binary where the unit says
    r = subprocess.run([sa, "verify", "--man=no", UNIT],
                       capture_output=True, text=True, timeout=60)
    errs = [ln for ln in (r.stdout + r.stderr).splitlines()
            if "taskstat-collect" in ln and "not executable" not in ln and
            "No such file" not in ln]
    check(not errs, "systemd-analyze verify: %s" % errs)


def main():
    check_unit()
    path = os.path.join(tmp, "notify")
    s = listen(path)
    # watchdog 1.2 s: a ping at least every 0.6 s from the main loop
    t0 = time.monotonic()
    before, after, err = run(s, {"NOTIFY_SOCKET": path,
                                 "WATCHDOG_USEC": "1200000"}, 4)
    msgs = [m for _, m in before]
    check(msgs and msgs[0].startswith("READY=1\nSTATUS=collecting"),
          "first message not READY=1 with STATUS: %r (stderr %s)" %
          (msgs[:2], err))
    pings = [t for t, m in before if m == "WATCHDOG=1"]
    check(len(pings) >= 5, "%d watchdog pings in 4 s" % len(pings))
    gaps = [b - a for a, b in zip(pings, pings[1:])]
    check(max(gaps) < 0.9, "watchdog gap %.2f s > 0.9 (period 1.2)" %
          max(gaps))
    check(any("STOPPING=1" in m for _, m in after),
          "no STOPPING=1 after SIGTERM: %r" % after[-3:])
    print("ok: READY %.2f s after start, %d pings, largest gap %.2f s, "
          "STOPPING on SIGTERM" % (before[0][0] - t0, len(pings),
                                   max(gaps)))

    # the abstract namespace; a watchdog for another process: no pings
    a = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.bind("\0tsc-notify-%d" % os.getpid())
    a.settimeout(0.2)
    before, _, err = run(a, {"NOTIFY_SOCKET": "@tsc-notify-%d" % os.getpid(),
                             "WATCHDOG_USEC": "400000",
                             "WATCHDOG_PID": "1"}, 2.5)
    msgs = [m for _, m in before]
    check(msgs and msgs[0].startswith("READY=1"),
          "abstract socket: no READY: %r %s" % (msgs, err))
    check("WATCHDOG=1" not in msgs, "pinged a watchdog meant for pid 1")
    print("ok: abstract socket, foreign WATCHDOG_PID ignored")

    # a socket that does not exist: said, and the run goes on
    before, _, err = run(s, {"NOTIFY_SOCKET": os.path.join(tmp, "none")}, 1)
    check("NOTIFY_SOCKET" in err, "unusable socket not said: %r" % err)
    check(not before, "messages on the wrong socket")
    print("ok: unusable NOTIFY_SOCKET said, run went on")


try:
    main()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
