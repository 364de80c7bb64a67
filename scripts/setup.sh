#!/usr/bin/env bash
# Shared by demo.sh and test.sh: installs what is missing (Debian packages
# only), then configures and builds hetero in build/. Idempotent: a second
# run installs nothing and rebuilds only what changed.
set -euo pipefail

HETERO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${HETERO_BUILD_DIR:-$HETERO_ROOT/build}"
LLVM_PREFIX=/usr/lib/llvm-22
# ccache hashes paths relative to the checkout, so that another clone of
# the same sources (a second worktree, CI's) reuses the compiled objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$HETERO_ROOT}"

PACKAGES=(
  cmake ninja-build ccache g++ python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 libclang-rt-22-dev
  clang-format-22
  libopenmpi-dev openmpi-bin
  libopenblas-dev  # the products of compiled CPU code
  libgtest-dev libgmock-dev
  libonnx-dev libprotobuf-dev  # hetero-import-onnx reads ONNX models with them
  python3-numpy
  procps  # pgrep and pkill: the checkpoint tests stop agents as a failure would
  iproute2  # tc and ip: tests and benchmarks on a kernel-shaped link
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# CUDA (nvcc, ptxas, NCCL) is optional; it is used when present.
if [[ -z "${CUDA_HOME:-}" && -d /usr/local/cuda ]]; then
  export CUDA_HOME=/usr/local/cuda
fi
if [[ -n "${CUDA_HOME:-}" ]]; then
  export PATH="$CUDA_HOME/bin:$PATH"
fi

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  echo "== configuring $BUILD_DIR"
  cmake -G Ninja -S "$HETERO_ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    ${HETERO_CMAKE_ARGS:-} | grep -E "^-- hetero:|Error|error" || true
fi

echo "== building"
cmake --build "$BUILD_DIR" -- -j"${HETERO_JOBS:-2}"
