"""codegen/bufferize_chunks: a long entry is cut into chunk functions before
bufferization (issue #29: the one-shot analysis and the deallocation
pipeline grew with the square of one block's ops). Cuts only where no copy
is needed (what leaves a chunk is a buffer it allocates, nothing entering
is a slice); results unchanged against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import mlir.ir as ir

from onnx_mlir_py.codegen import bufferize as B
from onnx_mlir_py.codegen import bufferize_chunks as C
from onnx_mlir_py.codegen.passes import run_pipeline
from onnx_mlir_py.context import make_context
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.testing.check import assert_match, reference

_ADD = """
  %e{i} = tensor.empty() : tensor<8xf32>
  %v{i} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins(%v{p} : tensor<8xf32>) outs(%e{i} : tensor<8xf32>) {{
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
  }} -> tensor<8xf32>"""


def _chain_ir(n: int, view_at: set[int] = frozenset(), slice_at: set[int] = frozenset()) -> str:
    """``n`` adds of a constant; after the ops in ``view_at`` the value goes
    through an expand/collapse (a view), in ``slice_at`` through an
    extract_slice of a wider tensor padded by a concat of itself."""
    body = []
    for i in range(1, n + 1):
        body.append(_ADD.format(i=i, p=i - 1))
        if i in view_at:
            body.append(f"  %x{i} = tensor.expand_shape %v{i} [[0, 1]] output_shape [2, 4]"
                        f" : tensor<8xf32> into tensor<2x4xf32>\n"
                        f"  %w{i} = tensor.collapse_shape %x{i} [[0, 1]]"
                        f" : tensor<2x4xf32> into tensor<8xf32>")
            body[-1] += f"\n  %vv{i} = tensor.cast %w{i} : tensor<8xf32> to tensor<8xf32>"
        if i in slice_at:
            body.append(f"  %d{i} = tensor.concat dim(0) %v{i}, %v{i}"
                        f" : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>\n"
                        f"  %vv{i} = tensor.extract_slice %d{i}[4] [8] [1]"
                        f" : tensor<16xf32> to tensor<8xf32>")
    text = "\n".join(body)
    for i in view_at | slice_at:         # the next op reads the view
        text = text.replace(f"ins(%v{i} :", f"ins(%vv{i} :")
    return f"""
