#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""packaging/kubernetes/*.yaml, checked as far as a host without a cluster
allows (no API server: schemas, admission, the runtime's cgroup namespace
and the Prometheus Operator are NOT checked here):

- every file is valid YAML (python3-yaml), one object of a known kind;
- the DaemonSet: its image tag is the project version (CMakeLists.txt
  project(VERSION), the tag packaging/container/build-image gives),
  hostPID, hostNetwork, Linux nodes only, root with exactly the
  capabilities NET_ADMIN, BPF, PERFMON added and ALL dropped, not
  privileged (that is the patch's job), selector = template labels, the
  metrics port;
- the privileged patch: a strategic merge patch of the same container;
- Service and ServiceMonitor: selectors match the pods and the Service,
  port names agree, jobLabel gives job="taskstat" (what the rules use);
- the PrometheusRule carries exactly packaging/prometheus/taskstat-rules.yml;
- given the binary, as root on a host that can collect: the container's
  command and args (POD_IP 127.0.0.1, port 0, a 2 s --duration added),
  run as root holding only the capabilities the DaemonSet adds (setpriv),
  run the real collector to a clean exit, serving metrics, with the
  kernel attribution source wherever it loads as full root.

Usage: check_manifests.py SOURCE-DIR [TASKSTAT-COLLECT]
"""
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "e2e"))
from tsc_e2e import arg, check, live_problem, skip  # noqa: E402

try:
    import yaml
except ImportError:
    skip("python3-yaml not installed")

NEEDED_CAPS = {"NET_ADMIN", "BPF", "PERFMON"}
JOB = "taskstat"


def load(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    check(len(docs) == 1, "%s: %d documents, one expected" % (path, len(docs)))
    return docs[0]


def sub(labels, selector):
    return all(labels.get(k) == v for k, v in selector.items())


def main():
    src = arg(1, "SOURCE-DIR [TASKSTAT-COLLECT]")
    kdir = os.path.join(src, "packaging", "kubernetes")
    objs = {}
    for p in sorted(glob.glob(os.path.join(kdir, "*.yaml"))):
        o = load(p)
        kind = o.get("kind", "patch")
        check(kind not in objs, "two objects of kind %s" % kind)
        objs[kind] = o
        print("%s: %s" % (os.path.basename(p), kind))
    check(set(objs) == {"Namespace", "DaemonSet", "Service", "ServiceMonitor",
                        "PrometheusRule", "patch"}, "kinds: %s" % sorted(objs))

    ns = objs["Namespace"]["metadata"]["name"]
    for k in ("DaemonSet", "Service", "ServiceMonitor", "PrometheusRule"):
        check(objs[k]["metadata"]["namespace"] == ns,
              "%s not in namespace %s" % (k, ns))
    check(objs["Namespace"]["metadata"]["labels"].get(
        "pod-security.kubernetes.io/enforce") == "privileged",
        "namespace does not admit hostPID/hostNetwork pods")

    ds = objs["DaemonSet"]
    tpl = ds["spec"]["template"]
    pod = tpl["spec"]
    check(sub(tpl["metadata"]["labels"], ds["spec"]["selector"]["matchLabels"]),
          "DaemonSet selector does not match its pods")
    check(pod.get("hostPID") is True and pod.get("hostNetwork") is True,
          "hostPID and hostNetwork must be true")
    check(pod.get("nodeSelector", {}).get("kubernetes.io/os") == "linux",
          "nodeSelector must keep the pods on Linux nodes: %s" %
          pod.get("nodeSelector"))
    check(len(pod["containers"]) == 1, "one container expected")
    c = pod["containers"][0]
    with open(os.path.join(src, "CMakeLists.txt")) as f:
        m = re.search(r"^project\(cgstats VERSION ([0-9.]+)", f.read(), re.M)
    check(m, "no project(cgstats VERSION ...) in CMakeLists.txt")
    check(c["image"].rsplit(":", 1)[-1] == m.group(1),
          "image %s: the tag is not the project version %s" %
          (c["image"], m.group(1)))
    sc = c["securityContext"]
    check(set(sc["capabilities"]["add"]) == NEEDED_CAPS,
          "capabilities added: %s" % sc["capabilities"]["add"])
    check(sc["capabilities"]["drop"] == ["ALL"], "must drop ALL")
    check(not sc.get("privileged") and sc.get("runAsUser") == 0,
          "base DaemonSet: root, not privileged")
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    check("metrics" in ports, "no metrics port")
    args = c["args"]
    envs = {e["name"]: e.get("value") for e in c["env"]}
    check(envs.get("METRICS_PORT") == str(ports["metrics"]),
          "METRICS_PORT %r vs containerPort %d: keep them equal" %
          (envs.get("METRICS_PORT"), ports["metrics"]))
    check("--listen" in args and args[args.index("--listen") + 1] ==
          "$(POD_IP):$(METRICS_PORT)", "--listen vs port: %s" % args)
    check(any(e["name"] == "POD_IP" and e["valueFrom"]["fieldRef"][
        "fieldPath"] == "status.podIP" for e in c["env"]), "no POD_IP env")

    patch = objs["patch"]
    pc = patch["spec"]["template"]["spec"]["containers"]
    check(len(pc) == 1 and pc[0]["name"] == c["name"],
          "patch names another container: %s" % pc)
    psc = pc[0]["securityContext"]
    check(psc.get("privileged") is True and
          psc.get("allowPrivilegeEscalation") is True,
          "patch: privileged needs allowPrivilegeEscalation: %s" % psc)

    svc = objs["Service"]
    check(sub(tpl["metadata"]["labels"], svc["spec"]["selector"]),
          "Service selector does not match the pods")
    sp = {p["name"]: p for p in svc["spec"]["ports"]}
    check(sp.get("metrics", {}).get("targetPort") in ("metrics",
                                                      ports["metrics"]),
          "Service port: %s" % sp)

    sm = objs["ServiceMonitor"]
    check(sub(svc["metadata"]["labels"], sm["spec"]["selector"]["matchLabels"]),
          "ServiceMonitor selector does not match the Service")
    check(ns in sm["spec"]["namespaceSelector"]["matchNames"],
          "ServiceMonitor looks in other namespaces")
    check([e["port"] for e in sm["spec"]["endpoints"]] == ["metrics"],
          "ServiceMonitor endpoints: %s" % sm["spec"]["endpoints"])
    check(svc["metadata"]["labels"].get(sm["spec"]["jobLabel"]) == JOB,
          "jobLabel %s does not give job=%s" % (sm["spec"]["jobLabel"], JOB))

    with open(os.path.join(src, "packaging", "prometheus",
                           "taskstat-rules.yml")) as f:
        rules = yaml.safe_load(f)
    check(objs["PrometheusRule"]["spec"] == rules,
          "prometheusrule.yaml differs from taskstat-rules.yml: regenerate it")
    print("manifests consistent")

    if len(sys.argv) < 3:
        print("OK (the container command not run: no binary given)")
        return
    bin_ = os.path.abspath(sys.argv[2])
    why = live_problem(bin_)
    if why:
        print("OK (the container command not run: %s)" % why)
        return
    cmd = c["command"] + [a.replace("$(POD_IP)", "127.0.0.1")
                          .replace(":$(METRICS_PORT)", ":0")
                          for a in args] + ["--duration", "2"]
    env = dict(os.environ, PATH=os.path.dirname(bin_) + ":" +
               os.environ.get("PATH", ""))
    def run(wrap):
        r = subprocess.run(wrap + cmd, env=env, capture_output=True,
                           text=True, timeout=60, stdin=subprocess.DEVNULL)
        check(r.returncode == 0 and "serving metrics on http://127.0.0.1:"
              in r.stderr, "the container command%s failed (%d): %s" %
              (" with %s only" % caps if wrap else "", r.returncode,
               r.stderr))
        return "attribution: kernel" in r.stderr
    # as the container runs it: root holding the added capabilities only
    caps = ",".join("+" + x.lower() for x in sorted(NEEDED_CAPS))
    setpriv = shutil.which("setpriv")
    if not setpriv:
        skip("setpriv (util-linux) not installed")
    kernel = run([setpriv, "--inh-caps=-all," + caps,
                  "--ambient-caps=-all," + caps,
                  "--bounding-set=-all," + caps, "--"])
    # the kernel source must load with them wherever it loads as full root
    check(kernel or not run([]), "the kernel source loads as root but not "
          "with %s only" % caps)
    print("container command ran the collector with %s only: exit 0, "
          "serving metrics, attribution %s" %
          (caps, "kernel" if kernel else "proc (as with full root)"))
    print("OK")


if __name__ == "__main__":
    main()
