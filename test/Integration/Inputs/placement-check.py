"""Summarizes where hetero-gpu-device-buffers placed a module's buffers.

Reads the IR printed after the pass and prints, one line each: the globals
used through a device copy and those left in host memory; the host
allocations of data (rank >= 1, float elements) left; and how many runtime
calls got staged host copies and how many host loads and stores became
copies.
"""
import re
import sys

text = open(sys.argv[1]).read()
# %0 = memref.get_global @w : ... then a cast of %0 and a mirror call.
gets = re.findall(r"(%[\w.]+) = memref.get_global @([\w.$-]+)", text)
mirrored, host = set(), set()
for value, name in gets:
    cast = re.search(re.escape(value) + r" : memref<[^>]*> to !llvm.struct", text)
    (mirrored if cast else host).add(name)
host -= mirrored
print("device globals:", " ".join(sorted(mirrored)) or "none")
print("host globals:", " ".join(sorted(host)) or "none")
data = re.findall(r"memref.alloc\([^)]*\)[^:]*: (memref<(?:\d+|\?)x[^>]*f(?:16|32|64)>)",
                  text)
print("host data allocations:", " ".join(sorted(set(data))) or "none")
print("staged runtime calls:", len(re.findall(r"call @hrt_cuda_stage_in\(", text)))
print("host element copies:", len(re.findall(r"call @hrt_cuda_copy\(", text)))
