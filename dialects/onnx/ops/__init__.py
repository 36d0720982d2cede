"""Verifiers and shape rules, one module per op family.

Each module registers its rules with ``onnx_mlir_py.registry`` when imported;
this list is the one place that imports them (one line each, easy to grep).
"""
from . import elementwise  # noqa: F401
from . import reshape  # noqa: F401
from . import expand_tile  # noqa: F401
from . import transpose  # noqa: F401
from . import concat_split  # noqa: F401
from . import slice  # noqa: F401
from . import gather  # noqa: F401
from . import shape_ops  # noqa: F401
from . import reduction  # noqa: F401
from . import resize  # noqa: F401
from . import pad  # noqa: F401
from . import conv  # noqa: F401
from . import pool  # noqa: F401
from . import normalization  # noqa: F401
from . import gemm  # noqa: F401
from . import softmax  # noqa: F401
from . import nn_misc  # noqa: F401
from . import control_flow  # noqa: F401
from . import loss  # noqa: F401
from . import quantize  # noqa: F401
from . import attention  # noqa: F401
from . import recurrent  # noqa: F401
from . import nn_extra  # noqa: F401
from . import unique  # noqa: F401
from . import nms  # noqa: F401
from . import strings_ml  # noqa: F401
