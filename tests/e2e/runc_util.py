# SPDX-License-Identifier: LGPL-2.1-or-later
"""Containers started by runc (Debian's) for the e2e tests: a rootfs of
the host's sh, true and seq (named cgsr-*: comms no other process of the
host has, and no shell's builtin true), an OCI bundle with our process and
cgroupsPath, `runc run`, and the v1 parents runc leaves."""
import json
import os
import re
import shutil
import subprocess

from tsc_e2e import skip

RUNC = shutil.which("runc")


def need_runc():
    if not RUNC:
        skip("runc not installed (apt-get install runc)")


def rootfs(d, extra=()):
    """Copy sh, true, seq and the extra programs (as cgsr-*) and their
    libraries (ldd) into d."""
    for prog in ("sh", "true", "seq") + tuple(extra):
        src = os.path.realpath(shutil.which(prog))
        out = subprocess.run(["ldd", src], capture_output=True,
                             text=True).stdout
        for f in re.findall(r"(/\S+) \(0x", out):
            dst = os.path.join(d, f.lstrip("/"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(f, dst)
        os.makedirs(os.path.join(d, "bin"), exist_ok=True)
        shutil.copy2(src, os.path.join(d, "bin", "cgsr-" + prog))


def bundle(d, cgpath, script, annotations=None, extra=()):
    """An OCI bundle in d: `runc spec`'s defaults, our process, cgroup and
    annotations (as a CRI runtime writes them into the spec)."""
    os.makedirs(os.path.join(d, "rootfs"), exist_ok=True)
    rootfs(os.path.join(d, "rootfs"), extra)
    subprocess.run([RUNC, "spec"], cwd=d, check=True)
    with open(os.path.join(d, "config.json")) as f:
        c = json.load(f)
    c["process"]["terminal"] = False
    c["process"]["args"] = ["/bin/cgsr-sh", "-c", script]
    c["process"]["env"] = ["PATH=/bin:/usr/bin"]
    c["linux"]["cgroupsPath"] = cgpath
    if annotations:
        c["annotations"] = annotations
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(c, f)


def runc(d, name):
    return subprocess.run([RUNC, "run", "--bundle", d, name],
                          stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)


def probe(tmp, cgpath):
    """Skip (77) where runc cannot start a container here."""
    d = os.path.join(tmp, "probe")
    bundle(d, cgpath, "true")
    r = runc(d, "cgs-runc-probe-%d" % os.getpid())
    if r.returncode != 0:
        skip("runc cannot start a container here: " +
             (r.stderr.strip().splitlines() or ["?"])[-1])


def v1_leftovers(name):
    """runc makes the container's cgroup in every v1 hierarchy too and
    removes only that: remove the parents it made there."""
    for h in os.listdir("/sys/fs/cgroup"):
        d = os.path.join("/sys/fs/cgroup", h, name)
        if h != "unified" and os.path.isdir(d):
            for sub in sorted((os.path.join(p, x) for p, ds, _ in os.walk(d)
                               for x in ds), key=len, reverse=True):
                os.rmdir(sub)
            os.rmdir(d)
