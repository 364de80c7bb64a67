#!/usr/bin/env bash
# Sets up, builds and runs every hetero test: the lit suite (FileCheck tests,
# the C API program, the gtest unit tests, the installed-package consumer)
# and a bounded fuzzing run.
set -euo pipefail
HETERO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$HETERO_ROOT/scripts/setup.sh"

echo "== lit"
"$LLVM_PREFIX/bin/lit" -sv "$BUILD_DIR/test"

echo "== fuzzing"
"$HETERO_ROOT/scripts/fuzz.sh"
