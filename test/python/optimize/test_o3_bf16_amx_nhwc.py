"""-O3 channels-last bf16 convs on AMX-BF16 (conv_bf16.match's NHWC form,
matmul_bf16_amx.kernel_text's ``rows_out``): a ``linalg.conv_2d_nhwc_fhwc``
of the ``--precision bf16`` contract (truncf of the NHWC activations, a
tensor.pad, a constant bf16 [F, KH, KW, C] filter, an f32 zero fill) reads
its input in place (1x1: the pixels are A; else an im2col per 32 pixels, C
odd included) and writes its NHWC result's rows [M, F] from the C tiles;
the elementwise generics after it (a bias on the last dim, ReLU, Clip, a
residual Add) are computed on the tiles' rows before they are stored.

Checked against numpy on the bf16-rounded inputs (f64 sums, within f32
rounding of the sum of |products|), fused and unfused (the same values), 1
and 2 threads; the plan (AMX on Sapphire Rapids; Zen 4 keeps the linalg
conv: its AVX512-BF16 kernel does not take this form)."""
from __future__ import annotations

import ml_dtypes
import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize import conv_bf16, optimize
from onnx_mlir_py.passes.optimize.matmul_bf16_amx import CONV_KERNEL
from onnx_mlir_py.target import resolve, target_for

HOST = resolve(None, None, host_default=True)
needs_amx = pytest.mark.skipif(not HOST.amx_bf16,
                               reason="the host has no AMX-BF16 (or the OS refuses tile data)")
SPR = "sapphirerapids"
PAR4 = '["parallel", "parallel", "parallel", "parallel"]'


def _generic(res: str, ins: list, maps: list, t: str, body: list) -> list:
    args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
    return [f"  %e_{res[1:]} = tensor.empty() : {t}",
            f"  {res} = linalg.generic {{indexing_maps = [{', '.join(maps)}, #id], iterator_types = {PAR4}}} "
            f"ins({', '.join(v for v, _ in ins)} : {', '.join(ty for _, ty in ins)}) "
            f"outs(%e_{res[1:]} : {t}) {{",
            f"  ^bb0({args}, %o: f32):"] + [f"    {b}" for b in body] + [f"  }} -> {t}"]


