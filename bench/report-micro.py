#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Turn run-micro.sh's JSON lines into micro.json, micro.md, micro-depth.png.

usage: report-micro.py RAW.jsonl OUTDIR
"""
import json
import os
import platform
import subprocess
import sys
import time


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('{'):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    return rows


def find(rows, bench, case, param=None):
    for r in rows:
        if r.get('bench') == bench and r.get('case') == case and \
                (param is None or r.get('param') == param):
            return r
    return None


def machine():
    model = '?'
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    return f"{os.cpu_count()} CPUs, {model}, Linux {platform.release()}"


def f2(x, nd=1):
    return '-' if x is None else f'{x:.{nd}f}'


def targets(rows):
    t = []
    p0 = find(rows, 'attr', 'pipeline', 0)
    p30 = find(rows, 'attr', 'pipeline', 30)
    if p0:
        t.append(('decode + attribution + rollup <= 250 ns/record (depth 0)',
                  f"{p0['ns_per_record']:.0f} ns", p0['ns_per_record'] <= 250))
    if p0 and p30:
        r = p30['ns_per_record'] / p0['ns_per_record']
        t.append(('depth 30 <= 1.1x depth 0 (pipeline, time)',
                  f'{r:.2f}x', r <= 1.1))
    c0 = find(rows, 'callgrind', 'pipeline', 0)
    c30 = find(rows, 'callgrind', 'pipeline', 30)
    if c0 and c30 and c0['ir_per_record']:
        r = c30['ir_per_record'] / c0['ir_per_record']
        t.append(('depth 30 <= 1.1x depth 0 (pipeline, instructions)',
                  f'{r:.2f}x', r <= 1.1))
    s2 = find(rows, 'shards', 'pipeline', 2)
    if s2 and 'speedup' in s2:
        t.append(('2 shards >= 1.8x the throughput of 1 (pipeline, wall)',
                  f"{s2['speedup']:.2f}x", s2['speedup'] >= 1.8))
    if s2 and 'cpu_speedup' in s2:
        t.append(('2 shards >= 1.8x the throughput of 1 (pipeline, '
                  'CPU-time based: two free cores)',
                  f"{s2['cpu_speedup']:.2f}x", s2['cpu_speedup'] >= 1.8))
    return t


def markdown(rows, meta):
    o = [f"Microbenchmarks, {meta['date']} on {meta['machine']}.",
         'Times: median over the repetitions [min-max]; instructions: '
         'callgrind, (Ir(long run) - Ir(short run)) / extra records.', '']
    dec = [r for r in rows if r.get('bench') in ('micro_decode', 'decode')]
    if dec:
        o += ['### Decode (cgs_decode_msg)', '',
              '| case | struct version | message bytes | records/message | '
              'ns/record | instructions/record |', '|---|---|---|---|---|---|']
        for r in dec:
            cg = find(rows, 'callgrind-decode', r['case'])
            o.append(f"| {r['case']} | v{r['param']} | {r.get('msg_bytes', '-')}"
                     f" | {r.get('records_per_msg', '-')} | "
                     f"{f2(r['ns_per_record'])} [{f2(r['min'])}-{f2(r['max'])}]"
                     f" | {cg['ir_per_record'] if cg else '-'} |")
        o.append('')
    attr = [r for r in rows if r.get('bench') == 'attr']
    if attr:
        o += ['### Hot path per record vs cgroup depth', '',
              '| case | depth | ns/record | instructions/record | '
              'attributed via cache / /proc / parent / unknown |',
              '|---|---|---|---|---|']
        for r in attr:
            cg = find(rows, 'callgrind', r['case'], r['param'])
            o.append(f"| {r['case']} | {r['param']} | "
                     f"{f2(r['ns_per_record'])} [{f2(r['min'])}-{f2(r['max'])}]"
                     f" | {cg['ir_per_record'] if cg else '-'} | "
                     f"{r.get('via_cache', '-')} / {r.get('via_proc', '-')} / "
                     f"{r.get('via_parent', '-')} / "
                     f"{r.get('unattributed', '-')} |")
        o += ['', 'pipeline = cgs_decode_msg (596-byte v16 thread exit, one record) + '
              'cgs_rollup_account; account = cgs_rollup_account on a decoded '
              'record (attribution via the per-process cache + rollup); '
              'path = cgs_rollup_account_path (no attribution); exited = '
              'cgs_rollup_account of a process exit whose process is already '
              'reaped while its parent lives (new tgid every record: '
              'attribution reads /proc, as in fork-and-exit churn; '
              'instructions not counted, the cost is in syscalls).', '']
    mr = [r for r in rows if r.get('bench') == 'micro_rollup']
    if mr:
        o += ['### micro_rollup (attribution + rollup on a fake /proc and '
              'cgroup tree; from the rollup work)', '',
              '| mode | depth | shards | ns/record (per thread) | aggregate '
              'ns/record | CPU ns/record | vs depth 0 | 2-shard wall speedup '
              '| 2-shard CPU cost vs 1 | instructions/record |',
              '|---|---|---|---|---|---|---|---|---|---|']
        for r in mr:
            o.append(f"| {r.get('mode')} | {r.get('depth')} | "
                     f"{r.get('shards')} | {f2(r.get('ns_per_record'))} | "
                     f"{f2(r.get('ns_per_record_aggregate'))} | "
                     f"{f2(r.get('cpu_ns_per_record'))} | "
                     f"{f2(r.get('ratio_to_depth_0'), 3)} | "
                     f"{f2(r.get('speedup_vs_1_shard'), 2)} | "
                     f"{f2(r.get('cpu_cost_vs_1_shard'), 3)} | "
                     f"{f2(r.get('instructions_per_record'))} |")
        o += ['', 'hot = thread exits of known processes (cache hit); churn = '
              'every record a new, already reaped child (failed open of its '
              '/proc entry, then the parent\'s cache entry).', '']
    snap = [r for r in rows if r.get('bench') == 'snapshot']
    if snap:
        o += ['### Snapshot', '', '| cgroups | ms/snapshot | ns/cgroup | '
              'entries |', '|---|---|---|---|']
        for r in snap:
            o.append(f"| {r['param']} | {f2(r['ms_per_snapshot'], 3)} "
                     f"[{f2(r['ms_min'], 3)}-{f2(r['ms_max'], 3)}] | "
                     f"{f2(r['ns_per_record'])} | {r['snapshot_entries']} |")
        o.append('')
    sh = [r for r in rows if r.get('bench') == 'shards']
    if sh:
        o += ['### Receive-shard scaling (one thread per shard, each feeding '
              'its own rollup shard)', '',
              '| case | threads | records/s | ns/record (wall/all records) | '
              'wall speedup | CPU ns/record | speedup on free cores '
              '(CPU-time based) |', '|---|---|---|---|---|---|---|']
        for r in sh:
            o.append(f"| {r['case']} | {r['param']} | {r['records_per_s']:.0f} | "
                     f"{f2(r['ns_per_record'])} [{f2(r['min'])}-"
                     f"{f2(r['max'])}] | {f2(r.get('speedup', 1.0), 2)}x | "
                     f"{f2(r.get('cpu_ns_per_record'))} | "
                     f"{f2(r.get('cpu_speedup', 1.0), 2)}x |")
        o.append('')
    other = [r for r in rows if r.get('bench') not in
             ('attr', 'snapshot', 'shards', 'callgrind', 'callgrind-decode',
              'micro_decode', 'decode', 'micro_rollup')]
    if other:
        o += ['### Other benchmarks (as printed by their programs)', '']
        o += ['    ' + json.dumps(r) for r in other]
        o.append('')
    t = targets(rows)
    if t:
        o += ['### Targets', '', '| target | measured | met |',
              '|---|---|---|']
        o += [f'| {a} | {b} | {"yes" if c else "**no**"} |' for a, b, c in t]
        o.append('')
    return '\n'.join(o)


def plot(rows, outdir):
    dat = os.path.join(outdir, 'micro-depth.dat')
    cases = ('pipeline', 'account', 'path')
    with open(dat, 'w') as f:
        f.write('# depth ' + ' '.join(f'{c}_ns {c}_ir' for c in cases) + '\n')
        for d in (0, 3, 30):
            cols = []
            for c in cases:
                r = find(rows, 'attr', c, d)
                g = find(rows, 'callgrind', c, d)
                cols.append(f"{r['ns_per_record']:.2f}" if r else 'NaN')
                cols.append(str(g['ir_per_record']) if g else 'NaN')
            f.write(f'{d} ' + ' '.join(cols) + '\n')
    png = os.path.join(outdir, 'micro-depth.png')
    gp = f"""set terminal pngcairo size 1000,500 font ',10'
