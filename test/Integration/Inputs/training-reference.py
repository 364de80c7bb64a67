"""Checks training runs of pipelines (hetero-run --save).

  training-reference.py numpy MODEL STEPS RUN.txt SAVED_DIR
      Trains the model of MODEL (its initial weights, grid, micro-batches and
      optimizer read from the file) for STEPS steps in NumPy, independently
      of hetero, and compares the losses hetero-run printed (RUN.txt) and the
      parameters it saved (SAVED_DIR/<global>.npy) with it.
  training-reference.py runs A.txt A_DIR B.txt B_DIR
      Compares two runs of any pipeline: their losses and every saved
      parameter.
  training-reference.py sdpipe MODEL STEPS RUN.txt SAVED_DIR
      Trains MODEL in NumPy as SDPipe does when every group holds every
      replica (its sync has period = 1 and lock = false): each replica takes
      a local optimizer step on its own gradients, with its own optimizer
      state (and Adam's variance rescale when the model asks for it), then
      the replicas average their weights. Compares the losses of pipeline 0
      and the saved parameters (replica 0's) with it.

Agreement means 1e-5 relative (or the tolerance of a leading
`--tolerance T`): per loss, and per parameter tensor against its largest
magnitude. Prints one line per check; exits 1 on a mismatch.
"""

import math
import pathlib
import re
import sys

import numpy as np

TOLERANCE = 1e-5
TOLERANCE_TEXT = "1e-5"


def parse_dense(text, name, shape):
    match = re.search(r"@%s : memref<[^>]*> = dense<(\[.*?\]\])>" % name, text)
    if not match:
        sys.exit(f"no initial value of @{name} in the model")
    values = np.array(eval(match.group(1)), dtype=np.float64)
    assert values.shape == shape, (name, values.shape)
    return values


def parse_model(path):
    text = pathlib.Path(path).read_text()
    grid = re.search(r"shard.grid @grid\(shape = (\d+)(?:x(\d+))?\)", text)
    replicas = int(grid.group(2) or 1)
    microbatches = int(re.search(r"microbatches = (\d+)", text).group(1))
    optimizer = re.search(r"optimizer #hetero\.(sgd|adam)<([^>]*)>", text)
    options = {
        key: float(value)
        for key, value in re.findall(r"(\w+) = ([-+.\deE]+)", optimizer.group(2))
    }
    return {
        "w0": parse_dense(text, "w0", (8, 16)),
        "w1": parse_dense(text, "w1", (16, 4)),
        "replicas": replicas,
        "microbatches": microbatches,
        "optimizer": optimizer.group(1),
        "options": options,
        "rescale": "adam_var_rescale = true" in text,
    }


def data(step, replica, microbatch):
    i = np.arange(4, dtype=np.float64)[:, None]
    x = np.sin(0.37 * i + 0.91 * np.arange(8)[None, :]
               + 1.3 * microbatch + 2.1 * replica + 0.17 * step)
    t = np.cos(0.53 * i + 0.29 * np.arange(4)[None, :]
               + 0.7 * microbatch + 1.7 * replica + 0.11 * step)
    return x, t


def gradients(w0, w1, x, t):
    h = np.tanh(x @ w0)
    y = h @ w1
    loss = np.sum((y - t) ** 2) / 16.0
    dy = (y - t) / 8.0
    dw1 = h.T @ dy
    dh = dy @ w1.T
    dz = dh * (1.0 - h * h)
    dw0 = x.T @ dz
    return loss, dw0, dw1


class Optimizer:
    def __init__(self, kind, options, rescale_replicas=0):
        self.kind, self.options, self.state, self.steps = kind, options, {}, 0
        # SDPipe's variance rescale over this many replicas (0: off).
        self.rescale_replicas = rescale_replicas

    def step(self, params, grads):
        self.steps += 1
        lr = self.options["lr"]
        for name in params:
            g = grads[name]
            if self.kind == "sgd":
                mu = self.options.get("momentum")
                if mu is None:
                    params[name] -= lr * g
                    continue
                # torch.optim.SGD: the buffer starts at the first gradient.
                buf = self.state.get(name)
                buf = g.copy() if buf is None else mu * buf + g
                self.state[name] = buf
                params[name] -= lr * buf
            else:
                beta1 = self.options.get("beta1", 0.9)
                beta2 = self.options.get("beta2", 0.999)
                eps = self.options.get("eps", 1e-8)
                zeros = np.zeros_like(g)
                m, v, m2 = self.state.get(name, (zeros, zeros, zeros))
                m = beta1 * m + (1 - beta1) * g
                v = beta2 * v + (1 - beta2) * g * g
                m2 = beta2 * m2 + (1 - beta2) * g
                self.state[name] = (m, v, m2)
                second = v
                if self.rescale_replicas:
                    n = self.rescale_replicas
                    second = m2 * m2 + np.maximum(v - m2 * m2, 0.0) / n
                m_hat = m / (1 - beta1 ** self.steps)
                v_hat = second / (1 - beta2 ** self.steps)
                params[name] -= lr * m_hat / (np.sqrt(v_hat) + eps)