def nhwc_conv(n, c, hw, f, k, s, p, d, w, epilogue=(), bias=None) -> tuple[str, int]:
    """``main_graph(x: [N, H, W, C] f32[, r: the output's shape]) -> [N, OH,
    OW, F] f32``: the bf16 conv of the contract (w: [F, KH, KW, C] f32,
    rounded to a bf16 constant), then ``epilogue``: "bias" (``bias`` [F] on
    the last dim), "relu", "clip" (to [-1, 2]), "residual" (+ r)."""
    oh = (hw + 2 * p - d * (k - 1) - 1) // s + 1
    hp = hw + 2 * p
    xt, xb = f"tensor<{n}x{hw}x{hw}x{c}xf32>", f"tensor<{n}x{hw}x{hw}x{c}xbf16>"
    xpt, ot = f"tensor<{n}x{hp}x{hp}x{c}xbf16>", f"tensor<{n}x{oh}x{oh}x{f}xf32>"
    wt = f"tensor<{f}x{k}x{k}x{c}xbf16>"
    hexs = "0x" + w.astype(ml_dtypes.bfloat16).view(np.uint16).astype("<u2").tobytes().hex().upper()
    args = f"%x: {xt}" + (f", %r: {ot}" if "residual" in epilogue else "")
    lines = ["#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>",
             "#last = affine_map<(d0, d1, d2, d3) -> (d3)>",
             f"func.func @main_graph({args}) -> {ot} {{",
             f"  %e = tensor.empty() : {xb}",
             f"  %xb = linalg.generic {{indexing_maps = [#id, #id], iterator_types = {PAR4}}} "
             f"ins(%x : {xt}) outs(%e : {xb}) {{",
             "  ^bb0(%v: f32, %o: bf16):",
             "    %t = arith.truncf %v : f32 to bf16",
             "    linalg.yield %t : bf16",
             f"  }} -> {xb}"]
    xv, xvt = "%xb", xb
    if p:
        lines += ["  %zb = arith.constant 0.0 : bf16",
                  f"  %xp = tensor.pad %xb low[0, {p}, {p}, 0] high[0, {p}, {p}, 0] {{",
                  "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):",
                  "    tensor.yield %zb : bf16",
                  f"  }} : {xb} to {xpt}"]
        xv, xvt = "%xp", xpt
    lines += [f"  %w = arith.constant dense<\"{hexs}\"> : {wt}",
              "  %z = arith.constant 0.0 : f32",
              f"  %ea = tensor.empty() : {ot}",
              f"  %acc = linalg.fill ins(%z : f32) outs(%ea : {ot}) -> {ot}",
              f"  %y0 = linalg.conv_2d_nhwc_fhwc {{dilations = dense<{d}> : tensor<2xi64>, "
              f"strides = dense<{s}> : tensor<2xi64>}} ins({xv}, %w : {xvt}, {wt}) "
              f"outs(%acc : {ot}) -> {ot}"]
    cur = "%y0"
    for i, kind in enumerate(epilogue):
        res = f"%y{i + 1}"
        if kind == "bias":      # (the constant after the conv, as the lowering writes it)
            vals = ", ".join(f"{float(v):e}" for v in bias)
            lines += [f"  %bias = arith.constant dense<[{vals}]> : tensor<{f}xf32>"]
            lines += _generic(res, [(cur, ot), ("%bias", f"tensor<{f}xf32>")], ["#id", "#last"], ot,
                              ["%s = arith.addf %a0, %a1 : f32", "linalg.yield %s : f32"])
        elif kind == "residual":
            lines += _generic(res, [(cur, ot), ("%r", ot)], ["#id", "#id"], ot,
                              ["%s = arith.addf %a0, %a1 : f32", "linalg.yield %s : f32"])
        elif kind == "relu":
            lines += _generic(res, [(cur, ot)], ["#id"], ot,
                              ["%zr = arith.constant 0.0 : f32", "%s = arith.maximumf %a0, %zr : f32",
                               "linalg.yield %s : f32"])
        else:
            assert kind == "clip"
            lines += ["  %lo = arith.constant -1.0 : f32", "  %hi = arith.constant 2.0 : f32"]
            lines += _generic(res, [(cur, ot)], ["#id"], ot,
                              ["%s0 = arith.maximumf %a0, %lo : f32", "%s = arith.minimumf %s0, %hi : f32",
                               "linalg.yield %s : f32"])
        cur = res
    lines += [f"  return {cur} : {ot}", "}"]
    return "\n".join(lines), oh


def _reference(x, w, s, p, d):
    """(the conv of the bf16-rounded x [N, H, W, C] and w [F, KH, KW, C] in
    f64, the same of |x| and |w|)."""
    xb, wb = (a.astype(ml_dtypes.bfloat16).astype(np.float64) for a in (x, w))
    n, hw, _, c = x.shape
    f, k = w.shape[:2]
    xp = np.pad(xb, ((0, 0), (p, p), (p, p), (0, 0)))
    oh = (hw + 2 * p - d * (k - 1) - 1) // s + 1
    cols = np.stack([xp[:, i * d:i * d + s * (oh - 1) + 1:s, j * d:j * d + s * (oh - 1) + 1:s, :]
                     for i in range(k) for j in range(k)], axis=3).reshape(n, oh, oh, -1)
    wm = wb.reshape(f, -1)
    return cols @ wm.T, np.abs(cols) @ np.abs(wm).T


def _epilogue_ref(y, epilogue, bias, r):
    for kind in epilogue:
        y = y + bias if kind == "bias" else y + r if kind == "residual" else \
            np.maximum(y, 0) if kind == "relu" else np.clip(y, -1, 2)
    return y


