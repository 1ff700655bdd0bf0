#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The container image (packaging/container/build-image) run by runc the
way packaging/kubernetes/daemonset.yaml runs it, and scraped.

    image_runc.py OCI-LAYOUT SOURCE-DIR

The bundle is `umoci unpack` of the image tag the DaemonSet names (which
must be the project version), its runtime config made from the manifest
as containerd's CRI plugin makes it:
 - the container's command and args, $(VAR) expanded from its env
   (POD_IP 127.0.0.1), the metrics port made 0 (an ephemeral one: the
   host network is the machine's);
 - hostPID, hostNetwork: no pid, network or UTS namespace of its own; a
   cgroup namespace of its own only on a cgroup2-only host (containerd's
   default there), where the command must refuse to start;
 - runAsUser, capabilities: drop ALL + add -> bounding, effective and
   permitted exactly those, inheritable and ambient empty;
   allowPrivilegeEscalation false -> no_new_privs; readOnlyRootFilesystem;
 - seccompProfile RuntimeDefault: the profile of containers-common
   (/usr/share/containers/seccomp.json: the moby/containerd default,
   rules chosen by the bounding set), else the test says it ran without
   one; no rlimits of runc's (containerd sets none).
Then once more with privileged-patch.yaml's securityContext merged in
(privileged: every capability the runtime holds, no seccomp profile,
nothing masked, the host's cgroup namespace even on cgroup2).
Checks: the collector serves /ready and /healthz; its process holds
that bounding set (or none: with CAP_SETPCAP it sheds it), no effective
or permitted capability, no_new_privs and the seccomp filter as set; a
workload run on the host (in a cgroup of its own, outside the container)
is counted in taskstat_process_exits_total for that cgroup; SIGTERM ends
it with exit 0. Skips (77) when not root, without runc or umoci, or
where the collector cannot collect here.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "e2e"))
from tsc_e2e import (arg, cgroup_mounts, check, fail,  # noqa: E402
                     rmdir_retry, skip)

try:
    import yaml
except ImportError:
    skip("python3-yaml not installed")

SECCOMP_JSON = "/usr/share/containers/seccomp.json"
PROCS = 30  # workload processes
ALL_CAPS = (
    "CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID "
    "SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN "
    "NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE "
    "SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME "
    "SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP "
    "MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ "
    "PERFMON BPF CHECKPOINT_RESTORE").split()  # by number, 0..40


def project_version(src):
    with open(os.path.join(src, "CMakeLists.txt")) as f:
        m = re.search(r"^project\(cgstats VERSION ([0-9.]+)", f.read(), re.M)
    check(m, "no project(cgstats VERSION ...) in CMakeLists.txt")
    return m.group(1)


def seccomp(profile, caps):
    """A containers-common seccomp profile (conditions on capabilities
    and architectures) resolved for bounding set caps: an OCI
    linux.seccomp."""
    arches = []
    for a in profile.get("archMap") or []:
        if a["architecture"] == "SCMP_ARCH_X86_64" or os.uname().machine \
                in a["architecture"].lower():
            arches += [a["architecture"]] + a.get("subArchitectures", [])
    mach = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine,
                                                       os.uname().machine)
    rules = []
    for r in profile["syscalls"]:
        inc, exc = r.get("includes") or {}, r.get("excludes") or {}
        if not set(inc.get("caps", [])) <= caps or \
                set(exc.get("caps", [])) & caps:
            continue
        if inc.get("arches") and mach not in inc["arches"]:
            continue
        if exc.get("arches") and mach in exc["arches"]:
            continue
        if inc.get("minKernel"):
            continue  # none of these rules matter to the collector
        rule = {"names": r["names"], "action": r["action"]}
        for k in ("args", "errnoRet"):
            if r.get(k):
                rule[k] = r[k]
        rules.append(rule)
    out = {"defaultAction": profile["defaultAction"],
           "architectures": arches, "syscalls": rules}
    if profile.get("defaultErrnoRet") is not None:
        out["defaultErrnoRet"] = profile["defaultErrnoRet"]
    return out


def all_caps():
    """Every capability the runtime holds (a privileged container's: the
    kernel's, less what our own bounding set lacks), as runc names
    them."""
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    bnd = int(status_of(os.getpid())["CapBnd"], 16)
    return ["CAP_" + n for i, n in enumerate(ALL_CAPS[:last + 1])
            if bnd >> i & 1]


