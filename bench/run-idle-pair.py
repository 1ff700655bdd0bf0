#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Idle cost of two collectors side by side (issue 42's idle target).

Starts NEW and OLD (taskstat-collect binaries) at once, each with
--listen on its own loopback port and its default interval, waits
--start s (start-up done), then sums /proc/PID/task/*/schedstat run time
of each over --window s. Both see the same host, so the pair is compared
without the host's drift. Prints, per round, each one's ms of CPU per
window and its busiest thread's ms and wake-ups (schedstat's third
field). Needs root (taskstats).
usage: run-idle-pair.py NEW OLD [--rounds 3] [--window 30] [--start 5]
"""
import argparse
import os
import subprocess
import tempfile
import time


def threads(pid):
    """{tid: (run ns, wake-ups)} of pid's threads."""
    out = {}
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            with open(f'/proc/{pid}/task/{tid}/schedstat') as f:
                s = f.read().split()
            out[tid] = (int(s[0]), int(s[2]))
        except OSError:
            pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('new')
    ap.add_argument('old')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--window', type=float, default=30.0)
    ap.add_argument('--start', type=float, default=5.0)
    ap.add_argument('--port', type=int, default=41300)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix='cgs-idle-')
    for rnd in range(a.rounds):
        ps = {}
        for i, (name, b) in enumerate((('new', a.new), ('old', a.old))):
            ps[name] = subprocess.Popen(
                [b, '-f', 'jsonl', '-o', os.path.join(tmp, name + '.jsonl'),
                 '--listen', f'127.0.0.1:{a.port + i}'],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(a.start)
        t0 = {k: threads(p.pid) for k, p in ps.items()}
        time.sleep(a.window)
        t1 = {k: threads(p.pid) for k, p in ps.items()}
        for p in ps.values():
            p.terminate()
            p.wait()
        line = []
        for k in ps:
            d = {tid: (t1[k][tid][0] - t0[k].get(tid, (0, 0))[0],
                       t1[k][tid][1] - t0[k].get(tid, (0, 0))[1])
                 for tid in t1[k]}
            tot = sum(v[0] for v in d.values())
            top = max(d.values(), default=(0, 0))
            line.append(f'{k} {tot / 1e6:.1f} ms (busiest thread '
                        f'{top[0] / 1e6:.1f} ms, {top[1]} wake-ups)')
        print(f'round {rnd}: ' + '; '.join(line) +
              f' per {a.window:g} s', flush=True)


if __name__ == '__main__':
    main()