def replica_sums(params, step, replica, microbatches):
    """The loss sum and the gradient sums of one replica's micro-batches."""
    total, grads = 0.0, {n: np.zeros_like(p) for n, p in params.items()}
    for microbatch in range(microbatches):
        x, t = data(step, replica, microbatch)
        loss, dw0, dw1 = gradients(params["w0"], params["w1"], x, t)
        total += loss
        grads["w0"] += dw0
        grads["w1"] += dw1
    return total, grads


def train(model, steps):
    params = {"w0": model["w0"].copy(), "w1": model["w1"].copy()}
    optimizer = Optimizer(model["optimizer"], model["options"])
    count = model["replicas"] * model["microbatches"]
    losses = []
    for step in range(steps):
        total, grads = 0.0, {n: np.zeros_like(p) for n, p in params.items()}
        for replica in range(model["replicas"]):
            loss, replica_grads = replica_sums(params, step, replica,
                                               model["microbatches"])
            total += loss
            for name in grads:
                grads[name] += replica_grads[name]
        losses.append(total / count)
        optimizer.step(params, {n: g / count for n, g in grads.items()})
    return losses, params


def train_sdpipe(model, steps):
    replicas = model["replicas"]
    params = {"w0": model["w0"].copy(), "w1": model["w1"].copy()}
    rescale = replicas if model["rescale"] and replicas > 1 else 0
    optimizers = [Optimizer(model["optimizer"], model["options"], rescale)
                  for _ in range(replicas)]
    losses = []
    for step in range(steps):
        local = []
        for replica in range(replicas):
            total, grads = replica_sums(params, step, replica,
                                        model["microbatches"])
            if replica == 0:
                losses.append(total / model["microbatches"])
            mine = {n: p.copy() for n, p in params.items()}
            optimizers[replica].step(
                mine, {n: g / model["microbatches"] for n, g in grads.items()})
            local.append(mine)
        params = {n: sum(p[n] for p in local) / replicas for n in params}
    return losses, params


def read_losses(path):
    losses = [float(m) for m in re.findall(r"^iteration \d+: loss (\S+),",
                                           pathlib.Path(path).read_text(),
                                           re.MULTILINE)]
    if not losses:
        sys.exit(f"no 'iteration <i>: loss <v>' lines in {path}")
    return losses


def read_params(directory):
    files = sorted(pathlib.Path(directory).glob("*.npy"))
    if not files:
        sys.exit(f"no parameter files in {directory}")
    return {path.stem: np.load(path).astype(np.float64) for path in files}


def compare(losses, params, other_losses, other_params):
    ok = True
    if len(losses) != len(other_losses):
        print(f"MISMATCH: {len(losses)} steps against {len(other_losses)}")
        return False
    for step, (a, b) in enumerate(zip(losses, other_losses)):
        # Both finite, and written so that NaN is a mismatch.
        if not (math.isfinite(a) and math.isfinite(b)
                and abs(a - b) <= TOLERANCE * abs(b)):
            print(f"MISMATCH: step {step}: loss {a} against {b}")
            ok = False
    if ok:
        print(f"losses agree to {TOLERANCE_TEXT} at all {len(losses)} steps")
    if sorted(params) != sorted(other_params):
        print(f"MISMATCH: parameters {sorted(params)} against {sorted(other_params)}")
        return False
    agreeing = 0
    for name in sorted(params):
        a, b = params[name], other_params[name]
        if a.shape != b.shape:
            print(f"MISMATCH: {name}: shape {a.shape} against {b.shape}")
            ok = False
            continue
        error = np.max(np.abs(a - b))
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))
                and error <= TOLERANCE * np.max(np.abs(b))):
            print(f"MISMATCH: {name}: largest difference {error}")
            ok = False
        else:
            agreeing += 1
    if agreeing == len(params):
        print(f"all {len(params)} parameters agree to {TOLERANCE_TEXT}: "
              f"{', '.join(sorted(params))}" if len(params) <= 4 else
              f"all {len(params)} parameters agree to {TOLERANCE_TEXT}")
    return ok


def main(argv):
    global TOLERANCE, TOLERANCE_TEXT
    if argv[1] == "--tolerance":
        TOLERANCE_TEXT = argv[2]
        TOLERANCE = float(TOLERANCE_TEXT)
        argv = argv[:1] + argv[3:]
    if argv[1] == "numpy":
        model = parse_model(argv[2])
        losses, params = train(model, int(argv[3]))
        if losses[-1] >= losses[0]:
            print(f"MISMATCH: the reference loss does not fall: {losses}")
            return 1
        ok = compare(read_losses(argv[4]), read_params(argv[5]), losses, params)
    elif argv[1] == "sdpipe":
        losses, params = train_sdpipe(parse_model(argv[2]), int(argv[3]))
        if losses[-1] >= losses[0]:
            print(f"MISMATCH: the reference loss does not fall: {losses}")
            return 1
        ok = compare(read_losses(argv[4]), read_params(argv[5]), losses, params)
    else:
        ok = compare(read_losses(argv[2]), read_params(argv[3]),
                     read_losses(argv[4]), read_params(argv[5]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