def _case(n, c, hw, f, k, s, p, d, epilogue=(), seed=0):
    rng = np.random.default_rng(seed + c + f)
    w = rng.standard_normal((f, k, k, c)).astype(np.float32)
    bias = rng.standard_normal(f).astype(np.float32)
    text, oh = nhwc_conv(n, c, hw, f, k, s, p, d, w, epilogue, bias)
    x = rng.standard_normal((n, hw, hw, c)).astype(np.float32)
    r = rng.standard_normal((n, oh, oh, f)).astype(np.float32)
    return text, w, bias, x, r


def _generics(mod) -> list:
    return [o for o in walk_ops(mod.operation, "linalg.generic")]


def test_plan_and_rewrite():
    """Sapphire Rapids: the conv and its bias + residual + ReLU become one
    kernel call (only the truncf generic is left); Zen 4: the linalg conv
    stays (no kernel takes the NHWC form without AMX), its generics too."""
    text, *_ = _case(1, 64, 8, 64, 1, 1, 0, 1, ("bias", "residual", "relu"))
    with ir.Context(), ir.Location.unknown():
        mod = ir.Module.parse(text)
        assert conv_bf16.bf16_convs(mod, target_for(SPR), False) == 1
        assert not walk_ops(mod.operation, conv_bf16.NHWC_OP)
        assert len(_generics(mod)) == 1       # the truncf
        call = walk_ops(mod.operation, "func.call")[0]
        assert len(call.operands) == 4        # A, packed B, the bias, the residual
        mod = ir.Module.parse(text)
        assert conv_bf16.bf16_convs(mod, target_for("znver4"), False) == 0
        assert len(_generics(mod)) == 4
    with ir.Context():
        plan = optimize(ir.Module.parse(text), target_for(SPR), threads=False)
        assert [e.kernel for e in plan.entries] == [CONV_KERNEL]
        assert "1x1: the NHWC pixels as A" in plan.entries[0].reason
        plan = optimize(ir.Module.parse(text), target_for("znver4"), threads=False)
        assert [e.kernel for e in plan.entries] == ["linalg"]


def test_residual_after_the_conv_not_fused():
    """A residual defined after the conv (ResNet's downsample branch,
    computed later) is not taken: the bias and ReLU before it are."""
    text, *_ = _case(1, 32, 6, 32, 1, 1, 0, 1, ("bias", "relu", "residual"))
    ot = "tensor<1x6x6x32xf32>"
    text = text.replace(f", %r: {ot}", "")
    lines = text.split("\n")
    conv = next(j for j, ln in enumerate(lines) if "linalg.conv_2d_nhwc_fhwc" in ln)
    lines[conv + 1:conv + 1] = ["  %one = arith.constant 1.0 : f32", f"  %er0 = tensor.empty() : {ot}",
                                f"  %r = linalg.fill ins(%one : f32) outs(%er0 : {ot}) -> {ot}"]
    with ir.Context(), ir.Location.unknown():
        mod = ir.Module.parse("\n".join(lines))
        assert conv_bf16.bf16_convs(mod, target_for(SPR), False) == 1
        assert len(_generics(mod)) == 2       # the truncf, the residual add
        assert len(walk_ops(mod.operation, "func.call")[0].operands) == 3


def _run(text, x, r, epilogue, threads):
    from onnx_mlir_py.codegen import emit_library
    from onnx_mlir_py.runtime import ExecutionSession
    import tempfile
    from pathlib import Path
    with ir.Context():
        mod = ir.Module.parse(text)
        plan = optimize(mod, target_for(SPR), threads=threads)
        path = Path(tempfile.mkdtemp()) / "m.so"
        emit_library(mod, path, mcpu=SPR)
    assert [e.kernel for e in plan.entries] == [CONV_KERNEL]
    sess = ExecutionSession(str(path), num_threads=2 if threads else None)
    got = sess.run([x] + ([r] if "residual" in epilogue else []))[0]
    path.unlink()
    path.parent.rmdir()
    return got, plan


