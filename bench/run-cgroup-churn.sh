#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Cgroup churn benchmark (issue 13 item 2): the full version of
# hardening_cgroup_churn, 100,000 cgroups created, used and removed under
# the collector (as root; bench/README.md "Cgroup churn").
#
#   bench/run-cgroup-churn.sh [BUILD_DIR [REPORT.json]]
#
# Environment: CHURN_CGROUPS (100000), CHURN_RATE (cgroups/s, default
# 1000; 0 = as fast as the driver goes, ~2,000/s here, where the
# collector's JSON line of every tracked cgroup each 0.5 s becomes its
# bottleneck), CHURN_ALIVE (4), CHURN_HIERARCHY (v2, or a v1 controller
# such as cpu), CHURN_INTERVAL (0.5), CHURN_TRACK_SLACK_S (4).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
report=${2:-$build/cgroup-churn-report.json}
export CHURN_CGROUPS=${CHURN_CGROUPS:-100000}
export CHURN_RATE=${CHURN_RATE:-1000}
export CHURN_REPORT=$report
# a busy collector (a JSON line of thousands of cgroups every 0.5 s) lets
# retirement trail the removals by more than in CI
export CHURN_TRACK_SLACK_S=${CHURN_TRACK_SLACK_S:-4}
python3 tests/hardening/test_cgroup_churn.py "$build/cmd/taskstat-collect" \
	"$build/tests/hardening/cgroup_churn"
echo "report: $report"
