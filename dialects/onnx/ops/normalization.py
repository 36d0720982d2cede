"""Normalizations: BatchNormalization, InstanceNormalization,
LayerNormalization, GroupNormalization, RMSNormalization,
MeanVarianceNormalization, LpNormalization, LRN.

Y always has the shape of X. Extra outputs:
* BatchNormalization v7/v9: mean, var, saved_mean, saved_var (training) have
  the shape of the input mean; v14/v15: running_mean, running_var are [C]
  (element types of input_mean / input_var), and exist iff training_mode=1.
* LayerNormalization: Mean and InvStdDev have X's shape with the normalized
  axes (axis..rank-1) set to 1, element type from stash_type.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt, same_as_input


def result_slots(op: OnnxOp) -> list[int]:
    """ONNX output index of each MLIR result (optional outputs may be absent)."""
    n = len(op.op.results)
    if "resultSegmentSizes" in op.op.attributes:
        sizes = list(op.op.attributes["resultSegmentSizes"])
        return [i for i, k in enumerate(sizes) for _ in range(k)]
    return list(range(n))


def _channels(x):
    if x is None:
        return None
    return x[1] if len(x) > 1 else 1


def _check_vec(op: OnnxOp, i: int, name: str, c, what="C (channels of X)"):
    s = op.shape(op.input(i))
    if s is None:
        return
    if len(s) != 1:
        op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 1, got rank {len(s)}")
    if c is not None and s[0] is not None and s[0] != c:
        op.fail(f"input '{name}' has shape {fmt(s)}: expected {c} elements ({what}), got {s[0]}")


# -- BatchNormalization ------------------------------------------------------------

def _bn_verify_inputs(op: OnnxOp):
    x = op.shape(op.input(0))
    if x is not None and len(x) < 1:
        op.fail("input 'X' is a scalar: expected rank >= 1 (N x C x D1 x ... x Dn)")
    c = _channels(x)
    names = [v.onnx_name for v in op.spec.inputs]
    spatial = op.attrs.spatial if "spatial" in op.spec.attributes else 1
    if spatial == 1:
        for i in range(1, 5):
            _check_vec(op, i, names[i], c)
    if op.version >= 14:
        tm = op.attrs.training_mode
        if tm not in (0, 1):
            op.fail(f"attribute 'training_mode' = {tm}: expected 0 or 1")
        slots = result_slots(op)
        n = slots[-1] + 1 if slots else 0
        want = 3 if tm else 1
        if n != want:
            op.fail(f"expected {want} output(s) with training_mode={tm}, got {n}")


@verifier("BatchNormalization", 7, 9, 14, 15)
def _bn_verify(op: OnnxOp):
    _bn_verify_inputs(op)


@shape_rule("BatchNormalization", 7, 9, 14, 15)
def _bn_shape(op: OnnxOp):
    _bn_verify_inputs(op)
    x = op.input(0)
    xs = op.shape(x)
    out = [tensor(xs, op.elem(x)) if op.elem(x) is not None else None]
    if op.version >= 14:
        c = _channels(xs)
        stat_shape = (c,) if xs is not None else (None,)
        for slot in result_slots(op)[1:]:
            et = op.elem(op.input(2 + slot))  # running_mean <- input_mean, ...
            out.append(tensor(stat_shape, et) if et is not None else None)
    else:
        mean = op.input(3)
        et = op.elem(mean)
        for _ in op.results[1:]:
            out.append(tensor(op.shape(mean), et) if et is not None else None)
    return out


# -- InstanceNormalization ---------------------------------------------------------------

def _in_verify(op: OnnxOp):
    x = op.shape(op.input(0))
    if x is not None and len(x) < 3:
        op.fail(f"input 'input' has shape {fmt(x)}: expected rank >= 3 "
                f"(N x C x D1 x ... x Dn), got rank {len(x)}")
    c = _channels(x)
    _check_vec(op, 1, "scale", c)
    _check_vec(op, 2, "B", c)


def _same_as_x(op: OnnxOp):
    x = op.input(0)
    return [tensor(op.shape(x), op.elem(x)) if op.elem(x) is not None else None]


verifier("InstanceNormalization", 6, 22)(_in_verify)
shape_rule("InstanceNormalization", 6, 22)(_same_as_x)


# -- LayerNormalization ---------------------------------------------------------------

_STASH_TYPES = {1: "f32", 16: "bf16"}


def _ln_axis(op: OnnxOp, x):
    axis = op.attrs.axis
    if x is None:
        return None
    r = len(x)
    if not -r <= axis < r:
        op.fail(f"attribute 'axis' = {axis}: expected a value in [{-r}, {r - 1}] for input "
                f"'X' of rank {r}")
    return axis + r if axis < 0 else axis


def _ln_check_param(op: OnnxOp, i: int, name: str, x, axis):
    s = op.shape(op.input(i))
    if s is None or x is None:
        return
    norm = x[axis:]
    if len(s) > len(x):
        op.fail(f"input '{name}' has shape {fmt(s)}: expected it to broadcast to X's "
                f"normalized shape {fmt(norm)} (rank <= {len(x)}), got rank {len(s)}")
    for k in range(1, len(s) + 1):
        sd, xd = s[-k], x[-k]
        is_norm = len(x) - k >= axis
        if sd is None or sd == 1:
            continue
        if not is_norm or (xd is not None and sd != xd):
            op.fail(f"input '{name}' has shape {fmt(s)}: expected it to broadcast to X's "
                    f"normalized shape {fmt(norm)} (axis={axis})")


def _ln(op: OnnxOp):
    x = op.shape(op.input(0))
    axis = _ln_axis(op, x)
    st = op.attrs.stash_type
    if st not in _STASH_TYPES:
        op.fail(f"attribute 'stash_type' = {st}: expected 1 (float) or 16 (bfloat16)")
    _ln_check_param(op, 1, "Scale", x, axis)
    _ln_check_param(op, 2, "B", x, axis)
    return x, axis


@verifier("LayerNormalization", 17)
def _ln_verify(op: OnnxOp):
    _ln(op)


@shape_rule("LayerNormalization", 17)
def _ln_shape(op: OnnxOp):
    import mlir.ir as ir
    x, axis = _ln(op)
    et = op.elem(op.input(0))
    out = [tensor(x, et) if et is not None else None]
    stash = ir.Type.parse(_STASH_TYPES[op.attrs.stash_type])
    stat = None if x is None else tuple(d if k < axis else 1 for k, d in enumerate(x))
    for _ in op.results[1:]:
        out.append(tensor(stat, stash))
    return out


# -- GroupNormalization ------------------------------------------------------------------

def group_norm_checks(ctx: D.ShapeChecks, c: D.Dim, g: int, scale: D.Dim, bias: D.Dim,
                      per_channel: bool) -> D.Dim:
    """GroupNormalization's consistency, once for the rule and the lowering:
    C divisible by num_groups, scale/bias of C (v21) or num_groups (v18)
    elements. ``scale``/``bias``: their lengths (None: no check). Returns C/G."""
    ctx.require(D.eq(c % g, 0), f"channels C = {{0}} are not divisible by num_groups = {g}", c)
    want, what = (c, "C (channels of X)") if per_channel else (g, "num_groups")
    for name, n in (("scale", scale), ("bias", bias)):
        if n is not None:
            ctx.require(D.eq(n, want), f"input '{name}' has shape [{{0}}]: expected {{1}} "
                        f"elements ({what}), got {{0}}", n, want)
    return c // g


def _gn_verify(op: OnnxOp):
    x = op.shape(op.input(0))
    g = op.attrs.num_groups
    if g is None:
        op.fail("attribute 'num_groups' is required")
    if g < 1:
        op.fail(f"attribute 'num_groups' = {g}: expected >= 1")
    if x is not None and len(x) < 2:
        op.fail(f"input 'X' has shape {fmt(x)}: expected rank >= 2 (N x C x D1 x ... x Dn), "
                f"got rank {len(x)}")
    c = _channels(x)
    if op.version >= 21:
        st = op.attrs.stash_type
        if st not in (1, 10, 11, 16):
            op.fail(f"attribute 'stash_type' = {st}: expected 1 (float), 10 (float16), "
                    f"11 (double) or 16 (bfloat16)")
    lens = []
    for i, name in ((1, "scale"), (2, "bias")):
        s = op.shape(op.input(i))
        if s is not None and len(s) != 1:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 1, got rank {len(s)}")
        lens.append(D.UNKNOWN if s is None or s[0] is None else s[0])
    group_norm_checks(D.inference_checks(op), D.UNKNOWN if c is None else c, g, *lens,
                      per_channel=op.version >= 21)


verifier("GroupNormalization", 18, 21)(_gn_verify)
shape_rule("GroupNormalization", 18, 21)(_same_as_x)


# -- LRN: the input's shape ------------------------------------------------------
LRN_VERSIONS = (1, 13)


@verifier("LRN", *LRN_VERSIONS)
def _lrn_verify(op: OnnxOp):
    size = op.attrs.size
    if size is None:
        op.fail("attribute 'size' is required")
    if size < 1:
        op.fail(f"attribute 'size' = {size}: expected >= 1")
    x = op.shape(op.input(0))
    if x is not None and len(x) < 2:
        op.fail(f"input 'X' has shape {fmt(x)}: expected rank >= 2 (N x C x D1 x ... x Dn), "
                f"got rank {len(x)}")


@shape_rule("LRN", *LRN_VERSIONS)
def _lrn_shape(op: OnnxOp):
    x = op.input(0)
    return [tensor(op.shape(x), op.elem(x)) if op.elem(x) is not None else None]


# -- RMSNormalization, MeanVarianceNormalization, LpNormalization: X's shape --------
shape_rule("RMSNormalization", 23)(same_as_input)
shape_rule("MeanVarianceNormalization", 9, 13)(same_as_input)
shape_rule("LpNormalization", 1, 22)(same_as_input)


@verifier("LpNormalization", 1, 22)
def _lp_verify(op: OnnxOp):
    if op.attrs.p not in (1, 2):
        op.fail(f"attribute 'p' = {op.attrs.p}: expected 1 or 2")
    r = op.rank(op.input(0))
    if r is not None and not -r <= op.attrs.axis < r:
        op.fail(f"attribute 'axis' = {op.attrs.axis}: expected a value in [{-r}, {r - 1}] "
                f"for input 'input' of rank {r}")


@verifier("RMSNormalization", 23)
def _rms_verify(op: OnnxOp):
    r = op.rank(op.input(0))
    if r is not None and not -r <= op.attrs.axis < r:
        op.fail(f"axis {op.attrs.axis} is out of range for rank {r}")