def check(n, c, hw, f, k, s, p, d, epilogue=(), threads=False):
    text, w, bias, x, r = _case(n, c, hw, f, k, s, p, d, epilogue)
    got, plan = _run(text, x, r, epilogue, threads)
    y, mag = _reference(x, w, s, p, d)
    want = _epilogue_ref(y, epilogue, bias, r)
    assert got.shape == want.shape
    # f32 sums of exact bf16 products (any order), then the f32 epilogue
    extra = 2.0 ** -22 * (np.abs(y) + np.abs(bias) + np.abs(r)) if epilogue else 0
    np.testing.assert_array_less(np.abs(got - want), mag * c * k * k * 2.0 ** -23 + extra + 1e-30)
    assert np.abs(want).max() > 1       # not vacuous
    return got, plan


@needs_amx
@pytest.mark.parametrize("n,c,hw,f,k,s,p,d", [
    (1, 3, 32, 64, 7, 2, 3, 1),     # the ResNet stem: 7x7 stride 2, C = 3 (k pairs across channels)
    (1, 64, 9, 40, 1, 1, 0, 1),     # 1x1: the pixels are A; M = 81, F = 40 (a part column tile)
    (1, 64, 8, 64, 1, 1, 0, 1),     # 1x1, whole blocks: all tiles stored into the result
    (1, 64, 9, 48, 1, 2, 0, 1),     # 1x1 stride 2: im2col
    (1, 16, 11, 32, 3, 2, 1, 1),    # 3x3 stride 2
    (1, 32, 8, 32, 3, 1, 1, 1),     # 3x3 pad 1, M = 64
    (2, 5, 8, 24, 3, 1, 1, 1),      # a batch of 2, C = 5, F = 24
    (1, 8, 10, 24, 3, 1, 2, 2),     # dilation 2: a piece per tap
    (1, 96, 7, 48, 3, 1, 1, 1),     # 49 pixels (a part block), K = 864 (chunks of 8 K steps)
    (1, 64, 5, 8, 1, 1, 0, 1),      # F = 8 < 16
    (1, 1, 9, 16, 3, 1, 1, 1),      # C = 1: K = 9
])
def test_nhwc_conv(n, c, hw, f, k, s, p, d):
    check(n, c, hw, f, k, s, p, d)


@needs_amx
@pytest.mark.parametrize("n,c,hw,f,k,s,p,d", [
    (1, 64, 28, 80, 3, 1, 1, 1),    # 36M MACs (threaded), 5 column tiles
    (1, 256, 7, 208, 1, 1, 0, 1),   # 1x1 on a 7x7 map: 2 row blocks, the last a part one
    (1, 128, 16, 64, 1, 1, 0, 1),   # 1x1, 8 whole blocks
])
def test_nhwc_conv_two_threads(n, c, hw, f, k, s, p, d):
    got, plan = check(n, c, hw, f, k, s, p, d, threads=True)
    assert plan.entries[0].threaded


EPILOGUES = [("bias",), ("relu",), ("clip",), ("bias", "relu"), ("residual",),
             ("bias", "residual", "relu")]


@needs_amx
@pytest.mark.parametrize("epilogue", EPILOGUES)
@pytest.mark.parametrize("n,c,hw,f,k,s,p,d,threads", [
    (1, 64, 8, 64, 1, 1, 0, 1, False),      # whole blocks: the epilogue on the tiles in place
    (1, 64, 9, 40, 1, 1, 0, 1, False),      # a part block and column tile: via the buffer
    (1, 16, 10, 32, 3, 1, 1, 1, False),     # im2col, M = 100
    (1, 64, 28, 80, 3, 1, 1, 1, True),      # threaded
])
def test_nhwc_epilogue(monkeypatch, epilogue, n, c, hw, f, k, s, p, d, threads):
    """Fused: the values of the unfused generics (within f32 rounding)."""
    fused, _ = check(n, c, hw, f, k, s, p, d, epilogue, threads)
    monkeypatch.setattr(conv_bf16, "NHWC_EPILOGUES", False)
    unfused, _ = check(n, c, hw, f, k, s, p, d, epilogue, threads)
    np.testing.assert_allclose(fused, unfused, rtol=2.0 ** -20, atol=1e-5)


