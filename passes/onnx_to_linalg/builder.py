"""``LoweringContext`` (the ``b`` every lowering rule gets) and type helpers.

Rules are called as ``rule(op: OnnxOp, b: LoweringContext) -> list[ir.Value]``
with the insertion point set before ``op``; operands of ``op`` are already
lowered (signless tensors), results still carry the ONNX types.

    to_signless(t)          the one ONNX -> upstream type conversion
    b.result_type(op, i)    signless type of result i
    b.unsigned(v)           True if v was an ONNX uintN value
    b.dim(v, i)             int (static) or index Value (tensor.dim)
    b.ixdim(v, i)           the same as a shape-helper dim (dialects/onnx/dims.py)
    b.require(ok, msg, *v)  run-time check: a false ``ok`` makes the call fail with msg
    b.out_dims(op, i, fn)   result dims; dynamic ones from fn(k) -> index Value
    b.empty(dims, et)       tensor.empty (dims: int | index Value)
    b.full(dims, et, x)     tensor.empty + linalg.fill
    b.const(x, et)          scalar arith.constant
    b.generic(...)          linalg.generic with a Python body builder
    b.cast_to(v, t)         tensor.cast when only static-ness differs
"""
from __future__ import annotations

from typing import Callable, Sequence

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.check_abi import CHECK_FN, CHECK_VALUES, NO_CHECKS_ATTR

DYN = ir.ShapedType.get_dynamic_size()

_ONNX_NAMES = {"ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
               "si8": "int8", "si16": "int16", "si32": "int32", "si64": "int64",
               "ui4": "uint4", "ui2": "uint2"}
# Element types kept in memory as one byte each (their bit pattern in the low
# bits, the rest zero: the layout of ml_dtypes arrays): the lowered IR only
# sees ``i8``; the ONNX type is recorded (``b.onnx_elem``) for the ops that
# interpret the bits (Cast, Quantize/DequantizeLinear; cast_bits.py).
STORAGE_TYPES = {"f8E4M3FN": "float8e4m3fn", "f8E4M3FNUZ": "float8e4m3fnuz",
                 "f8E5M2": "float8e5m2", "f8E5M2FNUZ": "float8e5m2fnuz",
                 "f8E8M0FNU": "float8e8m0", "f4E2M1FN": "float4e2m1",
                 "i4": "int4", "si4": "int4", "ui4": "uint4",
                 "i2": "int2", "si2": "int2", "ui2": "uint2"}


# Builtin types that are neither a storage type, a string nor a sequence /
# optional: the type tests below answer for them without printing the type
# (printing is most of their cost, and they run per operand of every op)
_PLAIN = (ir.F32Type, ir.F64Type, ir.F16Type, ir.BF16Type, ir.IndexType)


def is_string_type(t: ir.Type) -> bool:
    """``!onnx.string`` (or a shaped type of it): lowered to ``i64`` elements,
    each the address of a NUL-terminated UTF-8 buffer (docs/design.md)."""
    et = t.element_type if isinstance(t, ir.ShapedType) else t
    return not isinstance(et, _PLAIN + (ir.IntegerType,)) and str(et) == "!onnx.string"


def is_storage_type(t: ir.Type) -> bool:
    """An element type lowered to an ``i8`` bit container (STORAGE_TYPES)."""
    if isinstance(t, _PLAIN + (ir.ShapedType,)):
        return False
    if isinstance(t, ir.IntegerType):
        return t.width in (2, 4)
    return str(t) in STORAGE_TYPES


def to_signless(t: ir.Type) -> ir.Type:
    """ONNX-dialect type -> type upstream dialects accept (``uiN``/``siN`` ->
    ``iN``, recursively through tensor/function types). The one place where
    this conversion happens. STORAGE_TYPES (float8, float4, int4, int2) -> ``i8``."""
    if isinstance(t, _PLAIN):
        return t
    if is_storage_type(t):
        return ir.IntegerType.get_signless(8)
    if str(t) == "!onnx.string":
        return ir.IntegerType.get_signless(64)
    if isinstance(t, ir.IntegerType):
        return t if t.is_signless else ir.IntegerType.get_signless(t.width)
    if isinstance(t, ir.RankedTensorType):
        et = to_signless(t.element_type)
        return t if et == t.element_type else ir.RankedTensorType.get(list(t.shape), et)
    if isinstance(t, ir.UnrankedTensorType):
        et = to_signless(t.element_type)
        return t if et == t.element_type else ir.UnrankedTensorType.get(et)
    if isinstance(t, ir.FunctionType):
        return ir.FunctionType.get([to_signless(x) for x in t.inputs],
                                   [to_signless(x) for x in t.results])
    if is_value_type(t):
        return ir.Type.parse("!llvm.ptr")
    return t


