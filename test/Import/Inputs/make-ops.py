#!/usr/bin/env python3
"""Writes test/Import/Inputs/ops: one small ONNX model per group of operators
and the value NumPy computes for each (python3-onnx, numpy).

  make-ops.py OUT_DIR

Every model takes x [2, 3, 4] (OUT_DIR/x.npy) and an unused target t [2, 1]
(OUT_DIR/y.npy) and returns sum over its probes v of sum(v * R_v), where R_v
is a fixed random constant of v's shape: a sign, a permutation or a scale
wrong in any operator changes the result. OUT_DIR/expected.txt holds per
model `<name> <value> <scale>`, the scale being sum |v * R_v|, which
check-ops.sh compares hetero's loss with. The file documents how the
checked-in models were made; nothing in the test suite runs it.
"""

import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)


class Model:
    def __init__(self, name):
        self.name, self.nodes, self.inits, self.probes = name, [], [], []
        self.expected, self.scale, self.count = 0.0, 0.0, 0

    def fresh(self, stem):
        self.count += 1
        return f"{stem}{self.count}"

    def const(self, value, as_init=False):
        value = np.asarray(value)
        name = self.fresh("c")
        tensor = numpy_helper.from_array(value, name)
        if as_init:
            self.inits.append(tensor)
        else:
            self.nodes.append(helper.make_node("Constant", [], [name], value=tensor))
        return name

    def op(self, op_type, inputs, outputs=1, **attrs):
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names,
                                           name=self.fresh("n"), **attrs))
        return names[0] if outputs == 1 else names

    def probe(self, name, value):
        """Adds sum(name * R) to the loss; `value` is NumPy's name."""
        value = np.asarray(value, np.float64)
        weights = RNG.standard_normal(value.shape).astype(np.float32)
        self.probes.append(self.op("ReduceSum", [self.op(
            "Mul", [name, self.const(weights)])], keepdims=0))
        self.expected += float(np.sum(value * weights))
        self.scale += float(np.sum(np.abs(value * weights)))

    def save(self, out):
        total = self.probes[0]
        for p in self.probes[1:]:
            total = self.op("Add", [total, p])
        self.nodes.append(helper.make_node("Identity", [total], ["loss"]))
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
             helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 1])],
            [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
            self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, self.name + ".onnx"))
        return f"{self.name} {self.expected!r} {self.scale!r}"


