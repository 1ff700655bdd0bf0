# SPDX-License-Identifier: LGPL-2.1-or-later
"""The real containerd (Debian's 1.6) for the e2e tests, driven over its
CRI socket as the kubelet drives it.

 - need_cri(): Debian's python3-grpcio is built for /usr/bin/python3: a
   test run by another interpreter (pyenv, a venv) is run again by that
   one; skip (77) without grpcio, containerd, ctr, umoci or a static
   busybox.
 - The CRI's messages: containerd carries the CRI's api.proto compiled
   into its binary (gogo/protobuf registers every .proto file as a gzipped
   FileDescriptorProto); cri_pool() takes it from there, so the client
   speaks the very version of the API the daemon serves, with no copy of
   the .proto in this tree and no code generation.
 - busybox_image(): a one-layer OCI image of busybox-static (umoci, as
   packaging/container/build-image builds the collector's), its
   entrypoint a long sleep (the pod sandbox's "pause").
 - Containerd: the daemon with a private config (cgroupfs driver: PID 1
   is not systemd here; no CNI: host-network pods), root, state, runc
   root and sockets under one temporary folder; cleanup() removes every
   pod and container through the CRI, stops the daemon, kills what is
   left (shims, container processes), unmounts, removes the cgroups and
   the folder; leftovers() says what a run left behind, for the test's
   last check.
"""
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib

from tsc_e2e import cgroup_mounts, rmdir_retry, skip

SYS_PYTHON = "/usr/bin/python3"
IMAGE = "cgs.invalid/busybox:1"  # .invalid: never a registry's name
# where the shims' sockets go whatever the config says (1.6:
# runtime/v2/shim: <default state>/s/<hash>)
SHIM_SOCKETS = "/run/containerd/s"


def need_cri():
    """grpcio importable (re-run under Debian's python3 if that one has
    it), and the tools present; else skip."""
    try:
        import grpc  # noqa: F401
        from google.protobuf import descriptor_pool  # noqa: F401
    except ImportError:
        if os.path.realpath(sys.executable) != os.path.realpath(SYS_PYTHON) \
                and os.access(SYS_PYTHON, os.X_OK) and subprocess.run(
                    [SYS_PYTHON, "-c", "import grpc"],
                    capture_output=True).returncode == 0:
            sys.stdout.flush()
            os.execv(SYS_PYTHON, [SYS_PYTHON] + sys.argv)
        skip("no python3-grpcio for %s (scripts/install-deps --test)" %
             sys.executable)
    for t in ("containerd", "ctr", "umoci", "containerd-shim-runc-v2",
              "runc"):
        if not shutil.which(t):
            skip("%s not installed (scripts/install-deps --test)" % t)
    if not static_busybox():
        skip("no static busybox (busybox-static)")


def static_busybox():
    """Path of a statically linked busybox, or None."""
    for p in ("/bin/busybox", "/usr/bin/busybox"):
        if os.path.exists(p):
            r = subprocess.run(["ldd", p], capture_output=True, text=True)
            if r.returncode != 0 or "not a dynamic" in r.stdout + r.stderr:
                return p
    return None


# --- the CRI's messages, from the daemon's own binary ----------------------

def cri_pool(binary, package="runtime.v1"):
    """A DescriptorPool holding the CRI api.proto of `package` as compiled
    into `binary` (its gogo.proto import and options dropped: they only
    steer Go's code generation)."""
    from google.protobuf import descriptor_pb2, descriptor_pool
    with open(binary, "rb") as f:
        data = f.read()
    i = 0
    while True:
        i = data.find(b"\x1f\x8b\x08", i)
        if i < 0:
            skip("no CRI %s descriptor in %s" % (package, binary))
        try:
            raw = zlib.decompressobj(31).decompress(data[i:i + (1 << 20)])
            fd = descriptor_pb2.FileDescriptorProto.FromString(raw)
        except Exception:  # not a gzip stream, or not a descriptor
            fd = None
        i += 1
        if fd is not None and fd.package == package and \
                any(s.name == "RuntimeService" for s in fd.service):
            break
    del fd.dependency[:]
    fd.ClearField("options")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return pool


