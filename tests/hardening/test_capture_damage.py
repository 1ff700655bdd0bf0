#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Damaged capture files, systematically, through the real binary.

A capture is recorded live (workload in a cgroup with a hostile name),
then replayed intact and after: truncation at record boundaries (a
clean, shorter capture: exit 0, fewer records), truncation inside record
headers and bodies (a sample of ~24 records: the host's own exits make a
live capture large) and at every byte of the fixed file header, a bit
flipped at ~180 offsets spread over the whole file, every other format
version, and a record length field set to absurd values. Each replay must
end within its timeout with exit 0 (boundary cuts only), 1 (damage after
a valid header: what came before is still reported, final snapshot
included) or 2 (bad header), print one clear line naming --replay and,
for record damage, the record number and offset, and never crash or trip
a sanitizer. Replay needs no privileges; without root the fuzz seed
capture (fuzz/corpus/capture/m0_good.cap) is used instead."""
import os
import random
import re
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check,  # noqa: E402
                     final_rollup, run_cmd, strict_json_lines, workload)

B = arg(1, "taskstat-collect")
SEED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                    "fuzz", "corpus", "capture", "m0_good.cap")
HDR, RHDR = 32, 16


def record_live(path):
    with Cgroups("capdmg") as cg:
        d = cg.mkdir(b"cap \"dmg\"\\\x01\xff")
        with Collector(B, ["-f", "jsonl", "-i", "0.5", "--record", path]):
            workload(d, comm=b"dmg\n\xff", procs=3, threads=2)
            time.sleep(0.5)


def layout(data):
    """Offsets of the records: [(start, end)]."""
    check(data[:8] == b"\x89TSCAP\r\n", "not a capture")
    off = struct.unpack_from("<I", data, 12)[0]
    recs = []
    while off < len(data):
        blen = struct.unpack_from("<I", data, off + 8)[0]
        recs.append((off, off + RHDR + blen))
        off += RHDR + blen
    check(off == len(data), "capture does not end on a record boundary")
    return recs


def replay(path):
    return run_cmd([B, "--replay", path, "-f", "jsonl"])[:3]


def records_of(out):
    return final_rollup(strict_json_lines(out))["records"]


def main():
    tmp = tempfile.mkdtemp(prefix="tsc-h-cap-")
    cap = os.path.join(tmp, "good.tscap")
    bad = os.path.join(tmp, "bad.tscap")
    # any failure of a trial run (not only the environment's): the seed
    live = os.geteuid() == 0 and run_cmd([B, "-f", "jsonl", "-d",
                                          "0.2"]).rc == 0
    if live:
        record_live(cap)
    else:
        with open(SEED, "rb") as f, open(cap, "wb") as o:
            o.write(f.read()[1:])  # the seed's first byte is a mode byte
    with open(cap, "rb") as f:
        data = f.read()
    recs = layout(data)
    rc, out, err = replay(cap)
    check(rc == 0, "intact capture: exit %d: %s" % (rc, err))
    full = records_of(out)
    check(full > 0, "intact capture replays no record")

    stats = {"runs": 0, "exit0": 0, "exit1": 0, "exit2": 0}

    def case(blob, what, allow=(0, 1, 2), needle=None):
        with open(bad, "wb") as f:
            f.write(blob)
        rc, out, err = replay(bad)
        stats["runs"] += 1
        check(rc in allow, "%s: exit %d, expected one of %s; stderr %r" %
              (what, rc, allow, err[-500:]))
        stats["exit%d" % rc] += 1
        check("Sanitizer" not in err and "runtime error" not in err,
              "%s: sanitizer report: %s" % (what, err[-2000:]))
        # the seed capture (used where no live one can be recorded) holds a
        # record of a type from the future on purpose: replay notes it
        lines = [l for l in err.splitlines() if l.strip() and not
                 re.search(r"--replay: skipped \d+ records? of unknown "
                           r"types?$", l)]
        if rc == 0:
            check(not lines, "%s: exit 0 with stderr %r" % (what, err))
            check(records_of(out) <= full, "%s: more records" % what)
            return out
        check(len(lines) == 1 and "--replay" in lines[0],
              "%s: expected one line naming --replay, got %r" % (what, err))
        if needle:
            check(re.search(needle, lines[0]), "%s: message %r lacks %r" %
                  (what, lines[0], needle))
        if rc == 1:  # header fine: what came before the damage is kept
            check(records_of(out) <= full, "%s: more records" % what)
        return out

    # a sample of the records (the host's own exits make captures large):
    # the first 12, the last 4 and 8 in between
    rnd = random.Random(6)
    idx = sorted(set(list(range(min(12, len(recs)))) +
                     list(range(max(0, len(recs) - 4), len(recs))) +
                     [rnd.randrange(len(recs)) for _ in range(8)]))
    # truncation at record boundaries: a valid, shorter capture
    for i in idx:
        case(data[:recs[i][0]], "cut before record %d" % (i + 1),
             allow=(0,))
    # inside record headers and bodies
    for i in idx:
        s, e = recs[i]
        for cut in sorted({s + 1, s + RHDR - 1, s + RHDR, (s + e) // 2,
                           e - 1}):
            if s < cut < e:
                case(data[:cut], "cut at %d in record %d" % (cut, i + 1),
                     allow=(1,), needle=r"record \d+ at offset \d+")
    # the file header: every byte of the fixed part, then a sample
    hend = recs[0][0] if recs else len(data)
    for cut in sorted(set(range(0, min(HDR + 8, hend))) |
                      set(range(HDR + 8, hend, 13))):
        case(data[:cut], "header cut at %d" % cut, allow=(2,))
    # flipped bytes all over the file (deterministic sample)
    offs = sorted(set([rnd.randrange(len(data)) for _ in range(100)] +
                      [rnd.randrange(min(len(data), 20000))
                       for _ in range(50)] + list(range(0, HDR))))
    for off in offs:
        b = bytearray(data)
        b[off] ^= 1 << rnd.randrange(8)
        allow = (2,) if off < recs[0][0] else (1,)
        case(bytes(b), "bit flip at %d" % off, allow=allow)
    # other format versions
    for v in (0, 2, 3, 0xffffffff):
        b = bytearray(data)
        struct.pack_into("<I", b, 8, v)
        case(bytes(b), "version %d" % v, allow=(2,), needle=r"version")
    # absurd record lengths (checksum not fixed: must fail either way)
    for blen in (0, 1, 23, 0x100000, 0x100001, 0xffffffff):
        b = bytearray(data)
        struct.pack_into("<I", b, recs[0][0] + 8, blen)
        case(bytes(b), "record length %d" % blen, allow=(1,))
    # trailing garbage after the last record
    case(data + b"\0" * 7, "7 trailing zero bytes", allow=(1,))
    case(data + b"garbage garbage garbage", "trailing garbage", allow=(1,))

    for f in (cap, bad):
        os.unlink(f)
    os.rmdir(tmp)
    print("ok: %s capture of %d records (%d bytes): %d damaged replays "
          "(%d clean cuts, %d record errors, %d header errors), none "
          "crashed" % ("live" if live else "seed", full, len(data),
                       stats["runs"], stats["exit0"], stats["exit1"],
                       stats["exit2"]))


main()