#id = affine_map<(d0) -> (d0)>
func.func @main_graph(%v0: tensor<8xf32>) -> tensor<8xf32> {{
  %c = arith.constant 1.0 : f32
{text}
  return %v{n} : tensor<8xf32>
}}"""


def _chunks(m: ir.Module) -> list[ir.Operation]:
    return [op.operation for op in m.body.operations
            if op.operation.attributes["sym_name"].value.startswith(C.PREFIX)]


def test_short_entry_is_left_whole():
    with make_context():
        m = ir.Module.parse(_chain_ir(20))
        assert C.outline_chunks(m, "main_graph", size=8, min_ops=100) == []
        assert not _chunks(m)


def test_long_entry_becomes_chunk_calls_and_bufferizes_without_copies():
    with make_context():
        m = ir.Module.parse(_chain_ir(60))
        names = C.outline_chunks(m, "main_graph", size=16, min_ops=32)
        assert m.operation.verify()
        assert len(names) >= 3, names
        chunks = _chunks(m)
        assert [c.attributes["sym_name"].value for c in chunks] == names
        for c in chunks:
            assert str(c.attributes["passthrough"]) == '["noinline"]'
            # no chunk is tiny or huge: every op of the entry moved into one
            n = sum(1 for op in c.regions[0].blocks[0].operations
                    if op.operation.name == "linalg.generic")
            assert 8 <= n <= 2 * 16, n
        entry = [op.operation.name for op in m.body.operations][-1]
        assert entry == "func.func"
        main = C.find_entry(m, "main_graph")
        assert not walk_ops(main, "linalg.generic")
        run_pipeline(m, B.BUFFERIZE_PIPELINE, "test")
        assert m.operation.verify()
        assert not walk_ops(m, ("memref.copy", "bufferization.clone", "memref.subview"))
        # each chunk frees what it does not return
        for c in _chunks(m):
            allocs = len(walk_ops(c, "memref.alloc"))
            assert len(walk_ops(c, "memref.dealloc")) == allocs - 1


def _copies(text: str, size: int | None) -> tuple[int, list]:
    """(copies after bufferization, chunk names), cut in chunks of ``size``
    ops (None: whole)."""
    with make_context():
        m = ir.Module.parse(text)
        names = C.outline_chunks(m, "main_graph", size=size, min_ops=32) if size else []
        assert m.operation.verify()
        run_pipeline(m, B.BUFFERIZE_PIPELINE, "test")
        assert m.operation.verify()
        for c in _chunks(m):      # returned and passed memrefs are whole buffers
            fty = ir.FunctionType(ir.TypeAttr(c.attributes["function_type"]).value)
            assert "strided" not in str(fty), str(fty)
        return len(walk_ops(m, ("memref.copy", "bufferization.clone"))), names


@pytest.mark.parametrize("kind", ["view", "slice"])
def test_no_cut_after_a_view_or_before_a_slice(kind):
    """A view leaving a chunk would be cloned by the deallocation pipeline,
    a slice entering one copied to an identity layout: the cut moves on,
    and the chunked module copies no more than the whole one."""
    at = set(range(10, 60, 7))
    text = _chain_ir(60, view_at=at if kind == "view" else set(),
                     slice_at=at if kind == "slice" else set())
    whole, _ = _copies(text, None)
    for size in range(5, 13):           # cuts at every kind of place
        chunked, names = _copies(text, size)
        assert len(names) >= 3, names
        assert chunked == whole, size


def _model(n: int):
    """A chain with a residual read across many ops, a reshape and a slice."""
    rng = np.random.default_rng(0)
    inits = {"c": (rng.standard_normal(16) * 0.5).astype(np.float32),
             "shape": np.array([8, 8], np.int64), "back": np.array([4, 16], np.int64),
             "st": np.array([1], np.int64), "en": np.array([3], np.int64),
             "ax": np.array([0], np.int64)}
    step = {0: ("Add", ["c"]), 1: ("Tanh", []), 2: ("Mul", ["c"]), 3: ("Sigmoid", [])}
    nodes, prev = [], "x"

    def node(op, ins, out, **kw):
        nonlocal prev
        nodes.append(h.make_node(op, ins, [out], **kw))
        prev = out
    for i in range(n):
        op, extra = step[i % 4]
        node(op, [prev] + extra, f"v{i}")
        if i % 23 == 22:
            node("Reshape", [prev, "shape"], f"r{i}")
            node("Reshape", [prev, "back"], f"b{i}")
        if i % 31 == 30:
            node("Slice", [prev, "st", "en", "ax"], f"s{i}")
            node("Concat", [prev, prev], f"k{i}", axis=0)
            node("Add", [prev, "v3"], f"a{i}")          # v3: far back
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [4, 16])],
                     [h.make_tensor_value_info(prev, TP.FLOAT, [4, 16])],
                     [nh.from_array(v, k) for k, v in inits.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), \
        {"x": rng.standard_normal((4, 16)).astype(np.float32)}


@pytest.mark.parametrize("opt", [0, 2, 3])
def test_chunked_model_matches_onnxruntime(tmp_path, monkeypatch, opt):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    made = []
    real = C.outline_chunks

    def small(m, entry):
        made.append(real(m, entry, size=4, min_ops=8))
        return made[-1]
    monkeypatch.setattr(B, "outline_chunks", small)
    m, feeds = _model(150)
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=opt)
    assert made and len(made[0]) >= (2 if opt < 3 else 1), made   # -O3: few fused loops
    got = ExecutionSession(so).run([feeds["x"]])
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=1e-5, atol=1e-6)


def test_vectors_are_not_passed_between_chunks():
    """A computed vector crossing a cut would be a function argument (an i1
    vector so passed made llc fail on AVX-512: fuzzer case s2901-38)."""
    text = _chain_ir(40).replace(
        "  %c = arith.constant 1.0 : f32",
        "  %c = arith.constant 1.0 : f32\n"
        "  %x = tensor.extract %v0[%i0] : tensor<8xf32>\n"
        "  %m = vector.broadcast %x : f32 to vector<8xf32>\n"
        "  %k = arith.cmpf ogt, %m, %m : vector<8xf32>").replace(
        "  %i0 = ", "  %unused = ")
    text = text.replace("func.func @main_graph(%v0: tensor<8xf32>) -> tensor<8xf32> {",
                        "func.func @main_graph(%v0: tensor<8xf32>) -> tensor<8xf32> {\n"
                        "  %i0 = arith.constant 0 : index")
    # the last op reads the mask: it lives across every cut
    text = text.replace("  return %v40 : tensor<8xf32>",
                        "  %r = vector.transfer_write %m, %v40[%i0], %k"
                        " : vector<8xf32>, tensor<8xf32>\n  return %r : tensor<8xf32>")
    with make_context():
        m = ir.Module.parse(text)
        names = C.outline_chunks(m, "main_graph", size=8, min_ops=16)
        assert m.operation.verify()
        for c in _chunks(m):
            assert "vector" not in str(c.attributes["function_type"]), \
                str(c.attributes["function_type"])
        assert len(names) >= 1, names
