#!/usr/bin/env python3
"""Small PyTorch models exported to ONNX for hetero-import-onnx.

  tiny-lm      a 2-layer pre-LN transformer language model over character
               ids that computes its own loss: forward(ids, targets) is the
               mean next-token cross-entropy (import with --loss none)
  mlp-regress  a 2-layer MLP regressor (import with --loss mse)
  mlp-classify a 2-layer MLP classifier returning logits (import with
               --loss cross-entropy)

  python3 examples/onnx/export.py OUT_DIR [--opset 17] [--batch 4] [--hidden 32]
                                  [--seq 16]

writes OUT_DIR/<model>.onnx for each model and, for the two MLPs, a small
data set OUT_DIR/<model>/x.npy and y.npy (hetero-import-onnx --data npy:DIR).
The models are built from torch.manual_seed(0), so the files are the same on
every run. docs/import.md walks through exporting, importing and training.
"""

import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """One pre-layer-norm transformer block with causal self-attention."""

    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)
        self.register_buffer("causal", torch.tril(torch.ones(seq, seq)))

    def forward(self, x):
        batch, seq, hidden = x.shape
        d = hidden // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(hidden, dim=-1)
        q = q.reshape(batch, seq, self.heads, d).transpose(1, 2)
        k = k.reshape(batch, seq, self.heads, d).transpose(1, 2)
        v = v.reshape(batch, seq, self.heads, d).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / (d**0.5)
        scores = scores.masked_fill(self.causal == 0, float("-inf"))
        context = F.softmax(scores, dim=-1) @ v
        context = context.transpose(1, 2).reshape(batch, seq, hidden)
        x = x + self.proj(context)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyLM(nn.Module):
    """A character-level language model whose forward returns its loss."""

    def __init__(self, vocab=80, seq=16, hidden=32, heads=2, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, seq) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)
        self.register_buffer("positions", torch.arange(seq))

    def forward(self, ids, targets):
        x = self.wte(ids) + self.wpe(self.positions)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class Mlp(nn.Module):
    def __init__(self, inputs, hidden, outputs):
        super().__init__()
        self.l1 = nn.Linear(inputs, hidden)
        self.l2 = nn.Linear(hidden, outputs)

    def forward(self, x):
        return self.l2(torch.tanh(self.l1(x)))


def export(model, args, names, path, opset):
    model.eval()
    torch.onnx.export(model, args, path, input_names=names, opset_version=opset,
                      do_constant_folding=True)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--batch", type=int, default=4, help="samples per micro-batch")
    parser.add_argument("--hidden", type=int, default=32, help="the language model's width")
    parser.add_argument("--seq", type=int, default=16, help="the language model's tokens a sequence")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)

    lm = TinyLM(hidden=args.hidden, seq=args.seq)
    ids = torch.zeros(args.batch, lm.wpe.num_embeddings, dtype=torch.int64)
    export(lm, (ids, ids), ["ids", "targets"], os.path.join(args.out, "tiny-lm.onnx"), args.opset)

    rng = np.random.default_rng(0)
    regress = Mlp(6, 16, 3)
    export(regress, (torch.zeros(args.batch, 6),), ["x"],
           os.path.join(args.out, "mlp-regress.onnx"), args.opset)
    x = rng.standard_normal((20, 6)).astype(np.float32)
    y = np.stack([np.sin(x[:, 0]), x[:, 1] * x[:, 2], x[:, 3] - x[:, 4]], 1).astype(np.float32)
    save_data(os.path.join(args.out, "mlp-regress"), x, y)

    classify = Mlp(5, 12, 4)
    export(classify, (torch.zeros(args.batch, 5),), ["x"],
           os.path.join(args.out, "mlp-classify.onnx"), args.opset)
    x = rng.standard_normal((18, 5)).astype(np.float32)
    y = np.argmax(x[:, :4] + 0.5 * x[:, 4:5], 1).astype(np.int64)
    save_data(os.path.join(args.out, "mlp-classify"), x, y)


def save_data(directory, x, y):
    os.makedirs(directory, exist_ok=True)
    np.save(os.path.join(directory, "x.npy"), x)
    np.save(os.path.join(directory, "y.npy"), y)


if __name__ == "__main__":
    main()
