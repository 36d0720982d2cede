"""Small plain-torch models (seeded random weights, no downloads) exported to
ONNX by torch's own exporters: the legacy TorchScript exporter
(``dynamo=False, dynamic_axes=...``) and the dynamo exporter
(``dynamo=True, dynamic_shapes=...``).

Each model is a few layers of the architecture it stands for, so that it
compiles in seconds while its exported graph carries what the real one
carries: ``Shape -> Gather -> Concat -> Reshape`` chains, ``Range`` position
ids, causal masks built from the sequence length, ``Expand`` of a class
token, recurrent ops with a dynamic batch and time.

``CASES`` maps a case name to a :class:`Case`; :func:`export` writes one
case with one exporter and returns the path. Requires ``torch`` (and
``onnxscript`` for the dynamo exporter): the ``test`` extra.
"""
from __future__ import annotations

import contextlib
import io
import logging
import os
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

EXPORTERS = ("legacy", "dynamo")
LEGACY_OPSET = 17
DYNAMO_OPSET = 18
VOCAB = 97


# ---------------------------------------------------------------- CNNs

class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNetCNN(nn.Module):
    """conv-BN-ReLU stem, MaxPool, two BasicBlocks (one strided with a 1x1
    downsample), global average pool, Linear."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


class SqueezeExcite(nn.Module):
    def __init__(self, c: int, r: int = 4):
        super().__init__()
        self.fc1 = nn.Conv2d(c, c // r, 1)
        self.fc2 = nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))


class InvertedResidual(nn.Module):
    """MobileNetV3 bneck: 1x1 expand, depthwise kxk, squeeze-excite, 1x1 project."""

    def __init__(self, cin: int, exp: int, cout: int, k: int, stride: int):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(cin, exp, 1, bias=False), nn.BatchNorm2d(exp),
                                    nn.Hardswish())
        self.dw = nn.Sequential(nn.Conv2d(exp, exp, k, stride, k // 2, groups=exp, bias=False),
                                nn.BatchNorm2d(exp), nn.Hardswish())
        self.se = SqueezeExcite(exp)
        self.project = nn.Sequential(nn.Conv2d(exp, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.se(self.dw(self.expand(x))))
        return x + y if self.residual else y


class MobileNetV3(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.Hardswish())
        self.blocks = nn.Sequential(InvertedResidual(8, 16, 8, 3, 1),
                                    InvertedResidual(8, 24, 16, 5, 2),
                                    InvertedResidual(16, 32, 16, 3, 1))
        self.head = nn.Sequential(nn.Conv2d(16, 32, 1), nn.Hardswish())
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class TextCNN(nn.Module):
    """Embedding -> Conv1d -> ReLU -> max over time -> Linear."""

    def __init__(self, d: int = 16, filters: int = 24, classes: int = 4):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d)
        self.conv = nn.Conv1d(d, filters, 3, padding=1)
        self.fc = nn.Linear(filters, classes)

    def forward(self, ids):
        x = self.emb(ids).transpose(1, 2)
        x = F.relu(self.conv(x))
        return self.fc(x.max(dim=2).values)


# ---------------------------------------------------------------- transformers

class SelfAttention(nn.Module):
    """Multi-head attention written the way HF models write it: view to
    (B, S, H, Dh), transpose, scaled scores + additive mask, softmax."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.h, self.dh).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / (self.dh ** 0.5)
        if mask is not None:
            scores = scores + mask
        y = torch.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, s, d))


class EncoderLayer(nn.Module):
    """Post-LN (BERT) or pre-LN (GPT, ViT) transformer layer with a GELU MLP."""

    def __init__(self, d: int, heads: int, pre_ln: bool, ff: int | None = None):
        super().__init__()
        ff = ff or 2 * d
        self.attn = SelfAttention(d, heads)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))
        self.pre_ln = pre_ln

    def forward(self, x, mask=None):
        if self.pre_ln:
            x = x + self.attn(self.ln1(x), mask)
            return x + self.mlp(self.ln2(x))
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.mlp(x))