def is_value_type(t: ir.Type) -> bool:
    """A sequence or optional (``!onnx.seq<..>``, ``!onnx.opt<..>``): lowered
    to an ``!llvm.ptr`` to a record of the C runtime (runtime/c/om_seq.c)."""
    s = str(t)
    return s.startswith("!onnx.seq<") or s.startswith("!onnx.opt<")


def lost_dtype(t: ir.Type) -> str | None:
    """ONNX type name (``"uint8"``) if ``to_signless`` loses information."""
    et = t.element_type if isinstance(t, ir.ShapedType) else t
    if is_storage_type(et):
        return STORAGE_TYPES[str(et)]
    if str(et) == "!onnx.string":
        return "string"
    if isinstance(et, ir.IntegerType) and not et.is_signless:
        return _ONNX_NAMES.get(str(et))
    return None


def is_float(t: ir.Type) -> bool:
    return isinstance(t, ir.FloatType)


def elem_of(t: ir.Type) -> ir.Type:
    return t.element_type if isinstance(t, ir.ShapedType) else t


def index_t() -> ir.Type:
    return ir.IndexType.get()


def affine_map(n_dims: int, exprs: Sequence[int | str]) -> ir.AffineMap:
    """exprs: dim position (int) or 0-constant (the string "0")."""
    es = [ir.AffineConstantExpr.get(0) if e == "0" else ir.AffineDimExpr.get(e) for e in exprs]
    return ir.AffineMap.get(n_dims, 0, es)


