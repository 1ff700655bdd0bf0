#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Churn benchmark: what a taskstats listener costs an exit-heavy workload.

Runs bench/churn (threads: N threads sleeping (N-i)*2 us, R rounds; procs:
fork + _exit + waitpid) under five configurations, interleaved per
repetition (A B C D E, B C D E A, ... : the start rotates so no
configuration always runs first):

  a  no listener
  b  bench/drain: libcgstats listener whose callback only counts (the floor)
  c  taskstat-collect fully on (attribution, rollup, per-tgid, jsonl) at
     its default: the kernel attribution source where it loads
  p  c with --attribution exact (the /proc fallback)
  d  c with --no-tgid
  e  c with --events (one line per exit record, to a file)
  f  c with --no-fork-events (no proc-connector fork tracking)
  x  (optional) c with --attribution fast (fork parent's cached cgroup
     instead of a /proc read per new process)
  h  (optional) c with --no-histograms (issue 11's opt-out features off:
     the exit outcomes are always on)
  m  (optional) c with --comms 10 (every issue 11 feature on)
  k  bench/drain registered with a 64 MiB buffer but asleep until the end:
     what the kernel's per-exit work alone costs (no wake-ups), the bound
     under any listener's cost
  w  (optional) bench/drain with --batch-ms 0: woken per message, to show
     what batching saves
  r  bench/rawfloor, the physical floor, always run: one libnl socket with
     the whole CPU mask, recvmmsg 64 at a time, a 20 ms sleep whenever a
     call returns fewer than 64, no decode, no libcgstats
  v  (optional) (b) of another build (--base-build), for before/after
  s  (optional) bench/drain --shards <CPUs> --batch-ms 20: the pinned
     pre-1.3 receive path (a thread per CPU, 20 ms batches)

