"""Finds host code that reads or writes device memory.

Reads a module printed after gpu-kernel-outlining (kernels in gpu.modules,
host code in func.funcs) and follows, in each host function, the buffer of
every memref.load, memref.store and memref.copy back through views
(subview, expand_shape, collapse_shape, cast, reinterpret_cast, view) to
where it was made. A buffer from gpu.alloc, or a global's device copy (the
descriptor rebuilt around hrt_cuda_mirror's pointer by an unrealized cast),
is device memory, which the host must not dereference. Buffers that arrive
as function arguments, call results or block arguments are not followed,
so an access through one of them is not found. Prints the count and one line per
access found.
"""
import re
import sys

VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape",
         "memref.cast", "memref.reinterpret_cast", "memref.view",
         "memref.transpose", "memref.reshape", "memref.memory_space_cast",
         "memref.assume_alignment")
DEF = re.compile(r"^\s*(%[\w.]+)(?::\d+)?(?:, %[\w.]+(?::\d+)?)* = ([\w.]+)\s*(.*)$")
ACCESS = re.compile(r"^\s*(?:%[\w.]+ = )?(memref\.load|memref\.store|memref\.copy)\s+(.*)$")


def device_root(value, defs, seen=()):
    """Whether `value` is device memory, following views to their source."""
    if value in seen or value not in defs:
        return False
    op, rest = defs[value]
    if op == "gpu.alloc":
        return True
    if op == "builtin.unrealized_conversion_cast":
        return "!llvm.struct" in rest.split(" to ")[0] and "memref<" in rest
    if op in VIEWS:
        source = re.match(r"(%[\w.]+)", rest)
        return bool(source) and device_root(source.group(1), defs,
                                            seen + (value,))
    return False


def operands(op, rest):
    """The memref operands an access dereferences."""
    values = re.findall(r"%[\w.]+", rest.split(" : ")[0])
    if op == "memref.load":
        return values[:1]
    if op == "memref.store":
        return values[1:2]
    return values[:2]


found = []
function, defs, skip_until = None, {}, None
for line in open(sys.argv[1]):
    if skip_until is not None:
        if line.rstrip("\n") == skip_until:
            skip_until = None
        continue
    module = re.match(r"^(\s*)gpu\.module ", line)
    if module:
        skip_until = module.group(1) + "}"
        continue
    header = re.match(r"^\s*func\.func (?:\w+ )?@([\w.$-]+)", line)
    if header:
        function, defs = header.group(1), {}
        continue
    definition = DEF.match(line)
    if definition:
        defs[definition.group(1)] = (definition.group(2), definition.group(3))
    access = ACCESS.match(line)
    if access and function:
        for value in operands(access.group(1), access.group(2)):
            if device_root(value, defs):
                found.append(f"{function}: {access.group(1)} of {value}")
print("host accesses of device memory:", len(found))
for entry in found:
    print(" ", entry)
