# -*- Python -*-
# lit configuration of the hetero test suite.

import importlib.util
import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "HETERO"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.hetero_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "consumer"]

config.substitutions.append(("%hetero_src", config.hetero_src_root))
config.substitutions.append(("%hetero_obj", config.hetero_obj_root))
config.substitutions.append(("%mlir_dir", config.mlir_cmake_dir))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%c_compiler", config.c_compiler))
config.substitutions.append(("%cxx_compiler", config.cxx_compiler))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Captured FileCheck variables do not leak from one CHECK-LABEL to the next.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.hetero_tools_dir, append_path=True)

# The tests check what a step computes, not how fast: hetero-run compiles
# at -O1, seconds less per rank than -O3's vectorisers (docs/testing.md).
# The tests of the -O3 compile name -O3 themselves; the scripts under
# Integration/Inputs run $HETERO_RUN.
hetero_run_flags = ["-O1"]
config.environment["HETERO_RUN"] = " ".join(
    [os.path.join(config.hetero_tools_dir, "hetero-run")] + hetero_run_flags)

tools = ["hetero-opt", "hetero-gen", "hrt-collectives", "hrt-errors",
         "hrt-timeout", "hrt-half", "hrt-mlir-abi", "hrt-planner", "hrt-resize", "hrt-link", "hrt-link-costs", "hrt-compressed", "hrt-compressed-hosted", "hrt-sparse", "hrt-nccl", "hrt-cuda-compress", "hrt-compressed-device", "bench-collectives", "bench-zen-hashing",
         "hetero-sim", "hetero-import-onnx",
         ToolSubst("hetero-run", extra_args=hetero_run_flags)]
llvm_config.add_tool_substitutions(tools, [config.hetero_tools_dir])

# A sanitized build (HETERO_SANITIZE): every report fails its test. hetero
# is instrumented and libMLIR.so is not, so LLVM's inline allocator code in
# hetero poisons memory that the library then writes without unpoisoning:
# user poisoning is off. MPI does not free what it allocates, so programs
# run under mpirun are not checked for leaks; the compiler tools are.
mpirun_env = ""
if config.hetero_sanitize:
    config.available_features.add("sanitize")
    asan = "allow_user_poisoning=0:detect_leaks=1"
    config.environment["ASAN_OPTIONS"] = asan
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    mpirun_env = " -x ASAN_OPTIONS=" + asan.replace("detect_leaks=1",
                                                     "detect_leaks=0")

# Features that gate tests.
if config.hetero_enable_mpi and shutil.which("mpirun"):
    config.available_features.add("mpi")
    # Root is allowed (CI runs as root); more ranks than cores are allowed.
    # test/mpirun.sh gives each run a session directory of its own.
    config.substitutions.append(
        ("%mpirun", os.path.join(config.test_source_root, "mpirun.sh")
         + " --allow-run-as-root --oversubscribe --bind-to none"
         + mpirun_env))
    # %run_family RANKS MODEL DERIVE FAMILY K OUT REFERENCE: one schedule family
    # trained against a reference run (Integration/Inputs/train-family.sh).
    config.substitutions.append(
        ("%run_family", "env MPIRUN='" + os.path.join(config.test_source_root,
                                                 "mpirun.sh")
         + " --allow-run-as-root --oversubscribe --bind-to none"
         + mpirun_env + "' PYTHON=" + sys.executable + " "
         + os.path.join(config.test_source_root, "Integration", "Inputs",
                        "train-family.sh")))
# A real, kernel-shaped link (scripts/shaped-link.sh): a network namespace
# whose loopback passes through tc's token bucket, where root or user
# namespaces and tc allow it. MPI jobs inside talk TCP over lo (%mpilo).
shaped_link = os.path.join(os.path.dirname(config.test_source_root),
                           "scripts", "shaped-link.sh")
if "mpi" in config.available_features and subprocess.call(
        [shaped_link, "--check"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("shaped-link")
    config.substitutions.append(("%shaped", shaped_link))
    config.substitutions.append(
        ("%mpilo", os.path.join(config.test_source_root, "mpirun.sh")
         + " --allow-run-as-root --oversubscribe --bind-to none"
         + " --mca btl tcp,self --mca btl_tcp_if_include lo"
         + " --mca oob_tcp_if_include lo" + mpirun_env))
if config.hetero_ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.hetero_ptxas))
if config.hetero_enable_cuda:
    config.available_features.add("cuda")
if config.hetero_cuda_stub:
    config.available_features.add("cuda-stub")
    config.substitutions.append(("%cuda_stub", config.hetero_cuda_stub))
# libcuda.so.1 and libcublas.so.13 of host memory (Runtime/Inputs/host-cuda.c).
if config.hetero_host_cuda:
    config.available_features.add("host-cuda")
    config.substitutions.append(("%host_cuda", config.hetero_host_cuda))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(
    ("%clang", os.path.join(config.llvm_tools_dir, "clang")))
config.substitutions.append(("%llvm_lib", config.llvm_library_dir))
if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
    config.available_features.add("cuda-device")
# Two devices: NCCL tests of two ranks (NCCL refuses two ranks on one GPU).
if os.path.exists("/dev/nvidia1"):
    config.available_features.add("cuda-devices-2")
if config.hetero_fuzzer:
    config.available_features.add("fuzzer")
# hetero-import-onnx (built with libonnx-dev); the tests that export a model
# with PyTorch also need python3-torch.
if config.hetero_enable_onnx:
    config.available_features.add("onnx")
# %python is this interpreter: finding the package here is enough, and
# costs none of the seconds an import of torch takes at every lit start.
if importlib.util.find_spec("torch") is not None:
    config.available_features.add("torch")
