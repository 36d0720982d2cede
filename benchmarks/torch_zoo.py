"""The benchmark's real-sized models written as plain torch modules and
exported by ``torch.onnx.export`` (the TorchScript exporter, opset 17, static
shapes, BatchNorm folded into the convs as for a deployed model). Seeded
random weights, no downloads.

    resnet50         ResNet-50 (bottlenecks [3, 4, 6, 3], stride in the 3x3), 1x3x224x224
    text_cnn         1-D conv byte classifier: Embedding(256, 64), 4 Conv1d, 4 x 1024 bytes
    lstm_bB_tT       2-layer LSTM, 128 -> 256, batch B in (2, 16), T in (20, 100) steps
    gru_bB_tT        bidirectional GRU, 128 -> 256, the same batches and steps
    vit_tiny         ViT-Ti/16: d 192, 3 heads, 12 layers, 1x3x224x224
    bert_base        BERT-base encoder: int64 ids [1, 128] + int64 attention mask, 12 layers
    gpt2_small       GPT-2-small-sized decoder: 12 layers, d 768, vocab 50257, seq 64 (124 M)
    yolo             YOLOv5n-style detector (SiLU, C3 / SPPF Concats, nearest Resize x2), 640
    efficientnet_b0  EfficientNet-B0 (MBConv + squeeze-excitation, SiLU, transformers'
                     AvgPool2d(1280, ceil_mode) pooler), 1x3x224x224; ``export_dynamic``
                     writes it with dynamic batch, H and W (compile_time's efficientnet_dyn)

``export(name, path)`` writes one; ``feeds(name)`` makes its inputs.
Requires torch (the ``bench`` extra).
"""
from __future__ import annotations

import contextlib
import io
import math
import warnings

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

from onnx_mlir_py.testing.torch_models import BertEncoder, GPTDecoder, TinyViT, seeded

OPSET = 17


# ---------------------------------------------------------------- ResNet-50
def _conv_bn(cin, cout, k, stride=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU()) if act else nn.Sequential(*layers)


class Bottleneck(nn.Module):
    def __init__(self, cin: int, mid: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(_conv_bn(cin, mid, 1), _conv_bn(mid, mid, 3, stride),
                                  _conv_bn(mid, 4 * mid, 1, act=False))
        self.down = (_conv_bn(cin, 4 * mid, 1, stride, act=False)
                     if stride != 1 or cin != 4 * mid else None)

    def forward(self, x):
        return F.relu(self.body(x) + (x if self.down is None else self.down(x)))


class ResNet50(nn.Module):
    def __init__(self, classes: int = 1000):
        super().__init__()
        blocks, cin = [], 64
        for mid, n, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(n):
                blocks.append(Bottleneck(cin, mid, stride if i == 0 else 1))
                cin = 4 * mid
        self.stem = nn.Sequential(_conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1))
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(2048, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


# ---------------------------------------------------------------- 1-D conv text classifier
class ByteCNN(nn.Module):
    """Bytes -> Embedding -> Conv1d(k7)/ReLU/MaxPool(3) x2 -> Conv1d(k3)/ReLU x2
    -> max over time -> Linear/ReLU -> Linear (4 classes)."""

    def __init__(self, d: int = 64, filters: int = 256, classes: int = 4):
        super().__init__()
        self.emb = nn.Embedding(256, d)
        self.convs = nn.ModuleList([nn.Conv1d(d, filters, 7, padding=3),
                                    nn.Conv1d(filters, filters, 7, padding=3),
                                    nn.Conv1d(filters, filters, 3, padding=1),
                                    nn.Conv1d(filters, filters, 3, padding=1)])
        self.fc1, self.fc2 = nn.Linear(filters, filters), nn.Linear(filters, classes)

    def forward(self, ids):
        x = self.emb(ids).transpose(1, 2)
        for i, conv in enumerate(self.convs):
            x = F.relu(conv(x))
            if i < 2:
                x = F.max_pool1d(x, 3)
        return self.fc2(F.relu(self.fc1(x.max(dim=2).values)))


# ---------------------------------------------------------------- recurrent
class LSTM2(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(128, 256, num_layers=2)

    def forward(self, x):
        return self.rnn(x)[0]


class BiGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(128, 256, bidirectional=True)

    def forward(self, x):
        return self.rnn(x)[0]


# ---------------------------------------------------------------- YOLO-style detector
def _cbs(cin, cout, k=1, s=1, p=None):
    """Conv + BN + SiLU."""
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2 if p is None else p, bias=False),
                         nn.BatchNorm2d(cout), nn.SiLU())


