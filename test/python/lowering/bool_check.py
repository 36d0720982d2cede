"""``check`` (lowering_util) that sends models with bool inputs through the
full compiler: the ExecutionEngine test harness cannot hold i1 tensors in
memory (finalize-memref-to-llvm aborts), the codegen byte-views them."""
from __future__ import annotations

import numpy as np

from lowering_util import check as _check, make_model
from onnx_mlir_py.testing.check import check_compiled


def check(nodes, feeds, outputs, inits=(), opset=17, rtol=1e-5, atol=1e-5, dyn_inputs=(),
          compiled=False):
    if compiled or any(a.dtype == np.bool_ for a in feeds.values()) or \
            any(np.asarray(v).dtype == np.bool_ for _, v in inits):
        m = make_model(nodes, feeds, outputs, inits, opset, dyn_inputs)
        return check_compiled(m, feeds, rtol, atol)
    return _check(nodes, feeds, outputs, inits=inits, opset=opset, rtol=rtol, atol=atol,
                  dyn_inputs=dyn_inputs)


DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]


def random_array(rng: np.random.Generator, shape, dt) -> np.ndarray:
    """Random data of any test dtype (bools half true; numbers ~N(0, 10))."""
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 10).astype(dt)