def softmax(v, axis):
    e = np.exp(v - v.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def layer_norm(v, axis, scale, bias, eps):
    axes = tuple(range(axis % v.ndim, v.ndim))
    mean = v.mean(axes, keepdims=True)
    var = ((v - mean) ** 2).mean(axes, keepdims=True)
    y = (v - mean) / np.sqrt(var + eps) * scale
    return y if bias is None else y + bias


def models():
    x = X.astype(np.float64)
    erf = np.vectorize(math.erf)

    m = Model("arithmetic")
    c1 = RNG.standard_normal(4).astype(np.float32)
    a = m.op("Add", ["x", m.const(c1)])
    sq1 = m.op("Add", [m.op("Mul", ["x", "x"]), m.const(np.float32(1))])
    y = m.op("Div", [m.op("Sub", [m.op("Mul", [a, "x"]), m.const(np.float32(0.5))]), sq1])
    m.probe(y, ((x + c1) * x - 0.5) / (x * x + 1))
    yield m

    m = Model("unary")
    sq1 = m.op("Add", [m.op("Mul", ["x", "x"]), m.const(np.float32(1))])
    parts = [(m.op("Sqrt", [sq1]), np.sqrt(x * x + 1)),
             (m.op("Reciprocal", [m.op("Add", ["x", m.const(np.float32(3))])]), 1 / (x + 3)),
             (m.op("Neg", ["x"]), -x), (m.op("Exp", ["x"]), np.exp(x)),
             (m.op("Log", [sq1]), np.log(x * x + 1)), (m.op("Tanh", ["x"]), np.tanh(x)),
             (m.op("Erf", ["x"]), erf(x)), (m.op("Relu", ["x"]), np.maximum(x, 0)),
             (m.op("Sigmoid", ["x"]), 1 / (1 + np.exp(-x)))]
    m.probe(m.op("Concat", [p for p, _ in parts], axis=2),
            np.concatenate([v for _, v in parts], 2))
    yield m

    m = Model("pow")
    sq1 = m.op("Add", [m.op("Mul", ["x", "x"]), m.const(np.float32(1))])
    m.probe(m.op("Pow", ["x", m.const(np.float32(3))]), x ** 3)
    m.probe(m.op("Pow", [sq1, m.const(np.float32(0.5))]), np.sqrt(x * x + 1))
    m.probe(m.op("Pow", [sq1, m.const(np.float32(-1.5))]), (x * x + 1) ** -1.5)
    m.probe(m.op("Pow", ["x", m.const(np.float32(2))]), x ** 2)
    yield m

    m = Model("softmax")
    m.probe(m.op("Softmax", ["x"], axis=1), softmax(x, 1))
    m.probe(m.op("LogSoftmax", ["x"], axis=-1), np.log(softmax(x, -1)))
    yield m

    m = Model("reduce")
    m.probe(m.op("ReduceMean", ["x"], axes=[1]), x.mean(1, keepdims=True))
    m.probe(m.op("ReduceSum", ["x", m.const(np.array([2], np.int64))], keepdims=0), x.sum(2))
    m.probe(m.op("ReduceMax", ["x"], axes=[1, 2], keepdims=0), x.max((1, 2)))
    m.probe(m.op("ReduceSum", ["x"], keepdims=1), x.sum(keepdims=True))
    yield m

    m = Model("matmul")
    w = RNG.standard_normal((4, 5)).astype(np.float32)
    b = RNG.standard_normal((1, 4, 2)).astype(np.float32)
    v = RNG.standard_normal(4).astype(np.float32)
    xt = m.op("Transpose", ["x"], perm=[0, 2, 1])
    m.probe(m.op("MatMul", ["x", m.const(w, as_init=True)]), x @ w)
    m.probe(m.op("MatMul", ["x", xt]), x @ x.transpose(0, 2, 1))
    m.probe(m.op("MatMul", ["x", m.const(b)]), x @ b)
    m.probe(m.op("MatMul", [m.const(v), xt]), v @ x.transpose(0, 2, 1))
    m.probe(m.op("MatMul", ["x", m.const(v)]), x @ v)
    yield m

    m = Model("gemm")
    flat = m.op("Reshape", ["x", m.const(np.array([6, 4], np.int64))])
    w = RNG.standard_normal((5, 4)).astype(np.float32)
    c = RNG.standard_normal(5).astype(np.float32)
    w2 = RNG.standard_normal((4, 3)).astype(np.float32)
    xf = x.reshape(6, 4)
    m.probe(m.op("Gemm", [flat, m.const(w), m.const(c)], alpha=0.5, beta=2.0, transB=1),
            0.5 * xf @ w.T + 2 * c)
    m.probe(m.op("Gemm", [m.op("Transpose", [flat]), m.const(w2)], transA=1), xf @ w2)
    yield m

    m = Model("layernorm")
    s1 = RNG.standard_normal(4).astype(np.float32)
    b1 = RNG.standard_normal(4).astype(np.float32)
    s2 = RNG.standard_normal((3, 4)).astype(np.float32)
    m.probe(m.op("LayerNormalization", ["x", m.const(s1), m.const(b1)], axis=-1, epsilon=1e-5),
            layer_norm(x, -1, s1, b1, 1e-5))
    m.probe(m.op("LayerNormalization", ["x", m.const(s2)], axis=1, epsilon=1e-3),
            layer_norm(x, 1, s2, None, 1e-3))
    yield m

    m = Model("shapes")
    m.probe(m.op("Reshape", ["x", m.const(np.array([0, -1], np.int64))]), x.reshape(2, 12))
    m.probe(m.op("Flatten", ["x"], axis=2), x.reshape(6, 4))
    unsq = m.op("Unsqueeze", ["x", m.const(np.array([1], np.int64))])
    m.probe(m.op("Squeeze", [unsq, m.const(np.array([1], np.int64))]), x)
    m.probe(unsq, x[:, None])
    m.probe(m.op("Transpose", ["x"], perm=[2, 0, 1]), x.transpose(2, 0, 1))
    mean = m.op("ReduceMean", ["x"], axes=[2])
    m.probe(m.op("Expand", [mean, m.const(np.array([2, 3, 4], np.int64))]),
            np.broadcast_to(x.mean(2, keepdims=True), (2, 3, 4)))
    filled = m.op("ConstantOfShape", [m.op("Shape", ["x"])],
                  value=numpy_helper.from_array(np.array([1.5], np.float32)))
    m.probe(m.op("Add", ["x", filled]), x + 1.5)
    # Shape arithmetic, folded: [2, 3, 4] -> [3 * 4, 2].
    dims = m.op("Shape", ["x"])
    tail = m.op("Mul", [m.op("Gather", [dims, m.const(np.array(1, np.int64))]),
                        m.op("Gather", [dims, m.const(np.array(2, np.int64))])])
    shape = m.op("Concat", [m.op("Unsqueeze", [tail, m.const(np.array([0], np.int64))]),
                            m.op("Slice", [dims, m.const(np.array([0], np.int64)),
                                           m.const(np.array([1], np.int64))])], axis=0)
    m.probe(m.op("Reshape", [m.op("Transpose", ["x"], perm=[1, 2, 0]), shape]),
            x.transpose(1, 2, 0).reshape(12, 2))
    yield m

    m = Model("slices")
    m.probe(m.op("Slice", ["x", m.const(np.array([1, -3], np.int64)),
                           m.const(np.array([3, 100], np.int64)),
                           m.const(np.array([1, 2], np.int64)),
                           m.const(np.array([1, 2], np.int64))]), x[:, 1:3, -3::2])
    first, rest = m.op("Split", ["x", m.const(np.array([1, 2], np.int64))], outputs=2, axis=1)
    m.probe(m.op("Concat", [rest, first], axis=1), np.concatenate([x[:, 1:], x[:, :1]], 1))
    m.probe(m.op("Split", ["x"], outputs=2, axis=2)[1], x[:, :, 2:])
    yield m

    m = Model("gather")
    m.probe(m.op("Gather", ["x", m.const(np.array([2, 0, 2], np.int64))], axis=1), x[:, [2, 0, 2]])
    m.probe(m.op("Gather", ["x", m.const(np.array(-1, np.int64))], axis=2), x[:, :, -1])
    table = RNG.standard_normal((3, 5)).astype(np.float32)
    ids = m.op("Cast", [m.op("Greater", ["x", m.const(np.float32(0))])], to=TensorProto.INT64)
    ids = m.op("Add", [ids, m.op("Cast", [m.op("Greater", ["x", m.const(np.float32(1))])],
                                 to=TensorProto.INT64)])
    idv = (x > 0).astype(np.int64) + (x > 1).astype(np.int64)
    m.probe(m.op("Gather", [m.const(table, as_init=True), ids]), table[idv])
    m.probe(m.op("Gather", [m.const(table), m.op("Sub", [ids, m.const(np.int64(3))])]),
            table[idv - 3])
    yield m

    m = Model("select")
    m.probe(m.op("Where", [m.op("Greater", ["x", m.const(np.float32(0))]), "x",
                           m.op("Mul", ["x", m.const(np.float32(0.1))])]),
            np.where(x > 0, x, 0.1 * x))
    m.probe(m.op("Cast", [m.op("Less", ["x", m.const(np.float32(-0.5))])], to=TensorProto.FLOAT),
            (x < -0.5).astype(np.float64))
    big = m.op("Cast", [m.op("Greater", ["x", m.const(np.float32(0.5))])], to=TensorProto.INT64)
    m.probe(m.op("Cast", [m.op("Equal", [big, m.const(np.int64(1))])], to=TensorProto.FLOAT),
            (x > 0.5).astype(np.float64))
    m.probe(m.op("CastLike", [m.op("Mul", [big, m.const(np.int64(3))]), "x"]),
            3.0 * (x > 0.5))
    yield m

    m = Model("cross-entropy")
    scores = m.op("Reshape", ["x", m.const(np.array([6, 4], np.int64))])
    xf = x.reshape(6, 4)
    # Labels 0 and 3 (rows with sums above the median: 3).
    threshold = np.float32(np.median(X.reshape(6, 4).sum(1)))
    labels = m.op("Cast", [m.op("Greater", [m.op("ReduceSum", [scores, m.const(
        np.array([1], np.int64))], keepdims=0), m.const(threshold)])], to=TensorProto.INT64)
    labels = m.op("Mul", [labels, m.const(np.int64(3))])
    lv = 3 * (X.reshape(6, 4).sum(1) > threshold).astype(np.int64)
    logp = np.log(softmax(xf, 1))
    nll = -logp[np.arange(6), lv]
    m.probe(m.op("SoftmaxCrossEntropyLoss", [scores, labels], reduction="mean"), nll.mean())
    m.probe(m.op("SoftmaxCrossEntropyLoss", [scores, labels], reduction="sum"), nll.sum())
    kept = lv != 0
    m.probe(m.op("SoftmaxCrossEntropyLoss", [scores, labels], reduction="mean", ignore_index=0),
            nll[kept].sum() / kept.sum())
    # [N, C, d]: the classes along dimension 1.
    m.probe(m.op("SoftmaxCrossEntropyLoss", [m.op("Transpose", ["x"], perm=[0, 2, 1]),
                                             m.op("Reshape", [labels, m.const(np.array([2, 3], np.int64))])]),
            -np.log(softmax(x, 2))[np.arange(2)[:, None], np.arange(3)[None, :],
                                   lv.reshape(2, 3)].mean())
    yield m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "x.npy"), X)
    np.save(os.path.join(out, "y.npy"), np.zeros((2, 1), np.float32))
    lines = [model.save(out) for model in models()]
    with open(os.path.join(out, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
