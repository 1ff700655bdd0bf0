# SPDX-License-Identifier: LGPL-2.1-or-later
"""The one helper module of the Python end-to-end tests (python3 stdlib
only): tests/collector/e2e_*.py and tests/hardening/test_*.py.

Every test script takes the taskstat-collect binary as argv[1] (and, for
some, more arguments), exits 0 on success, 1 on failure and 77 (SKIP,
ctest's SKIP_RETURN_CODE) after printing why when the host can't run it:
not root, no taskstats, no cgroup2 mount, a tool missing.

A script imports it with the two lines
    sys.path.insert(0, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "e2e"))
so that it runs the same from ctest and by hand.

Environment: TSC_E2E_WRAP="valgrind -q" runs every collector under a
tool; HARDENING_KEEP=/some/dir keeps outputs passed to keep().
"""
import collections
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

SKIP = 77

# One place for the timeouts (the two former helper modules had drifted:
# 30/10/20 s in tests/collector, 60/15/60 s in tests/hardening). The
# larger ones: a loaded 2-core CI machine, valgrind or ASan make the
# collector slow, and a timeout only ever costs time when something hangs.
TRIAL_TIMEOUT = 60  # the trial run of need_live()
START_TIMEOUT = 15  # registration and self-test (Collector.wait_started)
STOP_TIMEOUT = 60   # SIGTERM to exit: final snapshot, outputs flushed
PORT_TIMEOUT = 10   # until the "serving metrics" line (port_from_stderr)

PR_SET_NAME = 15
_libc = ctypes.CDLL(None, use_errno=True)


# --- verdicts ---------------------------------------------------------

def skip(why):
    """The host can't run this test: say why, exit 77."""
    print("SKIP:", why)
    sys.exit(SKIP)


def fail(why):
    print("FAIL:", short(why, 2000))
    sys.exit(1)


def check(cond, why):
    if not cond:
        fail(why)


def sanitized():
    """True under scripts/sanitize (ASan+UBSan): memory sizes say nothing
    then (shadow memory, quarantine), and LeakSanitizer adds a thread to
    every instrumented process at exit."""
    return bool(os.environ.get("ASAN_OPTIONS"))


