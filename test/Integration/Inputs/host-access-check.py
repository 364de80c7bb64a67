"""Finds host code that reads or writes device memory.

Reads a module printed after gpu-kernel-outlining (kernels in gpu.modules,
host code in func.funcs) and follows the buffer of every memref.load,
memref.store and memref.copy in a host function back through views
(subview, expand_shape, collapse_shape, cast, reinterpret_cast, view) to
where it was made. A buffer from gpu.alloc, or a global's device copy (the
descriptor rebuilt around hrt_cuda_mirror's pointer by an unrealized cast),
is device memory, which the host must not dereference. So is a function's
argument when some call passes device memory in its place, and a call's
result when the callee returns device memory there: the check iterates
over the module's calls until nothing changes. Block arguments (loop
iteration values) are not followed. Prints the count and one line per
access found, then how many (function, argument position) pairs and
(function, result position) pairs carry device memory.
"""
import re
import sys

VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape",
         "memref.cast", "memref.reinterpret_cast", "memref.view",
         "memref.transpose", "memref.reshape", "memref.memory_space_cast",
         "memref.assume_alignment")
VALUE = r"%[\w.]+(?:#\d+)?"
DEF = re.compile(r"^\s*(%[\w.]+)(?::(\d+))?(?:, %[\w.]+(?::\d+)?)* = ([\w.]+)\s*(.*)$")
ACCESS = re.compile(r"^\s*(?:%[\w.]+ = )?(memref\.load|memref\.store|memref\.copy)\s+(.*)$")
CALL = re.compile(r"^(?:func\.)?call$")
RETURN = re.compile(r"^\s*(?:func\.)?return\s+(.*)$")


class Function:
    def __init__(self, name, arguments):
        self.name = name
        self.arguments = arguments  # value -> position
        self.defs = {}              # value -> (op, rest)
        self.accesses = []          # (op, value)
        self.calls = []             # (callee, [operand values])
        self.returns = []           # [returned values], one list per return


def split_operands(text):
    return re.findall(VALUE, text)


def parse(path):
    functions = {}
    function, skip_until = None, None
    for line in open(path):
        if skip_until is not None:
            if line.rstrip("\n") == skip_until:
                skip_until = None
            continue
        module = re.match(r"^(\s*)gpu\.module ", line)
        if module:
            skip_until = module.group(1) + "}"
            continue
        header = re.match(r"^\s*func\.func (?:\w+ )?@([\w.$-]+)\((.*?)\)", line)
        if header:
            arguments = {}
            for position, value in enumerate(
                    re.findall(r"(%[\w.]+):", header.group(2))):
                arguments[value] = position
            function = Function(header.group(1), arguments)
            functions[function.name] = function
            continue
        if function is None:
            continue
        definition = DEF.match(line)
        if definition:
            name, count, op, rest = definition.groups()
            function.defs[name] = (op, rest)
            if CALL.match(op):
                callee = re.match(r"@([\w.$-]+)\((.*?)\)", rest)
                if callee:
                    function.defs[name] = ("call", callee.group(1))
                    function.calls.append(
                        (callee.group(1), split_operands(callee.group(2))))
        else:
            call = re.match(r"^\s*(?:func\.)?call @([\w.$-]+)\((.*?)\)", line)
            if call:
                function.calls.append(
                    (call.group(1), split_operands(call.group(2))))
        returned = RETURN.match(line)
        if returned:
            function.returns.append(
                split_operands(returned.group(1).split(" : ")[0]))
        access = ACCESS.match(line)
        if access:
            for value in operands(access.group(1), access.group(2)):
                function.accesses.append((access.group(1), value))
    return functions


def operands(op, rest):
    """The memref operands an access dereferences."""
    values = split_operands(rest.split(" : ")[0])
    if op == "memref.load":
        return values[:1]
    if op == "memref.store":
        return values[1:2]
    return values[:2]


def is_device(function, value, device_arguments, device_results, seen=()):
    """Whether `value` of `function` is device memory."""
    if value in seen:
        return False
    base, _, index = value.partition("#")
    if base in function.arguments:
        return (function.name, function.arguments[base]) in device_arguments
    if base not in function.defs:
        return False
    op, rest = function.defs[base]
    if op == "gpu.alloc":
        return True
    if op == "builtin.unrealized_conversion_cast":
        return "!llvm.struct" in rest.split(" to ")[0] and "memref<" in rest
    if op == "call":
        return (rest, int(index or 0)) in device_results
    if op in VIEWS:
        source = re.match(r"(%[\w.]+)", rest)
        return bool(source) and is_device(function, source.group(1),
                                          device_arguments, device_results,
                                          seen + (value,))
    return False


def main():
    functions = parse(sys.argv[1])
    device_arguments, device_results = set(), set()
    changed = True
    while changed:
        changed = False
        for function in functions.values():
            for callee, values in function.calls:
                if callee not in functions:
                    continue
                for position, value in enumerate(values):
                    key = (callee, position)
                    if key not in device_arguments and is_device(
                            function, value, device_arguments, device_results):
                        device_arguments.add(key)
                        changed = True
            for values in function.returns:
                for position, value in enumerate(values):
                    key = (function.name, position)
                    if key not in device_results and is_device(
                            function, value, device_arguments, device_results):
                        device_results.add(key)
                        changed = True
    found = [f"{function.name}: {op} of {value}"
             for function in functions.values()
             for op, value in function.accesses
             if is_device(function, value, device_arguments, device_results)]
    print("host accesses of device memory:", len(found))
    for entry in found:
        print(" ", entry)
    print("device memory passed as arguments:", len(device_arguments),
          "returned:", len(device_results))


if __name__ == "__main__":
    main()
