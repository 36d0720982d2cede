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
from . import concat_split  # noqa: F401
from . import slice  # noqa: F401
from . import gather  # noqa: F401
from . import shape_ops  # noqa: F401
from . import expand_tile  # noqa: F401
from . import reduction  # noqa: F401
from . import arg_cumsum  # noqa: F401
from . import dropout  # noqa: F401
from . import control_flow  # noqa: F401
from . import indexing  # noqa: F401
from . import selection  # noqa: F401
from . import pad  # noqa: F401
from . import unary_math  # noqa: F401
from . import resize  # noqa: F401
from . import integer_ops  # noqa: F401
from . import rnn  # noqa: F401
from . import quantize  # noqa: F401
from . import norms  # noqa: F401
from . import depth_to_space  # noqa: F401
from . import one_hot  # noqa: F401
from . import conv_transpose  # noqa: F401
from . import unique  # noqa: F401
from . import nms  # noqa: F401
from .driver import lower_to_linalg  # noqa: F401

__all__ = ["lower_to_linalg"]
