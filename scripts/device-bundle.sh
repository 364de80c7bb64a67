#!/usr/bin/env bash
# Packs hetero's device checks into one folder for a GPU machine that has the
# NVIDIA driver, CUDA 13 (nvcc, ptxas, libdevice, cuBLAS, NCCL) and Python
# with NumPy, but neither LLVM/MLIR 22 nor Open MPI.
#
# usage: scripts/device-bundle.sh [BUILD] [OUT]    (default: build, .devrun)
#        then, on the GPU machine, from the repository root:
#        bash OUT/checks.sh        (scripts/device-checks.sh; writes
#                                   $OUT/device.log when OUT is set)
#
# OUT holds:
#   hr/bin/hetero-run.xz   hetero-run linked against the static LLVM and MLIR
#                          libraries (libMLIR.so and libLLVM.so are 250 MB)
#   hr/bin/hrt-cuda-compress, hr/bin/hrt-compressed, hr/bin/hetero-ckpt-agent,
#                          hr/lib/libhetero_rt{,_cuda}.so
#   llvm/                  libmlir_c_runner_utils (the JIT's memrefCopy) and
#                          the two libraries it names, for
#                          /usr/lib/llvm-22/lib; libLLVM.so.22.1 there is a
#                          stand-in with the 38 symbols they name and never
#                          call on the way to memrefCopy
#   mpi.tar.xz             Debian's Open MPI 4.1 and PMIx, unpacked under
#                          /opt/hmpi by checks.sh
#   models/                the MLP and GPTs the checks train
#   bench-gpu/             bench/gpu.sh's binaries (generated kernels)
# The bundle is about 45 MB.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
OUT="${2:-$ROOT/.devrun}"
LLVM_LIB="$(llvm-config-22 --libdir)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"/{hr/bin,hr/lib,llvm,models}
OUT="$(cd "$OUT" && pwd)"

echo "device-bundle: hetero-run, static"
objects=("$BUILD"/tools/hetero-run/CMakeFiles/hetero-run.dir/*.o)
# hetero's own static libraries, as CMake links hetero-run.
mapfile -t hetero < <(awk '/^build bin\/hetero-run:/ { found = 1 }
  found && /LINK_LIBRARIES/ { print; exit }' "$BUILD/build.ninja" |
  tr ' ' '\n' | grep '\.a$' | awk '!seen[$0]++' | sed "s|^|$BUILD/|")
mapfile -t mlir < <(ls "$LLVM_LIB"/libMLIR*.a |
  grep -v -E 'libMLIR(MlirOptMain|TableGen|CAPI)')
mapfile -t llvm < <(ls "$LLVM_LIB"/libLLVM*.a)
g++ -O2 -fuse-ld=lld -Wl,--gc-sections -s -o "$WORK/hetero-run" "${objects[@]}" \
  -Wl,--start-group "${hetero[@]}" "${mlir[@]}" "${llvm[@]}" -Wl,--end-group \
  -Wl,-rpath,'$ORIGIN/../lib' "$BUILD/lib/libhetero_rt.so" \
  /usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so \
  -lrt -ldl -lm -lz /usr/lib/x86_64-linux-gnu/libzstd.so.1 -lpthread
xz -T0 -6 -c "$WORK/hetero-run" >"$OUT/hr/bin/hetero-run.xz"
cp "$BUILD/lib/libhetero_rt.so" "$BUILD/lib/libhetero_rt_cuda.so" "$OUT/hr/lib/"
cp "$BUILD/bin/hrt-cuda-compress" "$BUILD/bin/hrt-compressed" \
  "$BUILD/bin/hetero-ckpt-agent" "$OUT/hr/bin/"

echo "device-bundle: runner utilities"
for lib in c_runner_utils float16_utils apfloat_wrappers; do
  cp "$LLVM_LIB/libmlir_$lib.so.22.1" "$OUT/llvm/"
done
ln -sf libmlir_c_runner_utils.so.22.1 "$OUT/llvm/libmlir_c_runner_utils.so"
mapfile -t symbols < <(nm -D --undefined-only \
  "$LLVM_LIB"/libmlir_{apfloat_wrappers,float16_utils}.so.22.1 |
  sed -n 's/.* \(.*\)@LLVM_22.1$/\1/p' | sort -u)
{
  for symbol in "${symbols[@]}"; do echo "void $symbol(void) {}"; done
} >"$WORK/stand-in.c"
{
  echo "LLVM_22.1 { global:"
  for symbol in "${symbols[@]}"; do echo "  $symbol;"; done
  echo "local: *; };"
} >"$WORK/stand-in.map"
gcc -shared -fPIC -o "$OUT/llvm/libLLVM.so.22.1" -Wl,-soname,libLLVM.so.22.1 \
  -Wl,--version-script="$WORK/stand-in.map" "$WORK/stand-in.c"
echo 'void hetero_stand_in(void) {}' >"$WORK/empty.c"
gcc -shared -fPIC -o "$OUT/llvm/libMLIR.so.22.1" -Wl,-soname,libMLIR.so.22.1 \
  "$WORK/empty.c"

echo "device-bundle: Open MPI"
packages=(libopenmpi3 openmpi-bin openmpi-common libpmix2 libhwloc15
  libevent-2.1-7 libevent-core-2.1-7 libevent-pthreads-2.1-7 libltdl7
  libmunge2 libfabric1 libucx0 libibverbs1 librdmacm1 libnl-3-200
  libnl-route-3-200 libpsm2-2 libpsm-infinipath1)
for package in "${packages[@]}"; do dpkg -L "$package"; done |
  while read -r path; do
    if [[ -f "$path" || -L "$path" ]]; then echo "$path"; fi
  done | grep -v -E '^/usr/share/(doc|man|lintian)/' >"$WORK/mpi-files"
tar -cJf "$OUT/mpi.tar.xz" -T "$WORK/mpi-files" 2>/dev/null

echo "device-bundle: models"
sed 's/shape = 2x2/shape = 2x1/' "$ROOT/test/Integration/Inputs/mlp-pipeline.mlir" \
  >"$OUT/models/mlp.mlir"
gen() { "$BUILD/bin/hetero-gen" gpt "$@"; }
gen --layers 2 --hidden 32 --heads 2 --seq 16 --stages 2 --microbatches 4 \
  --dp 2 -o "$OUT/models/gpt-test.mlir"
gen --layers 2 --hidden 32 --heads 2 --seq 16 --stages 2 --microbatches 4 \
  --dp 2 --optimizer sgd --lr 0.05 -o "$OUT/models/gpt-sgd.mlir"
gen --layers 2 --hidden 32 --heads 2 --seq 16 --stages 1 --microbatches 4 \
  --dp 1 -o "$OUT/models/gpt-one.mlir"
gen --layers 4 --hidden 256 --heads 8 --seq 128 --stages 2 --microbatches 8 \
  --dp 1 -o "$OUT/models/gpt-bench.mlir"
xz -T0 -6 -f "$OUT"/models/*.mlir

echo "device-bundle: generated kernels"
rm -rf "$OUT/bench-gpu"
HETERO_GPU_BENCH_DIR="$OUT/bench-gpu" bash "$ROOT/bench/gpu.sh" "$BUILD" build
rm -rf "$OUT/bench-gpu/obj"
cp "$ROOT/scripts/device-checks.sh" "$OUT/checks.sh"
du -sh "$OUT"
