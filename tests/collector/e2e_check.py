#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""--check (issue 25): the ok case prints one "ok ITEM: ..." line per item
("warn delayacct" when kernel.task_delayacct is 0, issue 38) and exits 0
without collecting (no snapshot written, an existing --output not
truncated, a missing one not left behind); a bad --web-config and an
unwritable --output each exit 2 as a run would (an invalid option value,
issue 38) with a "FAIL ITEM" line and the reason on stderr; an invalid
option (--interval x, --interval -1) says "FAIL options" and exits 2; as
--user, a web config the user cannot read fails (exit 1: a reload could
not read it)."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import arg, check, need_live, run_cmd  # noqa: E402

B = arg(1, "taskstat-collect")
need_live(B)
d = tempfile.mkdtemp(prefix="tsc-check-")
os.chmod(d, 0o755)
PORT = "127.0.0.1:19610"


def run(args):
    r = run_cmd([B, "--check"] + args, timeout=30)
    return r.rc, r.out.decode().splitlines(), r.err


def items(lines, word):
    return [ln.split()[1].rstrip(":") for ln in lines
            if ln.startswith(word + " ")]


out = os.path.join(d, "out.jsonl")
with open(out, "w") as f:
    f.write("keep me\n")
web = os.path.join(d, "web.yml")
with open(web, "w") as f:
    f.write("basic_auth_users:\n  alice: '$2y$10$" + "a" * 53 + "'\n")
os.chmod(web, 0o600)
missing = os.path.join(d, "new.cap")
rc, lines, err = run(["-o", out, "--record", missing, "--listen", PORT,
                      "--web-config", web, "--textfile",
                      os.path.join(d, "m.prom")])
check(rc == 0, "ok case: exit %d %r %s" % (rc, lines, err))
got = items(lines, "ok")
for want in ("options", "hierarchy", "listen", "web-config", "output",
             "record", "textfile", "listener", "attribution", "privileges",
             "http", "run"):
    check(want in got, "ok case: no 'ok %s' line in %r" % (want, lines))
try:
    with open("/proc/sys/kernel/task_delayacct") as f:
        dacct = f.read().strip()
except OSError:
    dacct = None
want_warn = ["delayacct"] if dacct == "0" else []
check(items(lines, "warn") == want_warn,
      "warn lines %r, kernel.task_delayacct %s: %r" %
      (items(lines, "warn"), dacct, lines))
check(all(ln.startswith("ok ") or ln.startswith("warn ") for ln in lines),
      "not ok: %r" % lines)
with open(out) as f:
    check(f.read() == "keep me\n", "--check truncated or wrote --output")
check(not os.path.exists(missing), "--check left --record behind")
check(not os.path.exists(os.path.join(d, "m.prom")), "--check wrote the "
      "textfile")

with open(os.path.join(d, "bad.yml"), "w") as f:
    f.write("tls_server_config:\n  cert_file: nope.crt\n"
            "  key_file: nope.key\n")
rc, lines, err = run(["--listen", PORT, "--web-config",
                      os.path.join(d, "bad.yml")])
check(rc == 2 and lines and lines[-1].startswith("FAIL web-config"),
      "bad web config: exit %d %r" % (rc, lines))
check("nope.crt" in err, "bad web config: reason not on stderr: %r" % err)

for bad in (d, os.path.join(d, "no", "such", "dir")):
    rc, lines, err = run(["-o", bad])
    check(rc == 2 and lines[-1].startswith("FAIL output"),
          "unwritable output %s: exit %d %r" % (bad, rc, lines))
    check("--output" in err, "unwritable output: %r" % err)

# the web config readable by root only: fine to start, not for a reload
rc, lines, err = run(["--listen", PORT, "--web-config", web, "-u",
                      "nobody"])
check(rc == 1 and lines[-1].startswith("FAIL web-config") and
      "--user" in err, "web config unreadable by --user: exit %d %r %r"
      % (rc, lines, err))
os.chmod(web, 0o644)
rc, lines, err = run(["--listen", PORT, "--web-config", web, "-u",
                      "nobody"])
check(rc == 0 and "privileges" in items(lines, "ok"),
      "--user, readable web config: exit %d %r %r" % (rc, lines, err))
for bad in (["--interval", "x"], ["--interval", "-1"],
            ["--listen", "999.1.1.1:9101"]):
    rc, lines, err = run(bad)
    check(rc == 2 and lines == ["FAIL options (the reason is on stderr)"],
          "usage error %s: exit %d %r" % (bad, rc, lines))
shutil.rmtree(d)
print("PASS: --check: ok items, bad web config, unwritable output, "
      "--user's view of the web config")
