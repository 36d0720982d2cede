"""Quantized rows of the benchmark (issue #28): zoo / torch models quantized
by onnxruntime's own tools, as a user would, with random calibration data.

    resnet18_qdq, resnet50_qdq   quantize_static, QDQ, U8 activations, S8 per-channel weights
    mobilenetv2_qdq              quantize_static, QDQ, S8 activations, S8 per-channel weights
    bert_base_dq                 quantize_dynamic, S8 weights (DynamicQuantizeLinear + MatMulInteger)

Each row is timed against onnxruntime running the same quantized model (its
int8 kernels); its f32 model is the row of the base name (run both, e.g.
``--models resnet50,resnet50_qdq``)."""
from __future__ import annotations

import os
import tempfile

import numpy as np
import onnx

# name -> (base model, how it is quantized)
QUANT_MODELS = {"resnet18_qdq": ("resnet18", "qdq_u8"), "resnet50_qdq": ("resnet50", "qdq_u8"),
                "mobilenetv2_qdq": ("mobilenetv2", "qdq_s8"), "bert_base_dq": ("bert_base", "dynamic")}
CALIBRATION_BATCHES = 4


def build(name: str) -> onnx.ModelProto:
    import harness
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)
    base, how = QUANT_MODELS[name]
    model = harness.build(base)
    with tempfile.TemporaryDirectory(prefix="bench_quant_") as d:
        src, dst = os.path.join(d, "f.onnx"), os.path.join(d, "q.onnx")
        onnx.save(model, src)
        if how == "dynamic":
            quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
        else:
            feeds = [harness.feeds(base, model, seed) for seed in range(CALIBRATION_BATCHES)]

            class Reader(CalibrationDataReader):
                def __init__(self):
                    self.it = iter(feeds)

                def get_next(self):
                    return next(self.it, None)
            act = QuantType.QUInt8 if how == "qdq_u8" else QuantType.QInt8
            quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                            activation_type=act, weight_type=QuantType.QInt8)
        return onnx.load(dst)


def feeds(name: str, model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    import harness
    base = QUANT_MODELS[name][0]
    return harness.feeds(base, model, seed)
