#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hostile names end to end: real cgroup2 directories whose names hold
spaces, quotes, backslashes, control bytes, invalid UTF-8, CSV and
Prometheus syntax, and a 4,095-byte path (the longest /proc/<pid>/cgroup
can show), with processes whose comm (prctl PR_SET_NAME) holds the same
kind of bytes, newline included. Two collectors watch the same work at
once: one writes JSON lines (+ Prometheus text via --textfile), the other
CSV. Each output is validated by a real parser (python json in strict
mode, python csv, promtool check metrics) and every hostile name must come
back exactly (invalid bytes as U+FFFD, plus the raw bytes in *_hex in
JSON), counted in the right cgroup.

cgroupfs refuses '\\n' in a cgroup name (EINVAL: it would make
/proc/<pid>/cgroup unparsable), so newlines are tested in comm only; the
test checks that refusal too.
"""
import csv
import io
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check, fail,  # noqa: E402
                     final_rollup, keep, name_escape, need_live, need_tool,
                     short, strict_json_lines, utf8_lossy, workload)

B = arg(1, "taskstat-collect")
need_live(B)
PROMTOOL = need_tool("promtool")

# (cgroup name, comm); comm is cut at 15 bytes by the kernel
CASES = [
    (b"sp ace", b" lead trail "),
    (b"q\"uo'te", b"\"q'\""),
    (b"back\\slash\\", b"\\b\\n\\"),
    (b"ctl\x01\x1b[31m\x7f", b"c\x01\x1b[0m\x7f"),
    (b"tab\tcr\r", b"nl\nx\r\ty"),
    (b"inv\xff\xfe", b"i\xff\xfez"),
    (b"lone\xc3x\x80", b"\xc0\xc1\xf5"),
    (b"utf8-\xc3\xa9\xf0\x9f\x98\x80", b"\xc3\xa9\xf0\x9f\x98\x80"),
    (b"csv,f\"x\"\"", b",;\"\","),
    (b"prom{a=\"b\"} 1 #", b"}{# 1"),
    (b"co:lon 0::/x", b"0::/y"),
    (b"-leading dash", b"-"),
]
PATH_MAX = 4096


def make_long(cg, tail):
    """Nested directories under cg.base whose cgroup path is exactly
    PATH_MAX - 1 bytes and ends in `tail`; made through directory fds
    (the absolute path is longer than PATH_MAX). Returns (dirfd of the
    deepest, cgroup path, [(parent fd, name)] for removal)."""
    want = PATH_MAX - 1 - len(cg.path(b"")) - 1 - len(tail)
    lens = []
    while want >= 256:  # "/" + a 255-byte name per level
        lens.append(255)
        want -= 256
    if want == 1:  # "/" alone is no level: borrow a byte
        lens[-1] -= 1
        want = 2
    if want:
        lens.append(want - 1)
    comps = [b"L" * n for n in lens]
    comps.append(tail)
    fd = os.open(cg.base, os.O_RDONLY | os.O_DIRECTORY)
    made = []
    for c in comps:
        os.mkdir(c, dir_fd=fd)
        made.append((fd, c))
        fd = os.open(c, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    path = cg.path(b"/".join(comps))
    check(len(path) == PATH_MAX - 1, "long path is %d bytes" % len(path))
    return fd, path, made


def remove_long(fd, made):
    os.close(fd)
    for pfd, name in reversed(made):
        for _ in range(100):
            try:
                os.rmdir(name, dir_fd=pfd)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)
        if pfd != made[0][0]:
            os.close(pfd)
    os.close(made[0][0])


def prom_labels(s, i):
    """Parse {k="v",...} at s[i]; returns (dict, index after '}')."""
    check(s[i] == "{", "prom: '{' expected")
    i += 1
    labels = {}
    while s[i] != "}":
        j = s.index("=", i)
        k = s[i:j]
        check(s[j + 1] == '"', "prom: quote expected")
        i, v = j + 2, []
        while s[i] != '"':
            if s[i] == "\\":
                esc = {"\\": "\\", '"': '"', "n": "\n"}.get(s[i + 1])
                check(esc is not None, "prom: bad escape \\%s" % s[i + 1])
                v.append(esc)
                i += 2
            else:
                check(s[i] != "\n", "prom: raw newline in a label value")
                v.append(s[i])
                i += 1
        check(k not in labels, "prom: duplicate label %s" % k)
        labels[k] = "".join(v)
        i += 1
        if s[i] == ",":
            i += 1
    return labels, i + 1


def prom_series(text):
    """{(metric, frozenset(labels)): value}; duplicates are an error (a
    scrape with two samples of one series is rejected)."""
    out = {}
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            continue
        i = 0
        while i < len(line) and line[i] not in "{ ":
            i += 1
        name, labels = line[:i], {}
        if line[i] == "{":
            labels, i = prom_labels(line, i)
        key = (name, frozenset(labels.items()))
        check(key not in out, "prom: duplicate series %r" % (key,))
        out[key] = float(line[i:].strip().split()[0])
    return out


def main():
    with Cgroups("hostile") as cg:
        try:
            os.mkdir(cg.dir(b"new\nline"))
            fail("cgroupfs accepted a newline in a name: extend the test")
        except OSError as e:
            check(e.errno == 22, "newline mkdir: %s" % e)

        dirs = []
        for name, comm in CASES:
            d = cg.mkdir(name)
            dirs.append((d, cg.path(name), comm))
        lfd, lpath, made = make_long(cg, b"tail \"\\\x01\xff\xe2\x82")
        prom_file = tempfile.mktemp(prefix="tsc-h-prom-")
        try:
            with Collector(B, ["-f", "jsonl", "--events", "-i", "0.5",
                               "--textfile", prom_file]) as cj, \
                    Collector(B, ["-f", "csv", "--events", "-i",
                                  "0.5"]) as cc:
                expect = {}  # cgroup path -> (tasks, processes, comm)
                for d, path, comm in dirs + [(lfd, lpath,
                                              b"long\x1b\xff")]:
                    _, t, p = workload(d, comm=comm, procs=1, threads=1,
                                       linger=0.2)
                    expect[path] = (t, p, comm[:15])
                time.sleep(1.0)
            jdata, cdata = cj.raw(), cc.raw()
            with open(prom_file, "rb") as f:
                pdata = f.read()
            errs = cj.stderr() + cc.stderr()
        finally:
            if os.path.exists(prom_file):
                os.unlink(prom_file)
            remove_long(lfd, made)

    keep("hostile.jsonl", jdata)
    keep("hostile.csv", cdata)
    keep("hostile.prom", pdata)
    check_json(jdata, expect)
    check_csv(cdata, expect)
    check_prom(pdata, expect)
    check("AddressSanitizer" not in errs and "runtime error" not in errs,
          "sanitizer report: " + errs)
    print("ok: %d hostile cgroups and comms round-tripped through JSON, "
          "CSV and Prometheus" % len(expect))


def check_json(data, expect):
    objs = strict_json_lines(data)
    roll = final_rollup(objs)
    by = {}
    for c in roll["cgroups"]:
        key = (c["cgroup"], c.get("cgroup_hex"))
        check(key not in by, "JSON: cgroup %r listed twice" % (key,))
        by[key] = c
    exits = [o for o in objs if o["type"] == "exit"]
    for path, (tasks, procs, comm) in expect.items():
        s = utf8_lossy(path)
        hexv = path.hex() if s.encode() != path else None
        c = by.get((s, hexv))
        check(c is not None, "JSON: cgroup %s (hex %s) missing" % (short(s), short(hexv)))
        check(c["tasks"] == tasks and c["processes"] == procs,
              "JSON: %r: tasks %d processes %d, expected %d %d" %
              (s, c["tasks"], c["processes"], tasks, procs))
        ev = [e for e in exits if e["cgroup"] == s and
              e.get("cgroup_hex") == hexv and e["kind"] != "tgid"]
        check(len(ev) == tasks, "JSON: %d exit events in %r, expected %d" %
              (len(ev), s, tasks))
        cs = utf8_lossy(comm)
        chex = comm.hex() if cs.encode() != comm else None
        for e in ev:
            check(e["comm"] == cs and e.get("comm_hex") == chex,
                  "JSON: comm %r (hex %s), expected %r (hex %s)" %
                  (e["comm"], e.get("comm_hex"), cs, chex))


def check_csv(data, expect):
    try:
        text = data.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        fail("CSV is not UTF-8: %s" % e)
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    head = rows[0]
    check(all(len(r) == len(head) for r in rows),
          "CSV: rows of differing lengths: %s" %
          sorted({len(r) for r in rows}))
    col = {n: i for i, n in enumerate(head)}
    last_seq = max(r[col["seq"]] for r in rows[1:] if r[0] == "cgroup"
                   and r[col["final"]] == "true")
    cgrows = [r for r in rows[1:] if r[0] == "cgroup" and
              r[col["final"]] == "true" and r[col["seq"]] == last_seq]
    exits = [r for r in rows[1:] if r[0] == "exit"]
    for path, (tasks, procs, comm) in expect.items():
        s = name_escape(path)
        got = [r for r in cgrows if r[col["cgroup"]] == s]
        check(len(got) == 1, "CSV: %d final rows for cgroup %r" %
              (len(got), s))
        r = got[0]
        check(int(r[col["tasks"]]) == tasks and
              int(r[col["processes"]]) == procs,
              "CSV: %r: tasks %s processes %s" %
              (s, r[col["tasks"]], r[col["processes"]]))
        ev = [e for e in exits if e[col["cgroup"]] == s and
              e[col["kind"]] != "tgid"]
        check(len(ev) == tasks, "CSV: %d exit rows in %r" % (len(ev), s))
        for e in ev:
            check(e[col["comm"]] == name_escape(comm),
                  "CSV: comm %r, expected %r" % (e[col["comm"]],
                                                 name_escape(comm)))


def check_prom(data, expect):
    r = subprocess.run([need_tool("promtool"), "check", "metrics"],
                       input=data, capture_output=True, timeout=60)
    out = (r.stdout + r.stderr).decode("utf-8", "replace")
    # lint remarks (naming advice) are not format errors; anything else is
    for line in out.splitlines():
        check(" no help text" in line or "should" in line or
              "counter metrics" in line or not line.strip(),
              "promtool: %s" % line)
    check(r.returncode == 0 or out.strip(),
          "promtool failed without a message")
    try:
        text = data.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        fail("Prometheus text is not UTF-8: %s" % e)
    series = prom_series(text)
    for path, (tasks, procs, _) in expect.items():
        key = ("taskstat_task_exits_total",
               frozenset({("cgroup", name_escape(path))}))
        check(key in series, "prom: no series for %r" % name_escape(path))
        check(series[key] == tasks, "prom: %r: %s tasks, expected %d" %
              (name_escape(path), series[key], tasks))


main()
