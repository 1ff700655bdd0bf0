#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Log levels and the journal's priority prefixes (issue 25): every
message has a level; --log-level, -q and -v filter them; the "<N>"
prefixes appear exactly when JOURNAL_STREAM names stderr (its fstat
st_dev:st_ino), as systemd sets it for StandardError=journal. A usage
error needs no privilege; the live part (info, debug, warning lines)
runs where a collector can."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import arg, check, live_problem  # noqa: E402

B = arg(1, "taskstat-collect")
tmp = tempfile.mkdtemp(prefix="tsc-log-")
errf = os.path.join(tmp, "stderr")


def run(args, journal=None, timeout=20):
    """(exit status, stderr lines) with stderr in a file; journal: None
    (no JOURNAL_STREAM), "match" (the file's dev:ino) or "other"."""
    env = dict(os.environ)
    env.pop("JOURNAL_STREAM", None)
    with open(errf, "w") as f:
        st = os.fstat(f.fileno())
        if journal == "match":
            env["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino)
        elif journal == "other":
            env["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino + 1)
        r = subprocess.run([B] + args, stdout=subprocess.DEVNULL,
                           stderr=f, stdin=subprocess.DEVNULL, env=env,
                           timeout=timeout)
    with open(errf) as f:
        return r.returncode, f.read().splitlines()


bad = ["--interval", "x"]
rc, lines = run(bad, "match")
check(rc == 2 and lines == ["<3>taskstat-collect: --interval: 'x' is not "
                            "a number of seconds"],
      "usage error on the journal: %d %r" % (rc, lines))
for j in (None, "other"):
    rc, lines = run(bad, j)
    check(rc == 2 and len(lines) == 1 and
          lines[0].startswith("taskstat-collect: --interval"),
          "usage error, JOURNAL_STREAM %s: %r" % (j, lines))
rc, lines = run(["--log-level", "loud"])
check(rc == 2 and "--log-level" in lines[0], "--log-level loud: %r" % lines)
rc, lines = run(["-q", "--interval", "x"])
check(rc == 2 and len(lines) == 1, "-q hides errors: %r" % lines)

why = live_problem(B)
if why:
    print("PASS (usage errors only; live part skipped: %s)" % why)
    sys.exit(0)

live = ["-i", "0.3", "-d", "1.2", "-o", "/dev/null", "--attribution",
        "exact"]
ATTR = "taskstat-collect: attribution: exact"
SNAP = re.compile(r"taskstat-collect: snapshot \d+ written in")

rc, lines = run(live)  # the default: info
check(rc == 0, "default run: exit %d %r" % (rc, lines))
check(any(ln.startswith(ATTR) for ln in lines), "info line missing by "
      "default: %r" % lines)
check(not any(SNAP.match(ln) for ln in lines), "debug line by default")
check(not any(ln.startswith("<") for ln in lines), "prefix without "
      "JOURNAL_STREAM: %r" % lines)

for args in (["-v"], ["--log-level", "debug"], ["-q", "-v", "-v", "-v"]):
    rc, lines = run(live + args)
    check(rc == 0 and any(SNAP.match(ln) for ln in lines),
          "%s: no debug line: %r" % (args, lines))

for args in (["-q"], ["--log-level", "error"], ["--log-level", "warning"],
             ["-q", "-v"]):
    rc, lines = run(live + args)
    check(rc == 0 and not any(ln.startswith(ATTR) or SNAP.match(ln)
                              for ln in lines),
          "%s: info or debug printed: %r" % (args, lines))
    if args in (["-q"], ["--log-level", "error"]):
        check(not any("warning" in ln for ln in lines),
              "%s: a warning printed: %r" % (args, lines))

rc, lines = run(live + ["-v"], "match")
check(rc == 0 and lines, "journal run: %d %r" % (rc, lines))
for ln in lines:
    m = re.match(r"<([0-7])>taskstat-collect: ", ln)
    check(m, "journal line without a priority prefix: %r" % ln)
    want = ("6" if "collect: attribution:" in ln else
            "7" if "written in" in ln else
            "4" if "collect: warning:" in ln else None)
    check(want is None or m.group(1) == want, "wrong priority: %r" % ln)
check(any(ln.startswith("<7>") for ln in lines) and
      any(ln.startswith("<6>") for ln in lines),
      "journal: no <6> or <7> line: %r" % lines)
rc, lines = run(live + ["-v"], "other")
check(rc == 0 and not any(ln.startswith("<") for ln in lines),
      "JOURNAL_STREAM of another file: prefixes %r" % lines)

os.unlink(errf)
os.rmdir(tmp)
print("PASS: levels filter (-q, -v, --log-level), <N> prefixes only when "
      "JOURNAL_STREAM names stderr")
