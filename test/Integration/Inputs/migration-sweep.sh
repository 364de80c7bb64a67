#!/usr/bin/env bash
# Runs a module partitioned with hetero-partition-tp{migration=true} and
# resized once for every straggler s of its T ranks and every migrated
# share, and prints per run the distinct losses all ranks printed and the
# columns the straggler migrated:
#   tp <T> straggler <s> migrate <m>: losses <l>..., migrated <n>
# Usage: migration-sweep.sh "<mpirun command>" <module> <T> <share>...
# HETERO_RUN, when set, is the hetero-run command (the test suite's
# compiles at -O1).
set -u
mpirun=$1 module=$2 ranks=$3
shift 3
for (( s = 0; s < ranks; ++s )); do
  for share in "$@"; do
    out=$($mpirun -np "$ranks" ${HETERO_RUN:-hetero-run} "$module" --entry check \
            --iterations 1 --all-ranks --prune "migrate=$share,ranks=$s" 2>&1)
    if [ $? -ne 0 ]; then
      echo "tp $ranks straggler $s migrate $share: failed"
      echo "$out"
      continue
    fi
    losses=$(echo "$out" | sed -n 's/.*iteration 0: loss \([^,]*\),.*/\1/p' |
               sort -u | tr '\n' ' ')
    count=$(echo "$out" | grep -c 'iteration 0: loss')
    migrated=$(echo "$out" |
                 sed -n "s/^rank $s: columns: kept .*, migrated \([0-9]*\)$/\1/p")
    echo "tp $ranks straggler $s migrate $share: losses ${losses}on $count ranks, migrated $migrated"
  done
done
