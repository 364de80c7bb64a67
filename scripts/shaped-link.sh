#!/usr/bin/env bash
# Runs a command on a real, kernel-shaped network: in a network namespace of
# its own whose loopback (MTU 1500, so that the token bucket's burst holds a
# packet) passes through `tc qdisc tbf rate <R>mbit burst 4kb latency
# 200ms`. Every rank of an MPI job started inside shares that one link when
# MPI talks TCP over lo:
#   mpirun --mca btl tcp,self --mca btl_tcp_if_include lo \
#          --mca oob_tcp_if_include lo ...
#
# usage: shaped-link.sh <Mbit/s> [--trace "<s>:<Mbit/s> ..."] -- <command...>
#        shaped-link.sh --check    exit 0 when this machine can shape a link
#
# --trace replays a preemption trace: the rate changes to each given rate at
# the given second after the command starts (tc qdisc change). Needs root or
# user namespaces, and tc (Debian's iproute2).
set -euo pipefail

shape() { # <rate>
  ip link set lo mtu 1500 up
  tc qdisc replace dev lo root tbf rate "$1mbit" burst 4kb latency 200ms
}

if [[ "${1:-}" == --check ]]; then
  command -v tc >/dev/null && command -v unshare >/dev/null &&
    unshare -n bash -c "$(declare -f shape); shape 100" >/dev/null 2>&1
  exit $?
fi

if [[ "${1:-}" != --inside ]]; then
  exec unshare -n "$0" --inside "$@"
fi
shift
rate="${1:?usage: shaped-link.sh <Mbit/s> [--trace \"<s>:<Mbit/s> ...\"] -- <command...>}"
shift
trace=""
if [[ "${1:-}" == --trace ]]; then
  trace="$2"
  shift 2
fi
[[ "${1:-}" == -- ]] && shift
shape "$rate"
changer=""
if [[ -n "$trace" ]]; then
  (
    start=$(date +%s.%N)
    for step in $trace; do
      at="${step%%:*}" to="${step#*:}"
      now=$(date +%s.%N)
      wait_s=$(awk -v a="$at" -v s="$start" -v n="$now" 'BEGIN {d = s + a - n; print (d > 0 ? d : 0)}')
      sleep "$wait_s"
      tc qdisc change dev lo root tbf rate "${to}mbit" burst 4kb latency 200ms
      echo "shaped-link: ${to} Mbit/s at ${at} s" >&2
    done
  ) &
  changer=$!
fi
status=0
"$@" || status=$?
if [[ -n "$changer" ]]; then kill "$changer" 2>/dev/null || true; fi
exit "$status"
