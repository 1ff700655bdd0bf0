# SPDX-License-Identifier: LGPL-2.1-or-later
# The full state of every snapshot line of a taskstat-collect JSON lines
# stream written with --stream changes (the default): each rollup line as
# --stream full (or GET /snapshot) would have written it, with
# "stream":"full" and without "drop" and "at" (docs/streams.md). Other
# lines (--events) are left out.
#
#   jq -c -n -f examples/stream-rebuild.jq < stream.jsonl
#
# A stream (a file, or one after a SIGHUP reopen) starts with a full line;
# a change-only line names the rows of the previous state it drops (by
# position: replaced or gone) and the positions its rows take in the new
# state; the rows kept fill the other positions, in their order.
def apply($l):
  if $l.stream == "changes" then
    (if . == null then error("a change-only line before any full one")
     else . end)
    | (reduce $l.drop[] as $i ({}; .[$i | tostring] = true)) as $d
    | [.cgroups | to_entries[] | select($d[.key | tostring] | not)
       | .value] as $keep
    | (reduce range(0; $l.at | length) as $k
         ({}; .[$l.at[$k] | tostring] = $l.cgroups[$k])) as $new
    | [foreach range(0; ($keep | length) + ($l.cgroups | length)) as $p
         ({i: 0, v: null};
          if $new[$p | tostring] != null then .v = $new[$p | tostring]
          else .v = $keep[.i] | .i += 1 end;
          .v)] as $rows
    | $l | del(.drop, .at) | .stream = "full" | .cgroups = $rows
  else $l end;

foreach (inputs | select(.type == "rollup")) as $l (null; apply($l))
