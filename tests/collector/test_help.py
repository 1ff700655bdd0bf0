#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Help that fits (issue 38): taskstat-collect --help is one screen (<= 60
lines of <= 80 columns) ending with where the full reference is;
--help-all lists every option of --help and more (--wide, --help-all),
each of them in the manual page taskstat-collect(8); taskstat-top's and
taskstat-query's --help fit the same screen. The bash completion
(completions/taskstat.bash) loads in bash, registers the three commands
and offers exactly the long options of each command's help, and the
values of --format, --stream, --sort and --json-names.

argv: taskstat-collect taskstat-top taskstat-query SOURCE_DIR. No
privileges."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import check  # noqa: E402

COLLECT, TOP, QUERY, SRC = (os.path.abspath(a) for a in sys.argv[1:5])


def helptext(cmd, opt="--help"):
    r = subprocess.run([cmd, opt], capture_output=True, timeout=10)
    check(r.returncode == 0 and not r.stderr,
          "%s %s: exit %d %r" % (cmd, opt, r.returncode, r.stderr))
    return r.stdout.decode()


def fits(what, text, lines_max):
    lines = text.splitlines()
    check(len(lines) <= lines_max, "%s: %d lines (> %d)" %
          (what, len(lines), lines_max))
    wide = [ln for ln in lines if len(ln) > 80]
    check(not wide, "%s: lines over 80 columns: %r" % (what, wide))
    return lines


def longopts(text):
    return set(re.findall(r"--[a-z][a-z0-9-]*", text))


short = helptext(COLLECT)
lines = fits("taskstat-collect --help", short, 60)
tail = " ".join(lines[-3:])
check("--help-all" in tail and "taskstat-collect(8)" in tail,
      "--help does not end with where the reference is: %r" % lines[-3:])
full = helptext(COLLECT, "--help-all")
fits("taskstat-collect --help-all", full, 1000)
check(longopts(short) <= longopts(full), "in --help, not in --help-all: %s"
      % sorted(longopts(short) - longopts(full)))
check(len(longopts(full)) > len(longopts(short)) and
      {"--wide", "--help-all", "--stream"} <= longopts(full),
      "--help-all: %s" % sorted(longopts(full)))
with open(os.path.join(SRC, "cmd", "collect", "taskstat-collect.8")) as f:
    man = f.read().replace("\\-", "-")
missing = sorted(o for o in longopts(full) if o not in man)
check(not missing, "options not in taskstat-collect(8): %s" % missing)
tops = helptext(TOP)
fits("taskstat-top --help", tops, 60)
queries = helptext(QUERY)
fits("taskstat-query --help", queries, 60)
with open(os.path.join(SRC, "cmd", "query", "taskstat-query.8")) as f:
    man = f.read().replace("\\-", "-")
missing = sorted(o for o in longopts(queries) if o not in man)
check(not missing, "options not in taskstat-query(8): %s" % missing)

bash = shutil.which("bash")
if not bash:
    print("PASS (help texts; no bash: the completion not tried)")
    sys.exit(0)
script = os.path.join(SRC, "completions", "taskstat.bash")
r = subprocess.run([bash, "-n", script], capture_output=True)
check(r.returncode == 0, "bash -n: %r" % r.stderr)


def complete(*words):
    """The completions bash offers for the command line words (the last
    one being completed)."""
    prog = ('. "$1"; shift; complete -p taskstat-collect taskstat-top '
            'taskstat-query >/dev/null || exit 9; COMP_WORDS=("$@"); '
            'COMP_CWORD=$(($# - 1)); _taskstat; '
            'printf "%s\\n" "${COMPREPLY[@]}"')
    r = subprocess.run([bash, "--norc", "--noprofile", "-c", prog, "x",
                        script] + list(words), capture_output=True,
                       timeout=30)
    check(r.returncode == 0, "completion %s: exit %d %r" %
          (words, r.returncode, r.stderr))
    return set(r.stdout.decode().split())


for cmd, text in ((COLLECT, full), (TOP, tops), (QUERY, queries)):
    got = complete(cmd, "--")
    check(got == longopts(text), "%s --<TAB>: offers %s, help has %s" %
          (os.path.basename(cmd), sorted(got ^ longopts(text)),
           "the rest"))
check(complete(COLLECT, "--w") == {"--wide", "--web-config",
                                   "--workload-retire"},
      "--w<TAB>: %s" % complete(COLLECT, "--w"))
check(complete(COLLECT, "--format", "") == {"table", "jsonl", "json", "csv"},
      "--format <TAB>")
check(complete(COLLECT, "--stream", "c") == {"changes"}, "--stream c<TAB>")
check(complete(TOP, "--sort", "c") == {"cpu", "cpudly"}, "--sort c<TAB>")
check(complete(QUERY, "--json", "--json-names", "") == {"1.2", "1.3"},
      "--json-names <TAB>")
print("PASS: help texts fit, --help-all and the manual pages complete, "
      "the completion offers the options")
