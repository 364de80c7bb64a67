#!/usr/bin/env bash
# Builds the libFuzzer target over hetero's pass pipelines with clang-22 in
# build-fuzz/ (every hetero source file with coverage, ASan and UBSan) and
# runs it for a bounded number of inputs, seeded with every test input.
# An input that takes longer than HETERO_FUZZ_TIMEOUT seconds is a hang.
# The mutations follow HETERO_FUZZ_SEED (default 1, so that a run can be
# repeated; 0 draws a new seed each run).
# Usage: scripts/fuzz.sh [runs] [max seconds]
set -euo pipefail
HETERO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ_BUILD="${HETERO_FUZZ_BUILD_DIR:-$HETERO_ROOT/build-fuzz}"
RUNS="${1:-${HETERO_FUZZ_RUNS:-1000000}}"
SECONDS_LIMIT="${2:-${HETERO_FUZZ_SECONDS:-300}}"
TIMEOUT="${HETERO_FUZZ_TIMEOUT:-10}"
SEED="${HETERO_FUZZ_SEED:-1}"
LLVM_PREFIX=/usr/lib/llvm-22
# As in setup.sh: another clone of the same sources reuses the objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$HETERO_ROOT}"

cmake -G Ninja -S "$HETERO_ROOT" -B "$FUZZ_BUILD" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$LLVM_PREFIX/bin/clang" \
  -DCMAKE_CXX_COMPILER="$LLVM_PREFIX/bin/clang++" \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
  -DHETERO_SANITIZE=address,undefined \
  -DHETERO_ENABLE_FUZZER=ON -DHETERO_BUILD_TESTS=OFF >/dev/null
cmake --build "$FUZZ_BUILD" --target hetero-fuzz -- -j"${HETERO_JOBS:-2}"

# Seed corpus: every test input, split at the `// -----` markers, prefixed
# with the selector byte of each fuzzed pipeline that its file's RUN lines
# name, and of one more pipeline chosen by its position.
CORPUS="$FUZZ_BUILD/corpus"
rm -rf "$CORPUS" && mkdir -p "$CORPUS"
ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 HETERO_FUZZ_LIST=1 "$FUZZ_BUILD/bin/hetero-fuzz" >"$FUZZ_BUILD/pipelines.txt"
python3 - "$HETERO_ROOT" "$CORPUS" "$FUZZ_BUILD/pipelines.txt" <<'PY'
import pathlib, re, sys
root, corpus = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
pipelines = [line.split(" ", 1)[1] for line in
             pathlib.Path(sys.argv[3]).read_text().splitlines()]
passes = [set(re.findall(r"hetero-[a-z-]+", text)) for text in pipelines]
count = 0
for path in sorted(root.glob("test/**/*.mlir")):
    text = path.read_text()
    named = set(re.findall(r"hetero-[a-z-]+", "\n".join(
        line for line in text.splitlines() if "RUN:" in line)))
    for chunk in text.split("// -----"):
        selectors = {i for i, p in enumerate(passes) if p & named}
        selectors.add(count % len(pipelines))
        for selector in sorted(selectors):
            (corpus / f"seed{count:04d}-{selector:02d}.mlir").write_bytes(
                bytes([selector]) + chunk.encode())
        count += 1
print(f"fuzz corpus: {count} test inputs, {len(pipelines)} pipelines, "
      f"{len(list(corpus.iterdir()))} seeds")
PY

export ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0
LOG="$FUZZ_BUILD/fuzz.log"
# Inputs that crash upstream parsers: the harness must skip every one.
"$FUZZ_BUILD/bin/hetero-fuzz" "$HETERO_ROOT"/tools/hetero-fuzz/regressions/*.mlir \
  >"$LOG" 2>&1 || {
  echo "hetero-fuzz crashed on a known upstream crash it should skip:"; tail -60 "$LOG"; exit 1; }
echo "fuzz: $(ls "$HETERO_ROOT"/tools/hetero-fuzz/regressions/*.mlir | wc -l) known upstream crashes skipped"
"$FUZZ_BUILD/bin/hetero-fuzz" "$CORPUS" -seed="$SEED" \
  -runs="$RUNS" -max_total_time="$SECONDS_LIMIT" -max_len=8192 \
  -timeout="$TIMEOUT" -artifact_prefix="$FUZZ_BUILD/" \
  -print_final_stats=1 >"$LOG" 2>&1 || {
  echo "hetero-fuzz found a crash or a hang:"; tail -60 "$LOG"; exit 1; }
executed="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$LOG" | grep -o '[0-9]*$' || echo 0)"
echo "fuzz: $executed inputs run in ${SECONDS}s, no crash or hang"
