#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""taskstat-collect side by side with prometheus-process-exporter (issue 22
item 6; a benchmark, not a test; root, cgroup2 at /sys/fs/cgroup/unified,
Debian's prometheus-process-exporter, 0.7.10 in bookworm).

Both run on the same host at once, each as a user runs it:

* the collector: `--listen 127.0.0.1:PORT --interval 1 -o FILE`;
* process-exporter: `-web.listen-address 127.0.0.1:PORT+1 -config.path CFG`
  (its defaults otherwise: -children, -threads, -gather-smaps), CFG
  grouping every process by its command name (process-exporter's README
  example: `name: "{{.Comm}}"`, `cmdline: ['.+']`).

Then:

1. Series: per process-exporter group (the namedprocess_namegroup_* series
   of each groupname; median and the burners' group) against the
   collector's series per exported cgroup (the burners' cgroup).
2. CPU per scrape, R rounds interleaved: a window with no scrape (the
   tools' own idle CPU, the collector's snapshots), then scrapes of each
   tool back to back for --scrape-time seconds; CPU (utime+stime from
   /proc/PID/stat) less the idle rate over the same wall time, per scrape.
3. Short-lived processes: N (1,000) children born one after the other in
   cgroup2 cgroup /benchh-vs/burn (clone3 CLONE_INTO_CGROUP), each named
   benchh-burn (prctl PR_SET_NAME), burning about --burn-ms (3) ms of CPU
   and exiting; both tools scraped every --every (1) s meanwhile and after.
   What each counts: process-exporter, the sum over the scrapes of the
   group's num_procs (processes seen alive at a scrape; none of these
   lives across two scrapes) and its cpu_seconds_total; the collector,
   the cgroup's process exits and user+system CPU; against the children's
   own rusage (wait4).

The machine is shared: other work's processes and cgroups are seen by both
tools too. Prints markdown tables; --json FILE keeps the raw figures.

  python3 bench/run-vs-process-exporter.py [--build build] [--port 41710]
      [--procs 1000] [--burn-ms 3] [--every 1] [--rounds 3]
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "run_scale", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "run-scale.py"))
rs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rs)

U = rs.U
PE = "prometheus-process-exporter"
PR_SET_NAME = 15
CFG = """process_names:
  - name: "{{.Comm}}"
    cmdline:
    - '.+'
"""


def log(*a):
    print("[vs-pe %s]" % time.strftime("%H:%M:%S"), *a, file=sys.stderr,
          flush=True)


class Exporter:
    """prometheus-process-exporter on 127.0.0.1:port."""

    def __init__(self, binary, port, tmp):
        self.port = port
        cfg = os.path.join(tmp, "pe.yml")
        with open(cfg, "w") as f:
            f.write(CFG)
        self.err = open(os.path.join(tmp, "pe.log"), "w")
        self.args = [binary, "-web.listen-address", "127.0.0.1:%d" % port,
                     "-config.path", cfg]
        self.p = subprocess.Popen(self.args, stdin=subprocess.DEVNULL,
                                  stdout=self.err, stderr=self.err)
        t = time.time() + 30
        while True:
            if self.p.poll() is not None:
                raise SystemExit("%s exited %d" % (binary, self.p.returncode))
            try:
                self.get({})
                return
            except OSError:
                if time.time() > t:
                    raise SystemExit("%s does not answer" % binary)
                time.sleep(0.2)

    get = rs.Collector.get

    def cpu(self):
        return rs.cpu_s(self.p.pid)

    def rss(self):
        return rs.rss_mib(self.p.pid)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()


def samples(body):
    """[(name, {label: value}, value)] of a text exposition."""
    out = []
    lab = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
    for ln in body.decode("utf-8", "replace").splitlines():
        if not ln or ln[0] == "#":
            continue
        i = ln.find("{")
        if i >= 0:
            j = ln.rindex("}")
            name, labels, val = ln[:i], dict(lab.findall(ln[i + 1:j])), \
                ln[j + 1:].split()[0]
        else:
            name, val = ln.split()[:2]
            labels = {}
        try:
            out.append((name, labels, float(val)))
        except ValueError:
            pass
    return out


def pe_group(smp, group):
    """(num_procs, cpu seconds) of one process-exporter group."""
    n = cpu = 0.0
    for name, lab, v in smp:
        if lab.get("groupname") != group:
            continue
        if name == "namedprocess_namegroup_num_procs":
            n = v
        elif name == "namedprocess_namegroup_cpu_seconds_total":
            cpu += v
    return n, cpu


