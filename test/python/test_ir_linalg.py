"""onnx_mlir_py.ir_linalg: each builder makes the op upstream's
``mlir.dialects.linalg`` makes (the same printed function, custom and
generic form: attributes and the body its region builder filled), and a
compile never imports ``mlir.dialects.linalg`` (#29: its opdsl import was
~60 ms of each compile)."""
import subprocess
import sys
import textwrap

import mlir.dialects.linalg as up
import mlir.ir as ir
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from mlir.dialects import arith, func
from onnx import TensorProto as T
from onnx import helper as h

from onnx_mlir_py import ir_linalg

DYN = ir.ShapedType.get_dynamic_size()

_TYPES = {"f32": ir.F32Type.get, "f16": ir.F16Type.get, "bf16": ir.BF16Type.get,
          "i32": lambda: ir.IntegerType.get_signless(32),
          "i64": lambda: ir.IntegerType.get_signless(64),
          "i8": lambda: ir.IntegerType.get_signless(8)}


def _t(shape, et):
    return ir.RankedTensorType.get(list(shape), _TYPES[et]())


def _printed(lib, build, arg_types):
    """Both forms of a function of arguments ``arg_types`` whose body is
    ``build(lib, *args)``, and the kind of what the builder returned."""
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("f", ir.FunctionType.get([t() for t in arg_types], []))
            with ir.InsertionPoint(f.add_entry_block()):
                r = build(lib, *f.arguments)
                func.ReturnOp([])
        assert m.operation.verify()
        kind = type(r).__name__ if not isinstance(r, ir.OpView) else "OpView"
        return str(m), m.operation.get_asm(print_generic_op_form=True), kind


def _same(build, *arg_types):
    mine = _printed(ir_linalg, build, arg_types)
    theirs = _printed(up, build, arg_types)
    assert mine == theirs
    return mine[0]


def _scalar(et):
    t = _TYPES[et]()
    return arith.ConstantOp(t, 1.5 if et.startswith(("f", "bf")) else 3).result


@pytest.mark.parametrize("shape,perm,et", [([2, 3, 4], [2, 0, 1], "f32"), ([3, 5], [1, 0], "f16"),
                                           ([2, 3], [1, 0], "i8"), ([DYN, 4, 6, 8], [0, 2, 3, 1], "bf16"),
                                           ([1, 2, 3, 4], [1, 0, 2, 3], "i64")])
def test_transpose(shape, perm, et):
    out = [shape[p] for p in perm]
    text = _same(lambda L, x, o: L.transpose(x, outs=[o], permutation=perm),
                 lambda: _t(shape, et), lambda: _t(out, et))
    assert "linalg.transpose" in text


@pytest.mark.parametrize("a,b,acc", [("f32", "f32", "f32"), ("f16", "f16", "f16"),
                                     ("f16", "f16", "f32"), ("i8", "i8", "i32"),
                                     ("i8", "i32", "i32"), ("bf16", "bf16", "f32")])
@pytest.mark.parametrize("batched", [False, True])
def test_matmul_batch_matmul(a, b, acc, batched):
    bt = [2] if batched else []
    name = "batch_matmul" if batched else "matmul"
    text = _same(lambda L, x, w, o: getattr(L, name)(x, w, outs=[o]),
                 lambda: _t(bt + [4, 8], a), lambda: _t(bt + [8, DYN], b),
                 lambda: _t(bt + [4, DYN], acc))
    assert f"linalg.{name} " in text


@pytest.mark.parametrize("et", ["f32", "f16", "bf16", "i32", "i8", "i64"])
@pytest.mark.parametrize("shape", [[3, 4], [], [2, DYN, 5]])
def test_fill(et, shape):
    text = _same(lambda L, o: L.fill(_scalar(et), outs=[o]), lambda: _t(shape, et))
    assert "linalg.fill" in text


def test_fill_with_an_argument():
    _same(lambda L, s, o: L.fill(s, outs=[o]), _TYPES["f32"], lambda: _t([7], "f32"))


@pytest.mark.parametrize("src,dst", [("f32", "f32"), ("i64", "i64"), ("f16", "f16"),
                                     ("i8", "i32"), ("f16", "f32"), ("i32", "f32")])
def test_copy(src, dst):
    text = _same(lambda L, x, o: L.copy(x, outs=[o]), lambda: _t([3, DYN], src),
                 lambda: _t([3, DYN], dst))
    assert "linalg.copy" in text


def test_copy_of_strided_memrefs():
    """codegen/strided_copy: a copy between memrefs (no result)."""
    def strided():
        layout = ir.Attribute.parse("strided<[16, 1], offset: ?>")
        return ir.MemRefType.get([4, 8], ir.F32Type.get(), layout=layout)
    text = _same(lambda L, x, o: L.copy(x, outs=[o]), strided,
                 lambda: ir.MemRefType.get([4, 8], ir.F32Type.get()))
    assert "linalg.copy" in text
    assert _printed(ir_linalg, lambda L, x, o: L.copy(x, outs=[o]), [
        strided, lambda: ir.MemRefType.get([4, 8], ir.F32Type.get())])[2] == "OpResultList"


_WINDOWS = [dict(strides=[2, 2], dilations=[1, 1]), dict(strides=[1, 2], dilations=[2, 1]),
            dict(strides=[1, 1], dilations=[1, 1]), dict(strides=[3, 1]), {}]


