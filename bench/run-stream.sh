#!/bin/bash
# Collector CPU per snapshot and VmRSS with N cgroups (issue 22 items 3
# and 4): N cgroup2 cgroups of one exit each, then the host left alone
# (no scrape) for SECS seconds: CPU (utime+stime of every thread, from
# /proc/PID/stat) per snapshot; then one scrape of /metrics and one of
# /snapshot (CPU and bytes each); then K cgroups with one exit a second
# (busy); then the cgroups removed and retired (VmRSS back).
# Root, hybrid cgroups.
# usage: run-stream.sh BIN N PORT [SECS] [K] [extra collector args...]
# e.g. bench/run-stream.sh build/cmd/taskstat-collect 20000 41401 30 100
# env: STREAM_OUT (default /tmp/streamh-out.jsonl, removed at the end),
#      STREAM_CG (default streamh-cpu: /sys/fs/cgroup/unified/$STREAM_CG)
BIN=$1 N=$2 PORT=$3 SECS=${4:-30} K=${5:-100}
shift 5 2>/dev/null || shift $#
OUT=${STREAM_OUT:-/tmp/streamh-out.jsonl}
P=/sys/fs/cgroup/unified/${STREAM_CG:-streamh-cpu}
HZ=$(getconf CLK_TCK)
mkdir -p $P
rss(){ awk '/VmRSS/{printf "%.1f", $2/1024}' /proc/$CP/status; }
cpu(){ awk '{print $14 + $15}' /proc/$CP/stat; } # ticks, all threads
snaps(){ grep -c '"type":"rollup"' $OUT; }
per(){ # ticks0 ticks1 snaps0 snaps1 -> ms per snapshot
	awk -v a=$1 -v b=$2 -v s=$3 -v t=$4 -v hz=$HZ \
		'BEGIN{printf "%.1f", (b - a) * 1000 / hz / (t - s)}'; }
$BIN --listen 127.0.0.1:$PORT --interval 1 -o $OUT "$@" \
	2>${TMPDIR:-/tmp}/streamh-coll.err & CP=$!
sleep 3
kill -0 $CP 2>/dev/null || { cat ${TMPDIR:-/tmp}/streamh-coll.err; exit 1; }
echo "start VmRSS $(rss) MiB"; T0=$SECONDS
for i in $(seq 1 $N); do mkdir -p $P/c$i; done
python3 -c '
import os, sys
p, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n + 1):
    pid = os.fork()
    if pid == 0:
        with open("%s/c%d/cgroup.procs" % (p, i), "w") as f:
            f.write(str(os.getpid()))
        os._exit(0)
    os.waitpid(pid, 0)
' $P $N
echo "made $N cgroups in $((SECONDS - T0)) s"
sleep 5; echo "live VmRSS $(rss) MiB"
c0=$(cpu) s0=$(snaps) b0=$(stat -c %s $OUT); sleep $SECS
c1=$(cpu) s1=$(snaps) b1=$(stat -c %s $OUT)
echo "quiet: $((s1 - s0)) snapshots, $(per $c0 $c1 $s0 $s1) ms CPU each," \
	"$(( (b1 - b0) / (s1 - s0) )) bytes each; VmRSS $(rss) MiB"
for path in metrics snapshot; do
	sleep 1.5 # just after a snapshot, so the scrape formats it
	c0=$(cpu)
	n=$(curl -s 127.0.0.1:$PORT/$path | wc -c)
	c1=$(cpu)
	n2=$(curl -s 127.0.0.1:$PORT/$path | wc -c)
	c2=$(cpu)
	echo "/$path: $n bytes, $(( (c1 - c0) * 1000 / HZ )) ms CPU" \
		"(a second scrape of it: $n2 bytes, $(( (c2 - c1) * 1000 / HZ )) ms);" \
		"VmRSS $(rss) MiB"
done
# busy: K cgroups with one exit each second, for SECS seconds
c0=$(cpu) s0=$(snaps) b0=$(stat -c %s $OUT) T1=$SECONDS
while [ $((SECONDS - T1)) -lt $SECS ]; do
	for i in $(seq 1 $K); do
		sh -c "echo \$\$ > $P/c$i/cgroup.procs; exec /bin/true"
	done
	sleep 1
done
c1=$(cpu) s1=$(snaps) b1=$(stat -c %s $OUT)
echo "busy ($K cgroups a second): $((s1 - s0)) snapshots," \
	"$(per $c0 $c1 $s0 $s1) ms CPU each (with the exits)," \
	"$(( (b1 - b0) / (s1 - s0) )) bytes each; VmRSS $(rss) MiB"
for i in $(seq 1 $N); do rmdir $P/c$i; done
sleep 20; echo "removed+20s VmRSS $(rss) MiB"
curl -s 127.0.0.1:$PORT/metrics >/dev/null; sleep 20
echo "removed+40s VmRSS $(rss) MiB"
kill $CP; wait $CP; rmdir $P; rm -f $OUT