def runtime_config(bundle, ds, cgpath, v2only, patch_sc=None):
    """Rewrite bundle/config.json as the CRI would run the DaemonSet's
    container (with privileged-patch.yaml's securityContext merged in if
    patch_sc); returns a note on the seccomp profile."""
    pod = ds["spec"]["template"]["spec"]
    c = pod["containers"][0]
    sc = dict(c["securityContext"], **(patch_sc or {}))
    path = os.path.join(bundle, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    p = cfg["process"]
    env = {"POD_IP": "127.0.0.1"}
    for e in c.get("env", []):
        check("value" in e or e["name"] in env,
              "env %s: no value for the test" % e["name"])
        env.setdefault(e["name"], e.get("value"))
    port = {x["name"]: x["containerPort"] for x in c["ports"]}["metrics"]

    def expand(s):
        s = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1),
                                                    m.group(0)), s)
        return s.replace(":%d" % port, ":0")
    p["args"] = [expand(a) for a in c["command"] + c.get("args", [])]
    p["env"] = [x for x in p["env"] if not x.startswith("TERM=")] + \
        ["%s=%s" % kv for kv in sorted(env.items())]
    p["terminal"] = False
    p["user"] = {"uid": sc.get("runAsUser", 0),
                 "gid": sc.get("runAsGroup", 0)}
    check(sc["capabilities"]["drop"] == ["ALL"], "the DaemonSet keeps "
          "capabilities it does not add: this test cannot model that")
    caps = sorted("CAP_" + x for x in sc["capabilities"]["add"])
    if sc.get("privileged"):
        caps = all_caps()
    p["capabilities"] = {"bounding": caps, "effective": caps,
                         "permitted": caps, "inheritable": [],
                         "ambient": []}
    p["noNewPrivileges"] = not sc.get("allowPrivilegeEscalation", True)
    p.pop("rlimits", None)
    cfg["root"]["readonly"] = bool(sc.get("readOnlyRootFilesystem"))
    drop = set()
    if pod.get("hostPID"):
        drop.add("pid")
    if pod.get("hostNetwork"):
        drop |= {"network", "uts"}
        cfg.pop("hostname", None)
    lx = cfg["linux"]
    lx["namespaces"] = [n for n in lx["namespaces"] if n["type"] not in drop]
    if v2only and not sc.get("privileged"):
        lx["namespaces"].append({"type": "cgroup"})
    lx["cgroupsPath"] = cgpath
    note = "no seccomp profile"
    if sc.get("privileged"):
        # unconfined: no seccomp, nothing masked, /sys and cgroups rw
        lx["maskedPaths"], lx["readonlyPaths"] = [], []
        for m in cfg["mounts"]:
            if m["destination"] in ("/sys", "/sys/fs/cgroup"):
                m["options"] = [o for o in m.get("options", [])
                                if o != "ro"] + ["rw"]
        note = "privileged: all capabilities, no seccomp profile"
    elif (sc.get("seccompProfile") or {}).get("type") == "RuntimeDefault":
        if os.path.exists(SECCOMP_JSON):
            with open(SECCOMP_JSON) as f:
                lx["seccomp"] = seccomp(json.load(f), set(caps))
            note = "RuntimeDefault as %s" % SECCOMP_JSON
        else:
            note = ("RuntimeDefault NOT applied: no %s (containers-common)"
                    % SECCOMP_JSON)
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    return note


