"""examples/onnx/export.py's MLPs trained in NumPy, independently of hetero.

  mlp-numpy.py mse|cross-entropy INIT_DIR DATA_DIR BATCH MICROBATCHES
               REPLICAS LR STEPS OUT

y = tanh(x l1_weight^T + l1_bias) l2_weight^T + l2_bias, from the
parameters in INIT_DIR/<name>.npy (hetero-run --iterations 0 --save: the
ONNX file's initializers), on DATA_DIR/x.npy and y.npy as
hetero-import-onnx's @data reads them (micro-batch i of step t on replica r
of R: the BATCH samples from ((t R + r) M + i) BATCH on, modulo their
number). The loss is F.mse_loss's mean over all elements or
F.cross_entropy's mean over samples; the step's gradient is the mean of
the micro-batches' over replicas and micro-batches; plain SGD. Writes
OUT.txt (`iteration <i>: loss <value>, 0 ms`) and OUT/<name>.npy, as hetero-run
--save does, for training-reference.py runs.
"""

import os
import sys

import numpy as np


def main(argv):
    loss_kind, init, data = argv[1], argv[2], argv[3]
    batch, microbatches, replicas = int(argv[4]), int(argv[5]), int(argv[6])
    lr, steps, out = float(argv[7]), int(argv[8]), argv[9]
    names = ["l1_weight", "l1_bias", "l2_weight", "l2_bias"]
    p = {n: np.load(os.path.join(init, n + ".npy")).astype(np.float64) for n in names}
    xs = np.load(os.path.join(data, "x.npy")).astype(np.float64)
    ys = np.load(os.path.join(data, "y.npy"))
    count = len(xs)
    lines = []
    for step in range(steps):
        grads = {n: np.zeros_like(v) for n, v in p.items()}
        total = 0.0
        parts = replicas * microbatches
        for r in range(replicas):
            for i in range(microbatches):
                first = ((step * replicas + r) * microbatches + i) * batch
                rows = [(first + j) % count for j in range(batch)]
                x, t = xs[rows], ys[rows]
                h = np.tanh(x @ p["l1_weight"].T + p["l1_bias"])
                y = h @ p["l2_weight"].T + p["l2_bias"]
                if loss_kind == "mse":
                    d = y - t
                    loss = np.mean(d * d)
                    dy = 2 * d / d.size
                else:
                    shifted = y - y.max(1, keepdims=True)
                    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
                    loss = -np.mean(logp[np.arange(batch), t])
                    dy = np.exp(logp)
                    dy[np.arange(batch), t] -= 1
                    dy /= batch
                dz = (dy @ p["l2_weight"]) * (1 - h * h)
                part = {"l2_weight": dy.T @ h, "l2_bias": dy.sum(0),
                        "l1_weight": dz.T @ x, "l1_bias": dz.sum(0)}
                for n in names:
                    grads[n] += part[n] / parts
                total += loss / parts
        lines.append(f"iteration {step}: loss {total:.9g}, 0 ms")
        for n in names:
            p[n] -= lr * grads[n]
    with open(out + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.makedirs(out, exist_ok=True)
    for n in names:
        np.save(os.path.join(out, n + ".npy"), p[n].astype(np.float32))


if __name__ == "__main__":
    main(sys.argv)