Every listener's CPU is also read as the issue-42 window: the sum of
/proc/PID/task/*/schedstat run time from --window-start s after its start
to --window-tail s after the workload ends, nothing subtracted; the
"vs raw floor" table divides that per record by (r)'s of the same
repetition.

The workload joins a dedicated cgroup2 directory so the collector's
per-cgroup rollup can be checked against what the workload produced.
Writes <out>/churn.json, <out>/churn.md and <out>/churn-overhead.png.
Needs root (taskstats listeners, cgroup moves). Python 3 stdlib only.
"""
import argparse
import json
import os
import platform
import select
import signal
import statistics
import subprocess
import sys
import time

CONFIGS = {
    'a': 'no listener',
    'b': 'drain-only listener (floor)',
    'c': 'taskstat-collect full (default: kernel source)',
    'p': 'taskstat-collect --attribution exact (/proc)',
    'd': 'taskstat-collect --no-tgid',
    'e': 'taskstat-collect --events',
    'k': 'kernel side only (registered, not woken)',
    'f': 'taskstat-collect --no-fork-events',
    'x': 'taskstat-collect --attribution fast',
    'h': 'taskstat-collect --no-histograms',
    'm': 'taskstat-collect --comms 10',
    'w': 'drain-only, woken per message (batch 0)',
    'o': '(c) of another build (--base-build), for before/after',
    'r': 'raw floor (no libcgstats: 1 socket, recvmmsg 64, 20 ms, no decode)',
    'v': '(b) of another build (--base-build), for before/after',
    's': 'drain pinned to the pre-1.3 path (--shards CPUs --batch-ms 20)',
    'y': 'drain with the --drain-arg arguments',
    'z': 'taskstat-collect --format jsonl --interval 600 (issue 42)',
    'O': '(z) of another build (--base-build), for before/after',
}
DRAINS = 'bkwvsy'  # configs whose output is bench/drain's JSON


def v2_mount():
    with open('/proc/self/mountinfo') as f:
        for line in f:
            left, _, right = line.partition(' - ')
            if right.startswith('cgroup2 '):
                return left.split()[4]
    return None


def wait_ready(proc, errpath, timeout):
    """Wait until the listener is receiving: it says "ready" on stderr
    (bench/drain) or its receive threads exist (taskstat-collect starts them
    only after its self-test proved the path). False if it died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with open(errpath) as f:
                if 'ready' in f.read().lower():
                    return True
            if len(os.listdir(f'/proc/{proc.pid}/task')) >= 2:
                return True
        except OSError:
            pass
        time.sleep(0.01)
    return proc.poll() is None


def stop(proc):
    """SIGTERM, reap, return (rc, user_s, sys_s) of the listener."""
    proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            pid, status, ru = os.wait4(proc.pid, 0)
            break
        time.sleep(0.01)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, ru.ru_utime, ru.ru_stime


def parse_collector(path, cgpath):
    """Records/drops from taskstat-collect's jsonl output.

    The last "rollup" line (the final snapshot) has the collector totals
    (records, dropped, unattributed) and one entry per cgroup: the
    workload's cgroup entry counts its task and tgid records. With --events,
    "exit" lines attributed to that cgroup are counted too."""
    last, events, events_match = None, 0, 0
    try:
        with open(path) as f:
            for line in f:
                if line.startswith('{"type":"exit"'):
                    events += 1
                    if f'"cgroup":"{cgpath}"' in line:
                        events_match += 1
                elif line.startswith('{"type":"rollup"'):
                    last = line
    except OSError:
        pass
    res = {'event_lines': events, 'event_lines_match': events_match}
    if not last:
        return res
    try:
        o = json.loads(last)
    except ValueError:
        return res
    row = next((g for g in o.get('cgroups', [])
                if g.get('cgroup') == cgpath), {})
    res.update(match_task_records=row.get('tasks', 0),
               match_tgid_records=row.get('tgid_records', 0),
               match_processes=row.get('processes', 0),
               records=o.get('records'), dropped=o.get('dropped'),
               unattributed=o.get('unattributed'),
               final_snapshot=o.get('final'), snapshots=o.get('seq'),
               attribution=o.get('attribution'),
               fork_drops=o.get('fork_drops'))
    return res


def task_cpu_s(pid):
    """CPU time (s, ns resolution) of the live threads of pid: the sum of
    /proc/PID/task/*/schedstat's first field. The listener's threads live
    from its start to its stop, so two readings bracket what it spent in
    between, without its start-up and final snapshot."""
    t = 0
    try:
        for tid in os.listdir(f'/proc/{pid}/task'):
            try:
                with open(f'/proc/{pid}/task/{tid}/schedstat') as f:
                    t += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return t / 1e9


def run_one(args, cfg, mode, cgprocs, cgpath, tmp):
    """One workload run under one configuration; returns a result dict."""
    listener = cmd = None
    errpath = os.path.join(tmp, 'listener.err')
    outpath = os.path.join(tmp, 'listener.out')
    for p in (errpath, outpath):
        if os.path.exists(p):
            os.unlink(p)
    if cfg == 'b':
        cmd = [args.drain]
    elif cfg == 'v':
        cmd = [args.base_drain]
    elif cfg == 's':
        cmd = [args.drain, '--shards', str(os.cpu_count()), '--batch-ms',
               '20']
    elif cfg == 'r':
        cmd = [args.rawfloor]
    elif cfg == 'y':
        cmd = [args.drain] + args.drain_arg
    elif cfg in 'zO':
        cmd = [args.base_collector if cfg == 'O' else args.collector, '-f', 'jsonl', '-i', '600', '-o', outpath,
               '--hierarchy', 'v2'] + args.collector_arg
    elif cfg == 'k':
        cmd = [args.drain, '--batch-ms', '1000000', '--rcvbuf',
               str(64 << 20)]
    elif cfg == 'w':
        cmd = [args.drain, '--batch-ms', '0']
    elif cfg in 'cdefxphmo':
        cmd = [args.base_collector if cfg == 'o' else args.collector,
               '--format', 'jsonl', '--output', outpath,
               '--interval', str(args.interval), '--hierarchy', 'v2']
        if cfg == 'd':
            cmd.append('--no-tgid')
        if cfg == 'e':
            cmd.append('--events')
        if cfg == 'f':
            cmd.append('--no-fork-events')
        if cfg == 'x':
            cmd += ['--attribution', 'fast']
        if cfg == 'p':
            cmd += ['--attribution', 'exact']
        if cfg == 'h':
            cmd.append('--no-histograms')
        if cfg == 'm':
            cmd += ['--comms', '10']
        cmd += args.collector_arg
    else:
        cmd = None
    if cmd:
        out = open(outpath + '.stdout', 'w')
        err = open(errpath, 'w')
        t_start = time.monotonic()
        listener = subprocess.Popen(cmd, stdout=out, stderr=err)
        out.close()
        err.close()
        ok = wait_ready(listener, errpath, args.ready_timeout)
        if not ok:
            rc = listener.poll()
            with open(errpath) as f:
                msg = f.read().strip()
            if rc is not None:
                raise RuntimeError(f'{cfg}: listener exited {rc}: {msg}')
        time.sleep(args.settle)
        # the window starts window_start s after the listener's start
        wait = t_start + args.window_start - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        w0, c0 = time.monotonic(), task_cpu_s(listener.pid)

    if mode == 'idle':
        # Start/stop cost of the listener alone: same timeline, no workload.
        time.sleep(args.settle)
        w1, c1 = time.monotonic(), task_cpu_s(listener.pid)
        rc, u, s = stop(listener)
        return {'config': cfg, 'mode': mode, 'listener_cpu_s': u + s,
                'window_cpu_s': c1 - c0 if c0 is not None and c1 else None,
                'window_s': w1 - w0}

    n = args.n if mode == 'threads' else args.procs_n
    r = args.rounds if mode == 'threads' else args.procs_rounds
    wl = subprocess.run([args.churn, mode, '-n', str(n), '-r', str(r),
                         '-c', cgprocs], capture_output=True, text=True)
    if wl.returncode != 0:
        raise RuntimeError(f'churn failed: {wl.stderr}')
    res = json.loads(wl.stdout.strip().splitlines()[-1])
    res.update(config=cfg, cpu_s=res['user_s'] + res['sys_s'],
               listener_user_s=0.0, listener_sys_s=0.0, listener_cpu_s=0.0)
    if listener:
        # let the last batch arrive; the window ends here
        time.sleep(max(args.settle, args.window_tail))
        w1, c1 = time.monotonic(), task_cpu_s(listener.pid)
        res['window_cpu_s'] = c1 - c0 if c0 is not None and c1 else None
        res['window_s'] = w1 - w0
        rc, u, s = stop(listener)
        res.update(listener_rc=rc, listener_user_s=u, listener_sys_s=s,
                   listener_cpu_s=u + s)
        if cfg in DRAINS + 'r':
            try:
                with open(outpath + '.stdout') as f:
                    d = json.loads(f.read().strip().splitlines()[-1])
            except (OSError, ValueError, IndexError):
                d = {}
            res.update(match_task_records=d.get('match_task_records'),
                       match_tgid_records=d.get('match_tgid_records'),
                       records=d.get('events'), dropped=d.get('dropped'))
            if cfg == 'r':  # no decode: every message of the host
                res['match_task_records'] = None
        else:
            res.update(parse_collector(outpath, cgpath))
            try:
                res['output_bytes'] = os.path.getsize(outpath)
            except OSError:
                res['output_bytes'] = None
    res['total_cpu_s'] = res['cpu_s'] + res['listener_cpu_s']
    return res


def med(v):
    return statistics.median(v) if v else None


def iqr(v):
    if len(v) < 4:
        return (min(v), max(v)) if v else (None, None)
    q = statistics.quantiles(v, n=4)
    return q[0], q[2]


def summarize(runs, configs, modes):
    summ = {}
    for mode in modes:
        summ[mode] = {}
        for cfg in configs:
            rs = [x for x in runs if x['mode'] == mode and x['config'] == cfg]
            if not rs:
                continue
            s = {'runs': len(rs)}
            for k in ('elapsed_s', 'user_s', 'sys_s', 'cpu_s',
                      'listener_user_s', 'listener_sys_s',
                      'listener_cpu_s', 'total_cpu_s'):
                v = [x[k] for x in rs]
                lo, hi = iqr(v)
                s[k] = {'median': med(v), 'min': min(v), 'max': max(v),
                        'q1': lo, 'q3': hi}
            exp_t = rs[0]['expected_task_records']
            exp_g = rs[0]['expected_tgid_records']
            if cfg == 'd':
                exp_g = 0
            got_t = [x.get('match_task_records') for x in rs]
            got_g = [x.get('match_tgid_records') for x in rs]
            drops = [x.get('dropped') for x in rs]
            un = [x.get('unattributed') for x in rs
                  if x.get('unattributed') is not None]
            att = [x['attribution'] for x in rs
                   if isinstance(x.get('attribution'), dict)]
            if att:
                s['attribution_median'] = {
                    k: med([a.get(k, 0) for a in att]) for k in att[0]}
                s['fork_drops_total'] = sum(x.get('fork_drops') or 0
                                            for x in rs)
            s['unattributed_host'] = {'min': min(un), 'max': max(un),
                                      'median': med(un)} if un else None
            s['expected_task_records'] = exp_t
            s['expected_tgid_records'] = exp_g
            if cfg != 'a':
                s['task_records'] = {
                    'min': min((g for g in got_t if g is not None),
                               default=None),
                    'max': max((g for g in got_t if g is not None),
                               default=None)}
                s['tgid_records'] = {
                    'min': min((g for g in got_g if g is not None),
                               default=None),
                    'max': max((g for g in got_g if g is not None),
                               default=None)}
                s['runs_complete'] = sum(1 for g in got_t if g == exp_t)
                s['dropped_total'] = sum(d for d in drops if d is not None)
                s['dropped_known'] = sum(1 for d in drops if d is not None)
            summ[mode][cfg] = s
        base = summ[mode].get('a')
        if not base:
            continue
        # Paired overheads: each configuration against (a) of the same
        # repetition, which ran seconds apart; drifting background load
        # then cancels out far better than in a ratio of medians.
        a_by_rep = {x['rep']: x for x in runs
                    if x['mode'] == mode and x['config'] == 'a'}
        for cfg, s in summ[mode].items():
            s['overhead_pct'], s['overhead_iqr'] = {}, {}
            s['overhead_of_medians_pct'] = {}
            for k in ('elapsed_s', 'cpu_s', 'total_cpu_s'):
                pr = [(x[k] / a_by_rep[x['rep']][k] - 1) * 100
                      for x in runs if x['mode'] == mode and
                      x['config'] == cfg and x['rep'] in a_by_rep and
                      a_by_rep[x['rep']][k] > 0]
                s['overhead_pct'][k] = med(pr)
                s['overhead_iqr'][k] = iqr(pr) if pr else (None, None)
                b = base[k]['median']
                s['overhead_of_medians_pct'][k] = \
                    (s[k]['median'] / b - 1) * 100 if b else None
        fl = summ[mode].get('b')
        for cfg in ('c', 'o', 'p', 'd', 'e', 'f', 'x', 'h', 'm'):
            s = summ[mode].get(cfg)
            if not s or not fl:
                continue
            s['vs_floor'] = {}
            for k in ('elapsed_s', 'cpu_s', 'total_cpu_s'):
                fo = fl['overhead_pct'][k]
                co = s['overhead_pct'][k]
                s['vs_floor'][k] = co / fo if fo and fo > 0 else None
    return summ


def fmt(x, nd=3):
    return '-' if x is None else f'{x:.{nd}f}'


def pct(x):
    return '-' if x is None else f'{x:+.1f}%'


def markdown(meta, summ, configs, modes):
    out = []
    out.append(f"Churn benchmark, {meta['date']} on {meta['machine']}; "
               f"load average {meta['loadavg_start'][0]} at the start, "
               f"{meta['loadavg_end'][0]} at the end "
               f"({meta['wall_s']:.0f} s)"
               f"{'; nice ' + str(meta['nice']) if meta.get('nice') else ''}"
               f".\n")
    out.append(f"threads: N={meta['n']} R={meta['rounds']}; procs: "
               f"N={meta['procs_n']} R={meta['procs_rounds']}; "
               f"{meta['reps']} interleaved repetitions per configuration; "
               f"medians, [min-max] in brackets. Records: the workload's "
               f"own (drain: by comm; collector: its cgroup's row in the "
               f"final rollup); drops: the kernel's exact counter, whole "
               f"host.\n")
    for mode in modes:
        out.append(f"\n### {mode}\n")
        out.append('| cfg | listener | elapsed s | user s | sys s | '
                   'listener CPU s: user/sys (total net of start/stop; '
                   'us/record) | '
                   'records (got/expected) | tgid recs | '
                   'drops | unattributed (whole host) |')
        out.append('|---|---|---|---|---|---|---|---|---|---|')
        for cfg in configs:
            s = summ[mode].get(cfg)
            if not s:
                continue
            e = s['elapsed_s']
            lnet = ''
            if 'listener_net_cpu_s' in s:
                lnet = (f" ({fmt(s['listener_net_cpu_s'])}; "
                        f"{fmt(s['listener_net_us_per_record'], 2)})")
            if cfg == 'a':
                rec, tg, dr, ua = '-', '-', '-', '-'
            else:
                tr, gr = s['task_records'], s['tgid_records']
                rec = (f"{tr['min']}..{tr['max']}/{s['expected_task_records']}"
                       if tr['min'] != tr['max'] else
                       f"{tr['min']}/{s['expected_task_records']}")
                tg = (f"{gr['min']}..{gr['max']}/{s['expected_tgid_records']}"
                      if gr['min'] != gr['max'] else
                      f"{gr['min']}/{s['expected_tgid_records']}")
                dr = str(s['dropped_total']) if s['dropped_known'] else '?'
                u = s.get('unattributed_host')
                ua = f"{u['min']}..{u['max']}" if u else '-'
            out.append(
                f"| {cfg} | {CONFIGS[cfg]} | {fmt(e['median'])} "
                f"[{fmt(e['min'])}-{fmt(e['max'])}] | "
                f"{fmt(s['user_s']['median'])} | {fmt(s['sys_s']['median'])} | "
                f"{fmt(s['listener_user_s']['median'])}/"
                f"{fmt(s['listener_sys_s']['median'])}{lnet} | {rec} | {tg} | {dr} |"
                f" {ua} |")
        att = [(cfg, summ[mode][cfg]) for cfg in configs
               if 'attribution_median' in summ[mode].get(cfg, {})]
        if att:
            out.append('\nHow the collector attributed records (whole host, '
                       'median per run): ' + '; '.join(
                           f"{cfg}: " + ', '.join(
                               f"{k} {v:g}" for k, v in
                               s['attribution_median'].items()) +
                           f", fork-event drops {s['fork_drops_total']}"
                           for cfg, s in att) + '\n')
        if 'a' not in summ[mode]:
            continue  # no (a): the paired table against (b) only
        out.append('\nOverhead against (a), paired per repetition: median '
                   '[interquartile range] of X/a - 1:\n')
        out.append('| cfg | elapsed | workload CPU (user+sys) | '
                   'CPU incl. listener | listener CPU net of start/stop, '
                   '% of (a)\'s workload CPU |')
        out.append('|---|---|---|---|---|')
        for cfg in configs:
            s = summ[mode].get(cfg)
            if not s or cfg == 'a':
                continue
            o, q = s['overhead_pct'], s['overhead_iqr']
            base_cpu = summ[mode]['a']['cpu_s']['median']
            net = s.get('listener_net_cpu_s')
            s['listener_net_pct_of_workload'] = \
                net / base_cpu * 100 if net is not None and base_cpu else None
            out.append(f"| {cfg} | " + ' | '.join(
                f"{pct(o[k])} [{pct(q[k][0])}..{pct(q[k][1])}]"
                for k in ('elapsed_s', 'cpu_s', 'total_cpu_s')) +
                f" | {pct(s['listener_net_pct_of_workload'])} |")
        rows = [(cfg, summ[mode][cfg]['vs_floor'])
                for cfg in ('c', 'o', 'p', 'd', 'e', 'f', 'x', 'h', 'm')
                if cfg in summ[mode] and 'vs_floor' in summ[mode][cfg]]
        if rows:
            out.append('\nCost relative to the drain-only floor (overhead X '
                       '/ overhead b; "-" when b measured no overhead):\n')
            out.append('| cfg | elapsed | CPU | CPU incl. listener | '
                       'listener CPU per record, net of start/stop, vs b |')
            out.append('|---|---|---|---|---|')
            bnet = summ[mode].get('b', {}).get('listener_net_us_per_record')
            for cfg, v in rows:
                xnet = summ[mode][cfg].get('listener_net_us_per_record')
                lr = xnet / bnet if xnet is not None and bnet else None
                summ[mode][cfg]['vs_floor']['listener_net_per_record'] = lr
                out.append(f"| {cfg} | {fmt(v['elapsed_s'], 2)}x | "
                           f"{fmt(v['cpu_s'], 2)}x | "
                           f"{fmt(v['total_cpu_s'], 2)}x | {fmt(lr, 2)}x |")
    return '\n'.join(out) + '\n'


def plot(outdir, summ, configs, modes):
    dat = os.path.join(outdir, 'churn-overhead.dat')
    keys = (('elapsed_s', 'elapsed'), ('cpu_s', 'CPU'),
            ('total_cpu_s', 'CPU+listener'))
    with open(dat, 'w') as f:
        f.write('# cfg, then per mode and metric: median q1 q3 (paired %)\n')
        for cfg in configs:
            if cfg == 'a':
                continue
            cols = []
            for m in modes:
                s = summ[m].get(cfg, {})
                for k, _ in keys:
                    o = s.get('overhead_pct', {}).get(k)
                    q = s.get('overhead_iqr', {}).get(k, (None, None))
                    cols += [o, q[0], q[1]]
            f.write(f'"{cfg}" ' + ' '.join('NaN' if c is None else f'{c:.3f}'
                                           for c in cols) + '\n')
    png = os.path.join(outdir, 'churn-overhead.png')
    series = []
    col = 2
    for m in modes:
        for _, lab in keys:
            series.append(f"'{dat}' using {col}:{col + 1}:{col + 2}:xtic(1) "
                          f"title '{m} {lab}'")
            col += 3
    gp = f"""set terminal pngcairo size 1100,560 font ',10'
