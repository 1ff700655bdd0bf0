#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kernel source under a mixed overload (issue 23 part 3), full length:
# test_kernel_stress (CI runs it 20 s) for OVERLOAD_S seconds (default 60):
# process, thread and cgroup churn and a cgroup storm together; every
# record from the kernel source or counted under one reason, the reasons
# adding up (bench/README.md "Every record under overload explained").
# With OVERLOAD_IDLE (default 0) that many idle cgroups under one parent
# beside it (a big host). As root, cgroup2 mounted.
#
#   bench/run-overload.sh [BUILD_DIR]
#
# Environment: OVERLOAD_S (60), OVERLOAD_IDLE (0), OVERLOAD_PREFIX
# (cgs-overload-bench: the cgroups' names).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
secs=${OVERLOAD_S:-60}
idle=${OVERLOAD_IDLE:-0}
prefix=${OVERLOAD_PREFIX:-cgs-overload-bench}
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
parent="$mnt/$prefix-idle-$$"
cleanup() {
	[ -d "$parent" ] || return 0
	find "$parent" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
	rmdir "$parent" 2>/dev/null || true
}
trap cleanup EXIT
if [ "$idle" -gt 0 ]; then
	mkdir "$parent"
	(cd "$parent" && seq -f "c%g" 1 "$idle" | xargs mkdir)
fi
CGT_STRESS_PREFIX=$prefix "$build/tests/cgroup/test_kernel_stress" "$secs"
