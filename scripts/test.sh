#!/usr/bin/env bash
# Sets up, builds and runs every hetero test: the format check of the
# sources, the lit suite (FileCheck tests, the C API program, the gtest unit
# tests, the installed-package consumer) and a bounded fuzzing run of the
# pass pipelines.
#
# HETERO_SANITIZE=address,undefined scripts/test.sh builds with clang-22 and
# those sanitizers in build-sanitize/ instead and runs the same suite there;
# any sanitizer report fails its test.
set -euo pipefail
HETERO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -n "${HETERO_SANITIZE:-}" ]]; then
  export HETERO_BUILD_DIR="${HETERO_BUILD_DIR:-$HETERO_ROOT/build-sanitize}"
  export HETERO_CMAKE_ARGS="-DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
-DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
-DHETERO_SANITIZE=$HETERO_SANITIZE ${HETERO_CMAKE_ARGS:-}"
fi
source "$HETERO_ROOT/scripts/setup.sh"

echo "== format"
"$HETERO_ROOT/scripts/format.sh"

echo "== lit${HETERO_SANITIZE:+ (sanitizers: $HETERO_SANITIZE)}"
"$LLVM_PREFIX/bin/lit" -sv "$BUILD_DIR/test"

echo "== fuzzing"
"$HETERO_ROOT/scripts/fuzz.sh"
