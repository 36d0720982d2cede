# RUN: %python %s %t.onnx
# RUN: %onnx-mlir-py %t.onnx -O3 --precision bf16 --mcpu sapphirerapids --print-kernel-plan -o %t | FileCheck %s
# RUN: %onnx-mlir-py %t.onnx -O3 --precision bf16 --mcpu znver4 --print-kernel-plan -o %t.zen4 | FileCheck %s --check-prefix=ZEN4
# The -O3 kernel plan of com.microsoft.NhwcConv under --precision bf16: one
# line per conv, the AMX kernel on Sapphire Rapids (the 1x1 conv's pixels as A,
# the 3x3's im2col), none on Zen 4 (no AMX: the linalg conv).
# CHECK: kernel plan for x86-64-v4 (sapphirerapids), 2 ops
# CHECK: y1 {{.*}}conv_2d_nhwc_fhwc {{.*}}1x8x8x64 * 32x1x1x64 -> 1x8x8x32 {{.*}}amx_conv_bf16 {{.*}}bf16 conv: 1x1: the NHWC pixels as A, AMX tdpbf16ps, NHWC rows out
# CHECK: y2 {{.*}}conv_2d_nhwc_fhwc {{.*}}1x10x10x32 * 16x3x3x32 -> 1x8x8x16 {{.*}}amx_conv_bf16 {{.*}}bf16 conv: NHWC input, im2col per 32 pixels
# ZEN4: y1 {{.*}}conv_2d_nhwc_fhwc {{.*}} linalg
# ZEN4: y2 {{.*}}conv_2d_nhwc_fhwc {{.*}} linalg
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)
w1 = nh.from_array(rng.standard_normal((32, 64, 1, 1)).astype(np.float32), "w1")
w2 = nh.from_array(rng.standard_normal((16, 32, 3, 3)).astype(np.float32), "w2")
b2 = nh.from_array(rng.standard_normal(16).astype(np.float32), "b2")
nodes = [h.make_node("NhwcConv", ["x", "w1"], ["y1"], domain="com.microsoft", name="y1"),
         h.make_node("Relu", ["y1"], ["r1"]),
         h.make_node("NhwcConv", ["r1", "w2", "b2"], ["y2"], domain="com.microsoft", name="y2",
                     pads=[1, 1, 1, 1])]
g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 8, 64])],
                 [h.make_tensor_value_info("y2", T.FLOAT, None)], [w1, w2, b2])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)]),
          sys.argv[1])
