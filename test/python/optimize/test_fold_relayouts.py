"""passes/optimize/packs.py: relayouts of constants folded at compile time.
A large folded value becomes a ``dense_resource`` over the folded array (not
copied into a DenseElementsAttr; codegen reads it back from the array), a
small or uniform one a DenseElementsAttr; the values are the relayout's."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py import ir_resources as R
from onnx_mlir_py.context import make_context
from onnx_mlir_py.passes.optimize.packs import (RESOURCE_MIN_BYTES, _uniform, fold_constant_relayouts,
                                                transpose)


def _transpose_module(w: np.ndarray):
    """func @f() -> W^T, W a dense_resource constant (as the importer makes them)."""
    ctx = make_context()
    with ctx, ir.Location.unknown():
        f32 = ir.F32Type.get()
        t = ir.RankedTensorType.get(list(w.shape), f32)
        tt = ir.RankedTensorType.get(list(w.shape[::-1]), f32)
        text = (f"func.func @f() -> {tt} {{\n"
                f"  %w = arith.constant dense<0.0> : {t}\n"
                f"  %e = tensor.empty() : {tt}\n"
                f"  %t = linalg.transpose ins(%w : {t}) outs(%e : {tt}) permutation = [1, 0]\n"
                f"  return %t : {tt}\n}}")
        m = ir.Module.parse(text)
        const = m.body.operations[0].regions[0].blocks[0].operations[0]
        const.attributes["value"] = R.resource_attr(np.ascontiguousarray(w), "w", t)
    return ctx, m, w


def _folded(m):
    f = m.body.operations[0]
    ret = f.regions[0].blocks[0].operations[len(f.regions[0].blocks[0].operations) - 1]
    return ret.operands[0].owner


@pytest.mark.parametrize("shape,uniform", [((64, 48), False), ((64, 48), True), ((4, 3), False),
                                           ((300, 130), False)])
def test_folded_transpose(shape, uniform):
    rng = np.random.default_rng(0)
    w = np.full(shape, 0.5, np.float32) if uniform else rng.standard_normal(shape).astype(np.float32)
    ctx, m, w = _transpose_module(w)
    with ctx:
        assert fold_constant_relayouts(m) == 1
        c = _folded(m)
        assert c.name == "arith.constant"
        attr = c.attributes["value"]
        key = R.resource_name(attr)
        large = w.nbytes >= RESOURCE_MIN_BYTES and not uniform
        assert (key is not None) == large, str(attr)[:80]
        if large:
            got = np.frombuffer(R.resource_blobs([c])[key], np.float32).reshape(shape[::-1])
        else:
            got = np.array(ir.DenseElementsAttr(attr)) if not ir.DenseElementsAttr(attr).is_splat \
                else np.full(shape[::-1], ir.DenseElementsAttr(attr).get_splat_value().value)
        np.testing.assert_array_equal(got, w.T)


@pytest.mark.parametrize("shape", [(128, 128), (130, 300), (1000, 257), (127, 4096), (5, 7)])
def test_blocked_transpose_is_numpys(shape):
    """The tiled 2-D transpose (large weights) gives numpy's bytes, contiguous,
    ragged edge tiles included; other permutations are numpy's own."""
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    y = transpose(x, [1, 0])
    assert y.flags.c_contiguous and y.shape == shape[::-1]
    np.testing.assert_array_equal(y, x.T)
    np.testing.assert_array_equal(transpose(x, [0, 1]), x)
    z = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    np.testing.assert_array_equal(transpose(z, [0, 2, 3, 1]), z.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("values", [
    np.zeros(2048, np.float32), np.full(2048, np.nan, np.float32),
    np.r_[np.zeros(2047), 1.0], np.r_[1.0, np.zeros(2047)],
    np.r_[np.zeros(100), -0.0, 2.0, np.zeros(1946)], np.full(4096, 3, np.int8)])
def test_uniform_is_the_full_comparison(values):
    """The early-out uniformity test decides as the full comparison does
    (a difference past the first elements, NaN, -0.0 == 0.0)."""
    assert _uniform(values) == bool((values.flat[0] == values).all())


def _chain_module(w: np.ndarray, pad_arg: bool, also_return: bool):
    """func @f(%pad: f32) -> pack(transpose(collapse(W))) [, transpose(...)]:
    W [F, C, 3, 3] a dense_resource constant (a conv's weights), the pack's
    padding value a constant, or with ``pad_arg`` the argument (not foldable)."""
    ctx = make_context()
    f, c = w.shape[:2]
    k = c * 9
    with ctx, ir.Location.unknown():
        t4 = f"tensor<{f}x{c}x3x3xf32>"
        t2, tt = f"tensor<{f}x{k}xf32>", f"tensor<{k}x{f}xf32>"
        tp = f"tensor<{-(-k // 8)}x{-(-f // 32)}x8x32xf32>"
        pad = "%arg0" if pad_arg else "%zero"
        rets = [(tp, "%p")] + ([(tt, "%t")] if also_return else [])
        text = (f"func.func @f(%arg0: f32) -> ({', '.join(t for t, _ in rets)}) {{\n"
                f"  %zero = arith.constant 0.0 : f32\n"
                f"  %w = arith.constant dense<0.0> : {t4}\n"
                f"  %c = tensor.collapse_shape %w [[0], [1, 2, 3]] : {t4} into {t2}\n"
                f"  %e = tensor.empty() : {tt}\n"
                f"  %t = linalg.transpose ins(%c : {t2}) outs(%e : {tt}) permutation = [1, 0]\n"
                f"  %pe = tensor.empty() : {tp}\n"
                f"  %p = linalg.pack %t padding_value({pad} : f32) inner_dims_pos = [0, 1] "
                f"inner_tiles = [8, 32] into %pe : {tt} -> {tp}\n"
                f"  return {', '.join(v for _, v in rets)} : {', '.join(t for t, _ in rets)}\n}}")
        m = ir.Module.parse(text)
        const = m.body.operations[0].regions[0].blocks[0].operations[1]
        const.attributes["value"] = R.resource_attr(np.ascontiguousarray(w), "w", ir.Type.parse(t4))
    return ctx, m


def _const_value(op, shape):
    attr = op.attributes["value"]
    key = R.resource_name(attr)
    if key is not None:
        return np.frombuffer(R.resource_blobs([op])[key], np.float32).reshape(shape)
    return np.array(ir.DenseElementsAttr(attr)).reshape(shape)


def _returned(m):
    blk = m.body.operations[0].regions[0].blocks[0]
    return [v.owner for v in blk.operations[len(blk.operations) - 1].operands]


def _packed_reference(w: np.ndarray) -> np.ndarray:
    wt = w.reshape(w.shape[0], -1).T                       # [K, F]
    k, f = wt.shape
    kp, fp = -(-k // 8) * 8, -(-f // 32) * 32
    a = np.zeros((kp, fp), np.float32)
    a[:k, :f] = wt
    return a.reshape(kp // 8, 8, fp // 32, 32).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("shape", [(64, 16, 3, 3), (70, 5, 3, 3)])
def test_chain_folds_end_to_end(shape):
    """A weight's collapse -> transpose -> pack folds in numpy from end to
    end: one new constant (the pack's; padded tails included), the chain's
    inner values never constants, its ops erased."""
    w = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    ctx, m = _chain_module(w, pad_arg=False, also_return=False)
    with ctx:
        assert fold_constant_relayouts(m) == 3
        names = [o.operation.name for o in m.body.operations[0].regions[0].blocks[0].operations]
        assert "linalg.transpose" not in names and "tensor.collapse_shape" not in names
        assert "linalg.pack" not in names
        assert names.count("arith.constant") == 3            # %zero, W (now dead), the pack's
        (p,) = _returned(m)
        ref = _packed_reference(w)
        np.testing.assert_array_equal(_const_value(p, ref.shape), ref)


@pytest.mark.parametrize("also_return", [False, True])
def test_chain_ends_before_an_unfoldable_relayout(also_return):
    """A chain whose last relayout does not fold (a pack padded with a
    run-time value), or whose value has a second use: the value before it
    becomes a constant, equal to numpy's, and the pack stays."""
    w = np.random.default_rng(3).standard_normal((40, 6, 3, 3)).astype(np.float32)
    ctx, m = _chain_module(w, pad_arg=True, also_return=also_return)
    with ctx:
        assert fold_constant_relayouts(m) == 2
        rets = _returned(m)
        assert rets[0].name == "linalg.pack"
        src = rets[0].operands[0].owner
        assert src.name == "arith.constant"
        wt = w.reshape(40, -1).T
        np.testing.assert_array_equal(_const_value(src, wt.shape), wt)
        if also_return:
            assert rets[1] == src