def short(x, n=160):
    """repr-ish text of x cut in the middle to n characters."""
    s = x if isinstance(x, str) else repr(x)
    return s if len(s) <= n else "%s...(%d chars)...%s" % (
        s[:n // 2], len(s), s[-n // 2:])


def keep(name, data):
    """Save an output for a post-mortem when $HARDENING_KEEP names a dir."""
    d = os.environ.get("HARDENING_KEEP")
    if d:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


# --- arguments and what the host offers ---------------------------------

def arg(i, what):
    """argv[i] as an absolute path; `what` names the arguments for the
    usage message."""
    if len(sys.argv) <= i:
        fail("usage: %s %s" % (sys.argv[0], what))
    return os.path.abspath(sys.argv[i])


def live_problem(bin_):
    """Why this host can't run a live collector (None if it can): not
    root, or a short trial run fails for a reason of the environment
    (no taskstats, no CAP_NET_ADMIN, a foreign network namespace; the
    self-test timing out says "namespace" too). Any other failure of the
    trial is a failure of the test."""
    if os.geteuid() != 0:
        return "not root"
    r = subprocess.run([bin_, "-f", "jsonl", "-d", "0.2"],
                       capture_output=True, text=True, timeout=TRIAL_TIMEOUT)
    if r.returncode == 0:
        return None
    err = r.stderr.strip()
    if "TASKSTATS" in err or "CAP_NET_ADMIN" in err or "namespace" in err:
        return "live collection impossible here: " + err
    fail("trial run failed (%d): %s" % (r.returncode, err))


def need_live(bin_):
    """Skip unless this host can run a live collector."""
    why = live_problem(bin_)
    if why:
        skip(why)


def need_tool(name):
    p = shutil.which(name)
    if not p:
        skip("%s not installed" % name)
    return p


def cgroup2_root():
    """Mount point of cgroup2 (hybrid hosts: /sys/fs/cgroup/unified)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[0] == "cgroup2":
                return left.split()[4]
    skip("no cgroup2 mount")


# --- cgroups ------------------------------------------------------------

def cgroup_mounts():
    """Mount points of every cgroup hierarchy (v1 and cgroup2)."""
    with open("/proc/self/mountinfo") as f:
        return [ln.split()[4] for ln in f
                if ln.partition(" - ")[2].split()[0] in ("cgroup",
                                                         "cgroup2")]


def rmdir_retry(d, tries=100):
    """rmdir d (gone already is fine); a dying task may hold it a
    moment."""
    for _ in range(tries):
        try:
            os.rmdir(d)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)


def _like(s, rel):
    """s (ASCII str) as str or bytes, whichever rel is."""
    return os.fsencode(s) if isinstance(rel, bytes) else s


class Cgroups:
    """A private cgroup2 tree <root>/cgs-<tag>-<pid>, removed with
    everything below on exit. Names below it may hold any byte: path(),
    dir() and mkdir() answer in bytes when given bytes, in str when given
    str (a str decodes as the file system does, surrogateescape)."""

    def __init__(self, tag):
        self.root = cgroup2_root()
        self.name = "cgs-%s-%d" % (tag, os.getpid())
        self.base = os.path.join(self.root, self.name)
        os.mkdir(self.base)

    def path(self, rel=""):
        """Cgroup path as /proc/<pid>/cgroup shows it (str or bytes like
        rel: path(b"") is the base as bytes)."""
        top = _like("/" + self.name, rel)
        return top + _like("/", rel) + rel if rel else top

    def dir(self, rel):
        """The directory of cgroup `rel` below the base (not created)."""
        return os.path.join(_like(self.base, rel), rel)

    def mkdir(self, rel):
        d = self.dir(rel)
        os.makedirs(d, exist_ok=True)
        return d

    def rmtree(self, d):
        """Remove cgroup directory d and all below it, deepest first,
        moving any process left in one to the root cgroup."""
        d, root = os.fsencode(d), os.fsencode(self.root)
        for dirpath, _, _ in sorted(os.walk(d),
                                    key=lambda t: -t[0].count(b"/")):
            try:
                with open(os.path.join(dirpath, b"cgroup.procs")) as f:
                    pids = f.read().split()
            except OSError:
                pids = []
            for pid in pids:
                try:
                    with open(os.path.join(root, b"cgroup.procs"), "w") as r:
                        r.write(pid)
                except OSError:
                    pass
            rmdir_retry(dirpath)

    def cleanup(self):
        self.rmtree(self.base)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.cleanup()


def move_self(cgdir):
    """Join a cgroup given as a directory path (str or bytes) or an open
    directory fd (for paths longer than PATH_MAX)."""
    if isinstance(cgdir, int):
        fd = os.open("cgroup.procs", os.O_WRONLY, dir_fd=cgdir)
    else:
        fd = os.open(os.path.join(os.fsencode(cgdir), b"cgroup.procs"),
                     os.O_WRONLY)
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)


def set_comm(name):
    """prctl(PR_SET_NAME): any bytes but NUL, 15 kept."""
    if _libc.prctl(PR_SET_NAME, ctypes.c_char_p(name), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NAME)")


# --- workloads ----------------------------------------------------------

Work = collections.namedtuple("Work", "pid tasks processes")


def fork_child(fn):
    """Fork a child that runs fn() and exits 0 (or as fn() exits it,
    with os._exit); if fn() raises, the child says so on stderr and exits
    99, never returning into the test. Returns the child's pid."""
    pid = os.fork()
    if pid == 0:
        try:
            fn()
            os._exit(0)
        except BaseException as e:
            sys.stderr.write("child: %r\n" % (e,))
            os._exit(99)
    return pid


def exits_written(col, comm, n, timeout=30):
    """Wait until col's --events output holds n process exits of comm
    (str); fail after timeout s."""
    deadline = time.monotonic() + timeout
    key = json.dumps({"comm": comm}, separators=(",", ":"))[1:-1].encode()
    while time.monotonic() < deadline:
        got = sum(1 for ln in col.raw().split(b"\n")[:-1]
                  if key in ln and b'"kind":"process"' in ln)
        if got >= n:
            return
        time.sleep(0.1)
    fail("the collector did not write %d exits of %s in %d s" %
         (n, comm, timeout))


def stop_wait(pid, timeout=5):
    """SIGSTOP pid and wait until each of its threads is stopped."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = []
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except OSError:
                pass  # a thread that just exited
        if states and all(st == "T" for st in states):
            return
        time.sleep(0.01)
    fail("pid %d not stopped %g s after SIGSTOP" % (pid, timeout))


def workload(cgdir, procs=0, threads=0, comm=None, code=0, linger=0.3,
             child_comms=()):
    """Run a known workload in cgroup cgdir (a path or a directory fd)
    and wait for it: a forked child joins the cgroup, sets its comm
    (bytes, via prctl; its children inherit it), forks `procs` children
    that exit at once, then one more per entry of `child_comms` (bytes),
    which sets that comm and exits at once, starts and joins `threads`
    threads, and exits with `code`. It stays a zombie for `linger` s
    (waitid WNOWAIT) so the collector can still read its
    /proc/<pid>/cgroup, then is reaped. Returns Work(pid, tasks,
    processes) it caused: tasks = procs + len(child_comms) + threads + 1,
    processes = procs + len(child_comms) + 1."""
    procs_named = list(child_comms)
    r, w = os.pipe()

    def child():
        os.close(r)
        move_self(cgdir)
        if comm is not None:
            set_comm(comm)
        for name in [None] * procs + procs_named:
            c = os.fork()
            if c == 0:
                if name is not None:
                    set_comm(name)
                os._exit(0)
            os.waitpid(c, 0)
        ts = [threading.Thread(target=lambda: None) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        time.sleep(0.05)  # let the threads' exits complete
        os.write(w, b"k")
        os._exit(code)
    pid = fork_child(child)
    os.close(w)
    ok = os.read(r, 1)
    os.close(r)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    time.sleep(linger)
    _, st = os.waitpid(pid, 0)
    if ok != b"k" or os.waitstatus_to_exitcode(st) != code:
        fail("workload in %r failed" % (cgdir,))
    procs += len(procs_named)
    return Work(pid, procs + threads + 1, procs + 1)


# --- one-shot commands ----------------------------------------------------

Ran = collections.namedtuple("Ran", "rc out err seconds")


def run_cmd(cmd, timeout=60):
    """Run cmd to its end with stdin /dev/null: Ran(exit status, stdout
    bytes, stderr text, seconds taken). Past `timeout` s it hung: the
    test fails."""
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        fail("%s hung (more than %ds)" % (" ".join(map(str, cmd)), timeout))
    return Ran(r.returncode, r.stdout, r.stderr.decode("utf-8", "replace"),
               time.monotonic() - t0)


# --- the collector ------------------------------------------------------

class Collector:
    """taskstat-collect as a subprocess, stdout and stderr to files.

    As a context manager: entering waits until it has started; leaving
    the block normally stops it with SIGTERM and requires exit status 0;
    leaving it by an exception kills it. Either way the files are read
    into memory and removed, so raw(), lines() and stderr() still answer
    after the block."""

    def __init__(self, bin_, args, wrap=None, err_pipe=False):
        """err_pipe: stderr is a pipe read only when stderr() is called
        (a reader that lags); err_w is a write end of it for the test."""
        self.args = args
        self._out = self._err = None
        fd, self.out = tempfile.mkstemp(prefix="tsc-e2e-out-")
        os.close(fd)
        self.errf = self.err_r = self.err_w = None
        pre = os.environ.get("TSC_E2E_WRAP", "").split()
        cmd = (wrap or []) + pre + [bin_] + args
        if err_pipe:
            self.err_r, self.err_w = os.pipe()
            os.set_blocking(self.err_r, False)
            self._errbuf = b""
            with open(self.out, "wb") as o:
                self.p = subprocess.Popen(cmd, stdout=o, stderr=self.err_w)
            return
        fd, self.errf = tempfile.mkstemp(prefix="tsc-e2e-err-")
        os.close(fd)
        with open(self.out, "wb") as o, open(self.errf, "wb") as e:
            self.p = subprocess.Popen(cmd, stdout=o, stderr=e)

    def wait_started(self, timeout=START_TIMEOUT):
        """Until the collector has registered (self-test done). It writes
        to stderr only on trouble, so watch for its listener threads."""
        t0 = time.time()
        while time.time() - t0 < timeout:
            if self.p.poll() is not None:
                fail("collector exited early (%d): %s" %
                     (self.p.returncode, self.stderr()))
            try:
                n = len(os.listdir("/proc/%d/task" % self.p.pid))
            except OSError:
                n = 0
            if n >= 2:
                time.sleep(0.2)
                return
            time.sleep(0.05)
        fail("collector did not start: " + self.stderr())

    def stop(self, sig=signal.SIGTERM, timeout=STOP_TIMEOUT):
        """Signal it (if still running) and return its exit status."""
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            fail("collector did not stop within %ds" % timeout)

    def _read(self, path, cached):
        if cached is not None:
            return cached
        if path is None:  # err_pipe: what is in the pipe now, and before
            while True:
                try:
                    d = os.read(self.err_r, 65536)
                except BlockingIOError:
                    break
                if not d:
                    break
                self._errbuf += d
            return self._errbuf
        with open(path, "rb") as f:
            return f.read()

    def raw(self):
        """Its stdout, bytes."""
        return self._read(self.out, self._out)

    def stderr(self):
        return self._read(self.errf, self._err).decode("utf-8", "replace")

    def lines(self):
        """Its stdout as JSON lines (strict_json_lines)."""
        return strict_json_lines(self.raw())

    def cleanup(self):
        """Kill it if still running (no collector outlives its test),
        keep what it wrote in memory, remove the files."""
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        if self._out is None:
            self._out, self._err = self.raw(), self._read(self.errf, None)
        for f in (self.out, self.errf):
            try:
                if f:
                    os.unlink(f)
            except OSError:
                pass
        for fd in (self.err_r, self.err_w):
            if fd is not None:
                os.close(fd)
        self.err_r = self.err_w = None

    def __enter__(self):
        try:
            self.wait_started()
        except BaseException:
            self.cleanup()
            raise
        return self

    def __exit__(self, exc, *a):
        try:
            if exc is None:
                rc = self.stop()
                check(rc == 0, "taskstat-collect %s: exit %d after SIGTERM: "
                      "%s" % (" ".join(self.args), rc, self.stderr()))
        finally:
            self.cleanup()


def port_from_stderr(col, timeout=PORT_TIMEOUT):
    """host:port of --listen ...:0, from the collector's stderr."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        m = re.search(r"serving metrics on http://(\S+)/metrics",
                      col.stderr())
        if m:
            return m.group(1)
        if col.p.poll() is not None:
            fail("collector exited: " + col.stderr())
        time.sleep(0.05)
    fail("no 'serving metrics' line on stderr")


# --- outputs ------------------------------------------------------------

def promcheck(text, what):
    """`promtool check metrics` passes on text (bytes); skip without
    promtool."""
    r = subprocess.run([need_tool("promtool"), "check", "metrics"],
                       input=text, capture_output=True, timeout=30)
    check(r.returncode == 0, "promtool on %s: %s %s" %
          (what, r.stdout.decode(), r.stderr.decode()))


def scrape(hostport, path="/metrics"):
    """GET http://hostport/path (the collector's --listen), as text."""
    with urllib.request.urlopen("http://%s%s" % (hostport, path),
                                timeout=10) as r:
        return r.read().decode()


def workload_value(text, name, labels):
    """The value of taskstat_workload_<name>{<labels>} (labels exactly
    as written, in order) in a Prometheus text, or None."""
    m = re.search(r"^taskstat_workload_%s\{%s\} (\S+)$" %
                  (re.escape(name), re.escape(labels)), text, re.M)
    return None if m is None else float(m.group(1))


def wait_workload(hostport, name, labels, want, timeout=30):
    """Scrape until taskstat_workload_<name>{<labels>} >= want (or the
    timeout); the last text scraped and that value."""
    t0 = time.time()
    while True:
        text = scrape(hostport)
        v = workload_value(text, name, labels)
        if (v is not None and v >= want) or time.time() - t0 > timeout:
            return text, v
        time.sleep(0.3)


def churn_prom_counts(text, prefix):
    """{cgroup: [tasks, processes]} of the cgroups <prefix>/c<i> (those of
    tests/hardening/cgroup_churn.c) in a Prometheus text, and the
    collector's gauges and counters {name: value} (taskstat_collector_
    stripped)."""
    got = {}
    # process exits: one series at --prom-level full, at the lean default
    # one per (exclusive) outcome, summed here
    for m in re.finditer(r'^taskstat_(task|process)_exits_total\{cgroup="(%s'
                         r'/c\d+)"(?:,outcome="\w+")?\} (\d+)$' %
                         re.escape(prefix), text, re.M):
        g = got.setdefault(m.group(2), [0, 0])
        g[m.group(1) == "process"] += int(m.group(3))
    gauges = {m.group(1): float(m.group(2)) for m in re.finditer(
        r"^taskstat_collector_(\w+) (\S+)$", text, re.M)}
    return got, gauges


class Seen:
    """Per cgroup, the largest counts one output showed (counters only
    grow: the largest is the final value if it was ever shown)."""

    def __init__(self):
        self.best = {}
        self.versions = 0

    def add(self, got):
        self.versions += 1
        for p, (t, pr) in got.items():
            b = self.best.setdefault(p, [0, 0])
            b[0], b[1] = max(b[0], t), max(b[1], pr)


def vm_rss_kb(pid):
    """VmRSS of process pid, KiB."""
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M).group(1))


