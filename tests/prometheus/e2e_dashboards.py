#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every query of the Grafana dashboard and every rule of the Prometheus
rules, against a real Prometheus scraping a real collector.

A workload in a cgroup of the test's own (named demo.service, so that
--prom-workload-labels gives it a unit) keeps running processes that exit
cleanly, with status 3, by SIGSEGV and by SIGKILL, and one that burns a
little CPU. taskstat-collect serves /metrics (--comms and --prom-comms so
the top-commands panel has series, --prom-workload-labels for the unit
variable). The same workload runs in a pod's container laid out as
containerd's CRI does (kubepods-shaped cgroup, the OCI spec with the CRI's
annotations under --containerd-state), for the namespace and pod
variables and the per-pod panels. Prometheus scrapes it every second and
evaluates
packaging/prometheus/taskstat-rules.yml every second. Once it holds
enough samples that a 10 s rate window has several:

- every template variable query (Grafana's label_values(), done with the
  label values API) returns values;
- every panel target of packaging/grafana/taskstat.json, with the
  variables at "All" (.*) and then at the workload's real job, instance,
  unit, cgroup, namespace and pod (regex-escaped as Grafana escapes them), and
  $__rate_interval = $__interval = 10s, $__range = 1m, returns data;
- with the real cgroup, the numbers say what the workload did: exits per
  second > 0, every outcome but core dumps and OOM kills > 0 (lean:
  exclusive outcomes), SIGSEGV and SIGKILL counted;
- every recording rule has a series, every rule evaluated without error,
  TaskstatCrashLoop is pending for the workload's cgroup (it crashes
  several times a second) and TaskstatCollectorDown is not active.

With "native" (the third argument), Prometheus runs with
--enable-feature=native-histograms: it asks for the protobuf exposition
and keeps only the native histograms (no _bucket series). The same
panels must have data (the quantile panels ask for both forms, joined with
`or`; the heatmap panels are classic only and are not asked then), every
distribution is a native histogram, and none has _bucket series. In both
modes a second cgroup (known.service) runs `sleep 0.3` processes, and
histogram_quantile(0.9, ...) of their process lifetime over 1m must fall
in the bucket of 0.3 s: (0.25, 0.5] (schema 0: within a factor of 2).

Usage: e2e_dashboards.py TASKSTAT-COLLECT [SOURCE-DIR [native]]
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, fail, move_self,  # noqa
                     need_live, need_tool, port_from_stderr, short)

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = (os.path.abspath(sys.argv[2]) if len(sys.argv) > 2
       else os.path.normpath(os.path.join(HERE, "..", "..")))
DASHBOARD = os.path.join(SRC, "packaging", "grafana", "taskstat.json")
RULES = os.path.join(SRC, "packaging", "prometheus", "taskstat-rules.yml")
NATIVE = len(sys.argv) > 3 and sys.argv[3] == "native"
JOB = "taskstat"
RATE = "10s"        # for $__rate_interval and $__interval
RANGE = "1m"        # for $__range
MIN_SAMPLES = 8     # scrapes before querying: a 10 s window holds >= 2
SCRAPE_TIMEOUT = 30

# Runs in the workload cgroup until killed: a clean exit, a non-zero one,
# a SIGSEGV (no core file: ulimit -c 0) and a SIGKILL each round, and a
# short CPU burner.
WORK = r"""
ulimit -c 0
while :; do
	/bin/true
	sh -c 'exit 3'
	sh -c 'kill -SEGV $$'
	sh -c 'kill -KILL $$'
	sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'
	sleep 0.1
done
"""
KNOWN = "while :; do sleep 0.3; done"
KNOWN_S = 0.3


# A pod's container as containerd's CRI lays it out (as collector_e2e_identity
# does): a kubepods-shaped cgroup and the OCI spec with the CRI's
# annotations under the state directory given by --containerd-state, so
# the namespace and pod variables and the per-pod panels have data.
POD_UID = "5d0c1f2e-3a4b-4c5d-8e9f-%012x" % (os.getpid() & 0xffffffffffff)
CID = "%064x" % (0xdead0000 + os.getpid())
POD_CG = ("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s"
          ".slice/cri-containerd-%s.scope" % (POD_UID.replace("-", "_"), CID))
NAMESPACE, POD = "dash-ns", "dash-pod-7f9c"


def containerd_state(tmp):
    state = os.path.join(tmp, "containerd")
    d = os.path.join(state, "io.containerd.runtime.v2.task", "k8s.io", CID)
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"ociVersion": "1.0.2", "annotations": {
            "io.kubernetes.cri.container-type": "container",
            "io.kubernetes.cri.container-name": "app",
            "io.kubernetes.cri.sandbox-name": POD,
            "io.kubernetes.cri.sandbox-namespace": NAMESPACE,
            "io.kubernetes.cri.sandbox-uid": POD_UID,
            "io.kubernetes.cri.image-name": "registry.example/app:1"}}, f)
    logs = os.path.join(tmp, "kubelet-logs")
    os.makedirs(os.path.join(logs, "pods"))
    os.makedirs(os.path.join(logs, "containers"))
    return state, logs


