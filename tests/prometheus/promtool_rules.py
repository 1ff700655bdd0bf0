#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""promtool on the rules: `check` runs `promtool check rules` on
packaging/prometheus/taskstat-rules.yml, `test` runs `promtool test rules`
on tests/prometheus/*.test.yml (a firing and a non-firing case for every
alert). Skips (77) without promtool (Debian package prometheus).

Usage: promtool_rules.py check|test [SOURCE-DIR]
"""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "e2e"))
from tsc_e2e import check, fail, need_tool  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def check_runbooks(src, rules):
    """Every alert links its runbook, which docs/dashboards.md has as a
    "#### Runbook: <alert>" section, and the rule tests have a case where
    it fires and one where it does not."""
    with open(rules) as f:
        text = f.read()
    with open(os.path.join(src, "docs", "dashboards.md")) as f:
        docs = f.read()
    tests = ""
    for t in glob.glob(os.path.join(src, "tests", "prometheus",
                                    "*.test.yml")):
        with open(t) as f:
            tests += f.read()
    alerts = re.findall(r"^\s+- alert: (\S+)$", text, re.M)
    check(alerts, "no alerts in %s" % rules)
    links = re.findall(r"#runbook-([a-z]+)\"$", text, re.M)
    check(sorted(links) == sorted(a.lower() for a in alerts),
          "runbook_url: alerts %s, links %s" % (alerts, links))
    for a in alerts:
        check("#### Runbook: %s\n" % a in docs,
              "docs/dashboards.md has no '#### Runbook: %s'" % a)
        cases = re.findall(r"alertname: %s\n\s+exp_alerts:\s*(\S)" % a,
                           tests)
        check("[" in cases and "-" in cases,
              "%s: the tests need a firing and a non-firing case" % a)
    print("%d alerts, each with its runbook and a firing and a non-firing "
          "test case" % len(alerts))


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("check", "test"):
        fail("usage: %s check|test [SOURCE-DIR]" % sys.argv[0])
    src = (os.path.abspath(sys.argv[2]) if len(sys.argv) > 2
           else os.path.normpath(os.path.join(HERE, "..", "..")))
    promtool = need_tool("promtool")
    if sys.argv[1] == "check":
        files = [os.path.join(src, "packaging", "prometheus",
                              "taskstat-rules.yml")]
    else:
        files = sorted(glob.glob(os.path.join(src, "tests", "prometheus",
                                              "*.test.yml")))
        check(files, "no tests/prometheus/*.test.yml")
    if sys.argv[1] == "check":
        check_runbooks(src, files[0])
    r = subprocess.run([promtool, sys.argv[1], "rules"] + files,
                       capture_output=True, text=True, timeout=120)
    print(r.stdout + r.stderr)
    check(r.returncode == 0, "promtool %s rules: exit %d" %
          (sys.argv[1], r.returncode))
    check("SUCCESS" in r.stdout + r.stderr, "promtool said no SUCCESS")
    print("OK")


if __name__ == "__main__":
    main()
