#!/bin/sh
# The metrics endpoint under the full attack of issue 13: 50 scrapers for
# 30 s, 500 slow clients (silent, half a header, a byte a second) and
# malformed requests; the collector's RLIMIT_NOFILE is 512, so its table
# (384 connections) is smaller than the attack. As root, from a build:
#   bench/run-http-load.sh [build/cmd/taskstat-collect] [report.json]
set -eu
here=$(dirname "$0")
bin=${1:-$here/../build/cmd/taskstat-collect}
exec python3 "$here/../tests/hardening/test_http_load.py" "$bin" \
	--seconds 30 --scrapers 50 --slow 500 --nofile 512 \
	${2:+--report "$2"}
