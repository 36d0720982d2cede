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

from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type

def row_conv_function(name: str, xs, ws, os_, bias: bool, dest: bool) -> str:
    """A 1x1 conv of one 1x1 image (squeeze-excite's FC layers after a
    GlobalAveragePool) as the row times the transposed weights,
    ``[1, C] @ W^T [C, F]``: W^T is a constant packed at compile time and the
    kernel gets a 1-row register tile (``matmul.small_m_tile``), instead of
    ``W [F, C] @ x [C, 1]`` with the single column padded to a whole block of
    columns (the column block's worth of multiply-adds, and copies, per call).
    Same signatures as :func:`.conv.conv_function`."""
    f, c = ws[0], ws[1]
    third = f"%b: {tensor_type([f])}" if bias else f"%o: {tensor_type(os_)}"
    if bias and dest:
        third = f"%o: {tensor_type(os_)}, {third}"
    lines = [f"  func.func private @{name}(%x: {tensor_type(xs)}, %w: {tensor_type(ws)}, {third}) -> {tensor_type(os_)} {{",
             f"    %xr = tensor.collapse_shape %x [[0], [1, 2, 3]] : {tensor_type(xs)} into {tensor_type([1, c])}",
             f"    %wk = tensor.collapse_shape %w [[0], [1, 2, 3]] : {tensor_type(ws)} into {tensor_type([f, c])}",
             f"    %wte = tensor.empty() : {tensor_type([c, f])}",
             f"    %wt = linalg.transpose ins(%wk : {tensor_type([f, c])}) outs(%wte : {tensor_type([c, f])}) "
             "permutation = [1, 0]"]
    if bias:
        lines.append(f"    %acc = tensor.expand_shape %b [[0, 1]] output_shape [1, {f}] "
                     f": {tensor_type([f])} into {tensor_type([1, f])}")
    else:
        lines.append(f"    %acc = tensor.collapse_shape %o [[0], [1, 2, 3]] : {tensor_type(os_)} into {tensor_type([1, f])}")
    lines += [f"    %r2 = linalg.matmul ins(%xr, %wt : {tensor_type([1, c])}, {tensor_type([c, f])}) "
              f"outs(%acc : {tensor_type([1, f])}) -> {tensor_type([1, f])}",
              f"    %r = tensor.expand_shape %r2 [[0], [1, 2, 3]] output_shape {list(os_)} "
              f": {tensor_type([1, f])} into {tensor_type(os_)}",
              f"    return %r : {tensor_type(os_)}\n  }}"]
    return "\n".join(lines)
