#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A cgroup removed and created again at the same path is a new cgroup:
its exits are never added to its predecessor's counters (nor the other way
round). Three incarnations of one path, each running a different number of
tasks (3, 5, 7), re-created (a) after a pause longer than the rollup's
revalidation period and (b) at once (tens of ms between the last exit in
one incarnation and the first in the next); no snapshot may show more
than 7 tasks for the path (any sum of two incarnations is more) nor more
rows than incarnations (the shards' parts of one are one row), the
final one must show the live incarnation with exactly 7, and in case (a)
each incarnation must have been seen complete.

With --quick-only / --slow-only only one of the two cases is run."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from tsc_e2e import (Cgroups, Collector, arg, check,  # noqa: E402
                     final_rollup, keep, need_live, strict_json_lines,
                     workload)

B = arg(1, "taskstat-collect")
need_live(B)
MODES = [a for a in sys.argv[2:] if a.startswith("--")]
PAUSE = 1.5  # > the rollup's default revalidate_ms (1000)


def incarnations(cg, name, pause):
    """Run 3, 5 then 7 tasks in three incarnations of cgroup `name`."""
    d = cg.mkdir(name)
    counts = []
    for i, procs in enumerate((2, 4, 6)):
        if i:
            cg.rmtree(d)
            check(not os.path.exists(d), "rmdir failed")
            if pause:
                time.sleep(pause)
            os.mkdir(d)
        _, tasks, _ = workload(d, procs=procs, linger=0.3 if pause else 0.05)
        counts.append(tasks)
        if pause:
            time.sleep(0.6)  # a snapshot sees this incarnation
    time.sleep(0.6)
    return counts


def check_path(objs, path, counts, what):
    """A snapshot may catch an incarnation half way (fewer tasks), never
    more than the largest one had: any sum of two is larger."""
    top = max(counts)
    seen = set()
    for o in objs:
        if o["type"] != "rollup":
            continue
        rows = [c["tasks"] for c in o["cgroups"] if c["cgroup"] == path]
        # one row an incarnation: the shards' parts of one merged
        check(len(rows) <= len(counts) and sum(rows) <= sum(counts),
              "%s: snapshot %d has rows %s for %s: an incarnation split "
              "(they had %s)" % (what, o["seq"], rows, path, counts))
        for c in o["cgroups"]:
            if c["cgroup"] != path or c["tasks"] == 0:
                continue
            check(c["tasks"] <= top,
                  "%s: snapshot %d shows %d tasks in %s: incarnations "
                  "merged (they had %s)" % (what, o["seq"], c["tasks"],
                                            path, counts))
            seen.add(c["tasks"])
    fin = [c for c in final_rollup(objs)["cgroups"] if c["cgroup"] == path
           and not c["removed"]]
    check(len(fin) == 1 and fin[0]["tasks"] == counts[-1],
          "%s: final live %s: %s, expected %d tasks" %
          (what, path, [(c["tasks"], c["removed"]) for c in fin],
           counts[-1]))
    if what == "slow":
        check(set(counts) <= seen, "%s: complete incarnations seen with "
              "%s tasks, expected all of %s" % (what, sorted(seen), counts))


def main():
    cases = []
    if "--quick-only" not in MODES:
        cases.append(("slow", PAUSE))
    if "--slow-only" not in MODES:
        cases.append(("quick", 0))
    with Cgroups("recreate") as cg:
        with Collector(B, ["-f", "jsonl", "-i", "0.25"]) as col:
            runs = [(what, cg.path(what), incarnations(cg, what.encode(),
                                                       pause))
                    for what, pause in cases]
    data = col.raw()
    keep("recreate.jsonl", data)
    objs = strict_json_lines(data)
    for what, path, counts in runs:
        check_path(objs, path, counts, what)
    print("ok: %s" % ", ".join("%s re-creation: %s kept apart" %
                               (w, c) for w, _, c in runs))


main()
