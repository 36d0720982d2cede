"""ONNX dialect -> upstream MLIR (linalg/tensor/arith/math), ``lower-to-linalg``.

One module per op family; each registers ``@lowering(op_type, *versions)``
rules when imported (one import line per family, easy to grep).
"""
from onnx_mlir_py.passes.onnx_to_linalg import constant  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import elementwise  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import unary  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import gemm  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import einsum  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import grid_sample  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import dft  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import col2im  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import random  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import conv  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import pool  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import softmax  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import attention  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import reshape  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import normalization  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import concat_split  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import slice  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import gather  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import shape_ops  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import expand_tile  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import reduction  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import cumsum  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import dropout  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import control_flow  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import sequence  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import reverse_sequence  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import tensor_scatter  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import selection  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import pad  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import resize  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import integer_ops  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import recurrent  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import quantize  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import depth_to_space  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import one_hot  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import unique  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import nms  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import transpose  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import trilu  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import det  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import roi_align  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import cast  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ml_tree  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ml_linear  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ml_scaling  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ml_encoding  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ml_features  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ml_zipmap  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import strings_ml  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import tfidf  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import training  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg.driver import lower_to_linalg  # noqa: F401

__all__ = ["lower_to_linalg"]
from onnx_mlir_py.passes.onnx_to_linalg import ms_fused  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ms_activation  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import qlinear  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ms_normalization  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ms_quant_matmul  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ms_attention  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ms_rotary  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ms_recurrent  # noqa: F401
from onnx_mlir_py.passes.onnx_to_linalg import ms_embedding  # noqa: F401
