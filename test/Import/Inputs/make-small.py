#!/usr/bin/env python3
"""Writes the small ONNX files of test/Import/import-invalid.test and of
import-onnx.test's Dropout (python3-onnx).

  make-small.py OUT_DIR

Each model but dropout.onnx is valid ONNX that hetero-import-onnx must
refuse, for one reason: an opset it does not implement, an operator it does
not build, a dynamic dimension, an exponent computed at run time, a
negative step, a used Dropout mask, doubles. They are checked into the test
suite (with samples of their shapes in OUT_DIR/three); the script documents
how they were made.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def mlp(nodes, inputs, opset, initializers=(), outputs=None):
    graph = helper.make_graph(
        nodes, "invalid", inputs,
        outputs or [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    weight = helper.make_tensor("w", TensorProto.FLOAT, [3, 3], [0.1] * 9)
    models = {
        # Opset 11 is older than the importer's 13 to 17.
        "bad-opset": mlp([helper.make_node("MatMul", ["x", "w"], ["y"], name="product")],
                         [x], 11, [weight]),
        # Sin has no importer.
        "unsupported-op": mlp([helper.make_node("MatMul", ["x", "w"], ["h"], name="product"),
                               helper.make_node("Sin", ["h"], ["y"], name="wave")],
                              [x], 17, [weight]),
        # The batch dimension is symbolic.
        "dynamic-dim": mlp([helper.make_node("MatMul", ["x", "w"], ["y"], name="product")],
                           [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                           17, [weight],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])]),
        # Valid: a Dropout, imported as the identity.
        "dropout": mlp([helper.make_node("MatMul", ["x", "w"], ["h"], name="product"),
                        helper.make_node("Dropout", ["h"], ["y"], name="drop")],
                       [x], 17, [weight]),
        # x[:, ::-1]: a negative step.
        "negative-step": mlp([helper.make_node("Constant", [], ["s"], value=helper.make_tensor("s", TensorProto.INT64, [1], [-1])),
                              helper.make_node("Constant", [], ["e"], value=helper.make_tensor("e", TensorProto.INT64, [1], [-4])),
                              helper.make_node("Constant", [], ["a"], value=helper.make_tensor("a", TensorProto.INT64, [1], [1])),
                              helper.make_node("Slice", ["x", "s", "e", "a", "s"], ["y"], name="reverse")],
                             [x], 17),
        # Dropout's mask feeds the output.
        "dropout-mask": mlp([helper.make_node("Dropout", ["x"], ["d", "mask"], name="drop"),
                             helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.FLOAT),
                             helper.make_node("Mul", ["d", "m"], ["y"], name="masked")],
                            [x], 17),
        # A model of doubles, as PyTorch exports one after model.double().
        "double": mlp([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                      [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])], 17,
                      outputs=[helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2, 3])]),
        # Pow's exponent is the model's input.
        "runtime-exponent": mlp([helper.make_node("MatMul", ["x", "w"], ["h"], name="product"),
                                 helper.make_node("Pow", ["h", "x"], ["y"], name="power")],
                                [x], 17, [weight]),
    }
    for name, model in models.items():
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name + ".onnx"))
    # Samples of their shapes, for --data npy:OUT_DIR/three.
    os.makedirs(os.path.join(out, "three"), exist_ok=True)
    for name in ("x", "y"):
        np.save(os.path.join(out, "three", name + ".npy"),
                np.arange(12, dtype=np.float32).reshape(4, 3))


if __name__ == "__main__":
    main()