def start_work(cgdir, tmp):
    return subprocess.Popen(["sh", "-c", WORK], cwd=tmp,
                            preexec_fn=lambda: move_self(cgdir),
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Prometheus:
    def __init__(self, exe, target, tmp):
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        conf = os.path.join(tmp, "prometheus.yml")
        with open(conf, "w") as f:  # JSON is YAML
            json.dump({
                "global": {"scrape_interval": "1s",
                           "scrape_timeout": "1s",
                           "evaluation_interval": "1s"},
                "rule_files": [RULES],
                "scrape_configs": [{
                    "job_name": JOB,
                    "static_configs": [{"targets": [target]}]}],
            }, f)
        self.errf = os.path.join(tmp, "prometheus.log")
        with open(self.errf, "wb") as e:
            self.p = subprocess.Popen(
                [exe, "--config.file=" + conf,
                 "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
                 "--web.listen-address=127.0.0.1:%d" % self.port,
                 "--log.level=warn"] +
                (["--enable-feature=native-histograms"] if NATIVE else []),
                stdout=e, stderr=e, stdin=subprocess.DEVNULL)

    def log(self):
        with open(self.errf, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def get(self, path, **params):
        url = self.base + path
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = json.load(r)
        except urllib.error.HTTPError as e:
            fail("%s: HTTP %d: %s" % (short(url, 400), e.code,
                                      e.read().decode("utf-8", "replace")))
        check(body.get("status") == "success",
              "%s: %s" % (short(url, 400), body))
        return body["data"]

    def query(self, expr, at=None):
        kw = {"time": at} if at is not None else {}
        return self.get("/api/v1/query", query=expr, **kw)["result"]

    def wait_ready(self, timeout=30):
        t0 = time.time()
        while time.time() - t0 < timeout:
            if self.p.poll() is not None:
                fail("prometheus exited (%d): %s" % (self.p.returncode,
                                                     self.log()))
            try:
                with urllib.request.urlopen(self.base + "/-/ready",
                                            timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        fail("prometheus not ready after %ds: %s" % (timeout, self.log()))

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def grafana_regex(value):
    """A variable value as Grafana puts it into a Prometheus =~ matcher:
    regex metacharacters escaped, each backslash doubled for the PromQL
    string literal."""
    return re.sub(r"([\\$^*+?.()|{}\[\]'])", r"\\\\\1", value)


def targets(dash):
    """(panel title, expr) of every panel target, rows' panels included,
    but not those of a row for --prom-level full (the collector runs with
    its lean default here)."""
    out = []

    def walk(panels):
        for p in panels:
            if "--prom-level full" in p.get("title", ""):
                continue
            if NATIVE and "heatmap" in p.get("title", ""):
                continue  # classic _bucket only (Grafana's own form)
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((p.get("title", "?"), t["expr"]))
            walk(p.get("panels", []))
    walk(dash["panels"])
    return out


def check_layout(dash):
    """What Grafana would reject or render wrong, checked without it."""
    ids, refs = set(), re.compile(r"\$(\w+)|\$\{(\w+)(?::\w+)?\}")
    names = {v["name"] for v in dash["templating"]["list"]}
    builtin = {"__rate_interval", "__interval", "__range"}

    def walk(panels):
        for p in panels:
            check(p["id"] not in ids, "duplicate panel id %d" % p["id"])
            ids.add(p["id"])
            g = p["gridPos"]
            check(0 <= g["x"] and g["x"] + g["w"] <= 24 and g["h"] > 0,
                  "panel %r outside the 24-column grid: %s" % (p["title"], g))
            if p["type"] != "row":
                check(p.get("datasource", {}).get("uid") == "${datasource}",
                      "panel %r: not on the datasource variable" % p["title"])
                check(p.get("targets"), "panel %r has no target" % p["title"])
                r = [t["refId"] for t in p["targets"]]
                check(len(r) == len(set(r)), "panel %r: refIds %s" %
                      (p["title"], r))
            for t in p.get("targets", []):
                for m in refs.finditer(t["expr"]):
                    v = m.group(1) or m.group(2)
                    check(v in names or v in builtin,
                          "panel %r uses an undefined variable $%s" %
                          (p["title"], v))
            walk(p.get("panels", []))
    walk(dash["panels"])


def substitute(expr, values):
    for k, v in values.items():
        expr = expr.replace("${%s}" % k, v).replace("$" + k, v)
    check("$" not in expr, "unsubstituted variable in %s" % expr)
    return expr


def scalar(result):
    check(len(result) == 1, "one series expected: %s" % short(result, 600))
    return float(result[0]["value"][1])


def main():
    bin_ = arg(1, "TASKSTAT-COLLECT [SOURCE-DIR]")
    need_live(bin_)
    prom_exe = need_tool("prometheus")
    with open(DASHBOARD) as f:
        dash = json.load(f)
    check_layout(dash)
    exprs = targets(dash)
    check(len(exprs) >= 20, "only %d panel targets" % len(exprs))
    with open(RULES) as f:
        records = re.findall(r"^\s*- record:\s*(\S+)", f.read(), re.M)
    check(records, "no recording rule in " + RULES)

    with Cgroups("dash") as cg, \
            tempfile.TemporaryDirectory(prefix="tsc-dash-") as tmp:
        cgdir = cg.mkdir("demo.service")
        cgpath = cg.path("demo.service")
        poddir = cg.mkdir(POD_CG)
        kdir = cg.mkdir("known.service")
        kpath = cg.path("known.service")
        state, logs = containerd_state(tmp)
        col = Collector(bin_, ["--listen", "127.0.0.1:0", "-i", "1",
                               "-f", "jsonl", "-o", os.devnull,
                               "--comms", "5", "--prom-comms",
                               "--prom-workload-labels",
                               "--containerd-state", state,
                               "--kubelet-logs", logs])
        work = podwork = known = prom = None
        try:
            col.wait_started()
            target = port_from_stderr(col)
            work = start_work(cgdir, tmp)
            podwork = start_work(poddir, tmp)
            known = subprocess.Popen(["sh", "-c", KNOWN], cwd=tmp,
                                     preexec_fn=lambda: move_self(kdir),
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            prom = Prometheus(prom_exe, target, tmp)
            prom.wait_ready()
            t0 = time.time()
            sel = 'up{job="%s"}' % JOB
            while True:
                r = prom.query("count_over_time(%s[1m])" % sel)
                if r and float(r[0]["value"][1]) >= MIN_SAMPLES:
                    break
                if time.time() - t0 > SCRAPE_TIMEOUT:
                    fail("fewer than %d scrapes in %ds: %s\n%s" %
                         (MIN_SAMPLES, SCRAPE_TIMEOUT, r, prom.log()))
                time.sleep(0.5)
            check(scalar(prom.query(sel)) == 1,
                  "the scrape fails: %s" % prom.get(
                      "/api/v1/targets")["activeTargets"])
            print("%d scrapes of %s in %.1fs" % (MIN_SAMPLES, target,
                                                time.time() - t0))
            run_checks(prom, dash, exprs, records, target, cgpath)
            check_distributions(prom, target, cgpath, kpath)
        finally:
            for w in (work, podwork, known):
                if w:
                    w.kill()
                    w.wait()
            if prom:
                prom.stop()
            rc = col.stop()
            col.cleanup()
        check(rc == 0, "collector exit %d: %s" % (rc, col.stderr()))
    print("OK")


def run_checks(prom, dash, exprs, records, target, cgpath):
    # 1. the template variables' label_values() queries
    for v in dash["templating"]["list"]:
        if v["type"] != "query":
            continue
        m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", v["query"])
        check(m, "variable %s: not label_values(selector, label): %s" %
              (v["name"], v["query"]))
        match = substitute(m.group(1), {"job": ".*", "instance": ".*",
                                        "unit": ".*", "namespace": ".*"})
        vals = prom.get("/api/v1/label/%s/values" % m.group(2),
                        **{"match[]": match, "start": time.time() - 60})
        check(vals, "variable %s (%s): no values" % (v["name"], v["query"]))
        print("variable %s: %d values" % (v["name"], len(vals)))
    unit = cgpath.rsplit("/", 1)[1]
    passes = {
        "all": {"job": ".*", "instance": ".*", "unit": ".*", "cgroup": ".*",
                "namespace": ".*", "pod": ".*"},
        "real": {"job": grafana_regex(JOB),
                 "instance": grafana_regex(target),
                 "unit": grafana_regex(unit),
                 "cgroup": grafana_regex(cgpath),
                 "namespace": grafana_regex(NAMESPACE),
                 "pod": grafana_regex(POD)},
    }
    # 2. every panel target, with both sets of values
    for name, values in passes.items():
        values = dict(values, __rate_interval=RATE, __interval=RATE,
                      __range=RANGE)
        for title, e in exprs:
            q = substitute(e, values)
            r = prom.query(q)
            check(r, "panel %r (%s values): no data for %s" %
                  (title, name, q))
            # a number, not only NaN (a quantile of empty buckets, 0/0)
            check(any(x["value"][1] not in ("NaN", "+Inf", "-Inf")
                      for x in r), "panel %r (%s values): only %s for %s" %
                  (title, name, [x["value"][1] for x in r], q))
        print("%s: %d panel queries, each with data" % (name, len(exprs)))

    # 3. the numbers the workload made, through the dashboard's selectors
    f = 'job="%s",instance="%s",cgroup="%s"' % (JOB, target, cgpath)
    v = scalar(prom.query("sum(rate(taskstat_process_exits_total{%s}[%s]))"
                          % (f, RATE)))
    check(v > 0, "process exits/s of %s: %s" % (cgpath, v))
    at = time.time() - 2  # one instant for both: the counters move
    out = {r["metric"]["outcome"]: float(r["value"][1]) for r in
           prom.query("taskstat_process_exits_total{%s}" % f, at)}
    for o in ("clean", "exit_nonzero", "signaled"):
        check(out.get(o, 0) > 0, "outcome %s of %s: %s" % (o, cgpath, out))
    check("core_dumped" in out and "oom_killed" in out,
          "outcomes of %s: %s" % (cgpath, out))
    sig = {r["metric"]["signal"]: float(r["value"][1]) for r in
           prom.query("taskstat_process_signals_total{%s}" % f, at)}
    check(sig.get("SIGSEGV", 0) > 0 and sig.get("SIGKILL", 0) > 0,
          "signals of %s: %s" % (cgpath, sig))
    check(out["signaled"] >= sig["SIGSEGV"] + sig["SIGKILL"] - 1e-9,
          "signaled %s < SIGSEGV + SIGKILL %s" % (out, sig))
    u = prom.query('taskstat_task_exits_total{%s}' % f)
    check(u and u[0]["metric"].get("unit") == unit,
          "unit label of %s: %s" % (cgpath, u))
    print("workload %s: outcomes %s, signals %s" % (cgpath, out, sig))

    # 4. the rules, evaluated on these series
    for rec in records:
        check(prom.query(rec), "recording rule %s: no series" % rec)
    print("%d recording rules, each with series" % len(records))
    deadline = time.time() + 10
    while True:
        groups = prom.get("/api/v1/rules")["groups"]
        rules = [r for g in groups for r in g["rules"]]
        pending = [a for a in prom.get("/api/v1/alerts")["alerts"]
                   if a["labels"]["alertname"] == "TaskstatCrashLoop" and
                   a["labels"].get("cgroup") == cgpath]
        if pending or time.time() > deadline:
            break
        time.sleep(0.5)
    check(len(rules) == len(records) + sum(
        1 for r in rules if r["type"] == "alerting"), "rules: %s" % rules)
    for r in rules:
        check(r["health"] == "ok", "rule %s: %s %s" % (
            r["name"], r["health"], r.get("lastError")))
    check(pending and pending[0]["state"] in ("pending", "firing"),
          "TaskstatCrashLoop not active for %s: %s" % (
              cgpath, prom.get("/api/v1/alerts")))
    down = [a for a in prom.get("/api/v1/alerts")["alerts"]
            if a["labels"]["alertname"] == "TaskstatCollectorDown"]
    check(not down, "TaskstatCollectorDown active: %s" % down)
    print("%d rules healthy; TaskstatCrashLoop %s for %s" % (
        len(rules), pending[0]["state"], cgpath))


def check_distributions(prom, target, cgpath, kpath):
    """Native (with the feature) or classic, and a known quantile."""
    f = 'job="%s",instance="%s",cgroup="%s"' % (JOB, target, kpath)
    name = "taskstat_process_lifetime_seconds"
    r = prom.query("%s{%s}" % (name, f))
    b = prom.query("count(%s_bucket{%s})" % (name, f))
    if NATIVE:
        check(r and all("histogram" in x for x in r),
              "%s of %s: not a native histogram: %s" % (name, kpath,
                                                       short(r, 600)))
        check(not b, "%s_bucket series with native histograms: %s" %
              (name, b))
        q = "histogram_quantile(0.9, rate(%s{%s}[1m]))" % (name, f)
    else:
        check(not r and b, "classic: %s %s, _bucket %s" % (name, r, b))
        q = ("histogram_quantile(0.9, sum by (le) (rate(%s_bucket{%s}[1m])))"
             % (name, f))
    v = scalar(prom.query(q))
    # the bucket of 0.3 s is (0.25, 0.5]; a loaded host stretches
    # lifetimes a little, never below
    check(0.25 < v <= 0.5 and v / 2 <= KNOWN_S <= 2 * v,
          "%s: %s, %s s processes" % (q, v, KNOWN_S))
    print("%s: %.3f (processes of %s s; %s)" % (
        q, v, KNOWN_S, "native" if NATIVE else "classic"))
    # the demo cgroup's too: a number
    d = prom.query(q.replace(kpath, cgpath))
    check(d and d[0]["value"][1] not in ("NaN", "+Inf"),
          "demo: %s" % short(d, 400))


if __name__ == "__main__":
    main()
