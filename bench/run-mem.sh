#!/bin/bash
# Collector VmRSS (MiB) with N cgroup2 cgroups of one exit each, then after
# they are removed and retired (issue 22 point 3). Root, hybrid cgroups.
# e.g. bench/run-mem.sh build/cmd/taskstat-collect 20000 19201
# usage: run-mem.sh BIN N PORT; the JSON lines go to $MEM_OUT (default
# /dev/null: 20,000 cgroups write 33 MB a second); the cgroups below
# /sys/fs/cgroup/unified/$MEM_CG (default mem-r).
BIN=$1 N=$2 PORT=$3 OUT=${MEM_OUT:-/dev/null}
P=/sys/fs/cgroup/unified/${MEM_CG:-mem-r}
mkdir -p $P
rss(){ awk '/VmRSS/{print $2/1024}' /proc/$CP/status; }
$BIN --listen 127.0.0.1:$PORT --interval 1 --retire-after 5 -o $OUT 2>${TMPDIR:-/tmp}/mem-coll.err & CP=$!
sleep 3; echo "start $(rss)"; T0=$SECONDS
for i in $(seq 1 $N); do mkdir $P/c$i; done
for i in $(seq 1 $N); do sh -c "echo \$\$ > $P/c$i/cgroup.procs; exec /bin/true"; done
sleep 4; echo "live $(rss) ($((SECONDS - T0)) s to make them)"
for i in $(seq 1 $N); do rmdir $P/c$i; done
sleep 20; echo "removed+20s $(rss)"
curl -s 127.0.0.1:$PORT/metrics >/dev/null; sleep 20; echo "removed+40s $(rss)"
kill $CP; wait $CP; rmdir $P
