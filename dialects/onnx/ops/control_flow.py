"""Control flow (If, Loop, Scan), optionals and sequences.

The shape-inference pass infers region bodies before the op's rule, so these
rules read the types the bodies yield:

* If: each result is what both branches agree on (dims that differ become
  dynamic, ranks that differ make it unranked).
* Loop: loop-carried results merge the initial value with the body output;
  a carried value whose shape changes across iterations gets dynamic dims
  (the shape-inference pass re-infers the body until the carried types hold
  for every iteration: ``relaxed_carried_types``); scan outputs get a
  leading dynamic dim (the iteration count; a loop can stop early on ``cond``).
* Scan (v9+): states as Loop; each scan output is the body's per-iteration
  output with the sequence length inserted at its ``scan_output_axes`` axis.
  Scan v8 has a leading batch dim on every input and output.

Optionals and sequences: ``sequence.py`` (their family).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import i64, norm_axis

UNKNOWN = "!onnx.unknown"
IF = (1, 11, 13, 16, 19, 21, 23, 24, 25)
LOOP = (1, 11, 13, 16, 19, 21, 23, 24, 25)
SCAN = (9, 11, 16, 19, 21, 23, 24, 25)


# -- type helpers ------------------------------------------------------------------

def known(t: ir.Type | None) -> bool:
    return t is not None and str(t) != UNKNOWN and UNKNOWN not in str(t)


def seq_of(t: ir.Type) -> ir.Type:
    return ir.Type.parse(f"!onnx.seq<{t}>")


def opt_of(t: ir.Type) -> ir.Type:
    return ir.Type.parse(f"!onnx.opt<{t}>")


def _inner(t: ir.Type, prefix: str) -> ir.Type | None:
    s = str(t)
    if s.startswith(prefix) and s.endswith(">"):
        return ir.Type.parse(s[len(prefix):-1])
    return None


def seq_elem(t: ir.Type) -> ir.Type | None:
    return _inner(t, "!onnx.seq<")


def opt_elem(t: ir.Type) -> ir.Type | None:
    return _inner(t, "!onnx.opt<")


def merge(a: ir.Type | None, b: ir.Type | None) -> ir.Type | None:
    """The most precise type both ``a`` and ``b`` are instances of."""
    if not known(a) or not known(b):
        return None
    if str(a) == str(b):
        return a
    if isinstance(a, ir.ShapedType) and isinstance(b, ir.ShapedType):
        if str(a.element_type) != str(b.element_type):
            return None
        sa, sb = OnnxOp.shape_of_type(a), OnnxOp.shape_of_type(b)
        if sa is None or sb is None or len(sa) != len(sb):
            return tensor(None, a.element_type)
        return tensor([x if x == y else None for x, y in zip(sa, sb)], a.element_type)
    ea, eb = seq_elem(a), seq_elem(b)
    if ea is not None and eb is not None:
        m = merge(ea, eb)
        return seq_of(m) if m is not None else None
    ea, eb = opt_elem(a), opt_elem(b)
    if ea is not None and eb is not None:
        m = merge(ea, eb)
        return opt_of(m) if m is not None else None
    if (ea is None) != (eb is None):      # a sequence is a present optional sequence
        inner, other = (ea, b) if ea is not None else (eb, a)
        if seq_elem(inner) is not None and seq_elem(other) is not None:
            m = merge(inner, other)
            return opt_of(m) if m is not None else None
    return None


def yields(op: OnnxOp, region: int = 0) -> list[ir.Value]:
    block = op.op.regions[region].blocks[0]
    return list(list(block.operations)[-1].operands)


def _with_dim(t: ir.Type | None, axis: int, dim: int | None) -> ir.Type | None:
    """``t`` with a new dim inserted at ``axis`` (negative counts from the end)."""
    if not known(t) or not isinstance(t, ir.ShapedType):
        return None
    s = OnnxOp.shape_of_type(t)
    if s is None:
        return tensor(None, t.element_type)
    a = axis + len(s) + 1 if axis < 0 else axis
    if not 0 <= a <= len(s):
        return None
    return tensor(s[:a] + (dim,) + s[a:], t.element_type)


# -- If ------------------------------------------------------------------------------

def _branches(op: OnnxOp):
    """(then values, else values); regions are in schema (alphabetical) order."""
    return (yields(op, op.spec.regions.index("then_branch")),
            yields(op, op.spec.regions.index("else_branch")))


@shape_rule("If", *IF)
def _if_shape(op: OnnxOp):
    then, other = _branches(op)
    return [_merge_values(a, b) for a, b in zip(then, other)]


def _merge_values(a: ir.Value, b: ir.Value) -> ir.Type | None:
    """merge() of two values' types; an empty sequence (SequenceEmpty) takes
    the other's element type (it has no element to constrain it)."""
    for x, y in ((a, b), (b, a)):
        if _empty_sequence(x) and seq_elem(y.type) is not None and \
                _kind(x.type) == _kind(y.type):
            return y.type
    return merge(a.type, b.type)


