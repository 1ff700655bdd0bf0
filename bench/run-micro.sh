#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Microbenchmarks: ns/record (median of several timed runs) and, under
# callgrind, instructions per record (two runs of different lengths,
# difference / difference in records: start-up cost cancels out), which
# stay comparable when the machine is noisy.
#
# usage: bench/run-micro.sh [--build DIR] [--out DIR] [--quick] [--no-callgrind]
# Writes <out>/micro.jsonl (raw lines), micro.json, micro.md, micro-depth.png.
# Needs root (the attribution benchmarks move a process into cgroups).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(dirname "$here")/build-bench
out=$here/results
quick=0
callgrind=1
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--no-callgrind) callgrind=0; shift ;;
	*) echo "usage: $0 [--build DIR] [--out DIR] [--quick] [--no-callgrind]" >&2
	   exit 2 ;;
	esac
done
bin=$build/bench
mkdir -p "$out"
raw=$out/micro.jsonl
: > "$raw"
log=$out/micro.log
: > "$log"

if [ $quick = 1 ]; then
	reps=3; iters=200000; shard_iters=300000; cg_lo=1000; cg_hi=5000
else
	reps=9; iters=2000000; shard_iters=3000000; cg_lo=2000; cg_hi=22000
fi

run() { # run <name> <args...>: append the JSON lines it prints
	local name=$1; shift
	if [ ! -x "$bin/$name" ]; then
		echo "skip $name: not built" | tee -a "$log" >&2
		return 0
	fi
	echo "+ $bin/$name $*" >> "$log"
	"$bin/$name" "$@" 2>>"$log" | tee -a "$log" | grep '^{' >> "$raw" || true
}

# Timed runs. micro_decode / micro_rollup come from the decode / rollup
# work; their own defaults are used and their JSON lines kept as printed.
run micro_decode
if [ $callgrind = 1 ] && command -v valgrind >/dev/null; then
	run micro_rollup --callgrind
else
	run micro_rollup
fi
run micro_attr -r $reps -i $iters -d 0,3,30 -c pipeline,account,path
# Reaped processes attributed through /proc (syscalls per record): fewer.
run micro_attr -r $reps -i $((iters / 100)) -d 0,3,30 -c exited
run micro_snapshot -r $reps -n 1000,10000
run micro_shards -r $reps -i $shard_iters -c pipeline
run micro_shards -r $reps -i $shard_iters -c path

# Instructions per record from callgrind.
callgrind_ir() { # callgrind_ir <out-file>: total Ir of a callgrind run
	awk '/^(summary|totals):/ { print $2; exit }' "$1"
}
if [ $callgrind = 1 ] && command -v valgrind >/dev/null &&
   [ -x "$bin/micro_attr" ]; then
	tmp=$(mktemp -d)
	for depth in 0 3 30; do
		for kase in pipeline account path; do
			ir=()
			for n in $cg_lo $cg_hi; do
				valgrind --tool=callgrind \
					--callgrind-out-file="$tmp/cg.$n" \
					"$bin/micro_attr" -r 1 -i $n -d $depth \
					-c $kase >/dev/null 2>>"$log"
				ir+=("$(callgrind_ir "$tmp/cg.$n")")
			done
			per=$(( (ir[1] - ir[0]) / (cg_hi - cg_lo) ))
			echo "{\"bench\":\"callgrind\",\"case\":\"$kase\",\"param\":$depth,\"ir_per_record\":$per,\"ir_lo\":${ir[0]},\"ir_hi\":${ir[1]},\"iters_lo\":$cg_lo,\"iters_hi\":$cg_hi}" | tee -a "$log" >> "$raw"
		done
	done
	# Decode alone: micro_decode's cases (records per message in brackets).
	if [ -x "$bin/micro_decode" ]; then
		for spec in pid_tgid:2 pid:1 no_tgid:1 v8:1 pid_reuse:1; do
			kase=${spec%%:*}; recs=${spec##*:}
			ir=()
			for n in $cg_lo $cg_hi; do
				valgrind --tool=callgrind \
					--callgrind-out-file="$tmp/cg.$n" \
					"$bin/micro_decode" -r 1 -i $n -c $kase \
					>/dev/null 2>>"$log"
				ir+=("$(callgrind_ir "$tmp/cg.$n")")
			done
			per=$(( (ir[1] - ir[0]) / ((cg_hi - cg_lo) * recs) ))
			echo "{\"bench\":\"callgrind-decode\",\"case\":\"$kase\",\"param\":0,\"ir_per_record\":$per,\"ir_lo\":${ir[0]},\"ir_hi\":${ir[1]}}" | tee -a "$log" >> "$raw"
		done
	fi
	rm -rf "$tmp"
fi

python3 "$here/report-micro.py" "$raw" "$out"