class BertEncoder(nn.Module):
    """Word + position embeddings (position ids from arange(seq)), LayerNorm,
    2 post-LN layers; the int64 attention mask becomes an additive mask."""

    def __init__(self, d: int = 32, heads: int = 4, layers: int = 2, max_pos: int = 64,
                 vocab: int = VOCAB, ff: int | None = None):
        super().__init__()
        self.words = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList(EncoderLayer(d, heads, pre_ln=False, ff=ff)
                                    for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.ln(self.words(input_ids) + self.pos(pos))
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x


class GPTDecoder(nn.Module):
    """Token + position embeddings, 2 pre-LN layers under a causal mask made
    from the sequence length (triu of ones(seq, seq)), final LN, LM head."""

    def __init__(self, d: int = 32, heads: int = 4, layers: int = 2, max_pos: int = 64,
                 vocab: int = VOCAB, ff: int | None = None):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        self.layers = nn.ModuleList(EncoderLayer(d, heads, pre_ln=True, ff=ff)
                                    for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device)
        x = self.tok(input_ids) + self.pos(pos)
        causal = torch.triu(torch.ones(s, s, dtype=torch.bool, device=x.device), diagonal=1)
        mask = torch.zeros(s, s, dtype=x.dtype).masked_fill(causal, float("-inf"))
        for layer in self.layers:
            x = layer(x, mask)
        return self.head(self.ln(x))


class TinyViT(nn.Module):
    """Patch conv (4x4 on 16x16 images), class token expanded to the batch,
    learned position embedding, 2 pre-LN layers, head on the class token."""

    def __init__(self, d: int = 32, heads: int = 4, layers: int = 2, classes: int = 10,
                 image: int = 16, patch: int = 4, ff: int | None = None):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, d) * 0.02)
        self.layers = nn.ModuleList(EncoderLayer(d, heads, pre_ln=True, ff=ff)
                                    for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln(x)[:, 0])


# ---------------------------------------------------------------- recurrent

class LSTMModel(nn.Module):
    def __init__(self, d: int = 16, hidden: int = 24):
        super().__init__()
        self.rnn = nn.LSTM(d, hidden, num_layers=2, batch_first=True)
        self.fc = nn.Linear(hidden, 4)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


class BiGRUModel(nn.Module):
    def __init__(self, d: int = 16, hidden: int = 16):
        super().__init__()
        self.rnn = nn.GRU(d, hidden, batch_first=True, bidirectional=True)

    def forward(self, x):
        y, _ = self.rnn(x)
        return y


class SqueezeLast(nn.Module):
    """``x.squeeze(-1)`` of a dynamic last dim (issue #31 class 1): the
    legacy exporter writes If(shape[-1] == 1, Squeeze, Identity), whose
    branches have ranks 2 and 3."""
    def forward(self, x):
        return torch.relu(x.squeeze(-1))


class MaskedAttention(nn.Module):
    """Scores plus a mask [B, 1, M, S] whose M is dynamic (issue #31 class
    3: 1 at run time in the wheel that failed), softmax, times V; head
    size 8, its scale a constant as there."""
    def forward(self, q, k, v, mask):
        s = torch.matmul(q, k.transpose(-1, -2)) * (8 ** -0.5) + mask
        return torch.matmul(torch.softmax(s, -1), v)


# ---------------------------------------------------------------- cases

@dataclass(frozen=True)
class Case:
    """A model and its inputs: ``inputs(dims)`` makes the input arrays for
    one dims dict (e.g. ``{"batch": 2, "seq": 7}``); ``dims[0]`` is the
    export-time example, ``run_dims`` the three run-time shapes (different
    from each other and from the example); ``dynamic`` maps input name ->
    {axis: dim name}."""
    build: Callable[[], nn.Module]
    inputs: Callable[[dict, np.random.Generator], dict]
    dynamic: dict
    example: dict
    run_dims: tuple
    outputs: tuple = ("y",)


def _image(d, rng):
    shape = (d["batch"], 3, d.get("h", 32), d.get("w", 32))
    return {"x": rng.standard_normal(shape).astype(np.float32)}


def _ids(d, rng):
    return {"input_ids": rng.integers(0, VOCAB, (d["batch"], d["seq"])).astype(np.int64)}


def _bert_inputs(d, rng):
    ids = _ids(d, rng)["input_ids"]
    mask = np.ones_like(ids)
    for i in range(d["batch"]):           # right padding of a different length per row
        mask[i, d["seq"] - (i % max(d["seq"] - 1, 1)):] = 0
    return {"input_ids": ids, "attention_mask": mask}


def _seq(d, rng):
    return {"x": rng.standard_normal((d["batch"], d["seq"], 16)).astype(np.float32)}


