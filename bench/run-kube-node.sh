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
# --prom-workload-labels). Each container's OCI spec is where containerd's
# CRI keeps it (a state directory given by --containerd-state to all four),
# with the CRI's annotations (namespace kn-<k>, pod p<i>, containers c1 and
# c2), so the workload view names every container. After a snapshot, one
# scrape of each: per-cgroup series, exported cgroups, series per cgroup,
# bytes (text and gzip), the containers and pods present, what
# --prom-max-series cut, and the workload series (taskstat_workload_*) of
# the node's workloads, their bytes and the containers they name.
# usage: run-kube-node.sh path/to/taskstat-collect [PORT [PODS [SVCS]]]
# (root; PORT..PORT+3 on 127.0.0.1; default 19900, 300, 60; KEEP=DIR keeps
# the four scrapes there; ROOT=NAME: the tree below /sys/fs/cgroup/unified
# instead of lean-node)
set -euo pipefail
B=$1; PORT=${2:-19900}; PODS=${3:-300}; SVCS=${4:-60}
U=/sys/fs/cgroup/unified
ROOT=$U/${ROOT:-lean-node}
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
state=$tmp/containerd
# the spec containerd's CRI writes for container $1 (namespace, pod, name,
# pod uid)
spec() {
	local d=$state/io.containerd.runtime.v2.task/k8s.io/$1
	mkdir -p "$d"
	cat > "$d/config.json" <<EOF
{"ociVersion":"1.0.2","annotations":{
"io.kubernetes.cri.container-type":"container",
"io.kubernetes.cri.container-name":"$4",
"io.kubernetes.cri.sandbox-name":"$3",
"io.kubernetes.cri.sandbox-namespace":"$2",
"io.kubernetes.cri.sandbox-uid":"$5",
"io.kubernetes.cri.image-name":"registry.example/app-$4:1.0"}}
EOF
}
leaves=()
mkdir -p $ROOT/kubepods.slice $ROOT/system.slice "$tmp/nologs/pods" \
	"$tmp/nologs/containers"
for ((i = 0; i < PODS; i++)); do
	qos=burstable; [ $((i % 2)) = 1 ] && qos=besteffort
	u=$(hex 4)_$(hex 2)_$(hex 2)_$(hex 2)_$(hex 6)
	q=$ROOT/kubepods.slice/kubepods-$qos.slice
	pod=$q/kubepods-$qos-pod$u.slice
	for c in 1 2; do
		id=$(hex 32)
		spec "$id" "kn-$((i % 10))" "p$i" "c$c" "${u//_/-}"
		leaves+=("$pod/cri-containerd-$id.scope")
	done
done
for ((i = 0; i < SVCS; i++)); do
	leaves+=("$ROOT/system.slice/lean-svc$i.service")
done

n=0
for level in lean full; do
	for args in defaults daemonset; do
		a=(--listen 127.0.0.1:$((PORT + n)) --prom-level $level
		   --containerd-state "$state" --kubelet-logs "$tmp/nologs")
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
printf '%-16s %7s %8s %6s %10s %10s %9s %7s %3s %10s %6s %8s %7s\n' \
	config series cgroups per_cg node_bytes gzip_all containers pods cut \
	all_bytes wl_ser wl_bytes wl_ctrs
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
	# the node's workloads: its containers (namespace kn-*), its services
	grep -E '^taskstat_workload_[a-z_]*\{kind="[a-z]*",(namespace="kn-|unit="lean-svc)' \
		"$tmp/m" > "$tmp/wl" || true
	wctr=$(grep -oE '^taskstat_workload_info\{kind="container",namespace="kn-[0-9]+",pod="p[0-9]+",container="c[12]"' \
	       "$tmp/wl" | sort -u | wc -l || true)
	printf '%-16s %7d %8d %6.1f %10d %10d %9s %7s %3s %10d %6d %8d %7s\n' \
		"${names[k]}" "$series" "$cgs" "$(echo "$series / $cgs" | bc -l)" \
		"$(wc -c < "$tmp/node")" "$gz" "$ctr/$((PODS * 2))" \
		"$pods/$PODS" "$cut" "$(wc -c < "$tmp/m")" "$(wc -l < "$tmp/wl")" \
		"$(wc -c < "$tmp/wl")" "$wctr/$((PODS * 2))"
done
echo "leaves: ${#leaves[@]}, 3 exits each; promtool check metrics (lean-defaults):"
curl -s http://127.0.0.1:$PORT/metrics | promtool check metrics && echo clean
