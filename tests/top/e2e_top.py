# SPDX-License-Identifier: LGPL-2.1-or-later
"""taskstat-top as a person sees it: the real program in a detached tmux
pane at 80x24, a known workload in scratch cgroups, keys sent, the pane
captured.

  e2e_top.py TASKSTAT_TOP TASKSTAT_COLLECT

Workload (below a private cgroup2 tree cgs-top-<pid>): "busy" exits ~40
times a second and burns almost no CPU, "hog" exits a few times a second
after burning CPU, idle/i00..i29 exited once each at the start. Checked:
rows with the cgroup names; sorting by exits puts busy above hog, by CPU
(key C) hog above busy; collapse (-) hides a subtree and expand (+)
shows it again; 80x24 -> 200x50 shows more columns and rows; q quits with
exit 0 and the pane's `stty -g` as before; a pipe gets the plain table
(no escape sequence); --connect to a running collector shows the same
rows, GET /snapshot is the collector's JSON line; option errors.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
import tsc_e2e as e  # noqa: E402

TOP = e.arg(1, "TASKSTAT_TOP TASKSTAT_COLLECT")
COLLECT = e.arg(2, "TASKSTAT_TOP TASKSTAT_COLLECT")
WAIT = 20  # seconds a screen may take to show what is expected

# Loops run as their own processes, moved into their cgroup before exec.
BUSY = "import os,time\nwhile True:\n    p=os.fork()\n    if p==0: os._exit(0)\n" \
       "    os.waitpid(p,0); time.sleep(0.025)\n"
HOG = "import os,time\nwhile True:\n    p=os.fork()\n    if p==0:\n" \
      "        t=time.process_time()\n" \
      "        while time.process_time()-t<0.15: pass\n" \
      "        os._exit(0)\n    os.waitpid(p,0)\n"


class Tmux:
    """A private tmux server with one detached session running cmd in a
    shell that records the tty modes before and after and the exit
    status."""

    def __init__(self, cmd, tmp, w=80, h=24):
        self.sock = "tsc-top-%d-%d" % (os.getpid(), int(time.time() * 1e3))
        self.tmp = tmp = tempfile.mkdtemp(dir=tmp)
        self.rc = os.path.join(tmp, "rc")
        script = ("stty -g > %s/before; %s 2>%s/err; echo $? > %s.tmp; "
                  "stty -g > %s/after; mv %s.tmp %s; sleep 600" %
                  (tmp, cmd, tmp, self.rc, tmp, self.rc, self.rc))
        self.tmux("new-session", "-d", "-x", str(w), "-y", str(h),
                  "-s", "top", "sh -c %s" % shlex.quote(script))

    def tmux(self, *args):
        r = subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null"] +
                           list(args), capture_output=True, text=True,
                           timeout=30)
        e.check(r.returncode == 0, "tmux %s: %s" % (args, r.stderr))
        return r.stdout

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "top")

    def keys(self, *k):
        self.tmux("send-keys", "-t", "top", *k)

    def wait_for(self, what, pred, timeout=WAIT):
        t0 = time.time()
        while time.time() - t0 < timeout:
            s = self.screen()
            if pred(s):
                return s
            if os.path.exists(self.rc):
                e.fail("%s: taskstat-top exited: %s" % (what, self.err()))
            time.sleep(0.2)
        e.fail("%s: not seen within %ds; the pane:\n%s" % (what, timeout, s))

    def err(self):
        try:
            with open(os.path.join(self.tmp, "err")) as f:
                return f.read()
        except OSError:
            return ""

    def exit_status(self, timeout=WAIT):
        t0 = time.time()
        while time.time() - t0 < timeout:
            if os.path.exists(self.rc):
                with open(self.rc) as f:
                    return int(f.read())
            time.sleep(0.1)
        e.fail("taskstat-top did not exit; the pane:\n" + self.screen())

    def stty(self, which):
        with open(os.path.join(self.tmp, which)) as f:
            return f.read().strip()

    def close(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"],
                       capture_output=True, timeout=30)


def row_of(screen, name):
    """Index of the first pane line whose name cell is `name`, or -1."""
    for i, line in enumerate(screen.splitlines()):
        if re.match(r"^[> ]\s*[-+ ] %s\s" % re.escape(name), line):
            return i
    return -1


def header(screen):
    for line in screen.splitlines():
        if line.lstrip().startswith(("CGROUP", "PATH")):
            return line
    return ""


def idle_rows(screen):
    return len(re.findall(r"^[> ]\s+i\d\d\s", screen, re.M))


def start_loop(code, cgdir):
    return subprocess.Popen([sys.executable, "-c", code],
                            preexec_fn=lambda: e.move_self(cgdir))


def ui_checks(t, base):
    """The checks of one pane whose view shows the cgs-top tree."""
    s = t.wait_for("rows busy and hog with exit rates", lambda s:
                   0 <= row_of(s, "busy") < row_of(s, "hog") and
                   row_of(s, base) >= 0)
    e.check(len(s.splitlines()[0]) <= 80, "wider than the pane")
    # sort by CPU: hog (burns CPU) above busy (many exits, little CPU)
    t.keys("C")
    t.wait_for("CPU/s sort puts hog above busy", lambda s:
               "sort:CPU/s" in s and
               0 <= row_of(s, "hog") < row_of(s, "busy"))
    t.keys("E")
    t.wait_for("EXITS/s sort puts busy above hog", lambda s:
               "sort:EXITS/s" in s and
               0 <= row_of(s, "busy") < row_of(s, "hog"))
    # collapse the private tree's top: its children go, then come back
    t.keys("Home")
    for _ in range(10):  # walk down to the row of the private tree
        if re.search(r"^> *- %s\s" % re.escape(base), t.screen(), re.M):
            break
        t.keys("j")
        time.sleep(0.2)
    t.keys("-")
    s = t.wait_for("collapse hides the children", lambda s:
                   re.search(r"^> *\+ %s\s" % re.escape(base), s, re.M)
                   and row_of(s, "busy") < 0)
    e.check(row_of(s, "hog") < 0 and idle_rows(s) == 0,
            "collapsed subtree still shows rows:\n" + s)
    t.keys("+")
    t.wait_for("expand shows the children again", lambda s:
               row_of(s, "busy") >= 0 and row_of(s, "hog") >= 0)


def main():
    e.need_live(COLLECT)
    e.need_tool("tmux")
    e.cgroup2_root()
    tmp = tempfile.mkdtemp(prefix="tsc-top-")
    loops, tmuxes = [], []
    with e.Cgroups("top") as cg:
        base = cg.name
        for d in ("busy", "hog"):
            cg.mkdir(d)
        idle = [cg.mkdir("idle/i%02d" % i) for i in range(30)]
        try:
            # --- standalone, in a pane ----------------------------------
            t = Tmux("%s -i 1 --match %s" % (shlex.quote(TOP), base), tmp)
            tmuxes.append(t)
            t.wait_for("first screen", lambda s: "taskstat-top" in s and
                       "records" in s)
            for d in idle:
                e.workload(d, linger=0)
            loops.append(start_loop(BUSY, cg.dir("busy")))
            loops.append(start_loop(HOG, cg.dir("hog")))
            ui_checks(t, base)
            s = t.screen()
            h80, idle80 = header(s), idle_rows(s)
            e.check(len(s.splitlines()) <= 24 and idle80 < 30,
                    "80x24 shows all rows:\n" + s)
            e.check("PROCS/s" not in h80 and "EXITS/s" in h80,
                    "80 columns: header %r" % h80)
            t.tmux("resize-window", "-t", "top", "-x", "200", "-y", "50")
            s = t.wait_for("200x50: more columns and rows", lambda s:
                           "PROCS/s" in header(s) and
                           "IODLY/s" in header(s) and idle_rows(s) > idle80)
            e.check(idle_rows(s) == 30, "200x50: %d of 30 idle rows" %
                    idle_rows(s))
            # tree <-> flat: the flat list names full paths
            t.keys("t")
            t.wait_for("flat list", lambda s: "PATH (own)" in s and
                       "/%s/busy" % base in s)
            t.keys("t")
            t.wait_for("tree again", lambda s: "CGROUP (subtree)" in s)
            t.keys("h")
            t.wait_for("help", lambda s: "Keys" in s and "[C] CPU/s" in s)
            t.keys("x")
            t.wait_for("help left", lambda s: "CGROUP (subtree)" in s)
            before = t.stty("before")
            t.keys("q")
            rc = t.exit_status()
            e.check(rc == 0, "q: exit %d: %s" % (rc, t.err()))
            e.check(t.stty("after") == before,
                    "tty modes changed: %s -> %s" % (before,
                                                      t.stty("after")))
            print("ok: standalone pane (rows, sort, fold, resize, q, tty)")

            # --- not a terminal: the plain table ------------------------
            r = e.run_cmd([TOP, "-i", "0.5", "-n", "2", "--match", base])
            out = r.out.decode("utf-8", "replace")
            e.check(r.rc == 0, "plain: exit %d: %s" % (r.rc, r.err))
            e.check("\x1b" not in out, "escape sequences in a pipe")
            blocks = [b for b in out.split("\n\n") if b.strip()]
            e.check(len(blocks) == 2, "plain: %d blocks, not 2" %
                    len(blocks))
            for b in blocks:
                e.check("CGROUP (subtree)" in b and "PROCS/s" in b and
                        row_of(b, "busy") >= 0 and row_of(b, "hog") >= 0,
                        "plain block lacks rows or columns:\n" + b)
            r = e.run_cmd([TOP, "-i", "1.5", "-n", "1", "--flat", "-s",
                           "cpu", "--match", base])
            out = r.out.decode()
            paths = [l.split()[0] for l in out.splitlines()
                     if l.lstrip().startswith("/" + base + "/")]
            e.check(r.rc == 0 and "/%s/hog" % base in paths and
                    "/%s/busy" % base in paths and
                    paths.index("/%s/hog" % base) <
                    paths.index("/%s/busy" % base),
                    "plain --flat -s cpu: %r\n%s" % (paths, out))
            print("ok: plain table when stdout is a pipe")

            # --- against a running collector ----------------------------
            with e.Collector(COLLECT, ["--listen", "127.0.0.1:0", "-i",
                                       "0.5", "-f", "jsonl"]) as col:
                hp = e.port_from_stderr(col)
                with urllib.request.urlopen("http://%s/snapshot" % hp,
                                            timeout=10) as resp:
                    e.check(resp.headers["Content-Type"] ==
                            "application/json", "/snapshot type %r" %
                            resp.headers["Content-Type"])
                    snap = json.loads(resp.read())
                e.check(snap["type"] == "rollup" and "cgroups" in snap,
                        "/snapshot is not a rollup line")
                t = Tmux("%s --connect %s --match %s" %
                         (shlex.quote(TOP), hp, base), tmp)
                tmuxes.append(t)
                s = t.wait_for("--connect screen", lambda s:
                               "http://%s" % hp in s and
                               0 <= row_of(s, "busy") < row_of(s, "hog"))
                e.check("every 0.5 s" in s, "not the collector's interval:"
                        "\n" + s)
                t.keys("C")
                t.wait_for("--connect: CPU sort", lambda s:
                           0 <= row_of(s, "hog") < row_of(s, "busy"))
                t.keys("q")
                e.check(t.exit_status() == 0, "--connect: q: " + t.err())
                r = e.run_cmd([TOP, "--connect", hp, "-n", "2", "--match",
                               base])
                out = r.out.decode()
                e.check(r.rc == 0 and row_of(out, "busy") >= 0 and
                        "http://" + hp in out, "plain --connect: %d %s\n%s"
                        % (r.rc, r.err, out))
                print("ok: --connect %s (pane and plain)" % hp)

            # --- errors --------------------------------------------------
            r = e.run_cmd([TOP, "--connect", hp, "-n", "1"])
            e.check(r.rc == 1 and "--connect" in r.err and
                    "cannot connect" in r.err,
                    "collector gone: %d %r" % (r.rc, r.err))
            r = e.run_cmd([TOP, "--connect", "127.0.0.1:9", "--cpus", "0"])
            e.check(r.rc == 2 and r.err.startswith("taskstat-top: --cpus:"),
                    "--cpus with --connect: %d %r" % (r.rc, r.err))
            r = e.run_cmd([TOP, "--sort", "bogus"])
            e.check(r.rc == 2 and "--sort" in r.err, "--sort bogus: %r" %
                    r.err)
            r = e.run_cmd([TOP, "--interval", "x"])
            e.check(r.rc == 2 and r.err.startswith(
                "taskstat-top: --interval:"), "--interval x: %r" % r.err)
            print("ok: errors")
        finally:
            for p in loops:
                p.kill()
                p.wait()
            for t in tmuxes:
                t.close()
            shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")


main()