# dynamo's Dim ranges (seq is bounded by the position embeddings)
DIM_RANGES = {"batch": {"min": 1, "max": 1024}, "seq": {"min": 1, "max": 64},
              "h": {"min": 8, "max": 1024}, "w": {"min": 8, "max": 1024}}
B = {0: "batch"}
BS = {0: "batch", 1: "seq"}
BATCHES = ({"batch": 1}, {"batch": 3}, {"batch": 5})
BATCH_SEQ = ({"batch": 1, "seq": 5}, {"batch": 3, "seq": 11}, {"batch": 4, "seq": 16})

CASES: dict[str, Case] = {
    "resnet_cnn": Case(ResNetCNN, _image, {"x": B}, {"batch": 2}, BATCHES),
    "resnet_cnn_hw": Case(ResNetCNN, _image, {"x": {0: "batch", 2: "h", 3: "w"}},
                          {"batch": 2, "h": 32, "w": 32},
                          ({"batch": 1, "h": 32, "w": 32}, {"batch": 2, "h": 24, "w": 40},
                           {"batch": 3, "h": 17, "w": 29})),
    "mobilenetv3": Case(MobileNetV3, _image, {"x": B}, {"batch": 2}, BATCHES),
    "bert_encoder": Case(BertEncoder, _bert_inputs, {"input_ids": BS, "attention_mask": BS},
                         {"batch": 2, "seq": 8}, BATCH_SEQ),
    "gpt_decoder": Case(GPTDecoder, _ids, {"input_ids": BS}, {"batch": 2, "seq": 8}, BATCH_SEQ),
    "vit": Case(TinyViT, lambda d, rng: {"x": rng.standard_normal(
        (d["batch"], 3, 16, 16)).astype(np.float32)}, {"x": B}, {"batch": 2}, BATCHES),
    "lstm": Case(LSTMModel, _seq, {"x": BS}, {"batch": 2, "seq": 8}, BATCH_SEQ),
    "bigru": Case(BiGRUModel, _seq, {"x": BS}, {"batch": 2, "seq": 8}, BATCH_SEQ),
    "text_cnn": Case(TextCNN, _ids, {"input_ids": BS}, {"batch": 2, "seq": 8}, BATCH_SEQ),
}


def build(name: str) -> nn.Module:
    """The model of case ``name`` with weights seeded by its name, in eval mode
    (BatchNorm statistics randomised too, so they are not the identity)."""
    return seeded(name, CASES[name].build)


def seeded(name: str, make) -> nn.Module:
    """``make()`` with torch seeded by ``name``, BatchNorm statistics
    randomised (so folding them is not the identity), in eval mode."""
    torch.manual_seed(sum(map(ord, name)))
    m = make()
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.2, 0.2)
    return m.eval()


def example_inputs(name: str, dims: dict | None = None, seed: int = 0) -> dict:
    case = CASES[name]
    return case.inputs(dims or case.example, np.random.default_rng(seed))


def export(name: str, exporter: str, path: str | os.PathLike) -> str:
    """Export case ``name`` with ``exporter`` ("legacy" or "dynamo") to ``path``."""
    if exporter not in EXPORTERS:
        raise ValueError(f"exporter must be one of {EXPORTERS}, got {exporter!r}")
    case = CASES[name]
    model = build(name)
    feeds = example_inputs(name)
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    names = list(feeds)
    path = os.fspath(path)
    quiet = logging.getLogger("torch.onnx._internal.exporter._registration")
    level = quiet.level
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        quiet.setLevel(logging.ERROR)     # "torchvision is not installed. Skipping ..."
        if exporter == "legacy":
            axes = {k: dict(v) for k, v in case.dynamic.items()}
            axes.update({o: {0: "batch"} for o in case.outputs})
            torch.onnx.export(model, args, path, dynamo=False, opset_version=LEGACY_OPSET,
                              input_names=names, output_names=list(case.outputs),
                              dynamic_axes=axes)
        else:
            from torch.export import Dim
            dims = {n: Dim(n, **DIM_RANGES[n])
                    for axes in case.dynamic.values() for n in axes.values()}
            shapes = tuple({a: dims[n] for a, n in case.dynamic[k].items()} for k in names)
            torch.onnx.export(model, args, path, dynamo=True, opset_version=DYNAMO_OPSET,
                              input_names=names, output_names=list(case.outputs),
                              dynamic_shapes=shapes, external_data=False,
                              verbose=False, report=False)
        quiet.setLevel(level)
    return path