class CriClient:
    """RuntimeService and ImageService calls over a unix socket; requests
    as dicts (the proto's field names), answers as messages."""

    def __init__(self, sock, pool, package="runtime.v1"):
        import grpc
        from google.protobuf import json_format, message_factory
        self._json = json_format
        self.grpc = grpc
        self.pkg = package
        self.pool = pool
        self.factory = message_factory.MessageFactory(pool)
        self.chan = grpc.insecure_channel("unix://" + sock)
        self.methods = {}
        for svc in ("RuntimeService", "ImageService"):
            for m in pool.FindServiceByName(package + "." + svc).methods:
                self.methods[m.name] = (svc, m)

    def cls(self, desc):
        return self.factory.GetPrototype(desc)

    def __call__(self, method, timeout=60, **req):
        svc, m = self.methods[method]
        rq = self._json.ParseDict(req, self.cls(m.input_type)())
        call = self.chan.unary_unary(
            "/%s.%s/%s" % (self.pkg, svc, method),
            request_serializer=lambda x: x.SerializeToString(),
            response_deserializer=self.cls(m.output_type).FromString)
        return call(rq, timeout=timeout)

    def close(self):
        self.chan.close()


# --- the image ---------------------------------------------------------------

def busybox_image(tmp, tag="1"):
    """An OCI image layout of busybox-static (bin/busybox, its applets as
    links) packed as a tar for `ctr images import`; its path."""
    layout, bundle = os.path.join(tmp, "layout"), os.path.join(tmp, "bundle")
    image = "%s:%s" % (layout, tag)
    for cmd in (["init", "--layout", layout], ["new", "--image", image],
                ["unpack", "--image", image, bundle]):
        subprocess.run(["umoci"] + cmd, check=True, capture_output=True)
    bindir = os.path.join(bundle, "rootfs", "bin")
    os.makedirs(bindir, exist_ok=True)
    shutil.copy2(static_busybox(), os.path.join(bindir, "busybox"))
    for applet in ("sh", "sleep", "true", "kill", "cat", "seq"):
        os.symlink("busybox", os.path.join(bindir, applet))
    for cmd in (["repack", "--image", image, bundle],
                ["config", "--image", image, "--config.entrypoint",
                 "/bin/sleep", "--config.cmd", "2147483647",
                 "--config.env", "PATH=/bin", "--config.workingdir", "/"],
                ["gc", "--layout", layout]):
        subprocess.run(["umoci"] + cmd, check=True, capture_output=True)
    shutil.rmtree(bundle)
    tar = os.path.join(tmp, "image.tar")
    subprocess.run(["tar", "-C", layout, "-cf", tar, "."], check=True)
    shutil.rmtree(layout)
    return tar


# --- the daemon -----------------------------------------------------------

CONFIG = """version = 2
root = "{d}/root"
state = "{d}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing"]
[grpc]
  address = "{d}/c.sock"
[ttrpc]
  address = "{d}/c.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "{d}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{image}"
  disable_apparmor = true
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "{d}/cni/bin"
  conf_dir = "{d}/cni/conf"
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = "{d}/runc"
"""


def mounts_under(d):
    """Mount points at or below folder d, deepest first."""
    d = os.path.realpath(d)
    with open("/proc/self/mountinfo") as f:
        pts = [ln.split()[4].replace("\\040", " ") for ln in f]
    return sorted((p for p in pts if p == d or p.startswith(d + "/")),
                  key=lambda p: -p.count("/"))


