"""Verifiers and shape rules, one module per op family.

Each module registers its rules with ``onnx_mlir_py.registry`` when imported;
this list is the one place that imports them (one line each, easy to grep).
"""
from onnx_mlir_py.dialects.onnx.ops import elementwise  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import unary  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import reshape  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import expand_tile  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import transpose  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import concat_split  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import slice  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import gather  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import shape_ops  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import reduction  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import resize  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import pad  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import conv  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import pool  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import normalization  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import gemm  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import einsum  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import softmax  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import dropout  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import control_flow  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import sequence  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import reverse_sequence  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import loss  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import quantize  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import attention  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import recurrent  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import grid_sample  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import dft  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import col2im  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import random  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import shape_only  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import tensor_scatter  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import roi_align  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import det  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import unique  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import nms  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import strings_ml  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import tfidf  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import constant  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import cast  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import one_hot  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import selection  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import cumsum  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import depth_to_space  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import trilu  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import integer_ops  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import ml_tree  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import ml_linear  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import ml_scaling  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import ml_encoding  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import ml_features  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import ml_zipmap  # noqa: F401
from onnx_mlir_py.dialects.onnx.ops import training  # noqa: F401