class StreamRebuild:
    """--stream changes (docs/streams.md): each rollup line fed to add()
    comes back as the full state it stands for, as --stream full (and
    /snapshot) would have written it, with "stream": "full"; other lines
    as they are. A change-only line names the rows of the previous state
    it drops (replaced or gone, by position) and the positions its rows
    take in the new one; the rows kept fill the other positions in their
    order."""

    def __init__(self):
        self.rows = None

    def add(self, o):
        if o.get("type") != "rollup" or "stream" not in o:
            return o
        if o["stream"] == "full":
            check("drop" not in o and "at" not in o,
                  "a full line with drop or at")
            self.rows = o["cgroups"]
            return o
        check(o["stream"] == "changes", "stream %r" % o["stream"])
        check(self.rows is not None, "a change-only line before any full "
              "one (seq %s)" % o.get("seq"))
        drop = set(o["drop"])
        check(len(drop) == len(o["drop"]) and
              all(0 <= i < len(self.rows) for i in drop),
              "seq %s: drop %s outside the %d rows" %
              (o.get("seq"), short(o["drop"]), len(self.rows)))
        keep = iter([r for i, r in enumerate(self.rows) if i not in drop])
        n = len(self.rows) - len(drop) + len(o["cgroups"])
        new = [None] * n
        check(len(o["at"]) == len(o["cgroups"]), "at and cgroups differ")
        for at, r in zip(o["at"], o["cgroups"]):
            check(0 <= at < n and new[at] is None, "seq %s: at %d" %
                  (o.get("seq"), at))
            new[at] = r
        self.rows = [r if r is not None else next(keep) for r in new]
        full = {k: v for k, v in o.items() if k not in ("drop", "at")}
        full["stream"] = "full"
        full["cgroups"] = self.rows
        return full