set output '{png}'
set title 'Churn workload overhead vs no listener (paired medians, bars: IQR)'
set ylabel 'overhead vs (a), %'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set grid ytics
set xzeroaxis lt -1
set key outside right
set xlabel 'k kernel side only, b drain-only floor, c collector full, d --no-tgid, e --events, f --no-fork-events'
plot {', '.join(series)}
"""
    try:
        subprocess.run(['gnuplot'], input=gp, text=True, check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'gnuplot failed: {e}', file=sys.stderr)
        return None
    return png


def machine():
    model = '?'
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    model = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs, {model}, Linux {platform.release()}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default=os.path.join(os.path.dirname(here),
                                                    'build-bench'),
                    help='CMake build directory (default: ../build-bench)')
    ap.add_argument('--reps', type=int, default=20)
    ap.add_argument('--configs', default='akbcdef')
    ap.add_argument('--modes', default='threads,procs')
    ap.add_argument('-n', type=int, default=1000)
    ap.add_argument('-r', '--rounds', type=int, default=10)
    ap.add_argument('--procs-n', type=int, default=1000)
    ap.add_argument('--procs-rounds', type=int, default=5)
    ap.add_argument('--interval', default='1',
                    help='collector snapshot interval, s (default 1)')
    ap.add_argument('--settle', type=float, default=0.3,
                    help='idle seconds before and after the workload')
    ap.add_argument('--ready-timeout', type=float, default=3.0)
    ap.add_argument('--window-start', type=float, default=1.5,
                    help="the schedstat window opens this long after the "
                    "listener's start (s; default 1.5)")
    ap.add_argument('--window-tail', type=float, default=0.5,
                    help='and closes this long after the workload ends '
                    '(s; default 0.5)')
    ap.add_argument('--idle-reps', type=int, default=5,
                    help='listener start/stop runs without workload, to '
                    'separate its fixed cost from per-record cost')
    ap.add_argument('--collector-arg', action='append', default=[],
                    help='extra argument for taskstat-collect (repeatable)')
    ap.add_argument('--drain-arg', action='append', default=[],
                    help='argument of config y (drain; repeatable)')
    ap.add_argument('--quick', action='store_true',
                    help='CI smoke: 2 reps, smaller workloads (~1 min)')
    ap.add_argument('--out', default=os.path.join(here, 'results'))
    ap.add_argument('--base-build', default=None,
                    help='build dir whose collector runs as config o')
    ap.add_argument('--cgroup-prefix', default='cgs-bench-churn',
                    help="the workload's cgroup: /PREFIX-PID")
    ap.add_argument('--nice', type=int, default=0,
                    help='run harness, workload and listeners at this nice '
                    'level (e.g. -10 on a shared machine)')
    ap.add_argument('--from-json', metavar='CHURN_JSON',
                    help='only redo the report (md, json, png) of a run')
    args = ap.parse_args()
    if args.from_json:
        os.makedirs(args.out, exist_ok=True)
        return rereport(args.from_json, args.out)
    if args.quick:
        args.reps = min(args.reps, 2)
        args.rounds = min(args.rounds, 3)
        args.procs_rounds = min(args.procs_rounds, 2)
        args.settle = min(args.settle, 0.2)
        args.idle_reps = min(args.idle_reps, 2)
    args.churn = os.path.join(args.build, 'bench', 'churn')
    args.drain = os.path.join(args.build, 'bench', 'drain')
    args.rawfloor = os.path.join(args.build, 'bench', 'rawfloor')
    args.base_drain = os.path.join(args.base_build or '/nonexistent',
                                   'bench', 'drain')
    args.collector = os.path.join(args.build, 'cmd', 'taskstat-collect')
    args.base_collector = os.path.join(args.base_build or '/nonexistent',
                                       'cmd', 'taskstat-collect')
    configs = [c for c in args.configs if c in CONFIGS]
    if 'r' not in configs and any(c != 'a' for c in configs):
        configs.append('r')  # every comparison runs the raw floor
    modes = [m for m in args.modes.split(',') if m in ('threads', 'procs')]
    missing = {'b': args.drain, 'k': args.drain, 'w': args.drain,
               'c': args.collector, 'd': args.collector, 'e': args.collector,
               'f': args.collector, 'x': args.collector,
               'h': args.collector, 'm': args.collector,
               'o': args.base_collector, 'r': args.rawfloor,
               'v': args.base_drain, 's': args.drain, 'y': args.drain,
               'z': args.collector, 'O': args.base_collector}
    for c in list(configs):
        if c in missing and not os.access(missing[c], os.X_OK):
            print(f'skipping {c}: {missing[c]} not built', file=sys.stderr)
            configs.remove(c)
    if os.geteuid() != 0:
        print('run-churn: needs root', file=sys.stderr)
        return 77
    mnt = v2_mount()
    if not mnt:
        print('run-churn: no cgroup2 mount', file=sys.stderr)
        return 1
    cgpath = f'/{args.cgroup_prefix}-{os.getpid()}'
    cgdir = mnt + cgpath
    os.makedirs(cgdir, exist_ok=True)
    tmp = f'/tmp/cgs-bench-churn-{os.getpid()}'
    os.makedirs(tmp, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)

    if args.nice:
        os.nice(args.nice)
    runs = []
    t0 = time.monotonic()
    with open('/proc/loadavg') as f:
        load_start = f.read().split()[:3]
    try:
        for rep in range(args.reps):
            order = configs[rep % len(configs):] + \
                configs[:rep % len(configs)]
            for mode in modes:
                for cfg in order:
                    r = run_one(args, cfg, mode,
                                os.path.join(cgdir, 'cgroup.procs'), cgpath,
                                tmp)
                    r['rep'] = rep
                    runs.append(r)
                    print(f"rep {rep} {mode:7s} {cfg}: elapsed "
                          f"{r['elapsed_s']:.3f} cpu {r['cpu_s']:.3f} "
                          f"listener {r['listener_cpu_s']:.3f} records "
                          f"{r.get('match_task_records')} drops "
                          f"{r.get('dropped')}", file=sys.stderr)
        idle, idle_rate = {}, {}
        for cfg in configs:
            if cfg == 'a':
                continue
            v = [run_one(args, cfg, 'idle', None, cgpath, tmp)
                 for _ in range(args.idle_reps)]
            idle[cfg] = med([x['listener_cpu_s'] for x in v])
            wr = [x['window_cpu_s'] / x['window_s'] for x in v
                  if x.get('window_cpu_s') is not None and x['window_s']]
            if wr:
                idle_rate[cfg] = med(wr)
    finally:
        try:
            os.rmdir(cgdir)
        except OSError:
            pass
    meta = {
        'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
        'machine': machine(), 'n': args.n, 'rounds': args.rounds,
        'procs_n': args.procs_n, 'procs_rounds': args.procs_rounds,
        'reps': args.reps, 'configs': {c: CONFIGS[c] for c in configs},
        'interval_s': args.interval, 'settle_s': args.settle,
        'nice': args.nice, 'listener_idle_cpu_s': idle,
        'listener_idle_window_cpu_per_s': idle_rate,
        'wall_s': time.monotonic() - t0,
        'loadavg_start': load_start,
        'loadavg_end': open('/proc/loadavg').read().split()[:3],
        'command': ' '.join([sys.argv[0]] + sys.argv[1:]),
    }
    return report(args.out, meta, runs, configs, modes)


def paired_floor(runs, idle, rate, summ, modes):
    """Per repetition: listener CPU per record, X / b of the same
    repetition (seconds apart: drifting load cancels); median,
    interquartile range and min-max over the repetitions. Two measures:
    rusage net of the median idle run's (start/stop), and the CPU of the
    listener's threads between the workload's start and the listener's
    stop (schedstat; no start-up cost to subtract), net of its idle rate."""
    def rus(x, cfg):
        return x['listener_cpu_s'] - idle[cfg]

    def win(x, cfg):
        if x.get('window_cpu_s') is None or cfg not in rate:
            return None
        return x['window_cpu_s'] - rate[cfg] * x['window_s']

    if 'b' not in idle:
        return ''
    out = ['\nListener CPU per record, X / (b) paired per repetition: '
           'median [IQR] (min-max); X and b: medians of us per record. '
           'rusage: net of the idle run (start/stop); window: the '
           "listener's threads from the workload's start to its stop "
           '(schedstat), net of their idle rate:\n',
           '| mode | cfg | measure | X us | b us | X / b |',
           '|---|---|---|---|---|---|']
    for mode in modes:
        bs = {x['rep']: x for x in runs
              if x['mode'] == mode and x['config'] == 'b'}
        for cfg in sorted({x['config'] for x in runs}):
            if cfg in 'a' + DRAINS + 'r' or cfg not in idle:
                continue
            xs = [x for x in runs if x['mode'] == mode and
                  x['config'] == cfg and x['rep'] in bs]
            if not xs:
                continue
            recs = xs[0]['expected_task_records']
            for name, fn in (('rusage', rus), ('window', win)):
                pr = [(fn(x, cfg), fn(bs[x['rep']], 'b')) for x in xs]
                pr = [(a / recs * 1e6, b / recs * 1e6) for a, b in pr
                      if a is not None and b is not None and b > 0]
                if not pr:
                    continue
                xu = [a for a, _ in pr]
                bu = [b for _, b in pr]
                rs = [a / b for a, b in pr]
                lo, hi = iqr(rs)
                summ[mode][cfg].setdefault('paired_vs_floor', {})[name] = {
                    'median': med(rs), 'q1': lo, 'q3': hi, 'min': min(rs),
                    'max': max(rs), 'n': len(rs), 'x_us': med(xu),
                    'b_us': med(bu)}
                out.append(f"| {mode} | {cfg} | {name} | {fmt(med(xu), 2)} | "
                           f"{fmt(med(bu), 2)} | **{fmt(med(rs), 2)}x** "
                           f"[{fmt(lo, 2)}-{fmt(hi, 2)}] ({fmt(min(rs), 2)}-"
                           f"{fmt(max(rs), 2)}, n={len(rs)}) |")
    return '\n'.join(out) + '\n'


def raw_floor(runs, summ, configs, modes):
    """Issue 42's measure: each listener's schedstat window (from
    --window-start after its start to --window-tail after the workload;
    nothing subtracted) per workload record, and X / (r) and X / (b) paired
    per repetition: medians [IQR]."""
    if not any(x['config'] == 'r' for x in runs):
        return ''
    out = ['\nListener CPU per record against the raw floor (r): the sum '
           'of /proc/PID/task/*/schedstat run time from the window\'s '
           'start after the listener\'s start to its end after the '
           'workload, nothing subtracted; X / r and X / b paired per '
           'repetition, median [IQR]:\n',
           '| mode | cfg | listener | us/record | vs raw floor (r) | '
           'vs library drain (b) |', '|---|---|---|---|---|---|']

    def per_rec(x):
        w = x.get('window_cpu_s')
        return w / x['expected_task_records'] * 1e6 if w else None

    for mode in modes:
        by = {}
        for x in runs:
            if x['mode'] == mode:
                by.setdefault(x['config'], {})[x['rep']] = per_rec(x)
        for cfg in configs:
            if cfg == 'a' or cfg not in by:
                continue
            us = [v for v in by[cfg].values() if v is not None]
            cells = []
            for ref in ('r', 'b'):
                rs = [v / by[ref][k] for k, v in by[cfg].items()
                      if v is not None and by.get(ref, {}).get(k)]
                lo, hi = iqr(rs)
                summ[mode].setdefault(cfg, {}).setdefault(
                    'window_vs', {})[ref] = {'median': med(rs), 'q1': lo,
                                             'q3': hi, 'n': len(rs)}
                cells.append('-' if not rs or cfg == ref else
                             f"**{fmt(med(rs), 2)}x** [{fmt(lo, 2)}-"
                             f"{fmt(hi, 2)}]")
            summ[mode][cfg]['window_us_per_record'] = med(us)
            out.append(f"| {mode} | {cfg} | {CONFIGS[cfg]} | "
                       f"{fmt(med(us), 2)} | {cells[0]} | {cells[1]} |")
    return '\n'.join(out) + '\n'


def report(outdir, meta, runs, configs, modes):
    """Summaries, churn.json, churn.md and the plot from the raw runs."""
    idle = meta.get('listener_idle_cpu_s', {})
    summ = summarize(runs, configs, modes)
    for mode in modes:
        for cfg, s in summ[mode].items():
            if cfg in idle:
                net = s['listener_cpu_s']['median'] - idle[cfg]
                recs = s['expected_task_records']
                s['listener_idle_cpu_s'] = idle[cfg]
                s['listener_net_cpu_s'] = net
                s['listener_net_us_per_record'] = net / recs * 1e6
    paired = paired_floor(runs, idle,
                          meta.get('listener_idle_window_cpu_per_s', {}),
                          summ, modes)
    md = markdown(meta, summ, configs, modes) + paired + \
        raw_floor(runs, summ, configs, modes)
    with open(os.path.join(outdir, 'churn.json'), 'w') as f:
        json.dump({'meta': meta, 'summary': summ, 'runs': runs}, f, indent=1)
    with open(os.path.join(outdir, 'churn.md'), 'w') as f:
        f.write(md)
    plot(outdir, summ, configs, modes)
    print(md)
    return 0


def rereport(path, outdir):
    """--from-json: redo the report of an earlier run without running."""
    with open(path) as f:
        d = json.load(f)
    meta, runs = d['meta'], d['runs']
    configs = [c for c in meta['configs']]
    modes = []
    for r in runs:
        if r['mode'] not in modes:
            modes.append(r['mode'])
    return report(outdir, meta, runs, configs, modes)


if __name__ == '__main__':
    sys.exit(main())
