"""Pooling: MaxPool (with the optional Indices output), AveragePool, LpPool,
GlobalAveragePool, GlobalMaxPool.

Window geometry (kernel_shape, strides, pads, auto_pad, dilations,
ceil_mode) is shared with Conv (conv.py::window_axes, also used by the
lowering). Versions differ only in which attributes exist (``opt_attr``
reads an absent one as its default). With ceil_mode a last window that
would start in the right padding is dropped, in every version: the v22
spec says so (PyTorch semantics), and onnx's reference evaluator and
onnxruntime compute it so for the older versions too; only
``onnx.shape_inference`` keeps the extra window before v22 (it would be
all padding: -inf for MaxPool, 0/0 for AveragePool).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt, int_values, single_result
from onnx_mlir_py.dialects.onnx.ops.conv import check_input_rank, opt_attr, window, window_axes

MAXPOOL_VERSIONS = (1, 8, 10, 11, 12, 22)
AVGPOOL_VERSIONS = (7, 10, 11, 19, 22)
LPPOOL_VERSIONS = (2, 11, 18, 22)
GLOBAL_VERSIONS = (1, 22)


def _pool(op: OnnxOp):
    x = op.shape(op.input(0))
    check_input_rank(op, x)
    kernel = opt_attr(op, "kernel_shape")
    if kernel is None:
        op.fail("attribute 'kernel_shape' is required")
    if x is None:
        n = len(kernel)
    else:
        n = len(x) - 2
    win = window(op, n, require_kernel=True)
    if win.pads is not None:   # a window entirely in the padding has no value (onnxruntime)
        for i, p in enumerate(win.pads):
            if p >= win.kernel[i % n]:
                op.fail(f"attribute 'pads' = {list(win.pads)}: pad {p} of spatial axis "
                        f"{i % n} is not smaller than the kernel size {win.kernel[i % n]}")
    if op.op_type == "MaxPool":
        so = opt_attr(op, "storage_order", 0)
        if so not in (0, 1):
            op.fail(f"attribute 'storage_order' = {so}: expected 0 (row major) or 1 (column major)")
    if op.op_type == "AveragePool":
        cip = opt_attr(op, "count_include_pad", 0)
        if cip not in (0, 1):
            op.fail(f"attribute 'count_include_pad' = {cip}: expected 0 or 1")
    if op.op_type == "LpPool":
        p = op.attrs.p
        if p is not None and p <= 0:
            op.fail(f"attribute 'p' = {p}: expected > 0")
    if x is None:
        return None
    axes = window_axes(win, D.inference_checks(op), D.from_static(x[2:]),
                       drop_padded_window=True)
    return (x[0], x[1], *D.to_static([a.out for a in axes]))


def _pool_verify(op: OnnxOp):
    _pool(op)


def _pool_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = _pool(op)
    out = [tensor(shape, et) if et is not None else None]
    if len(op.results) > 1:  # MaxPool Indices
        out.append(tensor(shape, ir.IntegerType.get_signless(64)))
    return out


for _op, _versions in (("MaxPool", MAXPOOL_VERSIONS), ("AveragePool", AVGPOOL_VERSIONS),
                       ("LpPool", LPPOOL_VERSIONS)):
    verifier(_op, *_versions)(_pool_verify)
    shape_rule(_op, *_versions)(_pool_shape)


def onnx_inference_differs(op_type: str, version: int, attrs: dict) -> bool:
    """True when ``onnx.shape_inference`` gives this pool node a different
    output shape than the spec, onnxruntime and onnx.reference: before v22 it
    keeps ceil_mode's last window even when that window would start in the
    right padding. The importer then ignores onnx's types downstream of the
    node and this module's rule alone types them."""
    versions = {"MaxPool": MAXPOOL_VERSIONS, "AveragePool": AVGPOOL_VERSIONS,
                "LpPool": LPPOOL_VERSIONS}.get(op_type, ())
    return version in versions and version < 22 and attrs.get("ceil_mode", 0) == 1


# -- global pooling ----------------------------------------------------------------

def _global(op: OnnxOp):
    x = op.shape(op.input(0))
    if x is None:
        return None
    if len(x) < 2:
        op.fail(f"input 'X' has shape {fmt(x)}: expected rank >= 2 (N x C x D1 x ... x Dn), "
                f"got rank {len(x)}")
    return (x[0], x[1]) + (1,) * (len(x) - 2)


def _global_verify(op: OnnxOp):
    _global(op)


_global_shape = single_result(_global)


for _op in ("GlobalAveragePool", "GlobalMaxPool"):
    verifier(_op, *GLOBAL_VERSIONS)(_global_verify)
    shape_rule(_op, *GLOBAL_VERSIONS)(_global_shape)


# -- MaxUnpool ---------------------------------------------------------------------
# (its shape rule is still in shape_only.py)

def unpool_window(op: OnnxOp, n: int):
    """(kernel, strides, pads) of MaxUnpool for ``n`` spatial axes (checked)."""
    win = window(op, n, require_kernel=True)
    return win.kernel, win.strides, win.pads or [0] * (2 * n)


def unpool_inferred(x: list, kernel, strides, pads) -> list:
    """MaxUnpool's inferred output dims (ints or run-time dims): N, C and
    ``(in - 1) * stride + kernel - pad_begin - pad_end`` per spatial axis.
    The indices are flat indices into a tensor of this shape."""
    n = len(kernel)
    return list(x[:2]) + [(x[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[n + i]
                          for i in range(n)]


@verifier("MaxUnpool", 9, 11, 22)
def _max_unpool_verify(op: OnnxOp):
    x, ind = op.shape(op.input(0)), op.shape(op.input(1))
    check_input_rank(op, x)
    kernel = opt_attr(op, "kernel_shape")
    if kernel is None:
        op.fail("attribute 'kernel_shape' is required")
    n = len(kernel) if x is None else len(x) - 2
    kernel, strides, pads = unpool_window(op, n)
    if x is not None and ind is not None:
        if len(ind) != len(x) or any(a is not None and b is not None and a != b
                                     for a, b in zip(x, ind)):
            op.fail(f"input 'I' has shape {fmt(ind)}: expected the shape of input 'X' "
                    f"{fmt(x)}")
    if op.input(2) is not None:
        s = op.shape(op.input(2))
        if s is not None and (len(s) != 1 or (x is not None and s[0] not in (None, len(x)))):
            op.fail(f"input 'output_shape' has shape {fmt(s)}: expected [{len(x) if x else 'rank'}]")
    if x is not None:
        xs = [0 if d is None else d for d in x]
        for i, d in enumerate(unpool_inferred(xs, kernel, strides, pads)[2:]):
            if x[2 + i] is not None and d < 0:
                op.fail(f"spatial axis {i}: the inferred output size {d} is negative "
                        f"(input size {x[2 + i]}, kernel {kernel[i]}, stride {strides[i]}, "
                        f"pads {pads[i]}, {pads[n + i]})")


@shape_rule("MaxUnpool", 9, 11, 22)
def _max_unpool_shape(op: OnnxOp):
    x = op.shape(op.input(0))
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    if op.input(2) is not None:
        vals = int_values(op.input(2))
        return [tensor(vals, et)]
    if x is None:
        return [tensor(None, et)]
    n = len(x) - 2
    k = op.attrs.kernel_shape or [None] * n
    s = op.attrs.strides or [1] * n
    p = op.attrs.pads or [0] * (2 * n)
    out = [None if x[2 + i] is None or k[i] is None else
           (x[2 + i] - 1) * s[i] + k[i] - p[i] - p[i + n] for i in range(n)]
    return [tensor((x[0], x[1], *out), et)]
