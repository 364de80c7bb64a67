# Sourced by the benchmarks that run MPI jobs on a kernel-shaped link
# (scripts/shaped-link.sh). Needs ROOT and LAUNCH (bench/common.sh) and
# RATE (Mbit/s); sets TCP_LO and SHAPED, prints which link the job gets,
# and defines
#   shaped_mpirun <ranks> <command...>
# which runs the command on that many ranks over the shaped link, or over
# shared memory where namespaces or tc are refused.
TCP_LO=(--mca btl tcp,self --mca btl_tcp_if_include lo
        --mca oob_tcp_if_include lo)
SHAPED=0
if "$ROOT/scripts/shaped-link.sh" --check; then
  SHAPED=1
  echo "link: tc tbf at $RATE Mbit/s on the loopback of a network namespace, MPI over TCP"
else
  echo "link: shared memory; this machine refused a network namespace or tc"
fi

shaped_mpirun() { # <ranks> <command...>
  local ranks="$1"
  shift
  if [[ "$SHAPED" == 1 ]]; then
    "$ROOT/scripts/shaped-link.sh" "$RATE" -- \
      "${LAUNCH[@]}" "${TCP_LO[@]}" -np "$ranks" "$@"
  else
    "${LAUNCH[@]}" -np "$ranks" "$@"
  fi
}
