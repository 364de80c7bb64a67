"""The GPT of `hetero-gen gpt` in PyTorch, trained as hetero-run trains it.

  gpt_torch.py --params DIR --vocab V --layers L --hidden H --heads A
               --seq S --batch B --microbatches M --dp D [--lr R]
               [--corpus FILE] [--iterations N] [--save DIR] [--threads 1]

The model is lib/Models/Gpt.cpp's, op for op:

  x    = wte[ids] + wpe[position]            (hetero: a one-hot product)
  per block l (pre-layer-norm, no biases on the linears):
    a    = layer_norm(x; l<l>_ln1_g, l<l>_ln1_b, eps 1e-5)
    q|k|v = a @ l<l>_wqkv                   ([H, 3H]: columns q, k, v; head
                                             h of each is columns h d..h d+d)
    ctx  = softmax(q k^T / sqrt(d), causal) v, heads merged back
    h    = x + ctx @ l<l>_wo
    up   = layer_norm(h; l<l>_ln2_g, l<l>_ln2_b) @ l<l>_w1
    x    = h + gelu_tanh(up) @ l<l>_w2       (GELU's tanh approximation)
  loss = mean cross-entropy(layer_norm(x; lnf_g, lnf_b) @ head, next ids)

All weights are stored [in, out] and multiplied from the right, as hetero
does (no nn.Linear transposes). The parameters come from the .npy files of
`hetero-run --save DIR` (DIR/<global>.npy, e.g. after --iterations 0: the
module's initial values).

Batches: one step trains on the sequences every replica r < D and every
micro-batch m < M of hetero's step read, in the order (r, m, s), all in one
batch of D * M * B sequences; hetero.corpus_batch's windows are reproduced
exactly (runtime/Corpus.cpp, hrt_data_batch: the byte vocabulary by
frequency, replica r's contiguous shard, a splitMix64 hash of (step,
micro-batch, sequence, replica) picking each window). The loss of the whole
batch is the mean over all its tokens, which equals hetero's mean of the
micro-batches' means (they hold equally many tokens), and so do the
gradients.

Optimizer: torch.optim.Adam with hetero's defaults (betas 0.9, 0.999, eps
1e-8, bias correction, no weight decay; passes/OptimizerUpdate.cpp), lr as
hetero-gen's --lr (default 0.003).

Prints `iteration <i>: loss <value>, <ms> ms` per step, as hetero-run does
(the time: forward, backward and the optimizer step; the batches are
prepared before the first step), and with --save writes the trained
parameters as DIR/<global>.npy, as hetero-run --save does.
"""

import argparse
import math
import os
import pathlib
import sys
import time

import numpy as np

MASK = (1 << 64) - 1


def split_mix64(value):
    """hetero::splitMix64 (include/hetero/Support/Hash.h)."""
    value = (value + 0x9E3779B97F4A7C15) & MASK
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & MASK
    return value ^ (value >> 31)


class Corpus:
    """runtime/Corpus.cpp's corpus: its bytes and the token id of each."""

    def __init__(self, path, vocab):
        self.bytes = np.frombuffer(pathlib.Path(path).read_bytes(), np.uint8)
        if not 2 <= vocab <= 256:
            sys.exit(f"the vocabulary size {vocab} is not between 2 and 256")
        counts = np.bincount(self.bytes, minlength=256)
        # Byte values that occur, by decreasing count, ties by value (a
        # stable sort of the values in increasing order).
        present = [v for v in range(256) if counts[v]]
        order = sorted(present, key=lambda v: -counts[v])
        own = len(order) if len(order) <= vocab else vocab - 1
        ids = np.full(256, vocab - 1, np.int64)
        for token, value in enumerate(order[:own]):
            ids[value] = token
        self.tokens = ids[self.bytes]

    def batch(self, step, replica, microbatch, replicas, sequences, tokens):
        """hrt_data_batch: [sequences, tokens] inputs and next-token targets."""
        size = len(self.bytes)
        begin = size * replica // replicas
        end = size * (replica + 1) // replicas
        if end - begin < tokens + 1:
            sys.exit(f"the corpus ({size} bytes) is too short for windows of "
                     f"{tokens} tokens in {replicas} shards")
        windows = end - begin - tokens
        inputs = np.empty((sequences, tokens), np.int64)
        targets = np.empty((sequences, tokens), np.int64)
        for s in range(sequences):
            key = split_mix64(split_mix64(split_mix64(
                split_mix64(step) ^ microbatch) ^ s) ^ replica)
            offset = begin + key % windows
            inputs[s] = self.tokens[offset:offset + tokens]
            targets[s] = self.tokens[offset + 1:offset + tokens + 1]
        return inputs, targets