def _kind(t: ir.Type) -> str | None:
    """What must agree between two ways of computing a value: the element
    type of a tensor, the element kind of a sequence/optional (None: unknown)."""
    if not known(t):
        return None
    if isinstance(t, ir.ShapedType):
        return f"tensor of {t.element_type}"
    for prefix, get in (("sequence", seq_elem), ("optional", opt_elem)):
        e = get(t)
        if e is not None:
            inner = _kind(e)
            return None if inner is None else f"{prefix} of {inner}"
    return str(t)


def _same_kind(op: OnnxOp, a: ir.Type, b: ir.Type, what: str) -> None:
    ka, kb = _kind(a), _kind(b)
    if ka is not None and kb is not None and ka != kb and not _present(ka, kb) and \
            not _present(kb, ka):
        op.fail(f"{what}: {ka} vs {kb}; the element types must agree")


def _present(opt: str, value: str) -> bool:
    """A sequence standing for an optional sequence (a Loop-carried optional
    the body fills, test_loop16_seq_none; lowered alike: a nullable pointer)."""
    return value.startswith("sequence") and opt == f"optional of {value}"


@verifier("If", *IF)
def _if_verify(op: OnnxOp):
    then, other = _branches(op)
    if len(then) != len(other) or len(then) != len(op.results):
        op.fail(f"then_branch yields {len(then)} values and else_branch {len(other)}, "
                f"but If has {len(op.results)} outputs")
    for k, (a, b) in enumerate(zip(then, other)):
        _same_kind(op, a.type, b.type, f"output #{k} is {a.type} in then_branch and "
                                       f"{b.type} in else_branch")
    s = op.shape(op.input(0))
    if s is not None and None not in s and len(s) and _numel(s) != 1:
        op.fail(f"cond has shape {list(s)}: expected a single element")


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# -- Loop ----------------------------------------------------------------------------

@shape_rule("Loop", *LOOP)
def _loop_shape(op: OnnxOp):
    body = yields(op)[1:]  # after cond
    init = op.variadic()
    out = []
    for i, r in enumerate(op.results):
        if i >= len(body):
            out.append(None)
        elif i < len(init):
            b = body[i].type
            out.append(_merge_values(init[i], body[i]) if known(init[i].type) else None)
        else:
            out.append(_with_dim(body[i].type, 0, None))
    return out


def _empty_sequence(v: ir.Value) -> bool:
    """``v`` is made by SequenceEmpty (its element shape constrains nothing)."""
    owner = v.owner
    return not isinstance(owner, ir.Block) and owner.name.startswith("onnx.sequence_empty")


@verifier("Loop", *LOOP)
def _loop_verify(op: OnnxOp):
    body = yields(op)
    if len(body) != 1 + len(op.results):
        op.fail(f"body yields {len(body)} values: expected cond + {len(op.results)} "
                f"(one per Loop output)")
    if len(op.results) < len(op.variadic()):
        op.fail(f"{len(op.variadic())} loop-carried inputs but only "
                f"{len(op.results)} outputs")
    if known(body[0].type) and str(getattr(body[0].type, "element_type", "")) != "i1":
        op.fail(f"body yields its condition as {body[0].type}: expected a bool tensor")
    for k, (init, out) in enumerate(zip(op.variadic(), body[1:])):
        _same_kind(op, init.type, out.type, f"loop-carried value #{k} enters as {init.type} "
                                            f"and the body yields {out.type}")


# -- Scan ----------------------------------------------------------------------------

def _axes(op: OnnxOp, name: str, n: int) -> list[int]:
    v = getattr(op.attrs, name)
    return list(v) if v else [0] * n


@shape_rule("Scan", *SCAN)
def _scan_shape(op: OnnxOp):
    ins = op.variadic()
    m = op.attrs.num_scan_inputs
    n = len(ins) - m
    body = yields(op)
    in_axes = _axes(op, "scan_input_axes", m)
    seq_len = None
    if m and in_axes:
        s = op.shape(ins[n])
        if s is not None:
            seq_len = s[norm_axis(op, in_axes[0], len(s), "scan_input_axes entry")]
    k = len(op.results) - n
    out_axes = _axes(op, "scan_output_axes", k)
    out = []
    for i in range(len(op.results)):
        if i >= len(body):
            out.append(None)
        elif i < n:
            out.append(merge(ins[i].type, body[i].type))
        else:
            out.append(_with_dim(body[i].type, out_axes[i - n], seq_len))
    return out


