#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every invalid option value: one line naming the option, exit status 2,
quickly (before anything is registered); one message for one kind of bad
value (0 and -1 where both are out of range, issue 38); an address that is
not one said as such, not as a failed host look-up. Without CAP_NET_ADMIN
and in a foreign network namespace: a message saying so, non-zero, within
a second."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import arg, check, live_problem, run_cmd, skip  # noqa: E402

B = arg(1, "taskstat-collect")
tmp = tempfile.mkdtemp(prefix="tsc-bad-")


def run(args, wrap=(), timeout=10):
    """(exit status, stdout, stderr, seconds) of the binary run with args."""
    return run_cmd(list(wrap) + [B] + args, timeout)


def usage_error(args, opt):
    rc, out, err, dt = run(args + ["-d", "0.2", "-f", "jsonl"])
    lines = err.splitlines()
    check(rc == 2, "%s: exit %d, expected 2 (stderr %r)" % (args, rc, err))
    check(len(lines) == 1, "%s: %d stderr lines: %r" % (args, len(lines),
                                                        err))
    check(lines[0].startswith("taskstat-collect: " + opt),
          "%s: message does not name %s: %r" % (args, opt, lines[0]))
    check(not out, "%s: wrote to stdout" % args)
    check(dt < 2, "%s: took %.1fs" % (args, dt))


try:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    ro_dir = os.path.join(tmp, "dir")
    os.mkdir(ro_dir)
    cases = [
        (["--cpus", "0-99999"], "--cpus"),
        (["--cpus", "abc"], "--cpus"),
        (["--cpus", "1,,2"], "--cpus"),
        (["--cpus", "%d" % (os.cpu_count() + 1000)], "--cpus"),
        (["--cpus", ""], "--cpus"),
        (["--interval", "-1"], "--interval"),
        (["--interval", "abc"], "--interval"),
        (["--interval", "0"], "--interval"),
        (["--interval", "nan"], "--interval"),
        (["--interval", "5s"], "--interval"),
        (["--duration", "-5"], "--duration"),
        (["--duration", "x"], "--duration"),
        (["--format", "xml"], "--format"),
        (["--output", os.path.join(tmp, "no/such/dir/out")], "--output"),
        (["--output", ro_dir], "--output"),
        (["--listen", "127.0.0.1:%d" % port], "--listen"),
        (["--listen", "nonsense"], "--listen"),
        (["--listen", "127.0.0.1:65536"], "--listen"),
        (["--textfile", os.path.join(tmp, "no/such/m.prom")], "--textfile"),
        (["--textfile", ro_dir], "--textfile"),
        (["--record", os.path.join(tmp, "no/such/x.tscap")], "--record"),
        (["--replay", os.path.join(tmp, "missing.tscap")], "--replay"),
        (["--replay", "/etc/hostname"], "--replay"),
        (["--hierarchy", "no_such_controller"], "--hierarchy"),
        (["--user", "no-such-user-xyz"], "--user"),
        (["--shards", "0"], "--shards"),
        (["--shards", "many"], "--shards"),
        (["--depth", "-1"], "--depth"),
        (["--top", "x"], "--top"),
        (["--no-such-option"], "--no-such-option"),
        (["--interval"], "--interval"),
        (["stray-argument"], "stray-argument"),
        (["--replay", "x", "--record", "y"], "--record"),
        (["--attribution", "fastest"], "--attribution"),
        (["--attribution", ""], "--attribution"),
        (["--attribution"], "--attribution"),
        (["--attribution", "fast", "--no-fork-events"], "--attribution"),
        (["--retire-after", "-1", "--listen", ":0"], "--retire-after"),
        (["--retire-after", "86401", "--listen", ":0"], "--retire-after"),
        (["--retire-after", "5"], "--retire-after"),
        (["--retire-max", "0", "--listen", ":0"], "--retire-max"),
        (["--retire-max", "many", "--listen", ":0"], "--retire-max"),
        (["--retire-max", "100"], "--retire-max"),
        (["--wide"], "--wide"),  # with -f jsonl
        (["--listen", "999.1.1.1:9101"], "--listen"),
        (["--listen", "[::zz]:9101"], "--listen"),
    ]
    for args, opt in cases:
        usage_error(args, opt)
    busy.close()

    # one kind of bad value, one message: out of range whether 0 or
    # negative (the value aside), not a number otherwise
    def message(args):
        return run(args + ["-f", "jsonl"])[2].strip()
    for opt, low, word in (("--duration", "0", "x"), ("--interval", "0", "x"),
                           ("--shards", "0", "many"), ("--depth", "0", "x"),
                           ("--top", None, "x")):
        neg = message([opt, "-1"])
        check("out of range" in neg, "%s -1: %r" % (opt, neg))
        if low is not None:
            zero = message([opt, low])
            check(zero.replace("'%s'" % low, "'-1'") == neg,
                  "%s: 0 and -1 say different things: %r, %r" %
                  (opt, zero, neg))
        nan = message([opt, word])
        check("out of range" not in nan and "'%s' is not a" % word in nan,
              "%s %s: %r" % (opt, word, nan))
    for bad, fam in (("999.1.1.1:9101", "IPv4"), ("[::zz]:9101", "IPv6")):
        err = message(["--listen", bad])
        check("not an %s address" % fam in err and "look" not in err,
              "--listen %s: %r" % (bad, err))

    rc, out, err, _ = run(["--help"])
    check(rc == 0 and b"--interval" in out and b"--replay" in out, "--help")
    rc, out, err, _ = run(["--version"])
    check(rc == 0 and out.startswith(b"taskstat-collect "), "--version")

    if os.geteuid() != 0:
        skip("usage errors ok; privilege and namespace cases need root")
    # the privilege and namespace cases compare against a collector that
    # runs here: in a container it cannot (its own pid namespace)
    why = live_problem(B)
    if why:
        skip("usage errors ok; " + why)

    # Without CAP_NET_ADMIN (an unprivileged user, no capabilities).
    if shutil.which("setpriv"):
        rc, out, err, dt = run(["-f", "jsonl", "-d", "2"], wrap=[
            "setpriv", "--reuid=nobody", "--regid=nogroup",
            "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-net_admin"])
        check(rc not in (0, 2), "no CAP_NET_ADMIN: exit %d" % rc)
        check("CAP_NET_ADMIN" in err, "no CAP_NET_ADMIN: message %r" % err)
        check(dt < 1.5, "no CAP_NET_ADMIN: took %.1fs" % dt)
    # Root, but CAP_NET_ADMIN removed from the bounding set.
    if shutil.which("capsh"):
        r = subprocess.run(["capsh", "--drop=cap_net_admin", "--", "-c",
                            "exec %s -f jsonl -d 2" % B],
                           capture_output=True, timeout=10)
        check(r.returncode not in (0, 2) and
              b"CAP_NET_ADMIN" in r.stderr,
              "root without CAP_NET_ADMIN: %d %r" % (r.returncode, r.stderr))

    # A foreign network namespace: events would never arrive.
    if shutil.which("unshare"):
        rc, out, err, dt = run(["-f", "jsonl", "-d", "5"],
                               wrap=["unshare", "-n"])
        check(rc not in (0, 2), "foreign netns: exit %d" % rc)
        check("network namespace" in err, "foreign netns: message %r" % err)
        check(dt < 1.5, "foreign netns: took %.1fs (must fail within a "
              "second)" % dt)
        check(not out.strip(), "foreign netns: wrote output")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
