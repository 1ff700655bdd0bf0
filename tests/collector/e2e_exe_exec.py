#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The executable of every exit, learnt at exec by the kernel source
(issue 39 item 1): with --events (jsonl), each exit names the right path:

 - a shell script run by its interpreter: the interpreter (the kernel
   records the file that runs);
 - a static binary copied to a temp dir (outside the bin directories) and
   run 200 times, each a few hundred microseconds long: every exit named,
   by the exec source (/proc never sees such a process alive);
 - a binary replaced while it runs (a new file renamed over it): the
   running one's exit reads "<path> (replaced)";
 - a binary deleted while it runs: "<path> (deleted)";
 - the static binary in a runc container: the path as the container
   names it ("/bin/cgsr-static"), when runc can start one here.

The rollup line's exe counts show the exec source answered. Skips (77)
where the kernel source does not load (no BPF, no privilege), without
gcc -static, and the container part alone without runc."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, exits_written,  # noqa
                     final_rollup, need_live, skip, strict_json_lines)
import runc_util  # noqa: E402

B = arg(1, "taskstat-collect")
need_live(B)
FAST = 200
SRC = "#include <stdlib.h>\n#include <unistd.h>\n" \
      "int main(int c, char **v) { if (c > 1) usleep(atoi(v[1]) * 1000);" \
      " return 0; }\n"


def static_bin(tmp):
    """A static binary (no loader, no libraries: runs in any rootfs)."""
    if not shutil.which("gcc"):
        skip("no gcc (a static test binary)")
    src = os.path.join(tmp, "s.c")
    with open(src, "w") as f:
        f.write(SRC)
    out = os.path.join(tmp, "static")
    r = subprocess.run(["gcc", "-static", "-O2", "-o", out, src],
                       capture_output=True, text=True)
    if r.returncode:
        skip("gcc -static failed (libc6-dev?): " + r.stderr.strip()[-200:])
    return out


def container(tmp, cg, prog):
    """Run prog 3 times in a runc container; False where runc can't."""
    if not runc_util.RUNC:
        print("no runc: the container part is skipped")
        return False
    try:
        runc_util.probe(tmp, cg.path("probe"))
    except SystemExit:
        print("runc cannot start a container here: part skipped")
        return False
    d = os.path.join(tmp, "bundle")
    runc_util.bundle(d, cg.path("ctr"), "cgsr-static; cgsr-static; "
                     "cgsr-static")
    shutil.copy2(prog, os.path.join(d, "rootfs", "bin", "cgsr-static"))
    r = runc_util.runc(d, "cgs-exe-%d" % os.getpid())
    check(r.returncode == 0, "runc run: %d: %s" % (r.returncode, r.stderr))
    return True


def work(tmp, prog, cg):
    """Everything under one collector; the pids by case."""
    pids = {}
    script = os.path.join(tmp, "cgs-exe-script")
    with open(script, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(script, 0o755)
    p = subprocess.Popen([script])
    p.wait()
    pids["script"] = [p.pid]
    fast = os.path.join(tmp, "cgs-exe-fast")
    shutil.copy2(prog, fast)
    pids["fast"] = []
    for _ in range(FAST):
        p = subprocess.Popen([fast])
        p.wait()
        pids["fast"].append(p.pid)
    repl, gone = (os.path.join(tmp, n) for n in ("cgs-exe-repl",
                                                 "cgs-exe-gone"))
    shutil.copy2(prog, repl)
    shutil.copy2(prog, gone)
    a = subprocess.Popen([repl, "1500"])
    b = subprocess.Popen([gone, "1500"])
    time.sleep(0.3)
    shutil.copy2(prog, repl + ".new")  # an upgrade in place
    os.rename(repl + ".new", repl)
    os.unlink(gone)
    a.wait()
    b.wait()
    pids["replaced"], pids["deleted"] = [a.pid], [b.pid]
    ran = container(tmp, cg, prog)
    return pids, ran


with tempfile.TemporaryDirectory(prefix="tsc-exe-exec-",
                                 dir="/var/tmp") as tmp, \
        Cgroups("exe-exec") as cg:
    prog = static_bin(tmp)
    try:
        with Collector(B, ["--events", "-f", "jsonl", "-i", "1"]) as col:
            pids, ran = work(tmp, prog, cg)
            exits_written(col, "cgs-exe-repl", 1)
            if ran:
                exits_written(col, "cgsr-static", 3)
            time.sleep(0.5)
    finally:  # the v1 parents runc made for the container
        runc_util.v1_leftovers(cg.name)
    err = col.stderr()
    if "attribution: kernel" not in err:
        skip("the kernel source does not load here: " + err.strip())
    objs = strict_json_lines(col.raw())
    n = final_rollup(objs).get("exe") or {}
    if not n.get("exec_on"):
        skip("the kernel source runs without its exec program here")
    ev = {}
    ctr = []
    for o in objs:
        if o.get("type") != "exit" or o["kind"] != "process":
            continue
        if o["comm"] == "cgsr-static":
            ctr.append(o.get("exe"))
        elif o["comm"].startswith("cgs-exe-"):
            ev[o["pid"]] = o.get("exe")
    sh = os.path.realpath("/bin/sh")
    want = {"script": sh, "fast": os.path.join(tmp, "cgs-exe-fast"),
            "replaced": os.path.join(tmp, "cgs-exe-repl") + " (replaced)",
            "deleted": os.path.join(tmp, "cgs-exe-gone") + " (deleted)"}
    for case, ps in pids.items():
        got = [ev.get(p, "<no exit>") for p in ps]
        bad = [g for g in got if g != want[case]]
        print("%-8s %3d exits, want %s: %d wrong %s" %
              (case, len(ps), want[case], len(bad), bad[:3]))
        check(not bad, "%s: %d of %d exits not named %s: %r" %
              (case, len(bad), len(ps), want[case], bad[:5]))
    if ran:
        print("container: %r" % ctr)
        check(len(ctr) >= 3 and all(e == "/bin/cgsr-static" for e in ctr),
              "container exits: %r" % ctr)
    print("exe counts", n)
    check(n and n["exec"] >= FAST and n["replaced"] >= 1 and
          n["deleted"] >= 1, "rollup exe counts: %r" % n)
    print("ok")
