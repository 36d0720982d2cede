"""-O3: a 1x1 conv of a single 1x1 image (the FC layers of squeeze-excite
blocks, after a GlobalAveragePool) as a row times a constant matrix.

:func:`.conv.conv_function` computes a conv as ``W [F, C*KH*KW] @ col``
with the weights as the kernel's A operand; with one output pixel col has
one column, which the kernel pads to a whole column block (32 on AVX-512):
32x the multiply-adds plus the padding copies, per call. Transposed,
``x [1, C] @ W^T [C, F]`` puts the weights in the B operand, packed at
compile time, and the single row gets the 1-row register tile of
:func:`.matmul.small_m_tile`.
"""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.kernel_emit import Emitter, tensor

def row_conv_function(name: str, xs, ws, os_, bias: bool, dest: bool) -> str:
    """A 1x1 conv of one 1x1 image (squeeze-excite's FC layers after a
    GlobalAveragePool) as the row times the transposed weights,
    ``[1, C] @ W^T [C, F]``: W^T is a constant packed at compile time and the
    kernel gets a 1-row register tile (``matmul.small_m_tile``), instead of
    ``W [F, C] @ x [C, 1]`` with the single column padded to a whole block of
    columns (the column block's worth of multiply-adds, and copies, per call).
    Same signatures as :func:`.conv.conv_function`."""
    f, c = ws[0], ws[1]
    e = Emitter()
    x, w = e.param("x", tensor(xs)), e.param("w", tensor(ws))
    o = e.param("o", tensor(os_)) if dest or not bias else None
    b = e.param("b", tensor([f])) if bias else None
    xr = e.collapse(x, "[[0], [1, 2, 3]]", [1, c])
    wk = e.collapse(w, "[[0], [1, 2, 3]]", [f, c])
    wte = e.empty([c, f])
    wt = e.op("wt", f"linalg.transpose ins({wk} : {wk.type}) outs({wte} : {wte.type}) "
                    "permutation = [1, 0]", wte.type)
    acc = e.expand(b, "[[0, 1]]", [1, f]) if bias else e.collapse(o, "[[0], [1, 2, 3]]", [1, f])
    r2 = e.op("r2", f"linalg.matmul ins({xr}, {wt} : {xr.type}, {wt.type}) "
                    f"outs({acc} : {acc.type}) -> {acc.type}", acc.type)
    r = e.expand(r2, "[[0], [1, 2, 3]]", list(os_))
    e(f"return {r} : {r.type}")
    return e.function(name, [p for p in (x, w, o, b) if p is not None], r.type)
