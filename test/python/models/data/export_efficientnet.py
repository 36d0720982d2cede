"""The small EfficientNet of test_efficientnet_dyn.py, exported once.

    python test/python/models/data/export_efficientnet.py [--out DIR]

writes ``efficientnet/efficientnet_dyn.onnx`` (or DIR/efficientnet_dyn.onnx; a
folder of its own: test_torch_exports.py checks that this folder's .onnx files
are export_torch_models.py's): benchmarks/
torch_zoo.py's EfficientNet (stem 3x3/2 conv + BN + SiLU, MBConv blocks with
expand 1x1, depthwise 3x3 / 5x5 with strides, squeeze-excitation, project
1x1 and residuals, head 1x1 conv, transformers' AvgPool2d(head, ceil_mode)
pooler, Linear) narrowed to width 0.125, expand ratio 3, one block per stage, head 32,
10 classes, seeded random weights, BatchNorm statistics randomised, eval
mode; exported by the legacy TorchScript exporter (opset 17, BatchNorm
folded) at 1x3x32x32 with batch, H and W dynamic. Needs torch (the
``[export]`` extra); the test needs only the committed file.
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FOLDER = os.path.join(HERE, "efficientnet")
NAME = "efficientnet_dyn.onnx"


def export(out: str) -> str:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "benchmarks"))
    import torch_zoo
    # B0's stages (kernels, strides, repeats) with expand ratio 3 instead of 6
    STAGES = tuple((min(e, 3), k, st, ci, co, n) for e, k, st, ci, co, n in torch_zoo.EFFNET_B0)
    torch_zoo.MODELS["efficientnet_small"] = (
        lambda: torch_zoo.EfficientNet(width=0.125, depth=0.25, classes=10, head=32,
                                       stages=STAGES),
        torch_zoo._image(32))
    path = os.path.join(out, NAME)
    return torch_zoo.export_dynamic("efficientnet_small", path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=FOLDER)
    args = ap.parse_args(argv)
    print(export(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
