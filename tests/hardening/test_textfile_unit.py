#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The unit's --textfile recipe works under DynamicUser=: the collector,
run as systemd runs it with the recipe's lines (a random UID of the
DynamicUser range, its own GID, the recipe's SupplementaryGroups= and
nothing else, the unit's ambient capabilities, no_new_privs, its UMask=),
writes the textfile into a directory prepared as the recipe says (its
dpkg-statoverride: root, the recipe's group, group-writable), and
node_exporter, another unprivileged user, reads it. Without the
supplementary group the same run is refused at start (exit 2 naming
--textfile): that group is what makes it work. systemd-analyze verify
passes on the unit with the recipe's lines uncommented.

The recipe is read from the unit's comments: the --textfile path, the
`dpkg-statoverride` of its directory and the `#SupplementaryGroups=` and
`#ReadWritePaths=` lines to uncomment; the path must be the one
debian/taskstat-collect.default names (Debian's node_exporter reads
/var/lib/prometheus/node-exporter). The test's directory stands in for
it (ProtectSystem=strict + ReadWritePaths= need systemd as PID 1, not
tested here); free numeric ids stand in for the group and for
node_exporter's user.
argv: taskstat-collect, the unit file."""
import grp
import os
import pwd
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import arg, check, need_live, need_tool, skip  # noqa: E402

BIN = arg(1, "taskstat-collect unit-file")
UNIT = arg(2, "taskstat-collect unit-file")
DYNAMIC = range(61184, 65520)  # systemd's DynamicUser= UIDs


def recipe(text):
    """(textfile path, group, ReadWritePaths dir, its mode) from the unit's
    comments; fails if a piece is missing or they disagree."""
    tf = re.search(r"^#\s+--textfile (\S+)$", text, re.M)
    grp = re.search(r"^#SupplementaryGroups=(\S+)$", text, re.M)
    rw = re.search(r"^#ReadWritePaths=(\S+)$", text, re.M)
    check(tf and grp and rw, "the unit's textfile recipe lacks --textfile, "
          "#SupplementaryGroups= or #ReadWritePaths=")
    d = os.path.dirname(tf.group(1))
    check(rw.group(1) == d, "ReadWritePaths=%s, textfile in %s" %
          (rw.group(1), d))
    so = re.search(r"^#\s+dpkg-statoverride --update --add (\S+) (\S+) "
                   r"([0-7]+) %s$" % re.escape(d), text, re.M)
    check(so, "the recipe does not give %s to a group (dpkg-statoverride)"
          % d)
    check(so.group(2) == grp.group(1), "dpkg-statoverride gives %s to group "
          "%s, SupplementaryGroups=%s" % (d, so.group(2), grp.group(1)))
    mode = int(so.group(3), 8)
    check(mode & 0o020, "dpkg-statoverride mode %o: not group-writable" %
          mode)
    return tf.group(1), grp.group(1), d, mode


def service(text, key):
    m = re.findall(r"^%s=(.*)$" % key, text, re.M)
    return m[-1].strip() if m else None


def free_id(used):
    """A number of the DynamicUser range no user, group or process has."""
    procs = set()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                procs.add(os.stat("/proc/" + p).st_uid)
            except OSError:
                pass
    while True:
        n = random.choice(DYNAMIC)
        if n in used or n in procs:
            continue
        try:
            pwd.getpwuid(n)
            continue
        except KeyError:
            pass
        try:
            grp.getgrgid(n)
            continue
        except KeyError:
            used.add(n)
            return n


def verify(text):
    """systemd-analyze verify of the unit with the recipe's lines
    uncommented (the missing /usr/sbin binary aside); False without
    systemd-analyze."""
    sa = shutil.which("systemd-analyze")
    if not sa:
        return False
    with tempfile.TemporaryDirectory(prefix="cgs-textfile-unit-") as d:
        u = os.path.join(d, "taskstat-collect.service")
        with open(u, "w") as f:
            f.write(re.sub(r"^#(SupplementaryGroups|ReadWritePaths)=",
                           r"\1=", text, flags=re.M))
        r = subprocess.run([sa, "verify", "--man=no", u],
                           capture_output=True, text=True, timeout=60)
    errs = [ln for ln in (r.stdout + r.stderr).splitlines()
            if "taskstat-collect" in ln and "not executable" not in ln and
            "No such file" not in ln]
    check(not errs, "systemd-analyze verify, recipe lines uncommented: %s"
          % errs)
    return True


def main():
    with open(UNIT) as f:
        text = f.read()
    path, group, d, mode = recipe(text)
    src = os.path.dirname(os.path.dirname(UNIT))
    default = os.path.join(src, "debian", "taskstat-collect.default")
    if os.path.exists(default):
        with open(default) as f:
            check(("--textfile " + path) in f.read(), "%s names another "
                  "textfile than the unit's %s" % (default, path))
    check(service(text, "DynamicUser") == "yes", "the unit has no "
          "DynamicUser=yes: this test models it")
    caps = service(text, "AmbientCapabilities").split()
    umask = int(service(text, "UMask") or "0022", 8)
    opts = re.search(r'^Environment="TASKSTAT_COLLECT_OPTS=(.*)"$', text,
                     re.M).group(1).split()
    verified = verify(text)
    need_live(BIN)
    setpriv = need_tool("setpriv")
    if os.geteuid() != 0:
        skip("not root")
    ids = set()
    uid, gid_recipe, reader = free_id(ids), free_id(ids), free_id(ids)
    capset = ",".join("+" + c[4:].lower() for c in caps)

    def as_unit(groups, textfile):
        args = [a for a in opts]
        if "--listen" in args:
            args[args.index("--listen") + 1] = "127.0.0.1:0"
        args += ["--interval", "1", "--duration", "2.5", "--output",
                 "/dev/null", "--textfile", textfile]
        grp_opt = (["--groups=%d" % groups] if groups is not None
                   else ["--clear-groups"])
        cmd = [setpriv, "--reuid=%d" % uid, "--regid=%d" % uid] + grp_opt + \
            ["--inh-caps=-all," + capset, "--ambient-caps=-all," + capset,
             "--bounding-set=-all," + capset, "--no-new-privs", "--",
             BIN] + args
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL,
                              preexec_fn=lambda: os.umask(umask))

    with tempfile.TemporaryDirectory(prefix="cgs-textfile-") as tmp:
        os.chmod(tmp, 0o755)
        # as the package leaves it (root:root 0755), then the recipe's
        # dpkg-statoverride: root, its group, its mode
        nd = os.path.join(tmp, os.path.basename(d))
        os.mkdir(nd, 0o755)
        os.chown(nd, 0, gid_recipe)
        os.chmod(nd, mode)
        tf = os.path.join(nd, os.path.basename(path))
        # without the recipe's group: refused at start, naming --textfile
        r = as_unit(None, tf)
        check(r.returncode == 2 and "--textfile" in r.stderr,
              "uid %d without group %s: exit %d (expected 2 naming "
              "--textfile): %s" % (uid, group, r.returncode, r.stderr))
        check(not os.path.exists(tf), "a textfile written without the "
              "group")
        # with it (SupplementaryGroups=): written
        r = as_unit(gid_recipe, tf)
        check(r.returncode == 0, "uid %d with group %s (%d): exit %d: %s" %
              (uid, group, gid_recipe, r.returncode, r.stderr))
        st = os.stat(tf)
        want_gid = gid_recipe if mode & 0o2000 else uid
        check(st.st_uid == uid and st.st_gid == want_gid,
              "%s owned %d:%d, expected %d:%d" % (tf, st.st_uid, st.st_gid,
                                                  uid, want_gid))
        check(st.st_mode & 0o777 == 0o666 & ~umask, "%s mode %o" %
              (tf, st.st_mode & 0o777))
        left = [x for x in os.listdir(nd) if x != os.path.basename(tf)]
        check(not left, "temporary files left in %s: %s" % (nd, left))
        # node_exporter: another user, not in the group
        r = subprocess.run([setpriv, "--reuid=%d" % reader,
                            "--regid=%d" % reader, "--clear-groups", "--",
                            "cat", tf], capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 0 and re.search(
            r"^taskstat_collector_\w+ ", r.stdout, re.M),
            "uid %d cannot read %s: %s" % (reader, tf, r.stderr))
        promtool = shutil.which("promtool")
        if promtool:
            p = subprocess.run([promtool, "check", "metrics"],
                               input=r.stdout.encode(), capture_output=True,
                               timeout=30)
            check(p.returncode == 0, "promtool: %s" % p.stdout.decode())
        print("the unit's textfile recipe (%s, SupplementaryGroups=%s, "
              "%s root:%s %o): uid %d refused without the group, "
              "writes %s (%o, %d series) with it; uid %d reads it%s" %
              (path, group, d, group, mode, uid, os.path.basename(tf),
               st.st_mode & 0o777,
               len(re.findall(r"^taskstat_", r.stdout, re.M)), reader,
               ", promtool passes" if promtool else "") +
              ("; systemd-analyze verify passes with the lines uncommented"
               if verified else ""))
    print("OK")


if __name__ == "__main__":
    main()