def rebuild_stream(objs):
    """Every line of a --stream changes output as its full state
    (StreamRebuild)."""
    st = StreamRebuild()
    return [st.add(o) for o in objs]


def strict_json_lines(data, rebuild=True):
    """Every line: valid UTF-8, one JSON object with a type (control
    characters in strings rejected, duplicate keys rejected); with
    rebuild, change-only snapshot lines as the full state they stand for
    (rebuild_stream)."""
    def no_dups(pairs):
        keys = [k for k, _ in pairs]
        check(len(keys) == len(set(keys)), "duplicate JSON keys %s" % keys)
        return dict(pairs)
    objs = []
    for i, line in enumerate(data.split(b"\n")):
        if not line:
            continue
        try:
            text = line.decode("utf-8", "strict")
            o = json.loads(text, object_pairs_hook=no_dups, strict=True)
        except (UnicodeDecodeError, ValueError) as e:
            fail("line %d is not UTF-8 JSON: %s: %r" % (i + 1, e,
                                                        line[:300]))
        check(isinstance(o, dict) and "type" in o,
              "line %d is not an object with a type" % (i + 1))
        objs.append(o)
    return rebuild_stream(objs) if rebuild else objs


def final_rollup(objs):
    """The last snapshot, which must be the one and only final one."""
    rolls = [o for o in objs if o["type"] == "rollup"]
    check(rolls, "no rollup line")
    check(rolls[-1].get("final") is True, "last rollup is not final")
    check(sum(1 for o in rolls if o.get("final")) == 1,
          "more than one final rollup")
    return rolls[-1]