class LoweringContext:
    def __init__(self, module: ir.Module | None = None):
        # lowered value -> original ONNX element type (for uintN semantics)
        self._orig_elem: dict[ir.Value, ir.Type] = {}
        # lowered !llvm.ptr value -> its ONNX !onnx.seq / !onnx.opt type
        self._value_types: dict[ir.Value, ir.Type] = {}
        self.module = module
        # messages of the run-time checks (``require``), by check id
        self.check_messages: list[str] = []
        self._check_fn: ir.Operation | None = None
        # the node being lowered (set by the driver): names allocation checks
        self.node = None
        # name -> op type of every lowered node (allocation failures name it)
        self.node_types: dict[str, str] = {}
        # False: run-time checks are not emitted (compile(runtime_checks=False))
        self.runtime_checks = module is None or \
            NO_CHECKS_ATTR not in module.operation.attributes

    # -- run-time checks -------------------------------------------------------
    def require(self, ok: ir.Value, message: str, *values: ir.Value) -> None:
        """A run-time check: when ``ok`` (i1) is false, the model call stops
        and fails with ``message`` (naming the node), formatted with up to
        four ``index``/integer ``values`` as ``{0}``..``{3}``. Nothing after
        the check runs, so a violated assumption never reads out of bounds.
        (The generated code calls ``om_check_failed(id, v0..v3)`` of the C
        runtime, which records the message and returns to the entry point.)"""
        from mlir.dialects import func, scf
        if not self.runtime_checks:
            return
        if len(values) > CHECK_VALUES:
            raise ValueError(f"require: at most {CHECK_VALUES} values")
        if self.module is None:
            raise RuntimeError("require: LoweringContext has no module")
        i64 = ir.IntegerType.get_signless(64)
        if self._check_fn is None:
            with ir.InsertionPoint.at_block_begin(self.module.body), \
                    ir.Location.unknown():
                f = func.FuncOp(CHECK_FN, ir.FunctionType.get([i64] * (1 + CHECK_VALUES), []),
                                visibility="private")
            self._check_fn = f
        cid = len(self.check_messages)
        self.check_messages.append(message)
        args = [arith.constant(i64, cid)]
        for v in values:
            args.append(v if v.type == i64 else
                        arith.index_cast(i64, v) if isinstance(v.type, ir.IndexType) else
                        arith.extsi(i64, v))
        args += [arith.constant(i64, 0)] * (1 + CHECK_VALUES - len(args))
        bad = arith.xori(ok, arith.constant(ok.type, 1))
        if_op = scf.IfOp(bad)
        with ir.InsertionPoint(if_op.then_block):
            func.CallOp([], ir.FlatSymbolRefAttr.get(CHECK_FN), args)
            scf.YieldOp([])

    # -- bookkeeping ---------------------------------------------------------
    def record(self, v: ir.Value, onnx_type: ir.Type) -> None:
        if is_value_type(onnx_type):
            self._value_types[v] = onnx_type
        et = elem_of(onnx_type)
        if (isinstance(et, ir.IntegerType) and not et.is_signless) or is_storage_type(et) \
                or is_string_type(et):
            self._orig_elem[v] = et

    def unsigned(self, v: ir.Value) -> bool:
        et = self._orig_elem.get(v, elem_of(v.type))
        return isinstance(et, ir.IntegerType) and et.is_unsigned

    def value_type(self, v: ir.Value) -> ir.Type | None:
        """The ONNX sequence / optional type of lowered ``!llvm.ptr`` value ``v``."""
        return self._value_types.get(v)

    def onnx_elem(self, v: ir.Value) -> ir.Type:
        """The ONNX element type of lowered value ``v`` (``ui8``, ``f8E4M3FN``, ...)."""
        return self._orig_elem.get(v, elem_of(v.type))

    # -- types ---------------------------------------------------------------
    @staticmethod
    def result_type(op, i: int = 0) -> ir.Type:
        t = op.op.results[i].type
        if not isinstance(t, ir.RankedTensorType):
            op.fail(f"result #{i} has no ranked type ({t}); run shape-inference first")
        return to_signless(t)

    @staticmethod
    def ranked(op, v: ir.Value, what: str = "input") -> ir.RankedTensorType:
        if v is None or not isinstance(v.type, ir.RankedTensorType):
            op.fail(f"{what} has no ranked tensor type")
        return v.type

    # -- scalars / shapes ----------------------------------------------------
    @staticmethod
    def const(x, et: ir.Type) -> ir.Value:
        if isinstance(et, ir.FloatType):
            return arith.constant(et, float(x))
        if isinstance(et, ir.IndexType):
            return arith.constant(et, int(x))
        # wrap to the signless range (e.g. 255 : i8 -> -1)
        w = et.width
        if w == 1:
            return arith.constant(et, ir.IntegerAttr.get(et, 1 if x else 0))
        v = int(x) & ((1 << w) - 1)
        if v >= 1 << (w - 1):
            v -= 1 << w
        return arith.constant(et, v)

    def index(self, i: int) -> ir.Value:
        return arith.constant(index_t(), int(i))

    def dim(self, v: ir.Value, i: int):
        t = v.type
        if not t.is_dynamic_dim(i):
            return int(t.shape[i])
        return tensor.dim(v, self.index(i))

    def dims(self, v: ir.Value) -> list:
        return [self.dim(v, i) for i in range(v.type.rank)]

    def ixdim(self, v: ir.Value, i: int):
        """Dim ``i`` of ``v`` for a shape helper (``dialects/onnx/dims.py``):
        an int, or a run-time ``dims_ir.IxVal``."""
        from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import wrap
        return wrap(self.dim(v, i))

    def ixdims(self, v: ir.Value) -> list:
        return [self.ixdim(v, i) for i in range(v.type.rank)]

    def as_index(self, d) -> ir.Value:
        return self.index(d) if isinstance(d, int) else d

    def out_dims(self, op, i: int, dyn: Callable[[int], object]) -> list:
        t = self.result_type(op, i)
        return [dyn(k) if t.is_dynamic_dim(k) else int(t.shape[k]) for k in range(t.rank)]

    @staticmethod
    def type_of(dims: Sequence, et: ir.Type) -> ir.RankedTensorType:
        return ir.RankedTensorType.get([d if isinstance(d, int) else DYN for d in dims], et)

    def empty(self, dims: Sequence, et: ir.Type) -> ir.Value:
        if self.node is not None and self.runtime_checks and \
                any(isinstance(d, ir.Value) for d in dims):
            self._require_allocatable(dims, et)
        return tensor.empty(list(dims), et)

    def _require_allocatable(self, dims: Sequence, et: ir.Type) -> None:
        """Dynamic dims (from the inputs' values: ConstantOfShape, Expand,
        ...) must be >= 0 with a byte size below 2**62: the allocation size
        would overflow and wrap to a small buffer (computed in f64)."""
        f64 = ir.F64Type.get()
        width = getattr(et, "width", 64)
        size = arith.constant(f64, float(max(1, width // 8)))
        ok = None
        shown, vals = [], []
        for d in dims:
            if isinstance(d, int):
                size = arith.mulf(size, arith.constant(f64, float(d)))
                shown.append(str(d))
                continue
            size = arith.mulf(size, arith.uitofp(f64, arith.index_cast(
                ir.IntegerType.get_signless(64), d)))
            nonneg = arith.cmpi(arith.CmpIPredicate.sge, d, self.index(0))
            ok = nonneg if ok is None else arith.andi(ok, nonneg)
            shown.append(f"{{{len(vals)}}}" if len(vals) < CHECK_VALUES else "?")
            vals.append(d)
        ok = arith.andi(ok, arith.cmpf(arith.CmpFPredicate.OLT, size,
                                       arith.constant(f64, float(2 ** 62))))
        n = self.node
        self.require(ok, f"node '{n.name}' ({n.op_type}): a result of shape "
                     f"[{', '.join(shown)}] cannot be allocated (negative dim or 2**62 "
                     f"bytes or more)", *vals[:CHECK_VALUES])

    def full(self, dims: Sequence, et: ir.Type, x) -> ir.Value:
        e = self.empty(dims, et)
        c = x if isinstance(x, ir.Value) else self.const(x, et)
        return linalg.fill(c, outs=[e])

    def cast_to(self, v: ir.Value, t: ir.Type) -> ir.Value:
        if v.type == t:
            return v
        return tensor.cast(t, v)

    # -- structured ops --------------------------------------------------------
    def generic(self, inputs: Sequence[ir.Value], outputs: Sequence[ir.Value],
                maps: Sequence[ir.AffineMap], iterators: Sequence[str],
                body: Callable[..., Sequence[ir.Value] | ir.Value]) -> list[ir.Value]:
        """linalg.generic; ``body(*scalars)`` returns the yielded value(s)."""
        it = [ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in iterators]
        g = linalg.GenericOp([o.type for o in outputs], list(inputs), list(outputs),
                             ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                             ir.ArrayAttr.get(it))
        block = g.regions[0].blocks.append(
            *[elem_of(v.type) for v in list(inputs) + list(outputs)])
        with ir.InsertionPoint(block):
            r = body(*block.arguments)
            linalg.YieldOp(list(r) if isinstance(r, (list, tuple)) else [r])
        return list(g.results)

    def map_elementwise(self, inputs: Sequence[ir.Value], out_dims: Sequence, et: ir.Type,
                        body: Callable[..., ir.Value]) -> ir.Value:
        """Same-shape elementwise generic over inputs of rank len(out_dims)."""
        n = len(out_dims)
        ident = affine_map(n, list(range(n)))
        init = self.empty(out_dims, et)
        return self.generic(inputs, [init], [ident] * (len(inputs) + 1), ["parallel"] * n,
                            lambda *a: body(*a[:len(inputs)]))[0]


# -- scalar conversions shared by Cast and others ------------------------------
def convert_scalar(x: ir.Value, src_unsigned: bool, dst: ir.Type, dst_unsigned: bool = False
                   ) -> ir.Value:
    src = x.type
    if src == dst:
        return x
    if is_float(src) and is_float(dst):
        return arith.extf(dst, x) if dst.width > src.width else arith.truncf(dst, x)
    if is_float(src):  # float -> int
        if dst.width == 1:
            zero = arith.constant(src, 0.0)
            return arith.cmpf(arith.CmpFPredicate.UNE, x, zero)
        return arith.fptoui(dst, x) if dst_unsigned else arith.fptosi(dst, x)
    if is_float(dst):  # int -> float
        return arith.uitofp(dst, x) if (src_unsigned or src.width == 1) else arith.sitofp(dst, x)
    # int -> int
    if dst.width == 1:
        zero = arith.constant(src, 0)
        return arith.cmpi(arith.CmpIPredicate.ne, x, zero)
    if dst.width > src.width:
        return arith.extui(dst, x) if (src_unsigned or src.width == 1) else arith.extsi(dst, x)
    if dst.width < src.width:
        return arith.trunci(dst, x)
    return x


def pad(b: LoweringContext, x: ir.Value, low: Sequence, high: Sequence, value) -> ir.Value:
    """tensor.pad with a constant (Python number) value; amounts are ints or
    ``index`` Values (run-time padding)."""
    low, high = [[v if isinstance(v, ir.Value) else int(v) for v in vs] for vs in (low, high)]
    if all(isinstance(v, int) and v == 0 for v in list(low) + list(high)):
        return x
    t = x.type
    shape = [DYN if t.is_dynamic_dim(i) or not isinstance(low[i], int) or
             not isinstance(high[i], int) else t.shape[i] + low[i] + high[i]
             for i in range(t.rank)]
    rt = ir.RankedTensorType.get(shape, t.element_type)
    dyn = [v for v in low if not isinstance(v, int)], [v for v in high if not isinstance(v, int)]
    st = [[v if isinstance(v, int) else DYN for v in vs] for vs in (low, high)]
    p = tensor.PadOp(rt, x, dyn[0], dyn[1], ir.DenseI64ArrayAttr.get(st[0]),
                     ir.DenseI64ArrayAttr.get(st[1]))
    blk = p.regions[0].blocks.append(*[index_t()] * t.rank)
    with ir.InsertionPoint(blk):
        tensor.YieldOp(b.const(value, t.element_type))
    return p.result


def lowest(et: ir.Type):
    """Identity of max: -inf for floats, the minimum for ints."""
    if isinstance(et, ir.FloatType):
        return float("-inf")
    return -(1 << (et.width - 1))


def val(x) -> ir.Value:
    """Value of an op builder's answer (some return the OpView)."""
    if isinstance(x, ir.Value):
        return x
    if isinstance(x, (ir.OpView, ir.Operation)):
        return x.results[0]
    return x