def col_cgroup(smp, cg):
    """(process exits, user+system CPU seconds) of one cgroup."""
    n = cpu = 0.0
    for name, lab, v in smp:
        if lab.get("cgroup") != cg:
            continue
        if name == "taskstat_process_exits_total":
            n += v
        elif name in ("taskstat_user_cpu_seconds_total",
                      "taskstat_system_cpu_seconds_total"):
            cpu += v
    return n, cpu


def burn(d, n, ms, on_tick, every):
    """n children, one after the other, born in cgroup d, each burning ms
    of CPU; on_tick() every `every` seconds meanwhile. Returns the
    children's CPU seconds (rusage) and the wall time."""
    libc = ctypes.CDLL(None, use_errno=True)
    total = 0.0
    t0 = time.time()
    nxt = t0 + every
    for _ in range(n):
        pid = rs.spawn_in(d)
        if pid == 0:
            try:
                libc.prctl(PR_SET_NAME, b"benchh-burn", 0, 0, 0)
                c0 = time.process_time()
                while time.process_time() - c0 < ms / 1e3:
                    pass
            finally:
                os._exit(0)
        _, _, ru = os.wait4(pid, 0)
        total += ru.ru_utime + ru.ru_stime
        if time.time() >= nxt:
            on_tick()
            nxt = time.time() + every
    return total, time.time() - t0