set output '{png}'
set multiplot layout 1,2 title 'Per-record cost vs cgroup depth'
set xlabel 'cgroup depth'
set xtics (0, 3, 30)
set grid
set key top left
set yrange [0:*]
set ylabel 'ns / record (median)'
plot '{dat}' using 1:2 with linespoints lw 2 title 'decode+attr+rollup', \\
     '' using 1:4 with linespoints lw 2 title 'attr+rollup', \\
     '' using 1:6 with linespoints lw 2 title 'rollup (path given)'
set ylabel 'instructions / record (callgrind)'
plot '{dat}' using 1:3 with linespoints lw 2 title 'decode+attr+rollup', \\
     '' using 1:5 with linespoints lw 2 title 'attr+rollup', \\
     '' using 1:7 with linespoints lw 2 title 'rollup (path given)'
unset multiplot
"""
    r = subprocess.run(['gnuplot'], input=gp, text=True, capture_output=True)
    if r.returncode:
        print('gnuplot: ' + r.stderr, file=sys.stderr)


def main():
    raw, outdir = sys.argv[1], sys.argv[2]
    rows = load(raw)
    meta = {'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
            'machine': machine(),
            'loadavg': open('/proc/loadavg').read().split()[:3]}
    with open(os.path.join(outdir, 'micro.json'), 'w') as f:
        json.dump({'meta': meta, 'results': rows,
                   'targets': [{'target': a, 'measured': b, 'met': c}
                               for a, b, c in targets(rows)]}, f, indent=1)
    md = markdown(rows, meta)
    with open(os.path.join(outdir, 'micro.md'), 'w') as f:
        f.write(md)
    if any(r.get('bench') == 'attr' for r in rows):
        plot(rows, outdir)
    print(md)


if __name__ == '__main__':
    main()
