#!/usr/bin/python3
"""The same five models as gbasim's models_bench, built in PyTorch, timed the same way.

One training step = forward, backward, optimizer step on one batch, on one thread.
Sizes match gbasim's defaults: 26 fields with 10 to 10^5 values (log-spaced), 13 dense
features, embedding dimension 16, MLP 128-64 (DLRM: bottom 64-16, top 128-64-1 over the
dot interaction). Embeddings are sparse (nn.Embedding(sparse=True)) and updated by
SparseAdam, dense parameters by Adam, learning rate 1e-3: gbasim's lazy Adam.

Written as a PyTorch user would write it for speed: the 26 fields' tables are one fused
table (DLRM's and TorchRec's layout: a field's ids are offset by the sizes of the tables
before it, and one lookup gathers the whole batch), likewise the first-order weights. Each
case is timed eagerly and as a TorchScript module (torch.jit.script), and the faster of the
two is reported (`variant` in the JSON). --per-field-tables times the earlier peer (one
nn.Embedding a field) instead.

Usage: torch_peer.py [--json FILE] [--min-time SECONDS] [--per-field-tables]
"""
import argparse
import json
import os
import time

import torch
from torch import nn

FIELDS, DENSE, DIM = 26, 13, 16
CARDS = [round(10 * (1e5 / 10) ** (f / (FIELDS - 1))) for f in range(FIELDS)]
OFFSETS = [sum(CARDS[:f]) for f in range(FIELDS)]


def mlp(widths, relu_last=False):
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i + 2 < len(widths) or relu_last:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class Ctr(nn.Module):
    """The five models' shared part; a subclass holds the tables (first_order, embed)."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind
        self.wide = kind in ("lr", "fm", "deepfm", "widedeep")
        self.fm = kind in ("fm", "deepfm")
        self.deep = kind in ("deepfm", "widedeep")
        self.dlrm = kind == "dlrm"
        self.bias = nn.Parameter(torch.zeros(1))
        self.dense_weight = nn.Linear(DENSE, 1, bias=False)
        self.mlp = mlp([FIELDS * DIM + DENSE if self.deep else 1, 128, 64, 1])
        n = FIELDS + 1
        self.bottom = mlp([DENSE, 64, DIM], relu_last=True)
        self.top = mlp([DIM + n * (n - 1) // 2, 128, 64, 1])
        tri = torch.tril_indices(n, n, offset=-1)
        self.register_buffer("tri_i", tri[0].clone())
        self.register_buffer("tri_j", tri[1].clone())

    def forward(self, ids: torch.Tensor, dense: torch.Tensor) -> torch.Tensor:
        logit = self.bias.expand(ids.shape[0])
        if self.wide:
            logit = logit + self.first_order(ids) + self.dense_weight(dense).squeeze(1)
        if self.kind == "lr":
            return logit
        e = self.embed(ids)  # b x F x k
        if self.fm:
            s = e.sum(1)
            logit = logit + 0.5 * (s.pow(2).sum(1) - e.pow(2).sum((1, 2)))
        if self.deep:
            logit = logit + self.mlp(torch.cat([e.flatten(1), dense], 1)).squeeze(1)
        if self.dlrm:
            xb = self.bottom(dense)
            z = torch.cat([xb.unsqueeze(1), e], 1)
            gram = torch.bmm(z, z.transpose(1, 2))
            dots = gram[:, self.tri_i, self.tri_j]
            logit = logit + self.top(torch.cat([xb, dots], 1)).squeeze(1)
        return logit


class PerFieldCtr(Ctr):
    """One nn.Embedding a field (the earlier peer)."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.first = nn.ModuleList(nn.Embedding(c, 1, sparse=True) for c in CARDS)
        self.emb = nn.ModuleList(nn.Embedding(c, DIM, sparse=True) for c in CARDS)

    def first_order(self, ids):
        return sum(t(ids[:, f]).squeeze(1) for f, t in enumerate(self.first))

    def embed(self, ids):
        return torch.stack([t(ids[:, f]) for f, t in enumerate(self.emb)], dim=1)


class FusedCtr(Ctr):
    """One table for all fields' embeddings and one for their first-order weights."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.register_buffer("offsets", torch.tensor(OFFSETS).unsqueeze(0))
        self.first = nn.Embedding(sum(CARDS), 1, sparse=True)
        self.emb = nn.Embedding(sum(CARDS), DIM, sparse=True)

    # A field's ids, offset by the sizes of the tables before it, are rows of the fused table.
    def first_order(self, ids: torch.Tensor) -> torch.Tensor:
        return self.first(ids + self.offsets).sum((1, 2))

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.emb(ids + self.offsets)


def time_model(kind, batch, min_time, fused=True, script=False):
    torch.manual_seed(1)
    model = FusedCtr(kind) if fused else PerFieldCtr(kind)
    sparse = [p for n, p in model.named_parameters() if n.startswith(("first", "emb"))]
    dense = [p for n, p in model.named_parameters() if not n.startswith(("first", "emb"))]
    if script:
        model = torch.jit.script(model)
    opts = [torch.optim.Adam(dense, lr=1e-3), torch.optim.SparseAdam(sparse, lr=1e-3)]
    loss_fn = nn.BCEWithLogitsLoss()
    batches = []
    for _ in range(16):
        ids = torch.stack([torch.randint(0, c, (batch,)) for c in CARDS], 1)
        batches.append((ids, torch.randn(batch, DENSE), torch.randint(0, 2, (batch,)).float()))

    def step(i):
        ids, x, y = batches[i % len(batches)]
        for o in opts:
            o.zero_grad(set_to_none=True)
        loss_fn(model(ids, x), y).backward()
        for o in opts:
            o.step()

    for i in range(3):
        step(i)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < min_time:
        step(steps)
        steps += 1
    return steps * batch / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write {model: {batch: samples_per_s}} here")
    parser.add_argument("--min-time", type=float, default=2.0, help="seconds to time each case")
    parser.add_argument("--per-field-tables", action="store_true",
                        help="the earlier peer: one nn.Embedding a field, eager only")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results, variants = {}, {}
    for kind in ["lr", "fm", "deepfm", "widedeep", "dlrm"]:
        for batch in [256, 4096]:
            if args.per_field_tables:
                tried = {"per-field tables": time_model(kind, batch, args.min_time, fused=False)}
            else:
                tried = {"fused table": time_model(kind, batch, args.min_time),
                         "fused table, TorchScript":
                             time_model(kind, batch, args.min_time, script=True)}
            variant = max(tried, key=tried.get)
            results.setdefault(kind, {})[str(batch)] = tried[variant]
            variants.setdefault(kind, {})[str(batch)] = variant
            shown = ", ".join(f"{name} {rate:.0f}" for name, rate in tried.items())
            print(f"torch {kind:9s} b={batch:5d}: {shown} samples/s", flush=True)
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump({"torch_version": torch.__version__, "samples_per_s": results,
                       "variant": variants}, f, indent=2)
        os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