@pytest.mark.parametrize("name", ["pooling_nchw_max", "pooling_nchw_sum"])
@pytest.mark.parametrize("et", ["f32", "f16", "i32", "i8"])
@pytest.mark.parametrize("win", _WINDOWS)
def test_pooling(name, et, win):
    text = _same(lambda L, x, k, o: getattr(L, name)(x, k, outs=[o], **win),
                 lambda: _t([1, 2, 11, 11], et), lambda: _t([3, 3], et),
                 lambda: _t([1, 2, DYN, 3], et))
    assert f"linalg.{name}" in text
    if "strides" in win and win["strides"] != [1, 1]:
        assert "strides = dense<" in text


_CONVS = {  # name -> input, filter, output shapes
    "conv_2d_nchw_fchw": ([1, 3, 12, 12], [4, 3, 3, 3], [1, 4, 4, 4]),
    "conv_2d_nhwc_fhwc": ([1, 12, 12, 3], [4, 3, 3, 3], [1, 4, 4, 4]),
    "conv_2d_ngchw_gfchw": ([1, 2, 3, 12, 12], [2, 4, 3, 3, 3], [1, 2, 4, 4, 4]),
    "depthwise_conv_2d_nchw_chw": ([2, 3, 12, 12], [3, 3, 3], [2, 3, 4, 4]),
}


@pytest.mark.parametrize("name", sorted(_CONVS))
@pytest.mark.parametrize("x,w,y", [("f32", "f32", "f32"), ("bf16", "bf16", "f32"),
                                   ("f16", "f16", "f16"), ("i8", "i8", "i32")])
@pytest.mark.parametrize("win", _WINDOWS[:3])
def test_convolutions(name, x, w, y, win):
    xs, ws, ys = _CONVS[name]
    text = _same(lambda L, a, b, o: getattr(L, name)(a, b, outs=[o], **win),
                 lambda: _t(xs, x), lambda: _t(ws, w), lambda: _t(ys, y))
    assert f"linalg.{name}" in text


def test_plain_op_classes_are_upstreams():
    for name in ("GenericOp", "IndexOp", "YieldOp"):
        assert getattr(ir_linalg, name) is getattr(up, name)


_COMPILE = textwrap.dedent("""
    import sys
    import numpy as np
    import onnx_mlir_py
    so = onnx_mlir_py.compile(sys.argv[1], output=sys.argv[2], opt_level=3)
    imported = sorted(m for m in sys.modules if m.startswith(("mlir.dialects.linalg", "yaml")))
    print("linalg modules:", imported)
    assert not imported, imported
    x = np.load(sys.argv[3])
    np.save(sys.argv[4], onnx_mlir_py.ExecutionSession(str(so)).run([x])[0])
""")


def _model(rng) -> onnx.ModelProto:
    """Pad -> Conv -> MaxPool -> Transpose -> Flatten -> Gemm, random weights."""
    def init(name, *shape):
        return h.make_tensor(name, T.FLOAT, shape, rng.standard_normal(shape).astype(np.float32).ravel())
    nodes = [
        h.make_node("Pad", ["x", "pads"], ["p"], mode="constant"),
        h.make_node("Conv", ["p", "w", "b"], ["c"], kernel_shape=[3, 3]),
        h.make_node("MaxPool", ["c"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        h.make_node("Transpose", ["m"], ["t"], perm=[0, 2, 3, 1]),
        h.make_node("Flatten", ["t"], ["f"]),
        h.make_node("Gemm", ["f", "gw", "gb"], ["y"], transB=1),
    ]
    inits = [h.make_tensor("pads", T.INT64, [8], [0, 0, 1, 1, 0, 0, 1, 1]),
             init("w", 4, 3, 3, 3), init("b", 4), init("gw", 10, 8 * 8 * 4), init("gb", 10)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 16, 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 10])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    return m


def test_compile_does_not_import_upstream_linalg(tmp_path):
    """An -O3 compile of Conv / MaxPool / Gemm / Transpose / Pad imports
    neither mlir.dialects.linalg nor its opdsl and PyYAML (in a fresh
    process: this one imported them above), and agrees with onnxruntime."""
    rng = np.random.default_rng(0)
    path = tmp_path / "m.onnx"
    onnx.save(_model(rng), path)
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = subprocess.run([sys.executable, "-c", _COMPILE, str(path), str(tmp_path / "m.so"),
                        str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "linalg modules: []" in r.stdout
    want = ort.InferenceSession(str(path)).run(None, {"x": x})[0]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), want, rtol=1e-4, atol=1e-4)


_WRAP = textwrap.dedent("""
    import sys
    import mlir.ir as ir
    from onnx_mlir_py.context import make_context
    with make_context(), ir.Location.unknown():
        m = ir.Module.parse('''
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
      %0 = linalg.copy ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }''')
        ops = list(m.body.operations[0].regions[0].blocks[0].operations)
        it = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    print(type(ops[0]).__module__, type(ops[0]).__name__, type(it).__name__)
    print(sorted(m for m in sys.modules if m.startswith(("mlir.dialects.linalg", "yaml"))))
""")


def test_bindings_wrap_linalg_without_upstream_linalg():
    """The bindings import a dialect's module at the first op or attribute of
    it they wrap: in the compiler's context linalg's is
    dialects/upstream/linalg.py, with the same op classes (_linalg_ops_gen's)."""
    out = subprocess.run([sys.executable, "-c", _WRAP], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0].split()[:2] == ["mlir.dialects._linalg_ops_gen", "CopyOp"]
    assert out[1] == "[]"
