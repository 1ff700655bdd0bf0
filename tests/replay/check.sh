#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The replay corpus, byte for byte: render every capture in
# tests/replay/captures/ with taskstat-collect --replay in every output
# format and option set listed in cases.txt, and compare each output with
# tests/replay/expected/<capture>/<case>.
#
# usage: tests/replay/check.sh TASKSTAT-COLLECT [--update]
#   --update  write the expected outputs instead of comparing (after a
#             change that is meant to change an output; say so in the
#             commit).
#
# A replay depends only on the capture (snapshot times follow its clock,
# paths and counters are the recorded ones), except for what the Prometheus
# text says of the replaying process itself, normalised here: the values of
# the process_* series (its start time, CPU, memory, fds) are written as 0,
# and taskstat_build_info's labels (the commit built) as "x". Needs no
# privileges. The table fits $COLUMNS when not a terminal (120 without it):
# it is unset here, and a case's arguments may start with COLUMNS=N.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: $0 TASKSTAT-COLLECT [--update]}
update=0
[ "${2:-}" = --update ] && update=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset COLUMNS

normalise() { # the Prometheus text: the replaying process's own values
	sed -E -e 's/^(process_[a-z_]+) .*/\1 0/' \
		-e 's/^(taskstat_build_info)\{.*\}/\1{x}/' "$1"
}

fail=0 n=0
for cap in "$here"/captures/*.tscap; do
	capname=$(basename "$cap" .tscap)
	exp=$here/expected/$capname
	[ $update = 1 ] && mkdir -p "$exp"
	while read -r name args; do
		case $name in ''|\#*) continue ;; esac
		out=$tmp/$name
		cols=
		if [[ $args == COLUMNS=* ]]; then
			cols=${args%% *} args=${args#* }
		fi
		# shellcheck disable=SC2086 # args are split on purpose
		if [[ " $args " == *" --textfile "* ]]; then
			# --textfile's PATH is the case's file; stdout is not kept
			args=${args/--textfile/--textfile $tmp/textfile.prom}
			env $cols "$bin" --replay "$cap" $args > /dev/null 2> "$out.err" ||
				{ echo "FAIL $capname/$name: exit $?"; cat "$out.err"; fail=1; continue; }
			normalise "$tmp/textfile.prom" > "$out"
		else
			env $cols "$bin" --replay "$cap" $args > "$out" 2> "$out.err" ||
				{ echo "FAIL $capname/$name: exit $?"; cat "$out.err"; fail=1; continue; }
		fi
		# a warning on stderr is part of the output: <case>.stderr
		[ -s "$out.err" ] && mv "$out.err" "$out.stderr"
		n=$((n + 1))
		for f in "$name" "$name.stderr"; do
			if [ $update = 1 ]; then
				rm -f "$exp/$f"
				[ -e "$tmp/$f" ] && cp "$tmp/$f" "$exp/$f"
			elif [ -e "$tmp/$f" ] || [ -e "$exp/$f" ]; then
				if ! cmp -s "$exp/$f" "$tmp/$f"; then
					echo "FAIL $capname/$f: differs from expected/$capname/$f:"
					diff -u "$exp/$f" "$tmp/$f" 2>&1 | head -20 || true
					fail=1
				fi
			fi
		done
		rm -f "$tmp/$name" "$tmp/$name.stderr" "$tmp/$name.err"
	done < "$here/cases.txt"
done
if [ $fail = 0 ]; then
	echo "replay corpus: $n outputs $([ $update = 1 ] && echo written || echo identical)"
fi
exit $fail