class _Residual(nn.Module):
    def __init__(self, c: int, shortcut: bool):
        super().__init__()
        self.cv1, self.cv2, self.add = _cbs(c, c, 1), _cbs(c, c, 3), shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(nn.Module):
    def __init__(self, cin: int, cout: int, n: int = 1, shortcut: bool = True):
        super().__init__()
        c = cout // 2
        self.cv1, self.cv2, self.cv3 = _cbs(cin, c), _cbs(cin, c), _cbs(2 * c, cout)
        self.m = nn.Sequential(*(_Residual(c, shortcut) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], 1))


class SPPF(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.cv1, self.cv2 = _cbs(cin, cin // 2), _cbs(2 * cin, cout)

    def forward(self, x):
        x = self.cv1(x)
        y1 = F.max_pool2d(x, 5, 1, 2)
        y2 = F.max_pool2d(y1, 5, 1, 2)
        return self.cv2(torch.cat([x, y1, y2, F.max_pool2d(y2, 5, 1, 2)], 1))


class Yolo(nn.Module):
    """YOLOv5n layout (width 0.25, depth 0.33): backbone, SPPF, PAN head with
    nearest x2 upsampling, 1x1 detect convs (3 anchors x 85) at strides 8/16/32."""

    def __init__(self, outs: int = 255):
        super().__init__()
        self.b1 = nn.Sequential(_cbs(3, 16, 6, 2, 2), _cbs(16, 32, 3, 2), C3(32, 32, 1),
                                _cbs(32, 64, 3, 2), C3(64, 64, 2))             # P3
        self.b2 = nn.Sequential(_cbs(64, 128, 3, 2), C3(128, 128, 3))          # P4
        self.b3 = nn.Sequential(_cbs(128, 256, 3, 2), C3(256, 256, 1), SPPF(256, 256))
        self.h10, self.h13 = _cbs(256, 128), C3(256, 128, 1, False)
        self.h14, self.h17 = _cbs(128, 64), C3(128, 64, 1, False)
        self.h18, self.h20 = _cbs(64, 64, 3, 2), C3(128, 128, 1, False)
        self.h21, self.h23 = _cbs(128, 128, 3, 2), C3(256, 256, 1, False)
        self.detect = nn.ModuleList(nn.Conv2d(c, outs, 1) for c in (64, 128, 256))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        p3 = self.b1(x)
        p4 = self.b2(p3)
        p5 = self.h10(self.b3(p4))
        t = self.h14(self.h13(torch.cat([self.up(p5), p4], 1)))
        o3 = self.h17(torch.cat([self.up(t), p3], 1))
        o4 = self.h20(torch.cat([self.h18(o3), t], 1))
        o5 = self.h23(torch.cat([self.h21(o4), p5], 1))
        return tuple(d(o) for d, o in zip(self.detect, (o3, o4, o5)))


# ---------------------------------------------------------------- EfficientNet-B0
# (expand ratio, kernel, stride, in channels, out channels, repeats) per stage
EFFNET_B0 = ((1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2),
             (6, 3, 2, 40, 80, 3), (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4),
             (6, 3, 1, 192, 320, 1))


def _round8(c: float) -> int:
    """Channels scaled by a width multiplier, rounded to a multiple of 8 (not below 90 %)."""
    r = max(8, int(c + 4) // 8 * 8)
    return r + 8 if r < 0.9 * c else r


class MBConv(nn.Module):
    """Expand 1x1 (+BN+SiLU), depthwise kxk with stride (+BN+SiLU), squeeze-excitation
    (global average, 1x1 reduce to in/4, SiLU, 1x1 expand, Sigmoid, Mul), project 1x1
    (+BN), residual when the shape is kept."""

    def __init__(self, cin: int, cout: int, expand: int, k: int, stride: int):
        super().__init__()
        mid = cin * expand
        self.expand = _cbs(cin, mid) if expand != 1 else nn.Identity()
        self.dw = nn.Sequential(nn.Conv2d(mid, mid, k, stride, k // 2, groups=mid, bias=False),
                                nn.BatchNorm2d(mid), nn.SiLU())
        sq = max(1, cin // 4)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(mid, sq, 1), nn.SiLU(),
                                nn.Conv2d(sq, mid, 1), nn.Sigmoid())
        self.project = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        h = self.dw(self.expand(x))
        h = self.project(h * self.se(h))
        return x + h if self.residual else h


class EfficientNet(nn.Module):
    """EfficientNet-B0 layout: stem 3x3 s2 conv + BN + SiLU, the MBConv stages of
    ``EFFNET_B0`` (channels times ``width``, repeats ceil(times ``depth``)), head 1x1
    conv to 1280 + BN + SiLU, the pooler as transformers writes it (AvgPool2d with a
    kernel of 1280 and ceil_mode: one window over the whole map), Linear."""

    def __init__(self, width: float = 1.0, depth: float = 1.0, classes: int = 1000,
                 stages=EFFNET_B0, head: int = 1280):
        super().__init__()
        stem = _round8(32 * width)
        self.stem = _cbs(3, stem, 3, 2)
        blocks, cin = [], stem
        for expand, k, stride, _, cout, n in stages:
            cout = _round8(cout * width)
            for i in range(math.ceil(n * depth)):
                blocks.append(MBConv(cin, cout, expand, k, stride if i == 0 else 1))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.head = _cbs(cin, head)
        self.pool = nn.AvgPool2d(head, ceil_mode=True)
        self.fc = nn.Linear(head, classes)

    def forward(self, x):
        x = self.pool(self.head(self.blocks(self.stem(x))))
        return self.fc(torch.flatten(x, 1))


# ---------------------------------------------------------------- the set
def _image(size=224):
    return lambda rng: {"x": rng.standard_normal((1, 3, size, size)).astype(np.float32)}


def _seq(batch, steps):
    return lambda rng: {"x": rng.standard_normal((steps, batch, 128)).astype(np.float32)}


def _bert_feeds(rng):
    ids = rng.integers(0, 30522, (1, 128)).astype(np.int64)
    mask = np.ones_like(ids)
    mask[:, 112:] = 0                     # 16 padding positions
    return {"input_ids": ids, "attention_mask": mask}


# name -> (module factory, feeds(rng) -> {input name: array})
MODELS = {
    "resnet50": (ResNet50, _image()),
    "text_cnn": (ByteCNN, lambda rng: {"ids": rng.integers(0, 256, (4, 1024)).astype(np.int64)}),
    **{f"lstm_b{b}_t{t}": (LSTM2, _seq(b, t)) for b in (2, 16) for t in (20, 100)},
    **{f"gru_b{b}_t{t}": (BiGRU, _seq(b, t)) for b in (2, 16) for t in (20, 100)},
    "vit_tiny": (lambda: TinyViT(d=192, heads=3, layers=12, classes=1000, image=224,
                                 patch=16, ff=768), _image()),
    "bert_base": (lambda: BertEncoder(d=768, heads=12, layers=12, max_pos=512, vocab=30522,
                                      ff=3072), _bert_feeds),
    "gpt2_small": (lambda: GPTDecoder(d=768, heads=12, layers=12, max_pos=1024, vocab=50257,
                                      ff=3072),
                   lambda rng: {"input_ids": rng.integers(0, 50257, (1, 64)).astype(np.int64)}),
    "yolo": (Yolo, _image(640)),
    "efficientnet_b0": (EfficientNet, _image()),
}


def build(name: str) -> nn.Module:
    """The module with weights seeded by its name, BatchNorm statistics
    randomised (so folding them is not the identity), in eval mode."""
    return seeded(name, MODELS[name][0])


def feeds(name: str, seed: int = 0) -> dict[str, np.ndarray]:
    return MODELS[name][1](np.random.default_rng(seed))


def export(name: str, path: str) -> str:
    """Export ``name`` with static shapes to ``path`` (opset 17)."""
    inputs = feeds(name)
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    model = build(name)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, dynamo=False, opset_version=OPSET,
                          input_names=list(inputs), do_constant_folding=True)
    return path


def export_dynamic(name: str, path: str, axes: dict[int, str] | None = None) -> str:
    """Export ``name`` (one image input ``x``) to ``path`` with the input's and the
    output's ``axes`` (default batch, H and W: ``{0: "N", 2: "H", 3: "W"}``)
    dynamic; the output keeps only the batch axis's name."""
    axes = axes or {0: "N", 2: "H", 3: "W"}
    inputs = feeds(name)
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    out_axes = {0: axes[0]} if 0 in axes else {}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(build(name), args, path, dynamo=False, opset_version=OPSET,
                          input_names=list(inputs), output_names=["y"],
                          dynamic_axes={**{n: axes for n in inputs}, "y": out_axes},
                          do_constant_folding=True)
    return path
