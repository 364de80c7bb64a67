#!/usr/bin/env bash
# mpirun for the tests (%mpirun), with an Open MPI session directory of its
# own: two mpiruns that start at once under one fresh temporary directory
# race to create its ompi.<host>.<uid> directory, and the loser fails
# orte_init ("mkdir ... File exists").
base=$(mktemp -d "${TMPDIR:-/tmp}/ompi-session.XXXXXX") || exit 1
mpirun --mca orte_tmpdir_base "$base" "$@"
status=$?
rm -rf "$base"
exit $status