def _onnx_models(c, hw, f, k, s, p, residual):
    """(NhwcConv(x, w, b) [+ r] -> Relu, the same with an NCHW Conv between
    Transposes: onnxruntime's CPU provider has no NhwcConv)."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(c * k + f)
    w = nh.from_array((rng.standard_normal((f, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32), "w")
    b = nh.from_array(rng.standard_normal(f).astype(np.float32), "b")
    oh = (hw + 2 * p - k) // s + 1
    ins = [h.make_tensor_value_info("x", T.FLOAT, [1, hw, hw, c])]
    if residual:
        ins.append(h.make_tensor_value_info("r", T.FLOAT, [1, oh, oh, f]))
    conv = dict(pads=[p] * 4, strides=[s, s])
    tail = ([h.make_node("Add", ["y", "r"], ["a"])] if residual else []) + \
        [h.make_node("Relu", ["a" if residual else "y"], ["z"])]
    out = [h.make_tensor_value_info("z", T.FLOAT, None)]
    ours = h.make_graph([h.make_node("NhwcConv", ["x", "w", "b"], ["y"], domain="com.microsoft",
                                     **conv)] + tail, "g", ins, out, [w, b])
    ref = h.make_graph([h.make_node("Transpose", ["x"], ["xt"], perm=[0, 3, 1, 2]),
                        h.make_node("Conv", ["xt", "w", "b"], ["yt"], **conv),
                        h.make_node("Transpose", ["yt"], ["y"], perm=[0, 2, 3, 1])] + tail,
                       "r", ins, out, [w, b])
    return (h.make_model(ours, opset_imports=[h.make_opsetid("", 17),
                                              h.make_opsetid("com.microsoft", 1)]),
            h.make_model(ref, opset_imports=[h.make_opsetid("", 17)]), oh)


@needs_amx
@pytest.mark.parametrize("c,hw,f,k,s,p,residual,threads", [
    (3, 32, 64, 7, 2, 3, False, None),      # the stem (C = 3)
    (64, 14, 64, 1, 1, 0, True, None),      # 1x1 + bias + residual + ReLU, 196 pixels
    (64, 14, 64, 3, 1, 1, True, 2),         # 3x3 pad 1, 2 threads
    (64, 15, 128, 1, 2, 0, False, 2),       # 1x1 stride 2 (im2col), 64 pixels
    (32, 9, 40, 3, 2, 1, True, None),       # F = 40: a part column tile, 25 pixels
])
def test_onnx_nhwc_conv(tmp_path, c, hw, f, k, s, p, residual, threads):
    """com.microsoft.NhwcConv compiled with --precision bf16 on AMX: within
    the bf16 bound (testing/fuzz/bf16_bound.py) of onnxruntime's f32 run of
    the same conv in NCHW."""
    import onnx_mlir_py
    import onnxruntime as ort
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.testing.fuzz.bf16_bound import compare, reference_bounds
    ours, ref, oh = _onnx_models(c, hw, f, k, s, p, residual)
    so = onnx_mlir_py.compile(ours, tmp_path / "c.so", opt_level=3, precision="bf16", mcpu=SPR)
    rng = np.random.default_rng(hw)
    feeds = {"x": rng.standard_normal((1, hw, hw, c)).astype(np.float32)}
    if residual:
        feeds["r"] = rng.standard_normal((1, oh, oh, f)).astype(np.float32)
    got = ExecutionSession(str(so), num_threads=threads).run(list(feeds.values()))[0]
    want = ort.InferenceSession(ref.SerializeToString()).run(None, feeds)[0]
    e = reference_bounds(ref, feeds, "onnxruntime")["z"]
    assert compare(got, want, e) is None, compare(got, want, e)
    assert np.abs(want).max() > 1 and (want == 0).any()     # not vacuous; the ReLU ran
