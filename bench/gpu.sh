#!/usr/bin/env bash
# hetero's generated GPU code against the libraries, on one device.
#
# usage: bench/gpu.sh [BUILD] [build|check|bench|all]
#
#   build  lowers bench/gpu/kernels.mlir with hetero-lower-to-gpu twice
#          (matmul=cublas and matmul=kernel, cubins for sm_90) and links
#          bench/gpu/gpu-bench.c against each into $HETERO_GPU_BENCH_DIR
#          (default BUILD/bench-gpu): bin/gpu-bench-cublas, bin/gpu-bench-kernel,
#          with libhetero_rt_cuda beside them in lib/ (found through the
#          binaries' rpath, so the folder can be copied to a machine with a
#          GPU and no MLIR)
#   check  each binary's functions against a host reference (partial tiles)
#   bench  each binary's timings against cuBLAS and a device copy, run in
#          the same process; ratios > 1 are faster than the baseline
#   all    build, then check and bench when a device is present (default)
#
# Needs CUDA (nvcc, cuBLAS) at build time; check and bench need a GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ACTION="${2:-all}"
OUT="${HETERO_GPU_BENCH_DIR:-$BUILD/bench-gpu}"
LLVM_BIN="$(llvm-config-22 --bindir 2>/dev/null || echo /usr/lib/llvm-22/bin)"

cuda_root() {
  local bin
  bin="$(sed -n 's/^CUDAToolkit_BIN_DIR:PATH=//p' "$BUILD/CMakeCache.txt")"
  [[ -n "$bin" ]] || { echo "gpu.sh: $BUILD was configured without CUDA" >&2; exit 2; }
  (cd "$bin/.." && pwd)
}

build() {
  local cuda
  cuda="$(cuda_root)"
  mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/obj"
  cp -L "$BUILD/lib/libhetero_rt_cuda.so" "$OUT/lib/"
  for mode in cublas kernel; do
    "$BUILD/bin/hetero-opt" "$ROOT/bench/gpu/kernels.mlir" \
      --hetero-lower-to-gpu="format=bin matmul=$mode toolkit=$cuda" \
      -o "$OUT/obj/kernels-$mode.mlir"
    "$LLVM_BIN/mlir-translate" --mlir-to-llvmir "$OUT/obj/kernels-$mode.mlir" \
      -o "$OUT/obj/kernels-$mode.ll"
    "$LLVM_BIN/clang" -O2 -fPIC -Wno-override-module -c "$OUT/obj/kernels-$mode.ll" \
      -o "$OUT/obj/kernels-$mode.o"
    "$LLVM_BIN/clang" -O2 -std=c11 -D_POSIX_C_SOURCE=200809L \
      -I"$ROOT/include" -I"$cuda/include" "$ROOT/bench/gpu/gpu-bench.c" \
      "$OUT/obj/kernels-$mode.o" -o "$OUT/bin/gpu-bench-$mode" \
      -L"$OUT/lib" -lhetero_rt_cuda -L"$cuda/lib64" -L"$cuda/lib" \
      -lcublas -lcudart -lm -Wl,-rpath,'$ORIGIN/../lib' \
      -Wl,--allow-shlib-undefined # libcuda.so.1 comes with the driver
  done
  echo "built $OUT/bin/gpu-bench-cublas and $OUT/bin/gpu-bench-kernel"
}

run() {
  for mode in cublas kernel; do
    echo "== matmul=$mode: $1"
    "$OUT/bin/gpu-bench-$mode" "$1"
  done
}

case "$ACTION" in
  build) build ;;
  check|bench) run "$ACTION" ;;
  all)
    build
    if [[ -e /dev/nvidia0 || -e /dev/nvidiactl ]]; then
      run check
      run bench
    else
      echo "no GPU here: built only"
    fi ;;
  *) echo "usage: bench/gpu.sh [BUILD] [build|check|bench|all]" >&2; exit 2 ;;
esac
