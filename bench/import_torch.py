"""PyTorch's own training of examples/onnx/export.py's TinyLM, on the
windows hetero-run's corpus gives the model that hetero-import-onnx made of
its export.

  import_torch.py --vocab V --seq S --hidden H --batch B --microbatches M
                  [--dp D] [--optimizer adam|sgd] [--lr R] [--iterations N]
                  [--corpus FILE] [--threads 1]

The model is built as the export script builds it (torch.manual_seed(0)),
so its initial parameters are the ONNX file's initializers. A step trains
on the sequences every replica r < D and micro-batch m < M of hetero's step
read (bench/gpt_torch.py's Corpus reproduces hetero.corpus_batch): the mean
of the micro-batches' mean losses, then one step of torch.optim.Adam with
PyTorch's defaults (hetero's #hetero.adam) or of plain torch.optim.SGD. Prints `iteration <i>: loss
<value>, <ms> ms` per step, as hetero-run does.
"""

import argparse
import os
import pathlib
import sys
import time

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples" / "onnx"))
from gpt_torch import Corpus  # noqa: E402
from export import TinyLM  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=int, default=80)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--dp", type=int, default=1)
    parser.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--corpus", default="/usr/share/common-licenses/GPL-3")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = TinyLM(vocab=args.vocab, seq=args.seq, hidden=args.hidden)
    model.train()
    optimizer = (torch.optim.Adam if args.optimizer == "adam" else torch.optim.SGD)(
        model.parameters(), lr=args.lr)
    corpus = Corpus(args.corpus, args.vocab)
    batches = [[[torch.from_numpy(a) for a in corpus.batch(
        step, r, m, args.dp, args.batch, args.seq)]
        for r in range(args.dp) for m in range(args.microbatches)]
        for step in range(args.iterations)]
    for step, microbatches in enumerate(batches):
        start = time.perf_counter()
        optimizer.zero_grad()
        total = 0.0
        for ids, targets in microbatches:
            loss = model(ids, targets) / len(microbatches)
            loss.backward()
            total += loss.item()
        optimizer.step()
        ms = (time.perf_counter() - start) * 1e3
        print(f"iteration {step}: loss {total:.6g}, {ms:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