def pids_naming(needle):
    """Processes whose command line holds `needle` (bytes)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if needle in f.read():
                    out.append(int(p))
        except OSError:
            pass
    return out


def cgroup_pids(rel):
    """Processes in cgroup `rel` or below, in any hierarchy."""
    out = set()
    for m in cgroup_mounts():
        for dp, _, fs in os.walk(os.path.join(m, rel.lstrip("/"))):
            if "cgroup.procs" in fs:
                try:
                    with open(os.path.join(dp, "cgroup.procs")) as f:
                        out |= {int(x) for x in f.read().split()}
                except OSError:
                    pass
    return out


def cgroup_dirs(rel):
    """Directories of cgroup `rel` and below in every hierarchy."""
    out = []
    for m in cgroup_mounts():
        d = os.path.join(m, rel.lstrip("/"))
        out += [dp for dp, _, _ in os.walk(d)]
    return out


class Containerd:
    """containerd with everything of its own below `tmp` (a short path:
    the sockets' names must fit sun_path)."""

    def __init__(self, tmp):
        self.d = os.path.realpath(tmp)
        self.sock = os.path.join(self.d, "c.sock")
        self.state = os.path.join(self.d, "state")
        self.cgroups = []
        self.made = []  # cgroup ancestors that did not exist before
        self.sandboxes = set()
        self.p = None
        self.cri = None
        self.log = os.path.join(self.d, "containerd.log")
        self.run_before = os.path.isdir("/run/containerd")

    def track(self, rel):
        """Cgroup `rel` (a path below each hierarchy's root) is one the
        test's pods will use: cleanup() removes it in every hierarchy,
        with its parents up to the first that existed before."""
        self.cgroups.append(rel)
        parts = rel.strip("/").split("/")
        for i in range(1, len(parts)):
            anc = "/".join(parts[:i])
            if anc not in self.made and not any(
                    os.path.isdir(os.path.join(m, anc))
                    for m in cgroup_mounts()):
                self.made.append(anc)

    def run_pod(self, config):
        """RunPodSandbox; its id (remembered: its shim's socket is
        ours to remove)."""
        sid = self.cri("RunPodSandbox", config=config).pod_sandbox_id
        self.sandboxes.add(sid)
        return sid

    def shim_sockets(self):
        """Our shims' sockets that exist (one shim per pod sandbox; its
        socket is named by the hash of our address, namespace and id)."""
        out = []
        for sid in self.sandboxes:
            p = os.path.join(SHIM_SOCKETS, self.shim_hash(sid))
            if os.path.exists(p):
                out.append(p)
        return out

    def shim_hash(self, sid):
        return hashlib.sha256(("%s/k8s.io/%s" % (self.sock, sid))
                              .encode()).hexdigest()

    def start(self, timeout=30):
        """Start it, wait for the CRI to answer, import the image; skip
        (77) when the daemon cannot start here."""
        for sub in ("cni/bin", "cni/conf"):
            os.makedirs(os.path.join(self.d, sub))
        cfg = os.path.join(self.d, "config.toml")
        with open(cfg, "w") as f:
            f.write(CONFIG.format(d=self.d, image=IMAGE))
        with open(self.log, "wb") as lg:
            self.p = subprocess.Popen(
                ["containerd", "--config", cfg, "--log-level", "info"],
                stdin=subprocess.DEVNULL, stdout=lg, stderr=lg,
                start_new_session=True)
        self.cri = CriClient(self.sock, cri_pool(shutil.which("containerd")))
        t0 = time.monotonic()
        while True:
            if self.p.poll() is not None:
                skip("containerd exited (%d): %s" %
                     (self.p.returncode, self.log_tail()))
            try:
                v = self.cri("Version", timeout=2)
                st = self.cri("Status", timeout=5)
                break
            except self.cri.grpc.RpcError as e:
                if time.monotonic() - t0 > timeout:
                    skip("containerd's CRI does not answer: %s; %s" %
                         (e, self.log_tail()))
                time.sleep(0.2)
        ready = {c.type: c.status for c in st.status.conditions}
        if not ready.get("RuntimeReady"):
            skip("containerd's CRI runtime is not ready: %s" % st)
        self.version = "%s %s (CRI %s)" % (v.runtime_name, v.runtime_version,
                                           v.runtime_api_version)
        return self

    def log_tail(self, n=5):
        try:
            with open(self.log, errors="replace") as f:
                return " | ".join(f.read().splitlines()[-n:])
        except OSError:
            return "(no log)"

    def ctr(self, *args):
        return subprocess.run(["ctr", "--address", self.sock, "-n", "k8s.io"]
                              + list(args), capture_output=True, text=True,
                              timeout=120)

    def import_image(self, tar):
        r = self.ctr("images", "import", "--base-name", IMAGE.split(":")[0],
                     tar)
        if r.returncode != 0:
            skip("ctr images import: %s" % r.stderr.strip())
        st = self.cri("ImageStatus", image={"image": IMAGE})
        if not st.image.id:
            skip("the CRI does not see the imported image %s" % IMAGE)
        return st.image.id

    def task_dir(self, cid):
        """Where containerd keeps the container's OCI bundle (the spec)."""
        return os.path.join(self.state, "io.containerd.runtime.v2.task",
                            "k8s.io", cid)

    def remove_pod(self, sid, podcg):
        """StopPodSandbox (its processes killed) and RemovePodSandbox
        (its containers and their state removed), then the pod's cgroup
        in every hierarchy, as the kubelet does when a pod is deleted."""
        self.cri("StopPodSandbox", pod_sandbox_id=sid)
        self.cri("RemovePodSandbox", pod_sandbox_id=sid)
        for d in sorted(cgroup_dirs(podcg), key=lambda p: -p.count("/")):
            rmdir_retry(d)

    def leftovers_of(self, podcg, ids):
        """What is left of one removed pod: processes, cgroups, mounts
        and shim sockets of its cgroup and ids (the sandbox's first)."""
        left = ["process %d (%s)" % (p, comm(p))
                for p in sorted(cgroup_pids(podcg))]
        left += ["cgroup %s" % d for d in cgroup_dirs(podcg)]
        left += ["mount %s" % m for m in mounts_under(self.d)
                 if any(i in m for i in ids)]
        h = self.shim_hash(ids[0])
        if os.path.exists(os.path.join(SHIM_SOCKETS, h)):
            left.append("shim socket %s" % h)
        return left

    def remove_pods(self):
        """Stop and remove every pod sandbox (and so its containers)
        through the CRI; True if the CRI answered."""
        try:
            for c in self.cri("ListContainers", timeout=10).containers:
                self.cri("StopContainer", container_id=c.id, timeout=30)
                self.cri("RemoveContainer", container_id=c.id, timeout=30)
            for s in self.cri("ListPodSandbox", timeout=10).items:
                self.cri("StopPodSandbox", pod_sandbox_id=s.id, timeout=30)
                self.cri("RemovePodSandbox", pod_sandbox_id=s.id, timeout=30)
            return True
        except Exception as e:  # the daemon is gone or wedged: kill below
            sys.stderr.write("cleanup through the CRI failed: %s\n" % e)
            return False

    def stop_daemon(self):
        if self.cri:
            self.cri.close()
        if self.p and self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def kill_left(self):
        """SIGKILL what the daemon left: shims (their command line names
        our socket), runc, the containers' processes."""
        for _ in range(50):
            pids = set(pids_naming(self.d.encode()))
            for rel in self.cgroups:
                pids |= cgroup_pids(rel)
            pids.discard(os.getpid())
            if not pids:
                return
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)

    def cleanup(self):
        """Remove everything the daemon and the test's pods made; safe to
        call twice, and after a failed start."""
        if self.p is not None and self.p.poll() is None and self.cri:
            self.remove_pods()
        self.stop_daemon()
        self.kill_left()
        for m in mounts_under(self.d):
            subprocess.run(["umount", "-l", m], capture_output=True)
        for rel in self.cgroups:
            for d in sorted(cgroup_dirs(rel), key=lambda p: -p.count("/")):
                rmdir_retry(d)
        for anc in sorted(self.made, key=lambda p: -p.count("/")):
            for m in cgroup_mounts():
                try:
                    os.rmdir(os.path.join(m, anc))
                except OSError:
                    pass  # not ours alone any more, or never made there
        for s in self.shim_sockets():
            try:
                os.unlink(s)
            except OSError:
                pass
        if not self.run_before:
            for d in (SHIM_SOCKETS, "/run/containerd"):
                try:
                    os.rmdir(d)
                except OSError:
                    pass
        shutil.rmtree(self.d, ignore_errors=True)

    def leftovers(self):
        """What is still there of the daemon and the test's pods (after
        cleanup(): should be nothing)."""
        left = []
        if self.p is not None and self.p.poll() is None:
            left.append("containerd pid %d" % self.p.pid)
        pids = set(pids_naming(self.d.encode()))
        for rel in self.cgroups:
            pids |= cgroup_pids(rel)
        left += ["process %d (%s)" % (p, comm(p)) for p in sorted(pids)]
        left += ["mount %s" % m for m in mounts_under(self.d)]
        for rel in self.cgroups:
            left += ["cgroup %s" % d for d in cgroup_dirs(rel)]
        for anc in self.made:  # (one with children is another test's now)
            left += ["cgroup %s" % d for d in (
                os.path.join(m, anc) for m in cgroup_mounts())
                if os.path.isdir(d) and not next(
                    (e for e in os.scandir(d) if e.is_dir()), None)]
        left += ["shim socket %s" % s for s in self.shim_sockets()]
        if not self.run_before and os.path.exists("/run/containerd"):
            left.append("/run/containerd")
        if os.path.exists(self.d):
            left.append(self.d)
        return left

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.cleanup()


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return "?"


def pod_uid(pid_tag):
    """A pod UID of UUID syntax, unique to this test process and tag."""
    return "c7d0e1f2-%04x-4%03x-8%03x-%012x" % (
        pid_tag & 0xffff, (pid_tag >> 16) & 0xfff, int(time.time()) & 0xfff,
        int(time.time_ns() // 1000) & 0xffffffffffff)


def wait_exited(cri, cid, timeout=30):
    """Until container cid has exited; its ContainerStatus."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        st = cri("ContainerStatus", container_id=cid).status
        if st.state == 2:  # CONTAINER_EXITED
            return st
        time.sleep(0.05)
    return st


def exited(st):
    """A container status as a short text."""
    return "exit %d (%s) after %.2f s" % (
        st.exit_code, st.reason, (st.finished_at - st.started_at) / 1e9)

