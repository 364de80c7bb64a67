#!/usr/bin/env bash
# Zen against AGsparse and the dense all-reduce on a Zipf embedding
# gradient, at 2 and 4 ranks, over a real kernel-shaped link
# (scripts/shaped-link.sh: a network namespace's loopback through tc tbf,
# MPI over TCP), for a few densities. Every rank's traffic crosses the one
# shaped loopback, so each rank's share of the rate is rate / ranks: that
# is the link the cost model and the online choice are given. Where
# namespaces or tc are refused, the job runs over shared memory and the
# first line says so.
#
# usage: bench/sparse-shaped.sh [build dir]
#   RATE=100            Mbit/s of the shaped link
#   RANKS="2 4"
#   TOKENS="200 2000 20000"   rows looked up a rank (density)
#   ROWS=50000 DIM=16 ROUNDS=3 ALPHA_MS=0.2
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "$0")/common.sh" "$@"
RATE="${RATE:-100}"
RANKS="${RANKS:-2 4}"
TOKENS="${TOKENS:-200 2000 20000}"
ROWS="${ROWS:-50000}"
DIM="${DIM:-16}"
ROUNDS="${ROUNDS:-3}"
ALPHA_MS="${ALPHA_MS:-0.2}"

# shellcheck source=bench/shaped-launch.sh
source "$ROOT/bench/shaped-launch.sh"
for ranks in $RANKS; do
  share="$(awk -v r="$RATE" -v n="$ranks" 'BEGIN {print r / n}')"
  for tokens in $TOKENS; do
    args=("$BUILD/bin/bench-sparse-allreduce" "$ROWS" "$DIM" "$tokens"
          "$ROUNDS" "$ALPHA_MS" "$share")
    shaped_mpirun "$ranks" "${args[@]}"
    echo
  done
done
