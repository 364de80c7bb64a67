#!/usr/bin/env bash
# Real 2-stage pipeline training under a throttled inter-stage link: kFkB
# against 1F1B (k = 1) in the same run, as a ratio of iteration times, for a
# sweep of k and of link bandwidths.
#
# The link is throttled by tc (netem, else tbf) on a veth pair between two
# network namespaces when MPI can run one rank in each; otherwise by the
# runtime's link emulation (HETERO_RT_LINK), which times each message as a
# link of that bandwidth would. The first line says which was used.
#
# usage: bench/throttled-pipeline.sh [build dir]
#   BANDWIDTHS="unlimited 8 4 2"  MB/s of the link (2^20 bytes)
#   GROUP_SIZES="1 2 4 8"         k values; 1 is the 1F1B baseline
#   ITERATIONS=8                  per run; the median of all but the first 2
set -euo pipefail
BUILD="${1:-$(cd "$(dirname "$0")/.." && pwd)/build}"
BANDWIDTHS="${BANDWIDTHS:-unlimited 8 4 2}"
GROUP_SIZES="${GROUP_SIZES:-1 2 4 8}"
ITERATIONS="${ITERATIONS:-8}"
MICRO=8
WORK="$(mktemp -d)"
NS0=hetero-bench0
NS1=hetero-bench1

cleanup() {
  ip netns del "$NS0" 2>/dev/null || true
  ip netns del "$NS1" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

LAUNCH=(mpirun --oversubscribe --bind-to none)
if [[ "$(id -u)" == 0 ]]; then LAUNCH+=(--allow-run-as-root); fi
MPIRUN=("${LAUNCH[@]}" -np 2)

# Activations of batch 2 x 32 tokens x 64 features: 16 KiB per message.
"$BUILD/bin/hetero-gen" gpt --layers 2 --hidden 64 --heads 2 --seq 32 \
  --batch 2 --stages 2 --microbatches "$MICRO" --tp 1 --dp 1 --lr 0.01 \
  -o "$WORK/gpt.mlir"
for k in $GROUP_SIZES; do
  "$BUILD/bin/hetero-opt" "$WORK/gpt.mlir" --hetero-kfkb-schedule=group-size="$k" \
    -o "$WORK/k$k.mlir"
done

# Network namespaces joined by a veth pair, each end shaped by tc. Returns
# non-zero (and leaves nothing behind) when any step is refused.
netns_setup() {
  local rate="$1" qdisc
  ip netns add "$NS0" && ip netns add "$NS1" &&
    ip link add hb0 type veth peer name hb1 &&
    ip link set hb0 netns "$NS0" && ip link set hb1 netns "$NS1" &&
    ip -n "$NS0" addr add 10.231.7.1/24 dev hb0 &&
    ip -n "$NS1" addr add 10.231.7.2/24 dev hb1 &&
    ip -n "$NS0" link set hb0 up && ip -n "$NS1" link set hb1 up &&
    ip -n "$NS0" link set lo up && ip -n "$NS1" link set lo up || return 1
  for qdisc in "netem rate ${rate}mbit" \
               "tbf rate ${rate}mbit burst 32kbit latency 400ms"; do
    if ip netns exec "$NS0" tc qdisc add dev hb0 root $qdisc 2>/dev/null &&
       ip netns exec "$NS1" tc qdisc add dev hb1 root $qdisc 2>/dev/null; then
      echo "${qdisc%% *}"
      return 0
    fi
  done
  return 1
}

netns_mpirun() {
  "${LAUNCH[@]}" --mca btl tcp,self --mca btl_tcp_if_include 10.231.7.0/24 \
    -np 1 ip netns exec "$NS0" "$@" : -np 1 ip netns exec "$NS1" "$@"
}

# Decide the method once, on a 2-rank probe across the namespaces.
METHOD="runtime link emulation (HETERO_RT_LINK)"
USE_NETNS=0
if qdisc="$(netns_setup 100 2>/dev/null)"; then
  if timeout 30 netns_mpirun "$BUILD/bin/hetero-run" "$WORK/k1.mlir" \
      --iterations 1 >/dev/null 2>&1; then
    METHOD="tc $qdisc on a veth pair between network namespaces"
    USE_NETNS=1
  else
    METHOD="$METHOD; namespaces and tc $qdisc were available, but mpirun could not start a rank in each namespace"
  fi
fi
ip netns del "$NS0" 2>/dev/null || true
ip netns del "$NS1" 2>/dev/null || true
echo "throttling: $METHOD"

# Median iteration time in ms of one run, ignoring 2 warm-up iterations.
run_ms() {
  local k="$1" bandwidth="$2"
  local cmd=("$BUILD/bin/hetero-run" "$WORK/k$k.mlir"
             --iterations "$ITERATIONS")
  if [[ "$bandwidth" == unlimited ]]; then
    "${MPIRUN[@]}" "${cmd[@]}"
  elif [[ "$USE_NETNS" == 1 ]]; then
    netns_setup "$(awk "BEGIN {print $bandwidth * 8.388608}")" >/dev/null
    netns_mpirun "${cmd[@]}"
    ip netns del "$NS0"; ip netns del "$NS1"
  else
    HETERO_RT_LINK="$bandwidth" "${MPIRUN[@]}" -x HETERO_RT_LINK "${cmd[@]}"
  fi | awk '/^iteration/ && $2 + 0 >= 2 {sub(",", "", $5); print $5}' |
    sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

printf "%-10s %-6s %12s %10s\n" link_MBps k iteration_ms vs_1f1b
for bandwidth in $BANDWIDTHS; do
  base=""
  for k in $GROUP_SIZES; do
    ms="$(run_ms "$k" "$bandwidth")"
    if [[ -z "$base" ]]; then base="$ms"; fi
    printf "%-10s %-6s %12.2f %10.3f\n" "$bandwidth" "$k" "$ms" \
      "$(awk "BEGIN {print $ms / $base}")"
  done
done
