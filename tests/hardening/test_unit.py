#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The systemd unit example is hardened and still able to work:
 - capability bounding set and ambient set exactly CAP_NET_ADMIN (the
   listeners) plus CAP_BPF and CAP_PERFMON (the kernel attribution
   source), and bpf(2) allowed by the system call filter;
 - address families restricted, AF_NETLINK allowed, AF_PACKET not;
 - the initial network and user namespaces kept (PrivateNetwork= or
   PrivateUsers= would make the kernel accept the registration and never
   send an event, or refuse it), /proc/<pid>/cgroup of every process kept
   readable (no ProtectProc=invisible / ProcSubset=pid);
 - NoNewPrivileges, a non-root user, a read-only system;
 - systemd-analyze security (offline) rates its exposure at most 3.0.
argv: taskstat-collect (unused), the unit file."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import arg, check, skip  # noqa: E402

arg(1, "taskstat-collect unit-file")
UNIT = arg(2, "taskstat-collect unit-file")
MAX_EXPOSURE = 3.0


def directives(path):
    out = {}
    sect = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                sect = line.strip("[]")
                continue
            k, _, v = line.partition("=")
            out.setdefault((sect, k.strip()), []).append(v.strip())
    return out


def last(d, k, default=None):
    v = d.get(("Service", k))
    return v[-1] if v else default


def main():
    d = directives(UNIT)
    need = {"CAP_NET_ADMIN", "CAP_BPF", "CAP_PERFMON"}
    caps = set(last(d, "CapabilityBoundingSet", "").split())
    check(caps == need, "CapabilityBoundingSet=%s" % caps)
    amb = set(last(d, "AmbientCapabilities", "").split())
    check(amb == need, "AmbientCapabilities=%s" % amb)
    filt = " ".join(d.get(("Service", "SystemCallFilter"), [])).split()
    check("bpf" in filt and "~bpf" not in filt and
          not any(f.startswith("~") for f in filt),
          "SystemCallFilter must allow bpf: %s" % filt)
    fams = set(last(d, "RestrictAddressFamilies", "").split())
    check(fams and not any(f.startswith("~") for f in fams),
          "RestrictAddressFamilies must be an allow list: %s" % fams)
    check("AF_NETLINK" in fams and "AF_PACKET" not in fams,
          "RestrictAddressFamilies=%s" % fams)
    for k in ("PrivateNetwork", "PrivateUsers", "PrivatePIDs"):
        check(last(d, k, "no") in ("no", "false", "0"),
              "%s=%s: the collector must stay in the initial namespace" %
              (k, last(d, k)))
    check(last(d, "NetworkNamespacePath") is None, "NetworkNamespacePath")
    check(last(d, "ProtectProc", "default") == "default",
          "ProtectProc=%s hides other processes' /proc/<pid>/cgroup" %
          last(d, "ProtectProc"))
    check(last(d, "ProcSubset", "all") == "all", "ProcSubset=pid hides "
          "/proc/<pid>/cgroup")
    check(last(d, "NoNewPrivileges") in ("yes", "true", "1"),
          "NoNewPrivileges")
    check(last(d, "DynamicUser") in ("yes", "true", "1") or
          last(d, "User") not in (None, "root", "0"), "runs as root")
    check(last(d, "ProtectSystem") in ("strict", "full", "yes", "true"),
          "ProtectSystem")

    sa = shutil.which("systemd-analyze")
    if not sa:
        skip("static checks passed; systemd-analyze not installed")
    r = subprocess.run([sa, "security", "--offline=true", UNIT],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)",
                  r.stdout + r.stderr)
    if not m:
        skip("static checks passed; systemd-analyze security --offline "
             "unsupported: %s" % (r.stdout + r.stderr)[-300:])
    exp = float(m.group(1))
    check(exp <= MAX_EXPOSURE, "exposure %.1f > %.1f:\n%s" %
          (exp, MAX_EXPOSURE, "\n".join(l for l in r.stdout.splitlines()
                                        if l.startswith("\u2717"))))
    print("ok: unit hardened, systemd-analyze exposure %.1f (<= %.1f)" %
          (exp, MAX_EXPOSURE))


main()