@verifier("Scan", *SCAN)
def _scan_verify(op: OnnxOp):
    m = op.attrs.num_scan_inputs
    if m is None or m < 1 or m > len(op.variadic()):
        op.fail(f"num_scan_inputs = {m}: expected 1..{len(op.variadic())} (the inputs)")
    for name, count in (("scan_input_axes", m), ("scan_input_directions", m),
                        ("scan_output_axes", len(op.results) - (len(op.variadic()) - m)),
                        ("scan_output_directions",
                         len(op.results) - (len(op.variadic()) - m))):
        v = getattr(op.attrs, name)
        if v and len(v) != count:
            op.fail(f"attribute '{name}' has {len(v)} entries, expected {count}")


@shape_rule("Scan", 8)
def _scan8_shape(op: OnnxOp):
    ins = op.variadic()
    m = op.attrs.num_scan_inputs
    n = len(ins) - m
    body = yields(op)
    batch = seq = None
    if ins:
        s0 = op.shape(ins[0])
        batch = s0[0] if s0 else None
    if m:
        s = op.shape(ins[n])
        seq = s[1] if s is not None and len(s) > 1 else None
    out = []
    for i in range(len(op.results)):
        if i >= len(body):
            out.append(None)
        elif i < n:
            out.append(_with_dim(body[i].type, 0, batch))
        else:
            t = _with_dim(body[i].type, 0, seq)
            out.append(_with_dim(t, 0, batch) if t is not None else None)
    return out


# -- body argument types ---------------------------------------------------------------

def _drop_dim(t: ir.Type, axis: int) -> ir.Type | None:
    if not known(t) or not isinstance(t, ir.ShapedType):
        return None
    s = OnnxOp.shape_of_type(t)
    if s is None:
        return tensor(None, t.element_type)
    a = axis + len(s) if axis < 0 else axis
    if not 0 <= a < len(s):
        return None
    return tensor(s[:a] + s[a + 1:], t.element_type)


def body_arg_types(op: OnnxOp) -> list[ir.Type | None] | None:
    """Types the body block arguments of a Loop / Scan (v9+) take from the
    op's operands (None: leave the argument's type), or None for other ops."""
    if op.op_type == "Loop":
        return [tensor((), i64()), tensor((), ir.IntegerType.get_signless(1))] + \
            [v.type if known(v.type) else None for v in op.variadic()]
    if op.op_type == "Scan" and op.version >= 9:
        ins = op.variadic()
        m = op.attrs.num_scan_inputs or 0
        n = len(ins) - m
        axes = _axes(op, "scan_input_axes", m)
        return [v.type if known(v.type) else None for v in ins[:n]] + \
            [_drop_dim(v.type, axes[i] if i < len(axes) else 0)
             for i, v in enumerate(ins[n:])]
    return None


def type_body_arguments(op: ir.Operation) -> None:
    """Give Loop / Scan body arguments the types ONNX implies, before the
    body is inferred: the operand's type where it has a rank (a static dim
    the body declares where the operand's is dynamic is not trusted: every
    iteration and every run must fit), else what the body declares."""
    if not op.regions or not len(op.regions[0].blocks):
        return
    v = OnnxOp(op)
    types = body_arg_types(v)
    if types is None:
        return
    from onnx_mlir_py.dialects.onnx.types import meet
    for arg, t in zip(op.regions[0].blocks[0].arguments, types):
        if t is None:
            continue
        if not isinstance(t, ir.RankedTensorType):
            m = meet(t, arg.type)
            t = m if m is not None and known(m) else t
        arg.set_type(t)


def carried_values(op: OnnxOp) -> list[tuple[int, int]]:
    """(body argument index, body yield index) of the values a Loop / Scan
    (v9+) carries from one iteration to the next."""
    if op.op_type == "Loop":
        return [(2 + k, 1 + k) for k in range(len(op.variadic()))]
    if op.op_type == "Scan" and op.version >= 9:
        n = len(op.variadic()) - (op.attrs.num_scan_inputs or 0)
        return [(k, k) for k in range(max(n, 0))]
    return []


def relaxed_carried_types(op: OnnxOp) -> list[ir.Type] | None:
    """After the body was inferred: the carried body arguments' types
    generalised by what the body yields (a dim that changes across
    iterations becomes dynamic, a rank that changes makes it unranked), or
    None if every carried type already holds for the next iteration."""
    block = op.op.regions[0].blocks[0]
    args, ys = list(block.arguments), yields(op)
    types, changed = [a.type for a in args], False
    for ai, yi in carried_values(op):
        if ai >= len(args) or yi >= len(ys):
            continue
        m = merge(args[ai].type, ys[yi].type)
        if m is not None and str(m) != str(args[ai].type):
            types[ai], changed = m, True
    return types if changed else None
