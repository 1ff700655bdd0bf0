#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the kernel attribution source's BPF program costs per exit.

With kernel.bpf_stats_enabled=1 the kernel times every run of a program
(run_time_ns, run_cnt; the timing's own clock reads are included). This
runs the same churn (bench/churn threads and procs) under, interleaved:

  k  taskstat-collect at its default (the kernel source: cgs_exit on
     sched_process_exit, plus cgs_mkdir/cgs_rmdir)
  e  bench/bpf_attach with bench/empty_exit.bpf.o: an empty program on the
     same tracepoint (what dispatch and the stats' clock reads cost)

and reports run_time_ns / run_cnt of cgs_exit and of cgs_empty_exit, and
their difference: the program's own cost per exit. Medians over --reps.
Restores kernel.bpf_stats_enabled. Needs root and bpftool.

  python3 bench/run-bpfcost.py [--build build] [--reps 7]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time


def prog_stats(name):
    out = subprocess.run(['bpftool', 'prog', 'show', '--json'],
                         capture_output=True, text=True, check=True).stdout
    for p in json.loads(out):
        if p.get('name') == name:
            return p.get('run_time_ns', 0), p.get('run_cnt', 0)
    return None


def start(cmd, errpath):
    err = open(errpath, 'w')
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    err.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if p.poll() is not None:
            with open(errpath) as f:
                raise RuntimeError('%s exited: %s' % (cmd[0], f.read()))
        with open(errpath) as f:
            t = f.read()
        if 'ready' in t or 'attribution: kernel' in t:
            time.sleep(0.3)
            return p
        time.sleep(0.02)
    raise RuntimeError('%s did not start' % cmd[0])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(os.path.dirname(here),
                                                    'build'))
    ap.add_argument('--reps', type=int, default=7)
    ap.add_argument('--modes', default='threads,procs')
    args = ap.parse_args()
    churn = os.path.join(args.build, 'bench', 'churn')
    col = os.path.join(args.build, 'cmd', 'taskstat-collect')
    att = os.path.join(args.build, 'bench', 'bpf_attach')
    empty = os.path.join(args.build, 'bench', 'empty_exit.bpf.o')
    for f in (churn, col, att, empty):
        if not os.path.exists(f):
            sys.exit('missing %s (build with libbpf, clang, bpftool)' % f)
    with open('/proc/sys/kernel/bpf_stats_enabled') as f:
        old = f.read().strip()
    errpath = '/tmp/bpfcost-%d.err' % os.getpid()
    res = {m: {'k': [], 'e': []} for m in args.modes.split(',')}
    try:
        with open('/proc/sys/kernel/bpf_stats_enabled', 'w') as f:
            f.write('1')
        for rep in range(args.reps):
            for mode in res:
                order = ('k', 'e') if rep % 2 == 0 else ('e', 'k')
                for cfg in order:
                    if cfg == 'k':
                        cmd, name = [col, '-f', 'jsonl', '-i', '60',
                                     '--attribution', 'kernel'], 'cgs_exit'
                    else:
                        cmd, name = [att, empty], 'cgs_empty_exit'
                    p = start(cmd, errpath)
                    s0 = prog_stats(name)
                    n, r = ('1000', '10') if mode == 'threads' else \
                        ('1000', '5')
                    subprocess.run([churn, mode, '-n', n, '-r', r],
                                   capture_output=True, check=True)
                    s1 = prog_stats(name)
                    p.send_signal(signal.SIGTERM)
                    p.wait(10)
                    dt, dn = s1[0] - s0[0], s1[1] - s0[1]
                    res[mode][cfg].append((dt / dn if dn else 0, dn))
    finally:
        with open('/proc/sys/kernel/bpf_stats_enabled', 'w') as f:
            f.write(old)
        if os.path.exists(errpath):
            os.unlink(errpath)
    print('| workload | runs/rep | cgs_exit ns/run | empty ns/run | '
          'net ns/exit |')
    print('|---|---|---|---|---|')
    out = {}
    for mode, r in res.items():
        k = statistics.median(x[0] for x in r['k'])
        e = statistics.median(x[0] for x in r['e'])
        cnt = statistics.median(x[1] for x in r['k'])
        out[mode] = {'cgs_exit_ns': k, 'empty_ns': e, 'net_ns': k - e,
                     'runs': cnt, 'reps': args.reps,
                     'samples': r}
        print('| %s | %d | %.0f | %.0f | %.0f |' % (mode, cnt, k, e, k - e))
    with open(os.path.join(here, 'results', 'bpfcost.json'), 'w') as f:
        json.dump(out, f, indent=1)


main()
