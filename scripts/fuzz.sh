#!/usr/bin/env bash
# Builds the libFuzzer target with clang-22 (ASan + UBSan) in build-fuzz/ and
# runs it for a bounded number of inputs, seeded with every test input.
# Usage: scripts/fuzz.sh [runs] [max seconds]
set -euo pipefail
HETERO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ_BUILD="${HETERO_FUZZ_BUILD_DIR:-$HETERO_ROOT/build-fuzz}"
RUNS="${1:-${HETERO_FUZZ_RUNS:-1000000}}"
SECONDS_LIMIT="${2:-${HETERO_FUZZ_SECONDS:-300}}"
LLVM_PREFIX=/usr/lib/llvm-22

if [[ ! -f "$FUZZ_BUILD/build.ninja" ]]; then
  cmake -G Ninja -S "$HETERO_ROOT" -B "$FUZZ_BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$LLVM_PREFIX/bin/clang" \
    -DCMAKE_CXX_COMPILER="$LLVM_PREFIX/bin/clang++" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DHETERO_ENABLE_FUZZER=ON -DHETERO_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$FUZZ_BUILD" --target hetero-fuzz -- -j"${HETERO_JOBS:-2}"

# Seed corpus: every test input, split at the `// -----` markers.
CORPUS="$FUZZ_BUILD/corpus"
rm -rf "$CORPUS" && mkdir -p "$CORPUS"
python3 - "$HETERO_ROOT" "$CORPUS" <<'PY'
import pathlib, sys
root, corpus = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
count = 0
for path in sorted(root.glob("test/**/*.mlir")):
    for chunk in path.read_text().split("// -----"):
        (corpus / f"seed{count:04d}.mlir").write_text(chunk)
        count += 1
print(f"fuzz corpus: {count} seeds")
PY

LOG="$FUZZ_BUILD/fuzz.log"
ASAN_OPTIONS=detect_leaks=0 "$FUZZ_BUILD/bin/hetero-fuzz" "$CORPUS" \
  -runs="$RUNS" -max_total_time="$SECONDS_LIMIT" -max_len=4096 \
  -print_final_stats=1 >"$LOG" 2>&1 || {
  echo "hetero-fuzz found a crash:"; tail -60 "$LOG"; exit 1; }
executed="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$LOG" | grep -o '[0-9]*$' || echo 0)"
echo "fuzz: $executed inputs run, no crash"
