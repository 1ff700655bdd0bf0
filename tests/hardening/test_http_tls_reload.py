#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""--web-config reloads, mTLS and min_version (issue 25), run with --user
nobody so that every reload reads the files as that user. Throw-away CA,
server and client certificates from openssl; the served certificate read
with openssl s_client; clients are curl. Checks: a rotated certificate is
served after SIGHUP, and after a change of the files without a signal; a
broken file at reload keeps serving the old configuration, says why on
stderr and is counted (web_config_reloads_total{result="failure"},
last_reload_successful 0); a key the --user cannot read fails the same
way; RequireAndVerifyClientCert refuses a client without a certificate
and one with a certificate from another CA, and serves one with a
certificate from client_ca_file; min_version TLS13 refuses a TLS 1.2
client and serves a TLS 1.3 one."""
import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Collector, check, need_live, need_tool,  # noqa: E402
                     run_cmd)

B = sys.argv[1]
need_live(B)
CURL = need_tool("curl")
OPENSSL = need_tool("openssl")
PORT = 19630

d = tempfile.mkdtemp(prefix="tsc-tlsr-")
os.chmod(d, 0o755)


def ossl(*args):
    r = run_cmd([OPENSSL] + list(args))
    check(r.rc == 0, "openssl %s: %s" % (args[0], r.err))


def selfsigned(name, cn):
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
         "%s/%s.key" % (d, name), "-out", "%s/%s.crt" % (d, name), "-days",
         "1", "-subj", "/CN=" + cn, "-addext",
         "subjectAltName=IP:127.0.0.1")


selfsigned("ca", "ops-ca")
selfsigned("a", "server-a")
selfsigned("b", "server-b")
selfsigned("rogue", "rogue-client")
ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/client.key",
     "-out", d + "/client.csr", "-subj", "/CN=client")
ossl("x509", "-req", "-in", d + "/client.csr", "-CA", d + "/ca.crt",
     "-CAkey", d + "/ca.key", "-CAcreateserial", "-out", d + "/client.crt",
     "-days", "1")
for f in os.listdir(d):
    os.chmod(os.path.join(d, f), 0o644)  # readable by the --user


def put(name, data, mode=0o644):
    """Replace d/name atomically (a new inode, as rotation tools do)."""
    tmp = os.path.join(d, "." + name + ".new")
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.rename(tmp, os.path.join(d, name))


def read(name):
    with open(os.path.join(d, name), "rb") as f:
        return f.read()


def server(cn):
    put("server.crt", read(cn + ".crt"))
    put("server.key", read(cn + ".key"))


TLS = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
MTLS = TLS + ("  client_ca_file: ca.crt\n"
              "  client_auth_type: RequireAndVerifyClientCert\n")
server("a")
put("web.yml", TLS.encode())
URL = "https://127.0.0.1:%d/metrics" % PORT


def served_cn():
    r = run_cmd([OPENSSL, "s_client", "-connect", "127.0.0.1:%d" % PORT],
                timeout=20)
    m = re.search(r"subject=\s*CN\s*=\s*(\S+)", r.out.decode())
    return m.group(1) if m else None


def curl(*extra):
    r = run_cmd([CURL, "-sS", "-k", "-m", "5", "-o", d + "/body", "-w",
                 "%{http_code}", *extra, URL], timeout=20)
    return r.rc, r.out.decode()


def metric(name):
    rc, code = curl("--cert", d + "/client.crt", "--key", d + "/client.key")
    check(code == "200", "scrape for %s: %s %s" % (name, rc, code))
    m = re.search(r"^taskstat_collector_web_config_%s (\S+)$" % re.escape(
        name), read("body").decode(), re.M)
    check(m, "no %s in /metrics" % name)
    return float(m.group(1))


def until(what, fn, timeout=10):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if fn():
            return
        time.sleep(0.2)
    check(False, what)


col = Collector(B, ["--listen", "127.0.0.1:%d" % PORT, "--web-config",
                    d + "/web.yml", "-i", "0.5", "-o", "/dev/null", "-u",
                    "nobody"])
with col:
    until("served at the start: " + col.stderr(),
          lambda: "serving metrics on https" in col.stderr())
    check(served_cn() == "server-a", "first certificate: %s" % served_cn())
    check(metric("last_reload_successful") == 1, "start not successful")

    server("b")
    os.kill(col.p.pid, signal.SIGHUP)
    until("rotated certificate not served after SIGHUP: %s"
          % served_cn(), lambda: served_cn() == "server-b")

    server("a")  # no signal: the change of the files is seen
    until("certificate change not picked up without SIGHUP",
          lambda: served_cn() == "server-a")
    ok = metric('reloads_total{result="success"}')
    check(ok >= 2, "success reloads: %s" % ok)

    put("web.yml", b"tls_server_config: [1, 2\n")
    os.kill(col.p.pid, signal.SIGHUP)
    until("broken file: no failure counted",
          lambda: metric('reloads_total{result="failure"}') == 1)
    check(served_cn() == "server-a", "broken file: not serving the old "
          "certificate")
    check(metric("last_reload_successful") == 0, "gauge still 1")
    check(re.search(r"--web-config: reload \(SIGHUP\) failed, keeping the "
                    r"configuration loaded before: .*web\.yml:\d+", col.stderr()),
          "no reason on stderr: " + col.stderr())

    # a key only root can read: the --user cannot reload it
    put("web.yml", TLS.encode())
    until("fixed file not reloaded",
          lambda: metric("last_reload_successful") == 1)
    put("server.key", read("b.key"), 0o600)
    put("server.crt", read("b.crt"))
    until("unreadable key: no failure",
          lambda: metric('reloads_total{result="failure"}') == 2)
    check("Permission denied" in col.stderr(), "unreadable key: why?")
    check(served_cn() == "server-a", "unreadable key: old cert not served")

    # mTLS
    os.chmod(os.path.join(d, "server.key"), 0o644)
    put("web.yml", MTLS.encode())
    until("mTLS config not reloaded", lambda: curl()[1] != "200")
    rc, code = curl()
    check(code != "200", "no client certificate: served (%s)" % code)
    rc, code = curl("--cert", d + "/rogue.crt", "--key", d + "/rogue.key")
    check(code != "200", "certificate of another CA: served (%s)" % code)
    rc, code = curl("--cert", d + "/client.crt", "--key", d + "/client.key")
    check(code == "200", "client certificate of the CA: %s %s" % (rc, code))

    # min_version
    put("web.yml", (MTLS + "  min_version: TLS13\n").encode())
    cc = ("--cert", d + "/client.crt", "--key", d + "/client.key")
    until("min_version TLS13 not applied",
          lambda: curl("--tls-max", "1.2", *cc)[1] != "200")
    rc, code = curl("--tlsv1.3", *cc)
    check(code == "200", "TLS 1.3 client refused: %s %s" % (rc, code))
    rc, code = curl("--tls-max", "1.2", *cc)
    check(rc != 0 and code != "200", "TLS 1.2 client served: %s" % code)
    st = col.stderr()

shutil.rmtree(d)
print("PASS: certificate rotation by SIGHUP and by a file change, a broken "
      "or unreadable file keeps serving (counted), mTLS, min_version TLS13")
