#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""--web-config: HTTPS and basic authentication for /metrics, tested with
curl. A throw-away certificate (openssl) and a bcrypt hash (python's crypt
module, libxcrypt underneath) in a Prometheus exporter-toolkit web config
with a relative cert_file/key_file. Checks: the right user and password
over TLS -> 200 with the metrics; a wrong password, an unknown user or
none -> 401 with WWW-Authenticate: Basic; plain HTTP to the TLS port ->
no answer; a bad config (unknown key, not bcrypt, missing file) -> exit 2
naming --web-config; without --web-config plain HTTP still works."""
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Collector, check, need_live, need_tool,  # noqa: E402
                     run_cmd, skip)

B = sys.argv[1]
need_live(B)
CURL = need_tool("curl")
OPENSSL = need_tool("openssl")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import crypt
    except ImportError:
        skip("python3 has no crypt module (for a bcrypt hash)")
HASH = crypt.crypt("s3cret pass", crypt.mksalt(crypt.METHOD_BLOWFISH,
                                                 rounds=16))
if not HASH or not HASH.startswith("$2"):
    skip("crypt(3) here makes no bcrypt hash")

d = tempfile.mkdtemp(prefix="tsc-tls-")
r = run_cmd([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes",
             "-keyout", d + "/server.key", "-out", d + "/server.crt",
             "-days", "1", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
check(r.rc == 0, "openssl req: " + r.err)
cfg = d + "/web.yml"
with open(cfg, "w") as f:
    f.write("# exporter-toolkit style\ntls_server_config:\n"
            "  cert_file: server.crt\n  key_file: server.key\n"
            "basic_auth_users:\n  alice: '%s'\n" % HASH)


def curl(url, *extra):
    r = run_cmd([CURL, "-sS", "-m", "5", "-D", "-", "-o", d + "/body",
                 "-w", "\n%{http_code}", *extra, url], timeout=20)
    code = r.out.decode().rsplit("\n", 1)[-1]
    with open(d + "/body", "rb") as fb:
        body = fb.read()
    return r.rc, code, r.out.decode("utf-8", "replace"), body


col = Collector(B, ["--listen", "127.0.0.1:0", "--web-config", cfg, "-i",
                    "1", "-o", "/dev/null"])
with col:
    port = None
    t0 = time.time()
    while time.time() - t0 < 10 and not port:
        m = re.search(r"serving metrics on https://127\.0\.0\.1:(\d+)/",
                      col.stderr())
        port = m.group(1) if m else None
        time.sleep(0.05)
    check(port, "no 'serving metrics on https://' line: " + col.stderr())
    url = "https://127.0.0.1:%s/metrics" % port
    ca = ["--cacert", d + "/server.crt"]

    rc, code, hdr, body = curl(url, *ca, "-u", "alice:s3cret pass")
    check(rc == 0 and code == "200", "right password: %s %s" % (rc, hdr))
    check(b"taskstat_collector_records_total" in body, "no metrics: %r"
          % body[:200])
    # again: the remembered password
    rc, code, hdr, body = curl(url, *ca, "-u", "alice:s3cret pass")
    check(code == "200", "second scrape: %s" % code)
    for who, extra in (("wrong password", ["-u", "alice:wrong"]),
                       ("unknown user", ["-u", "bob:s3cret pass"]),
                       ("no credentials", [])):
        rc, code, hdr, body = curl(url, *ca, *extra)
        check(code == "401", "%s: HTTP %s, not 401" % (who, code))
        check(re.search(r"^WWW-Authenticate: Basic", hdr, re.M | re.I),
              "%s: no WWW-Authenticate: Basic in %r" % (who, hdr))
    # the health endpoints say only ok / not ok: no credentials needed
    # (a kubelet probe has none), the snapshot is still behind the password
    for path, want in (("/healthz", b"ok\n"), ("/ready", b"ready\n")):
        rc, code, hdr, body = curl(url.replace("/metrics", path), *ca)
        check(code == "200" and body == want,
              "%s without credentials: HTTP %s %r" % (path, code, body))
    rc, code, hdr, body = curl(url.replace("/metrics", "/snapshot"), *ca)
    check(code == "401", "/snapshot without credentials: HTTP %s" % code)
    rc, code, hdr, body = curl(url, "-u", "alice:s3cret pass")
    check(rc != 0, "curl trusted the throw-away certificate without "
          "--cacert")
    rc, code, hdr, body = curl("http://127.0.0.1:%s/metrics" % port,
                               "-u", "alice:s3cret pass")
    check(code != "200", "plain HTTP on the HTTPS port answered 200")
    rc, code, hdr, body = curl(url, *ca, "-u", "alice:s3cret pass")
    check(code == "200", "after the plain-HTTP attempt: %s" % code)
    st = col.stderr()

TLSK = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
bad = [("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key"
        "\n  client_auth_type: RequireAndVerifyClientCert\n",
        "client_auth_type"),
       ("basic_auth_users:\n  alice: plaintext\n", "bcrypt"),
       ("tls_server_config:\n  cert_file: nope.crt\n  key_file: server.key\n",
        "nope.crt"),
       ("tls_server_config: [1, 2\n", "web"),
       ("http_server_config:\n  http2: false\n", "http_server_config"),
       # issue 25: mTLS and min_version, checked at load
       (TLSK + "  min_version: TLS14\n", "min_version"),
       (TLSK + "  client_auth_type: Sometimes\n", "Sometimes"),
       (TLSK + "  client_ca_file: server.crt\n", "client_ca_file"),
       (TLSK + "  client_ca_file: nope-ca.crt\n"
        "  client_auth_type: RequireAndVerifyClientCert\n", "nope-ca.crt"),
       (TLSK + "  client_auth_type: VerifyClientCertIfGiven\n",
        "client_ca_file"),
       ("tls_server_config:\n  cert_file: server.crt\n"
        "  key_file: server.crt\n", "key_file")]
for text, want in bad:
    with open(cfg, "w") as f:
        f.write(text)
    r = run_cmd([B, "--listen", "127.0.0.1:0", "--web-config", cfg,
                 "--duration", "1"])
    check(r.rc == 2 and "--web-config" in r.err and want in r.err,
          "config %r: exit %d, %r" % (text, r.rc, r.err))
r = run_cmd([B, "--web-config", cfg, "--duration", "1"])
check(r.rc == 2 and "--listen" in r.err, "--web-config without --listen: "
      "%d %r" % (r.rc, r.err))

# the default stays plain HTTP
col = Collector(B, ["--listen", "127.0.0.1:0", "-i", "1", "-o", "/dev/null"])
with col:
    port = None
    t0 = time.time()
    while time.time() - t0 < 10 and not port:
        m = re.search(r"serving metrics on http://127\.0\.0\.1:(\d+)/",
                      col.stderr())
        port = m.group(1) if m else None
        time.sleep(0.05)
    check(port, "no plain 'serving metrics' line")
    rc, code, hdr, body = curl("http://127.0.0.1:%s/metrics" % port)
    check(code == "200", "plain HTTP: %s" % code)
for f in os.listdir(d):
    os.unlink(os.path.join(d, f))
os.rmdir(d)
print("PASS: HTTPS with basic auth (200, 401 + WWW-Authenticate, TLS "
      "required), bad configs refused, plain HTTP by default")
