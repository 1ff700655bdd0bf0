#!/bin/sh
# Scrape CPU, text vs gzip: N cgroups with one exit each (cgroup2 at
# /sys/fs/cgroup/unified), collector CPU from /proc/PID/stat utime+stime
# over S scrapes; "idle" is the same wall time without scrapes (the
# per-interval snapshot CPU that the scrape figures also contain).
# usage: run-scrape-gzip.sh N PORT path/to/taskstat-collect [S]
set -e
N=$1; PORT=$2; B=$3; S=${4:-20}
R=/sys/fs/cgroup/unified/stream-bench
mkdir -p $R
$B --listen 127.0.0.1:$PORT --interval 1 -o /dev/null --prom-max-series 100000000 2>/tmp/stream-bench.log &
P=$!; sleep 2
i=0; while [ $i -lt $N ]; do mkdir -p $R/c$i; sh -c "echo \$\$ > $R/c$i/cgroup.procs; exec /bin/true"; i=$((i+1)); done
sleep 3
cpu() { awk '{print $14+$15}' /proc/$P/stat; }
for mode in text gzip idle text gzip idle; do
  H=""; [ $mode = gzip ] && H="Accept-Encoding: gzip"
  if [ $mode = idle ]; then a=$(cpu); sleep $T; b=$(cpu); echo "N=$N idle ${T}s ticks=$((b-a))"; continue; fi
  t0=$(date +%s)
  sz=$(curl -s -H "$H" http://127.0.0.1:$PORT/metrics | wc -c)
  a=$(cpu); s0=$(grep -c . /dev/null || true)
  k=0; while [ $k -lt $S ]; do k=$((k+1)); curl -s -o /dev/null -H "$H" http://127.0.0.1:$PORT/metrics; done
  b=$(cpu); T=$(( $(date +%s) - t0 + 1 ))
  echo "N=$N $mode bytes=$sz ms_per_scrape=$(( (b-a)*10*1000/S ))e-3 (S=$S)"
done
kill $P; wait $P 2>/dev/null || true
i=0; while [ $i -lt $N ]; do rmdir $R/c$i 2>/dev/null || true; i=$((i+1)); done; rmdir $R || true
