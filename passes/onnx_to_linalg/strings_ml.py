"""String ops (docs/design.md "Strings"): elementwise calls into the C
runtime (runtime/c/om_string.c) over ``i64`` char* elements.

* StringConcat: broadcast, one arena buffer per result element.
* StringSplit: a count pass, a max, then one call per (element, part).
* StringNormalizer: a keep mask, its sum, then an scf.for packing the kept
  elements (case-changed by om_str_case) in order.
* Equal on strings: strcmp (hooked from elementwise.py's compare rule).
* RegexFullMatch: the RE2 pattern is translated at compile time to an
  anchored POSIX ERE (glibc regcomp; ``\\b``/``\\B`` are glibc's GNU word
  boundaries, ASCII like RE2's); RE2 syntax without an exact POSIX
  equivalent (``(?``, lazy quantifiers, ``\\p``, ``\\A``, ...) and non-ASCII
  patterns are refused naming the node. Where the pattern has ``.`` or a
  negated class (one byte in POSIX, one code point in RE2), a non-ASCII
  input fails the call naming the node instead of answering wrongly.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, func

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import broadcast_generic
from onnx_mlir_py.passes.onnx_to_linalg.builder import DYN, LoweringContext, affine_map

_SPECIAL = set(".[]{}()\\*+?^$|")
_CLASSES = {"d": "0-9", "w": "A-Za-z0-9_", "s": "\t\n\f\r "}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _call(b: LoweringContext, name: str, args: list) -> ir.Value:
    """``i64 name(i64...)`` of om_string.c (declared once per module)."""
    decls = b.__dict__.setdefault("_om_string_decls", set())
    if name not in decls:
        with ir.InsertionPoint.at_block_begin(b.module.body), ir.Location.unknown():
            func.FuncOp(name, ir.FunctionType.get([_i64()] * len(args), [_i64()]),
                        visibility="private")
        decls.add(name)
    return func.CallOp([_i64()], ir.FlatSymbolRefAttr.get(name), args).results[0]


call_i64 = _call


def string_tensor(b: LoweringContext, values: list) -> ir.Value:
    """A 1-D constant string tensor (i64 char* to literals)."""
    from mlir.dialects import tensor
    t = ir.RankedTensorType.get([len(values)], _i64())
    return tensor.from_elements(t, [string_literal(b, str(v)) for v in values])


def string_literal(b: LoweringContext, text: str) -> ir.Value:
    """An i64 char* to a NUL-terminated constant (an llvm.mlir.global)."""
    lits = b.__dict__.setdefault("_om_string_lits", {})
    if text not in lits:
        name = f"om_str_lit_{len(lits)}"
        data = text.encode("utf-8") + b"\0"
        esc = "".join(chr(c) if 32 <= c < 127 and chr(c) not in '"\\' else f"\\{c:02X}"
                      for c in data)
        g = ir.Operation.parse(
            f'llvm.mlir.global private constant @{name}("{esc}") {{addr_space = 0 : i32}} '
            f': !llvm.array<{len(data)} x i8>')
        ir.InsertionPoint.at_block_begin(b.module.body).insert(g)
        lits[text] = name
    ptr = ir.Operation.create("llvm.mlir.addressof", results=[ir.Type.parse("!llvm.ptr")],
                              attributes={"global_name": ir.FlatSymbolRefAttr.get(lits[text])}
                              ).result
    return ir.Operation.create("llvm.ptrtoint", results=[_i64()], operands=[ptr]).result


def _bracket(op: OnnxOp, p: str, i: int) -> tuple[str, int, bool]:
    """RE2 bracket expression at p[i] == '[' -> (POSIX text, next index, negated)."""
    i += 1
    neg = i < len(p) and p[i] == "^"
    i += neg
    items, close_first, dash = [], False, False
    first = True
    while i < len(p) and (p[i] != "]" or first):
        c = p[i]
        if c == "]":                       # a leading ']' is literal in both
            close_first = True
        elif c == "[" and p.startswith("[:", i):
            j = p.find(":]", i)
            if j < 0:
                op.fail(f"regex pattern {p!r}: unterminated character class")
            items.append(p[i:j + 2])
            i = j + 1
        elif c == "\\" and i + 1 < len(p):
            e = p[i + 1]
            i += 1
            if e in _CLASSES:
                items.append(_CLASSES[e])
            elif e in _ESCAPES:
                items.append(_ESCAPES[e])
            elif e == "]":
                close_first = True
            elif e == "-":
                dash = True
            elif e in "\\.[^*+?(){}|$/":
                items.append(e)
            else:
                op.fail(f"regex pattern {p!r}: '\\{e}' in a character class has no "
                        "POSIX equivalent")
        elif c == "-" and (i + 1 < len(p) and p[i + 1] == "]"):
            dash = True
        else:
            items.append(c)
        first = False
        i += 1
    if i >= len(p):
        op.fail(f"regex pattern {p!r}: unterminated character class")
    body = "".join(items)
    if body.startswith("^"):
        body = body[1:] + "^" if len(body) > 1 else "^"   # '^' literal: not first
    text = "[" + ("^" if neg else "") + ("]" if close_first else "") + body + \
        ("-" if dash else "") + "]"
    return text, i + 1, neg


def re2_to_posix(op: OnnxOp, p: str) -> tuple[str, bool]:
    """(anchored POSIX ERE, ascii_only): see the module docstring."""
    if any(ord(c) > 127 for c in p):
        op.fail(f"regex pattern {p!r}: non-ASCII patterns are not supported")
    out, ascii_only, i = [], False, 0
    while i < len(p):
        c = p[i]
        if c == "(" and p.startswith("(?", i):
            op.fail(f"regex pattern {p!r}: '(?' groups/flags have no POSIX equivalent")
        if c in "*+?}" and i + 1 < len(p) and p[i + 1] == "?":
            op.fail(f"regex pattern {p!r}: lazy quantifiers have no POSIX equivalent")
        if c == "[":
            text, i, neg = _bracket(op, p, i)
            out.append(text)
            ascii_only |= neg
            continue
        if c == ".":
            out.append("[^\n]")
            ascii_only = True
        elif c == "\\":
            if i + 1 >= len(p):
                op.fail(f"regex pattern {p!r}: trailing backslash")
            e = p[i + 1]
            i += 1
            if e in _CLASSES:
                out.append(f"[{_CLASSES[e]}]")
            elif e in _CLASSES.keys() | {x.upper() for x in _CLASSES} and e.isupper():
                out.append(f"[^{_CLASSES[e.lower()]}]")
                ascii_only = True
            elif e in "bB":
                out.append("\\" + e)
            elif e in _ESCAPES:
                out.append(_ESCAPES[e])
            elif e in _SPECIAL:
                out.append("\\" + e)
            elif not e.isalnum():
                out.append(e)
            else:
                op.fail(f"regex pattern {p!r}: '\\{e}' has no POSIX equivalent")
        else:
            out.append(c)
        i += 1
    return "^(" + "".join(out) + ")$", ascii_only


@lowering("StringConcat", 20)
def lower_string_concat(op: OnnxOp, b: LoweringContext) -> list[ir.Value]:
    return [broadcast_generic(op, b, [op.input(0), op.input(1)],
                              lambda x, y: _call(b, "om_str_concat", [x, y]))]


def lower_string_equal(op: OnnxOp, b: LoweringContext) -> list[ir.Value]:
    """Equal (19+) on string tensors."""
    def body(x, y):
        r = _call(b, "om_str_eq", [x, y])
        return arith.cmpi(arith.CmpIPredicate.ne, r, arith.constant(_i64(), 0))
    return [broadcast_generic(op, b, [op.input(0), op.input(1)], body)]


@lowering("RegexFullMatch", 20)
def lower_regex_full_match(op: OnnxOp, b: LoweringContext) -> list[ir.Value]:
    pattern = op.attrs.pattern
    if pattern is None:
        op.fail("RegexFullMatch without a pattern")
    ere, ascii_only = re2_to_posix(op, pattern)
    cid = len(b.check_messages)
    b.check_messages.append(
        f"node '{op.name}' (RegexFullMatch): pattern {pattern!r} (code {{0}}: 0 = not "
        "accepted by POSIX regcomp, 1 = it matches single bytes where RE2 matches "
        "code points, and an input string is not ASCII)")
    pat = string_literal(b, ere)
    flag = arith.constant(_i64(), int(ascii_only))
    check = arith.constant(_i64(), cid)

    def body(x):
        r = _call(b, "om_regex_full_match", [x, pat, flag, check])
        return arith.cmpi(arith.CmpIPredicate.ne, r, arith.constant(_i64(), 0))
    return [broadcast_generic(op, b, [op.input(0)], body)]


@lowering("StringSplit", 20)
def lower_string_split(op: OnnxOp, b: LoweringContext) -> list[ir.Value]:
    """Z: the number of parts of each string; Y: [X's dims, max(Z)], the parts
    padded with "" (onnx.reference's str.split semantics, om_str_split)."""
    from mlir.dialects import tensor
    from onnx_mlir_py import ir_linalg as linalg
    x = op.input(0)
    xt = b.ranked(op, x)
    rank = xt.rank
    delim = string_literal(b, op.attrs.delimiter or "")
    ms = op.attrs.maxsplit
    maxsplit = arith.constant(_i64(), -1 if ms is None else int(ms))
    if ms is not None and int(ms) < 0:
        op.fail(f"maxsplit must be >= 0, got {ms}")
    dims = b.dims(x)
    minus1 = arith.constant(_i64(), -1)
    ident = affine_map(rank, list(range(rank)))
    z = b.generic([x], [b.empty(dims, _i64())], [ident, ident], ["parallel"] * rank,
                  lambda s, _o: _call(b, "om_str_split", [s, delim, maxsplit, minus1]))[0]
    # the widest split (0 for an empty X)
    zero = b.full([], _i64(), 0)
    m = b.generic([z], [zero], [ident, affine_map(rank, [])], ["reduction"] * rank,
                  lambda c, acc: arith.maxsi(c, acc))[0]
    width = arith.index_cast(ir.IndexType.get(), tensor.extract(m, []))
    y_dims = list(dims) + [width]

    def part(s, _o):
        k = arith.index_cast(_i64(), linalg.IndexOp(ir.IntegerAttr.get(_i64(), rank)).result)
        return _call(b, "om_str_split", [s, delim, maxsplit, k])
    y = b.generic([x], [b.empty(y_dims, _i64())],
                  [affine_map(rank + 1, list(range(rank))), affine_map(rank + 1, list(range(rank + 1)))],
                  ["parallel"] * (rank + 1), part)[0]
    return [y, z]


_CASE = {"NONE": 0, "LOWER": 1, "UPPER": 2}


@lowering("StringNormalizer", 10)
def lower_string_normalizer(op: OnnxOp, b: LoweringContext) -> list[ir.Value]:
    """[C] or [1, C]: stopwords dropped (whole elements, compared lower-cased
    when not case-sensitive, as onnxruntime), the rest case-changed and packed
    in order; [""] when none is left."""
    from mlir.dialects import scf, tensor
    x = op.input(0)
    xt = b.ranked(op, x)
    action = op.attrs.case_change_action or "NONE"
    if action not in _CASE:
        op.fail(f"case_change_action must be NONE, LOWER or UPPER, got {action!r}")
    loc = op.attrs.locale
    if loc not in (None, "", "en_US"):
        op.fail(f"locale {loc!r} is not supported (only en_US)")
    sensitive = bool(op.attrs.is_case_sensitive)
    stops = list(op.attrs.stopwords or [])
    if not sensitive:
        if any(ord(c) > 127 for w in stops for c in w):
            op.fail("non-ASCII stopwords compared case-insensitively are not supported")
        stops = [w.lower() for w in stops]
    if xt.rank not in (1, 2):
        op.fail(f"input must be [C] or [1, C], got rank {xt.rank}")
    if xt.rank == 2:
        n = b.dim(x, 0)
        if isinstance(n, int):
            if n != 1:
                op.fail(f"input must be [C] or [1, C], got [{n}, C]")
        else:
            b.require(arith.cmpi(arith.CmpIPredicate.eq, n, b.index(1)),
                      f"node '{op.name}' (StringNormalizer): input must be [C] or [1, C], "
                      f"got [{{0}}, C]", n)
        x = tensor.collapse_shape(ir.RankedTensorType.get([xt.shape[1]], _i64()), x, [[0, 1]])
    cid = len(b.check_messages)
    b.check_messages.append(f"node '{op.name}' (StringNormalizer): no UTF-8 case tables "
                            "(glibc locale C.UTF-8) for a non-ASCII string")
    check = arith.constant(_i64(), cid)
    words = string_literal(b, "\0".join(stops))
    nstops = arith.constant(_i64(), len(stops))
    sens = arith.constant(_i64(), int(sensitive))
    act = arith.constant(_i64(), _CASE[action])
    idx = ir.IndexType.get()
    c = b.dim(x, 0)
    c_v = b.as_index(c)
    ident = affine_map(1, [0])
    keep = b.generic([x], [b.empty([c], _i64())], [ident, ident], ["parallel"],
                     lambda s, _o: _call(b, "om_str_norm_keep", [s, words, nstops, sens, check])
                     )[0]
    total = b.generic([keep], [b.full([], _i64(), 0)], [ident, affine_map(1, [])],
                      ["reduction"], lambda k, acc: arith.addi(k, acc))[0]
    k = arith.index_cast(idx, tensor.extract(total, []))
    width = arith.maxui(k, b.index(1))
    out = b.full([width], _i64(), 0)
    empty = string_literal(b, "")
    out = b.generic([], [out], [ident], ["parallel"], lambda _o: empty)[0]
    zero, one = b.index(0), b.index(1)
    loop = scf.ForOp(zero, c_v, one, [out, zero])
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        acc, pos = loop.inner_iter_args
        kept = arith.cmpi(arith.CmpIPredicate.ne, tensor.extract(keep, [i]),
                          arith.constant(_i64(), 0))
        if_op = scf.IfOp(kept, [acc.type, idx], has_else=True)
        with ir.InsertionPoint(if_op.then_block):
            s = _call(b, "om_str_case", [tensor.extract(x, [i]), act, check])
            scf.YieldOp([tensor.insert(s, acc, [pos]), arith.addi(pos, one)])
        with ir.InsertionPoint(if_op.else_block):
            scf.YieldOp([acc, pos])
        scf.YieldOp(list(if_op.results))
    y = loop.results[0]
    if xt.rank == 2:
        y = tensor.expand_shape(ir.RankedTensorType.get([1, DYN], _i64()), y, [[0, 1]],
                                output_shape=[width], static_output_shape=[1, DYN])
    return [y]
