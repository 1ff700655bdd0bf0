#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start-up with many cgroups under one parent (issue 23 part 4): the
# collector's wall time from exec to exit for `-d 0.2` (start-up, the 1 s
# self-test, one snapshot), STARTUP_RUNS times, with STARTUP_CGROUPS
# cgroups (default 20,000) under one parent, optionally with the stress
# workload (test_kernel_stress: process, thread and cgroup churn and a
# cgroup storm) running beside (STARTUP_CHURN=1, the default). Prints each
# run and the median. As root, cgroup2 mounted.
#
#   bench/run-startup.sh [BUILD_DIR]
#
# Environment: STARTUP_CGROUPS (20000), STARTUP_RUNS (8), STARTUP_CHURN
# (1), STARTUP_PREFIX (cgs-startup-bench), STARTUP_TIMEOUT (120 s a run).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
n=${STARTUP_CGROUPS:-20000}
runs=${STARTUP_RUNS:-8}
churn=${STARTUP_CHURN:-1}
prefix=${STARTUP_PREFIX:-cgs-startup-bench}
tmo=${STARTUP_TIMEOUT:-120}
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
parent="$mnt/$prefix-$$"
bg=
cleanup() {
	if [ -n "$bg" ]; then
		kill "$bg" 2>/dev/null || true
		wait "$bg" 2>/dev/null || true
		sleep 0.5 # its workers die with it (PR_SET_PDEATHSIG)
		for d in "$mnt/$prefix-churn-"*; do
			[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + \
				2>/dev/null || true
		done
	fi
	[ -d "$parent" ] || return 0
	find "$parent" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
	rmdir "$parent" 2>/dev/null || true
}
trap cleanup EXIT
mkdir "$parent"
(cd "$parent" && seq -f "c%g" 1 "$n" | xargs mkdir)
echo "$n cgroups under $parent"
if [ "$churn" = 1 ]; then
	CGT_STRESS_PREFIX=$prefix-churn "$build/tests/cgroup/test_kernel_stress" \
		$((runs * tmo)) >/dev/null 2>&1 &
	bg=$!
	sleep 2
fi
times=()
for i in $(seq 1 "$runs"); do
	s=$(date +%s.%N)
	rc=0
	timeout "$tmo" "$build/cmd/taskstat-collect" --attribution kernel \
		-f jsonl -i 1 -d 0.2 >/dev/null 2>&1 || rc=$?
	e=$(date +%s.%N)
	t=$(echo "$e - $s" | bc)
	times+=("$t")
	echo "run $i: $t s (rc $rc)"
done
printf '%s\n' "${times[@]}" | sort -n |
	awk '{ a[NR] = $1 } END { printf "median %.2f s, max %.2f s of %d runs\n", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), a[NR], NR }'
