#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Cgroup churn benchmark (issue 13 item 2): the full version of
# hardening_cgroup_churn, 100,000 cgroups created, used and removed under
# the collector (as root; bench/README.md "Cgroup churn").
#
#   bench/run-cgroup-churn.sh [BUILD_DIR [REPORT.json]]
#
# Environment: CHURN_CGROUPS (100000), CHURN_RATE (cgroups/s, 0 = as fast
# as the driver goes; default 0), CHURN_ALIVE (4), CHURN_HIERARCHY (v2, or
# a v1 controller such as cpu), CHURN_INTERVAL (0.5).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
report=${2:-$build/cgroup-churn-report.json}
export CHURN_CGROUPS=${CHURN_CGROUPS:-100000}
export CHURN_RATE=${CHURN_RATE:-0}
export CHURN_REPORT=$report
python3 tests/hardening/test_cgroup_churn.py "$build/cmd/taskstat-collect" \
	"$build/tests/hardening/cgroup_churn"
echo "report: $report"
