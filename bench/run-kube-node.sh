#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A Kubernetes-shaped node (issue 22): PODS pods x 2 containers under
# kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice/
# cri-containerd-<id>.scope (half burstable, half besteffort) and SVCS
# systemd services under system.slice, below ROOT (cgroup2 at
# /sys/fs/cgroup/unified), 3 process exits in each leaf. Four collectors
# watch it at once: --prom-level lean (the default) and full, each with the
# defaults (--listen) and with the DaemonSet's arguments
# (packaging/kubernetes/daemonset.yaml: --interval 15 -f jsonl -o /dev/null
# --prom-workload-labels). After a snapshot, one scrape of each: per-cgroup
# series, exported cgroups, series per cgroup, bytes (text and gzip), the
# containers and pods present, and what --prom-max-series cut.
# usage: run-kube-node.sh path/to/taskstat-collect [PORT [PODS [SVCS]]]
# (root; PORT..PORT+3 on 127.0.0.1; default 19900, 300, 60; KEEP=DIR keeps
# the four scrapes there)
set -euo pipefail
B=$1; PORT=${2:-19900}; PODS=${3:-300}; SVCS=${4:-60}
U=/sys/fs/cgroup/unified
ROOT=$U/lean-node
[ -w $U/cgroup.procs ] || { echo "needs root and cgroup2 at $U" >&2; exit 77; }
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	find $ROOT -depth -type d -exec rmdir {} + 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

hex() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }
leaves=()
mkdir -p $ROOT/kubepods.slice $ROOT/system.slice
for ((i = 0; i < PODS; i++)); do
	qos=burstable; [ $((i % 2)) = 1 ] && qos=besteffort
	u=$(hex 4)_$(hex 2)_$(hex 2)_$(hex 2)_$(hex 6)
	q=$ROOT/kubepods.slice/kubepods-$qos.slice
	pod=$q/kubepods-$qos-pod$u.slice
	for c in 1 2; do
		leaves+=("$pod/cri-containerd-$(hex 32).scope")
	done
done
for ((i = 0; i < SVCS; i++)); do
	leaves+=("$ROOT/system.slice/lean-svc$i.service")
done

n=0
for level in lean full; do
	for args in defaults daemonset; do
		a=(--listen 127.0.0.1:$((PORT + n)) --prom-level $level)
		if [ $args = daemonset ]; then
			a+=(--interval 15 -f jsonl -o /dev/null --prom-workload-labels)
		else
			a+=(-o /dev/null)
		fi
		"$B" "${a[@]}" 2> "$tmp/$level-$args.log" &
		pids+=($!)
		names[n]=$level-$args
		n=$((n + 1))
	done
done
sleep 2
for d in "${leaves[@]}"; do
	mkdir -p "$d"
	sh -c 'echo $$ > "$1/cgroup.procs"; /bin/true; /bin/true; exec /bin/true' sh "$d"
done
sleep 17 # a snapshot after the last exit, at --interval 15 too

# Other work on the host (tests of other sessions) exports cgroups too:
# the node's figures count the lines of cgroups below ROOT only, the total
# scrape beside them.
R=${ROOT#$U}
printf '%-16s %7s %8s %6s %10s %10s %9s %7s %3s %10s\n' config series \
	cgroups per_cg node_bytes gzip_all containers pods cut all_bytes
for ((k = 0; k < n; k++)); do
	url=http://127.0.0.1:$((PORT + k))/metrics
	curl -s "$url" > "$tmp/m"
	if [ -n "${KEEP:-}" ]; then cp "$tmp/m" "$KEEP/${names[k]}.prom"; cp "$tmp/${names[k]}.log" "$KEEP/"; fi
	gz=$(curl -s -H 'Accept-Encoding: gzip' "$url" | wc -c)
	grep "^taskstat_[a-z_]*{cgroup=\"$R/" "$tmp/m" > "$tmp/node" || true
	series=$(wc -l < "$tmp/node")
	cgs=$(grep -o '^taskstat_[a-z_]*{cgroup="[^"]*"' "$tmp/node" |
	      sed 's/.*cgroup=//' | sort -u | wc -l)
	ctr=$(grep -o 'cri-containerd-[0-9a-f]*\.scope"' "$tmp/node" | sort -u | wc -l)
	pods=$(grep -o 'pod[0-9a-f_]*\.slice/cri' "$tmp/node" | sort -u | wc -l)
	cut=$(sed -n 's/^taskstat_collector_cgroups_not_exported //p' "$tmp/m")
	printf '%-16s %7d %8d %6.1f %10d %10d %9s %7s %3s %10d\n' "${names[k]}" \
		"$series" "$cgs" "$(echo "$series / $cgs" | bc -l)" \
		"$(wc -c < "$tmp/node")" "$gz" "$ctr/$((PODS * 2))" \
		"$pods/$PODS" "$cut" "$(wc -c < "$tmp/m")"
done
echo "leaves: ${#leaves[@]}, 3 exits each; promtool check metrics (lean-defaults):"
curl -s http://127.0.0.1:$PORT/metrics | promtool check metrics && echo clean