def parameter_names(layers):
    """The globals of hetero-gen's GPT (lib/Models/Gpt.cpp)."""
    names = ["wte", "wpe"]
    for l in range(layers):
        names += [f"l{l}_{n}" for n in
                  ("ln1_g", "ln1_b", "wqkv", "wo", "ln2_g", "ln2_b", "w1", "w2")]
    return names + ["lnf_g", "lnf_b", "head"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--params", required=True,
                        help="hetero-run --save directory of the initial "
                             "parameters")
    for name in ("vocab", "layers", "hidden", "heads", "seq", "batch",
                 "microbatches", "dp"):
        parser.add_argument(f"--{name}", type=int, required=True)
    parser.add_argument("--lr", type=float, default=0.003)
    parser.add_argument("--corpus", default="/usr/share/common-licenses/GPL-3")
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--save", help="write the trained parameters here")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    # BLAS (Debian's torch calls libblas: OpenBLAS) and OpenMP read these
    # when torch loads them.
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(args.threads)
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(args.threads)

    vocab, hidden, heads, seq = args.vocab, args.hidden, args.heads, args.seq
    head_dim = hidden // heads
    names = parameter_names(args.layers)
    params = {}
    for name in names:
        path = pathlib.Path(args.params) / f"{name}.npy"
        if not path.exists():
            sys.exit(f"no {path}: run hetero-run --save on the same model")
        value = np.load(path).astype(np.float32)
        params[name] = torch.tensor(value, requires_grad=True)
    expected = {"wte": (vocab, hidden), "wpe": (seq, hidden),
                "head": (hidden, vocab), "l0_wqkv": (hidden, 3 * hidden)}
    for name, shape in expected.items():
        if tuple(params[name].shape) != shape:
            sys.exit(f"{name} is {tuple(params[name].shape)}, the model "
                     f"wants {shape}: the options do not match the saved model")

    # Batches of every step, before the timed loop.
    corpus = Corpus(args.corpus, vocab)
    batches = []
    for step in range(args.iterations):
        parts = [corpus.batch(step, r, m, args.dp, args.batch, seq)
                 for r in range(args.dp) for m in range(args.microbatches)]
        batches.append((torch.from_numpy(np.concatenate([p[0] for p in parts])),
                        torch.from_numpy(np.concatenate([p[1] for p in parts]))))

    has_sdpa = hasattr(F, "scaled_dot_product_attention")
    positions = torch.arange(seq)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    scale = 1.0 / math.sqrt(head_dim)

    def layer_norm(x, prefix):
        return F.layer_norm(x, (hidden,), params[prefix + "_g"],
                            params[prefix + "_b"], 1e-5)

    def attention(q, k, v):
        if has_sdpa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scores = (q @ k.transpose(-2, -1)) * scale
        scores = scores.masked_fill(~causal, float("-inf"))
        return scores.softmax(-1) @ v

    def loss_of(ids, targets):
        sequences = ids.shape[0]
        x = F.embedding(ids, params["wte"]) + F.embedding(positions,
                                                          params["wpe"])
        for l in range(args.layers):
            p = f"l{l}_"
            qkv = layer_norm(x, p + "ln1") @ params[p + "wqkv"]
            q, k, v = (t.reshape(sequences, seq, heads, head_dim).transpose(1, 2)
                       for t in qkv.split(hidden, dim=-1))
            context = attention(q, k, v).transpose(1, 2).reshape(
                sequences, seq, hidden)
            h = x + context @ params[p + "wo"]
            up = layer_norm(h, p + "ln2") @ params[p + "w1"]
            x = h + F.gelu(up, approximate="tanh") @ params[p + "w2"]
        logits = layer_norm(x, "lnf") @ params["head"]
        return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))

    optimizer = torch.optim.Adam([params[n] for n in names], lr=args.lr,
                                 betas=(0.9, 0.999), eps=1e-8)
    for step, (ids, targets) in enumerate(batches):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(ids, targets)
        loss.backward()
        optimizer.step()
        value = loss.item()
        milliseconds = (time.perf_counter() - start) * 1e3
        print(f"iteration {step}: loss {value:.9g}, {milliseconds:.3f} ms",
              flush=True)

    if args.save:
        os.makedirs(args.save, exist_ok=True)
        for name in names:
            np.save(pathlib.Path(args.save) / f"{name}.npy",
                    params[name].detach().numpy())


if __name__ == "__main__":
    main()
