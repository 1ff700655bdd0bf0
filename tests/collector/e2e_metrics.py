#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""/metrics over HTTP (fetched with curl) and --textfile, both validated
with promtool; per-cgroup self counters and the collector's own metrics."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (vm_rss_kb, Cgroups, Collector, arg, check,  # noqa: E402
                     need_live, need_tool, port_from_stderr, workload)

B = arg(1, "taskstat-collect")
need_live(B)
curl = need_tool("curl")
promtool = need_tool("promtool")
tmp = tempfile.mkdtemp(prefix="tsc-prom-")
textfile = os.path.join(tmp, "taskstat.prom")


def fetch(url, *extra):
    r = subprocess.run([curl, "-sS", "--max-time", "10", "-D", "-"] +
                       list(extra) + [url], capture_output=True, timeout=30)
    check(r.returncode == 0, "curl %s: %s" % (url, r.stderr))
    head, _, body = r.stdout.partition(b"\r\n\r\n")
    return head.decode(), body


def promcheck(text, what):
    r = subprocess.run([promtool, "check", "metrics"], input=text,
                       capture_output=True, timeout=30)
    check(r.returncode == 0, "promtool on %s: %s %s" %
          (what, r.stdout.decode(), r.stderr.decode()))


def value(text, metric, cgroup):
    pat = re.compile(r'^%s\{cgroup="%s"\} (\S+)$' % (re.escape(metric),
                                                     re.escape(cgroup)),
                     re.M)
    m = pat.search(text)
    return float(m.group(1)) if m else None


try:
    with Cgroups("prom") as cg:
        d = cg.mkdir("svc")
        with Collector(B, ["-f", "jsonl", "-i", "0.3", "--listen",
                           "127.0.0.1:0", "--textfile", textfile]) as col:
            hostport = port_from_stderr(col)
            base = "http://%s" % hostport
            # served before the first interval too
            head, body = fetch(base + "/metrics")
            check(" 200 " in head.split("\r\n")[0], "status: " + head)
            check("text/plain; version=0.0.4" in head, "content type: " +
                  head)
            w = workload(d, procs=4, threads=2)
            time.sleep(0.8)  # a snapshot after the work
            head, body = fetch(base + "/metrics")
            text = body.decode("utf-8")
            promcheck(body, "/metrics")
            p = cg.path("svc")
            check(value(text, "taskstat_task_exits_total", p) == w.tasks,
                  "task_exits_total{%s} = %s" %
                  (p, value(text, "taskstat_task_exits_total", p)))
            # lean (the default): one exclusive outcome per process exit
            outs = dict(re.findall(r'^taskstat_process_exits_total\{cgroup='
                                   r'"%s",outcome="(\w+)"\} (\S+)$' %
                                   re.escape(p), text, re.M))
            check(sum(float(v) for v in outs.values()) == w.processes and
                  {"clean", "exit_nonzero", "signaled",
                   "core_dumped"} <= set(outs), "process_exits_total %s" %
                  outs)
            # self values only: the parent has none of its own, and lean
            # does not export a cgroup without exits of its own
            check(value(text, "taskstat_task_exits_total", cg.path()) is
                  None, "parent cgroup exported without exits of its own")
            for m in ("taskstat_collector_records_total",
                      "taskstat_collector_dropped_total",
                      "taskstat_collector_unattributed_total",
                      "taskstat_collector_malformed_total",
                      "taskstat_collector_shards",
                      "taskstat_collector_receive_buffer_bytes{shard=\"0\""):
                check(re.search("^" + re.escape(m), text, re.M),
                      "missing " + m)
            for line in text.splitlines():
                if line.startswith("taskstat_") and "_seconds_total" in line:
                    float(line.rsplit(" ", 1)[1])
            # sum() over cgroups of self values == records accounted
            tasks = sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
                        if l.startswith("taskstat_task_exits_total{"))
            recs = float(re.search(r"^taskstat_collector_records_total (\S+)",
                                   text, re.M).group(1))
            check(tasks <= recs, "sum of task exits %s > records %s" %
                  (tasks, recs))
            # gzip when Accept-Encoding asks (q=0, unknown: identity)
            for ae, gz in (("gzip", True), ("br, gzip;q=0.5", True),
                           ("*", True), ("gzip;q=0", False), ("br", False),
                           ("gzip;q=0, *", False)):
                head, zbody = fetch(base + "/metrics", "-H",
                                    "Accept-Encoding: " + ae)
                low = head.lower()
                vary = re.search(r"^vary:(.*)$", low, re.M)
                check(vary and "accept-encoding" in vary.group(1),
                      "no Vary: Accept-Encoding: " + head)
                check(("content-encoding: gzip" in low) == gz,
                      "Accept-Encoding %r: %s" % (ae, head))
                if gz:
                    text2 = gzip.decompress(zbody).decode("utf-8")
                    check(value(text2, "taskstat_task_exits_total", p) ==
                          w.tasks, "gzip body differs")
                    check(len(zbody) < len(body), "gzip not smaller")
            head, zbody = fetch(base + "/snapshot", "-H",
                                "Accept-Encoding: gzip")
            check("content-encoding: gzip" in head.lower(), head)
            json.loads(gzip.decompress(zbody))
            # HEAD, 404, 405
            head, body = fetch(base + "/metrics", "-I")
            check(" 200 " in head.split("\r\n")[0], "HEAD /metrics: " + head)
            head, _ = fetch(base + "/nope")
            check(" 404 " in head.split("\r\n")[0], "404: " + head)
            head, _ = fetch(base + "/metrics", "-X", "POST")
            check(" 405 " in head.split("\r\n")[0], "405: " + head)
            # liveness and readiness: small bodies, both spellings, HEAD
            for url, want in (("/healthz", b"ok\n"), ("/-/healthy", b"ok\n"),
                              ("/ready", b"ready\n"),
                              ("/-/ready", b"ready\n")):
                head, body = fetch(base + url)
                check(" 200 " in head.split("\r\n")[0] and body == want,
                      "%s: %s %r" % (url, head, body))
            head, _ = fetch(base + "/healthz", "-I")
            check(" 200 " in head.split("\r\n")[0], "HEAD /healthz: " + head)
            # the process metrics of the client libraries, and build_info
            for m in ("process_cpu_seconds_total", "process_open_fds",
                      "process_max_fds", "process_resident_memory_bytes",
                      "process_virtual_memory_bytes",
                      "process_start_time_seconds"):
                mm = re.search(r"^%s (\S+)$" % m, text, re.M)
                check(mm and float(mm.group(1)) > 0, "%s: %s" % (m, mm))
            rss = float(re.search(r"^process_resident_memory_bytes (\S+)$",
                                  text, re.M).group(1))
            check(rss == vm_rss_kb(col.p.pid) * 1024 or
                  abs(rss - vm_rss_kb(col.p.pid) * 1024) < 64 << 20,
                  "process_resident_memory_bytes %d vs VmRSS" % rss)
            bi = re.search(r'^taskstat_build_info\{version="([^"]+)",'
                           r'revision="[^"]+",libcgstats="([^"]+)",'
                           r'kernel_source="(yes|no)"\} 1$', text, re.M)
            check(bi, "taskstat_build_info missing or malformed")
            # the textfile: atomically replaced, valid, no temp files left
            with open(textfile, "rb") as f:
                tf = f.read()
            promcheck(tf, "--textfile")
            check(value(tf.decode(), "taskstat_task_exits_total", p) ==
                  w.tasks, "textfile count")
        left = [f for f in os.listdir(tmp) if f != "taskstat.prom"]
        check(not left, "temp files left: %s" % left)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
