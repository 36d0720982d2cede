"""ONNX dialect -> upstream MLIR (linalg/tensor/arith/math), ``lower-to-linalg``.

One module per op family; each registers ``@lowering(op_type, *versions)``
rules when imported (one import line per family, easy to grep).
"""
from . import constant  # noqa: F401
from . import elementwise  # noqa: F401
from . import gemm  # noqa: F401
from . import conv  # noqa: F401
from . import pool  # noqa: F401
from . import softmax  # noqa: F401
from . import reshape  # noqa: F401
from . import normalization  # noqa: F401
from .driver import lower_to_linalg  # noqa: F401

__all__ = ["lower_to_linalg"]
