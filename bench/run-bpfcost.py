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
  c  taskstat-collect --comms 10: the program also copies each exiting
     process's command (its group leader's comm) for the summaries
  v  taskstat-collect --hierarchy cpu: the cgroup v1 mode of a
     controller's hierarchy (the program reads the task's css)
  n  taskstat-collect --hierarchy name=systemd: the v1 mode of a named
     hierarchy (program cgs_exit_v1k, the kfunc bpf_task_get_cgroup1)
  o  (with --base-build DIR) the collector of another build, e.g. the
     previous release's program (with DIR/lib first in LD_LIBRARY_PATH)
  p  (with --base-build DIR) that build's n

and reports run_time_ns / run_cnt of cgs_exit and of cgs_empty_exit, and
their difference: the program's own cost per exit. Medians over --reps.
Restores kernel.bpf_stats_enabled. Needs root and bpftool.

  python3 bench/run-bpfcost.py [--build build] [--reps 7] [--configs kvne]
      [--scale 4]   (4x longer churn runs)
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time


def prog_ids(pid):
    """The BPF programs process pid holds (its fds' fdinfo prog_id): on a
    shared host other collectors' programs carry the same names."""
    ids = set()
    for fd in os.listdir('/proc/%d/fdinfo' % pid):
        try:
            with open('/proc/%d/fdinfo/%s' % (pid, fd)) as f:
                for line in f:
                    if line.startswith('prog_id:'):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def prog_stats(name, pid):
    ids = prog_ids(pid)
    out = subprocess.run(['bpftool', 'prog', 'show', '--json'],
                         capture_output=True, text=True, check=True).stdout
    for p in json.loads(out):
        if p.get('name') == name and p.get('id') in ids:
            return p.get('run_time_ns', 0), p.get('run_cnt', 0)
    raise RuntimeError('no program %s held by pid %d' % (name, pid))


def start(cmd, errpath, libdir=None):
    err = open(errpath, 'w')
    env = None
    if libdir:  # a copied build's binaries keep their RUNPATH: its lib first
        env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
    err.close()
    deadline = time.monotonic() + 60
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
    ap.add_argument('--configs', default='ke',
                    help='of k, e, c, v, n, o, p (o, p need --base-build)')
    ap.add_argument('--scale', type=int, default=1,
                    help='churn repetitions times this')
    ap.add_argument('--base-build', help='build dir of the o program')
    ap.add_argument('--out', default='bpfcost.json',
                    help='file name under bench/results')
    args = ap.parse_args()
    cfgs = [c for c in args.configs if c in 'kecvnop' and
            (c not in 'op' or args.base_build)]
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
    res = {m: {c: [] for c in cfgs} for m in args.modes.split(',')}
    try:
        with open('/proc/sys/kernel/bpf_stats_enabled', 'w') as f:
            f.write('1')
        for rep in range(args.reps):
            for mode in res:
                order = cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]
                for cfg in order:
                    kern = ['-f', 'jsonl', '-i', '60', '--attribution',
                            'kernel']
                    if cfg == 'k':
                        cmd, name = [col] + kern, 'cgs_exit'
                    elif cfg == 'v':
                        cmd, name = [col] + kern + ['--hierarchy', 'cpu'], \
                            'cgs_exit'
                    elif cfg == 'n':
                        cmd, name = [col] + kern + ['--hierarchy',
                                                    'name=systemd'], \
                            'cgs_exit_v1k'
                    elif cfg == 'c':
                        cmd, name = [col] + kern + ['--comms', '10'], \
                            'cgs_exit'
                    elif cfg == 'p':
                        cmd, name = [os.path.join(args.base_build, 'cmd',
                                                  'taskstat-collect')] + \
                            kern + ['--hierarchy', 'name=systemd'], \
                            'cgs_exit_v1k'
                    elif cfg == 'o':
                        cmd, name = [os.path.join(args.base_build, 'cmd',
                                                  'taskstat-collect')] + \
                            kern, 'cgs_exit'
                    else:
                        cmd, name = [att, empty], 'cgs_empty_exit'
                    p = start(cmd, errpath, os.path.join(
                        args.base_build if cfg in 'op' else args.build,
                        'lib'))
                    s0 = prog_stats(name, p.pid)
                    n, r = ('1000', str(10 * args.scale)) \
                        if mode == 'threads' else ('1000', str(5 * args.scale))
                    subprocess.run([churn, mode, '-n', n, '-r', r],
                                   capture_output=True, check=True)
                    s1 = prog_stats(name, p.pid)
                    p.send_signal(signal.SIGTERM)
                    p.wait(300)
                    dt, dn = s1[0] - s0[0], s1[1] - s0[1]
                    res[mode][cfg].append((dt / dn if dn else 0, dn,
                                           os.getloadavg()[0]))
    finally:
        with open('/proc/sys/kernel/bpf_stats_enabled', 'w') as f:
            f.write(old)
        if os.path.exists(errpath):
            os.unlink(errpath)
    print('| workload | config | runs/rep | ns/run | net of e, ns/exit |')
    print('|---|---|---|---|---|')
    out = {}
    for mode, r in res.items():
        e = statistics.median(x[0] for x in r['e']) if r.get('e') else 0
        out[mode] = {'reps': args.reps, 'empty_ns': e, 'samples': r}
        for cfg in cfgs:
            v = statistics.median(x[0] for x in r[cfg])
            cnt = statistics.median(x[1] for x in r[cfg])
            out[mode][cfg] = {'ns': v, 'net_ns': v - e, 'runs': cnt}
            print('| %s | %s | %d | %.0f | %s |' % (
                mode, cfg, cnt, v, '-' if cfg == 'e' else '%.0f' % (v - e)))
    loads = sorted(x[2] for r in res.values() for c in r.values() for x in c)
    if loads:
        print('host load (1 min) during the runs: %.1f-%.1f, median %.1f' % (
            loads[0], loads[-1], statistics.median(loads)))
    with open(os.path.join(here, 'results', args.out), 'w') as f:
        json.dump(out, f, indent=1)


main()