def get(hostport, path):
    try:
        with urllib.request.urlopen("http://%s%s" % (hostport, path),
                                    timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def status_of(pid):
    with open("/proc/%d/status" % pid) as f:
        return dict(ln.rstrip("\n").split(":\t", 1) for ln in f
                    if ":\t" in ln)


def exits_of(text, cgroup):
    return sum(int(m.group(1)) for m in re.finditer(
        r'^taskstat_process_exits_total\{(?:[^}]*,)?cgroup="%s"[^}]*\} (\d+)$'
        % re.escape(cgroup), text, re.M))


def host_workload(name, n):
    """On the host, outside the container: a shell joins cgroup /name in
    every hierarchy (the collector keys on one of them: cgroup2 where
    its mount is visible, else a v1 one) and runs n /bin/true; returns
    the processes that exited there (n + the shell)."""
    dirs = [os.path.join(m, name) for m in cgroup_mounts()]
    for d in dirs:
        os.makedirs(d, exist_ok=True)
        for k in ("cpuset.cpus", "cpuset.mems"):  # empty in a new one
            if os.path.exists(os.path.join(d, k)):
                with open(os.path.join(os.path.dirname(d), k)) as f, \
                        open(os.path.join(d, k), "w") as t:
                    t.write(f.read())
    r = subprocess.run(["sh", "-c", 'for d; do echo $$ > "$d/cgroup.procs"'
                        ' || exit 1; done; i=0; while [ $i -lt %d ]; do '
                        '/bin/true; i=$((i + 1)); done' % n, "sh"] + dirs,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "the workload failed: %s" % r.stderr)
    return n + 1


def remove_cgroup(name):
    """rmdir /name in every hierarchy (a dying task may hold it a
    moment)."""
    for m in cgroup_mounts():
        rmdir_retry(os.path.join(m, name.lstrip("/")))


def v1_leftovers(name):
    """runc makes the container's cgroup in every v1 hierarchy; remove
    it where runc did not."""
    for h in os.listdir("/sys/fs/cgroup"):
        d = os.path.join("/sys/fs/cgroup", h, name.lstrip("/"))
        if os.path.isdir(d):
            try:
                os.rmdir(d)
            except OSError:
                pass


def main():
    layout = arg(1, "OCI-LAYOUT SOURCE-DIR")
    src = arg(2, "OCI-LAYOUT SOURCE-DIR")
    with open(os.path.join(src, "packaging", "kubernetes",
                           "daemonset.yaml")) as f:
        ds = yaml.safe_load(f)
    image = ds["spec"]["template"]["spec"]["containers"][0]["image"]
    tag = image.rsplit(":", 1)[1]
    check(tag == project_version(src), "the DaemonSet's image %s: tag is "
          "not the project version %s" % (image, project_version(src)))
    if os.geteuid() != 0:
        skip("not root (runc, umoci unpack)")
    runc, umoci = shutil.which("runc"), shutil.which("umoci")
    if not runc or not umoci:
        skip("runc or umoci not installed (scripts/install-deps --test)")
    with open(os.path.join(src, "packaging", "kubernetes",
                           "privileged-patch.yaml")) as f:
        patch = yaml.safe_load(f)
    patch_sc = patch["spec"]["template"]["spec"]["containers"][0][
        "securityContext"]
    v2only = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
    with tempfile.TemporaryDirectory(prefix="cgs-image-") as tmp:
        bundle = os.path.join(tmp, "bundle")
        r = subprocess.run([umoci, "unpack", "--image", "%s:%s" %
                            (layout, tag), bundle], capture_output=True,
                           text=True)
        check(r.returncode == 0, "umoci unpack %s:%s: %s" %
              (layout, tag, r.stderr))
        with open(os.path.join(bundle, "config.json")) as f:
            pristine = f.read()
        for what, psc in (("daemonset.yaml", None),
                          ("daemonset.yaml + privileged-patch.yaml",
                           patch_sc)):
            with open(os.path.join(bundle, "config.json"), "w") as f:
                f.write(pristine)
            note = runtime_config(bundle, ds, "/image-runc-%d" % os.getpid(),
                                  v2only, psc)
            container(runc, bundle, tmp, what, note,
                      v2only and psc is None)
    print("OK")


def container(runc, bundle, tmp, what, note, refuses):
    """One run of the bundle under runc, cleaned up after."""
    name = "image-runc-%d" % os.getpid()
    work = "image-work-%d" % os.getpid()
    out = open(os.path.join(tmp, "out"), "w+")
    err = open(os.path.join(tmp, "err"), "w+")
    t0 = time.monotonic()
    ctr = subprocess.Popen([runc, "run", "--bundle", bundle, name],
                           stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    try:
        run(ctr, err, work, name, refuses, "%s: %s" % (what, note), t0)
    finally:
        if ctr.poll() is None:
            subprocess.run([runc, "kill", name, "KILL"], capture_output=True)
            ctr.wait(timeout=30)
        subprocess.run([runc, "delete", "-f", name], capture_output=True)
        v1_leftovers("/" + name)
        remove_cgroup(work)
        out.close()
        err.close()


def stderr_of(err):
    err.flush()
    err.seek(0)
    return err.read()


def run(ctr, err, work, name, refuses, note, t0):
    hostport = None
    while time.monotonic() - t0 < 30 and not hostport:
        m = re.search(r"serving metrics on http://(\S+)/metrics",
                      stderr_of(err))
        if m:
            hostport = m.group(1)
        elif ctr.poll() is not None:
            break
        else:
            time.sleep(0.1)
    text = stderr_of(err)
    if refuses:
        check(ctr.wait(timeout=30) == 1 and "cgroup namespace of its own"
              in text, "cgroup2-only host: the container's command did "
              "not refuse its private cgroup namespace: %s" % text)
        print("cgroup2-only host: the command refused a cgroup namespace "
              "of its own, as it should (privileged-patch.yaml needed)")
        return
    if not hostport:
        if re.search(r"TASKSTATS|CAP_NET_ADMIN|namespace", text):
            skip("the collector cannot collect here: " + text.strip())
        fail("the container's collector did not serve metrics (exit %s): %s"
             % (ctr.poll(), text))
    ready = None
    while time.monotonic() - t0 < 30:
        ready = get(hostport, "/ready")
        if ready[0] == 200:
            break
        time.sleep(0.2)
    check(ready[0] == 200, "/ready: %s" % (ready,))
    health = get(hostport, "/healthz")
    check(health[0] == 200, "/healthz: %s" % (health,))
    st = subprocess.run(["runc", "state", name], capture_output=True,
                        text=True)
    pid = json.loads(st.stdout)["pid"]
    s = status_of(pid)
    cfg_caps = json.loads(st.stdout).get("bundle")
    with open(os.path.join(cfg_caps, "config.json")) as f:
        pc = json.load(f)["process"]
    given = sum(1 << ALL_CAPS.index(c[4:])
               for c in pc["capabilities"]["bounding"])
    # what it was given (0 once shed: with CAP_SETPCAP, privileged), and
    # nothing effective or permitted once registered
    check(int(s["CapBnd"], 16) in (given, 0), "the collector's bounding "
          "set %s, expected %x" % (s["CapBnd"], given))
    check(int(s["CapEff"], 16) == 0 and int(s["CapPrm"], 16) == 0,
          "the collector kept capabilities: CapEff %s CapPrm %s" %
          (s["CapEff"], s["CapPrm"]))
    check(s["NoNewPrivs"] == ("1" if pc["noNewPrivileges"] else "0"),
          "NoNewPrivs %s" % s["NoNewPrivs"])
    check(s["Seccomp"] == ("2" if "RuntimeDefault as" in note else "0"),
          "seccomp mode %s (%s)" % (s["Seccomp"], note))
    # a workload on the host, outside the container
    want = host_workload(work, PROCS)
    got = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        code, body = get(hostport, "/metrics")
        check(code == 200, "/metrics: HTTP %d" % code)
        got = exits_of(body, "/" + work)
        if got >= want:
            break
        time.sleep(0.5)
    check(got >= want, "taskstat_process_exits_total{cgroup=\"/%s\"} "
          "%d, expected >= %d; the collector's stderr: %s; its exit "
          "counts: %s" % (work, got, want, stderr_of(err),
                          re.findall(r"^taskstat_process_exits_total.*$",
                                     body, re.M)[:20]))
    m = re.search(r"attribution: (.*)", stderr_of(err))
    attribution = m.group(1) if m else "?"
    subprocess.run(["runc", "kill", name, "TERM"], check=True)
    rc = ctr.wait(timeout=60)
    check(rc == 0, "SIGTERM: exit %d: %s" % (rc, stderr_of(err)))
    print("image collector under runc (%s; given CapBnd %x, then %s, "
          "CapEff 0, NoNewPrivs %s, Seccomp %s): /ready and /healthz 200, "
          "/%s: %d process exits of %d counted, attribution %s, exit 0 "
          "on SIGTERM (%.1f s)" % (note, given, s["CapBnd"], s["NoNewPrivs"],
                                   s["Seccomp"], work, got, want,
                                   attribution, time.monotonic() - t0))


if __name__ == "__main__":
    main()