def by_path(roll):
    return {c["cgroup"]: c for c in roll["cgroups"]}


def expect_counts(roll, path, tasks, processes, what=""):
    cg = by_path(roll).get(path)
    check(cg is not None, "%s: cgroup %s missing from the snapshot" %
          (what, path))
    check(cg["tasks"] == tasks and cg["processes"] == processes,
          "%s: %s: tasks %d processes %d, expected %d and %d" %
          (what, path, cg["tasks"], cg["processes"], tasks, processes))
    return cg


def utf8_lossy(b):
    """The collector's rendering of arbitrary bytes (cmd/common/escape.h): valid
    UTF-8 sequences kept, every byte that does not start one becomes
    U+FFFD (one per byte, where Python's 'replace' would use one per
    maximal invalid subpart)."""
    out, i = [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                out.append(b[i:i + n].decode("utf-8", "strict"))
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append("\ufffd")
            i += 1
    return "".join(out)


def name_escape(b):
    r"""The collector's reversible rendering of arbitrary bytes in CSV,
    Prometheus label values and the table (cmd/common/escape.h): a backslash
    becomes \\, a byte that does not start a valid UTF-8 sequence \xNN
    (lower-case hex), valid sequences are kept; each format's own quoting
    comes on top."""
    out, i = [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                c = b[i:i + n].decode("utf-8", "strict")
                out.append("\\\\" if c == "\\" else c)
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append("\\x%02x" % b[i])
            i += 1
    return "".join(out)


def name_unescape(s):
    r"""The bytes a name_escape() rendering came from: \\ is a backslash,
    \xNN the byte NN."""
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] != "\\":
            out += s[i].encode()
            i += 1
        elif s[i + 1:i + 2] == "\\":
            out += b"\\"
            i += 2
        else:
            check(s[i + 1:i + 2] == "x", "bad escape in %r" % s)
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
    return bytes(out)