def scrape_cpu(tool, secs):
    """(CPU seconds, scrapes, wall seconds) of scraping tool for secs."""
    c0, t0, k = tool.cpu(), time.time(), 0
    while k < 3 or time.time() < t0 + secs:
        tool.get({})
        k += 1
    return tool.cpu() - c0, k, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--binary", help="taskstat-collect (default: "
                    "BUILD/cmd/taskstat-collect)")
    ap.add_argument("--process-exporter", default=shutil.which(PE) or PE)
    ap.add_argument("--port", type=int, default=41710,
                    help="the collector's; process-exporter's is PORT+1")
    ap.add_argument("--procs", type=int, default=1000)
    ap.add_argument("--burn-ms", type=float, default=3)
    ap.add_argument("--every", type=float, default=1,
                    help="scrape interval during the burn")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle", type=float, default=5)
    ap.add_argument("--scrape-time", type=float, default=4)
    ap.add_argument("--json")
    a = ap.parse_args()
    a.binary = a.binary or os.path.join(a.build, "cmd", "taskstat-collect")
    if not os.access(U + "/cgroup.procs", os.W_OK):
        print("needs root and cgroup2 at %s" % U, file=sys.stderr)
        return 77
    if not shutil.which(a.process_exporter):
        print("needs %s (apt-get install prometheus-process-exporter)" % PE,
              file=sys.stderr)
        return 77
    ver = subprocess.run([a.process_exporter, "-version"],
                         capture_output=True, text=True)
    ver = (ver.stdout + ver.stderr).strip().splitlines()[0]
    tmp = tempfile.mkdtemp(prefix="benchh-vs-", dir="/var/tmp")
    root = U + "/benchh-vs"
    cg = "/benchh-vs/burn"
    rs.remove_cgroups(root)
    os.makedirs(U + cg)
    col = pe = None
    r = {"process_exporter": ver}
    try:
        col = rs.Collector(a.binary, a.port, os.path.join(tmp, "out.jsonl"),
                           [], os.path.join(tmp, "collector.log"))
        pe = Exporter(a.process_exporter, a.port + 1, tmp)
        time.sleep(3)
        tools = {"process-exporter": pe, "taskstat-collect": col}
        # 3: the short-lived processes first (both tools fresh)
        pe_seen = [0.0]

        def tick():
            n, _ = pe_group(samples(pe.get({})[3]), "benchh-burn")
            pe_seen[0] += n
            col.get({})
        pe0 = pe_group(samples(pe.get({})[3]), "benchh-burn")
        log("burning %d processes" % a.procs)
        truth, wall = burn(U + cg, a.procs, a.burn_ms, tick, a.every)
        time.sleep(2.5)  # a snapshot after the last exit
        tick()
        pe1 = pe_group(samples(pe.get({})[3]), "benchh-burn")
        c1 = col_cgroup(samples(col.get({})[3]), cg)
        r.update(procs=a.procs, burn_wall_s=wall, truth_cpu_s=truth,
                 pe_seen=pe_seen[0], pe_cpu_s=pe1[1] - pe0[1],
                 col_exits=c1[0], col_cpu_s=c1[1])
        # 1: series
        body = pe.get({})[3]
        r["bytes_process-exporter"] = len(body)
        smp = samples(body)
        groups = {}
        for name, lab, _ in smp:
            if name.startswith("namedprocess_namegroup_") and \
                    "groupname" in lab:
                groups[lab["groupname"]] = groups.get(lab["groupname"], 0) + 1
        r["pe_groups"] = len(groups)
        r["pe_series"] = sum(groups.values())
        r["pe_series_per_group_median"] = statistics.median(groups.values()) \
            if groups else None
        r["pe_series_burn_group"] = groups.get("benchh-burn")
        body = col.get({})[3]
        r["bytes_taskstat-collect"] = len(body)
        smp = samples(body)
        cgs = {}
        for name, lab, _ in smp:
            if name.startswith("taskstat_") and "cgroup" in lab:
                cgs[lab["cgroup"]] = cgs.get(lab["cgroup"], 0) + 1
        r["col_cgroups"] = len(cgs)
        r["col_series"] = sum(cgs.values())
        r["col_series_per_cgroup_median"] = statistics.median(cgs.values()) \
            if cgs else None
        r["col_series_burn_cgroup"] = cgs.get(cg)
        r["host_processes"] = sum(1 for x in os.listdir("/proc")
                                  if x.isdigit())
        # 2: CPU per scrape, interleaved rounds
        per = {k: [] for k in tools}
        for rd in range(a.rounds):
            c0 = {k: t.cpu() for k, t in tools.items()}
            t0 = time.time()
            time.sleep(a.idle)
            w = time.time() - t0
            idle = {k: (t.cpu() - c0[k]) / w for k, t in tools.items()}
            for k, t in tools.items():
                cpu, n, wall = scrape_cpu(t, a.scrape_time)
                per[k].append((cpu - idle[k] * wall) / n)
            log("round %d: %s" % (rd, {k: "%.1f ms" % (v[-1] * 1e3)
                                       for k, v in per.items()}))
        for k, v in per.items():
            r["cpu_per_scrape_ms_" + k] = 1e3 * statistics.median(v)
            r["rss_mib_" + k] = tools[k].rss()
    finally:
        for t in (col, pe):
            if t is not None:
                t.stop()
        rs.remove_cgroups(root)
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print("process-exporter: %s; collector: %s --listen 127.0.0.1:%d "
          "--interval 1 -o FILE; load average at the end %s; %d CPUs; %d "
          "processes on the host" % (ver, a.binary, a.port, load,
                                     os.cpu_count(), r["host_processes"]))
    print()
    print("| | process-exporter | taskstat-collect |")
    print("|---|---:|---:|")
    print("| series per group / per exported cgroup (median; the burners') "
          "| %s; %s | %s; %s |" % (
              r["pe_series_per_group_median"], r["pe_series_burn_group"],
              r["col_series_per_cgroup_median"], r["col_series_burn_cgroup"]))
    print("| groups / cgroups exported, their series | %d, %d | %d, %d |" % (
        r["pe_groups"], r["pe_series"], r["col_cgroups"], r["col_series"]))
    print("| scrape bytes | {:,} | {:,} |".format(
        r["bytes_process-exporter"], r["bytes_taskstat-collect"]))
    print("| CPU per scrape (median of %d, net of idle) | %.1f ms | %.1f ms |"
          % (a.rounds, r["cpu_per_scrape_ms_process-exporter"],
             r["cpu_per_scrape_ms_taskstat-collect"]))
    print("| VmRSS | %.1f MiB | %.1f MiB |" % (
        r["rss_mib_process-exporter"], r["rss_mib_taskstat-collect"]))
    print("| of %d processes of ~%g ms CPU (%.2f s in all, rusage; %.1f s "
          "wall, scraped every %g s): counted | %d (seen alive at a scrape) "
          "| %d (process exits) |" % (
              a.procs, a.burn_ms, r["truth_cpu_s"], r["burn_wall_s"],
              a.every, r["pe_seen"], r["col_exits"]))
    print("| their CPU counted | %.3f s | %.3f s |" % (r["pe_cpu_s"],
                                                     r["col_cpu_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
