"""importer/lean_parse.py: a model file's large weights read once (#29).

The lean parse must give the importer exactly what the whole parse gives
(the same module, byte for byte), fall back to the whole parse for any
other layout, and keep every bad-file message."""
import hashlib
import io

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.importer import lean_parse
from onnx_mlir_py.importer.model import INFERENCE_DATA_LIMIT, load_model

pytestmark = pytest.mark.quick   # the quick tier (README, Tests)

BIG = INFERENCE_DATA_LIMIT // 4 + 1         # elements: just above the cut
N = 160                                     # N * N > BIG


def _model():
    """Big weights of several types (cut), a small one, one with typed
    float_data and one on a negative-free but tiny shape (kept)."""
    rng = np.random.default_rng(0)
    n = N * N
    assert n > BIG
    inits = [
        nh.from_array(rng.standard_normal((N, N)).astype(np.float32), "w32"),
        nh.from_array(rng.integers(-9, 9, (N, N)).astype(np.int64), "w64"),
        nh.from_array(rng.standard_normal((N, N)).astype(np.float16), "w16"),
        nh.from_array(rng.integers(-100, 100, (N, N)).astype(np.int8), "w8"),
        nh.from_array(np.ones((N,), np.float32), "small"),
        h.make_tensor("typed", T.FLOAT, [N, N], rng.standard_normal(n).tolist()),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, [N, N])
    nodes = [h.make_node("MatMul", ["x", "w32"], ["a"]),
             h.make_node("Cast", ["w64"], ["c64"], to=T.FLOAT),
             h.make_node("Cast", ["w16"], ["c16"], to=T.FLOAT),
             h.make_node("Cast", ["w8"], ["c8"], to=T.FLOAT),
             h.make_node("Sum", ["a", "c64", "c16", "c8", "typed"], ["s"]),
             h.make_node("Add", ["s", "small"], ["y"])]
    g = h.make_graph(nodes, "g", [x], [h.make_tensor_value_info("y", T.FLOAT, [N, N])],
                     initializer=inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _digest(module) -> str:
    bio = io.BytesIO()
    module.operation.write_bytecode(bio)
    return hashlib.sha256(bio.getvalue()).hexdigest()


def _import_in_child(path: str, lean: bool) -> str:
    """The imported module's bytecode digest, from a fresh process (the
    resource names count up per process)."""
    import subprocess
    import sys
    code = ("import sys, io, hashlib\n"
            "import onnx_mlir_py.importer.lean_parse as L\n"
            "if sys.argv[2] == '0':\n"
            "    L.parse_lean = lambda b, m: None\n"
            "from onnx_mlir_py.importer import import_model\n"
            "m = import_model(sys.argv[1])\n"
            "b = io.BytesIO(); m.operation.write_bytecode(b)\n"
            "print(hashlib.sha256(b.getvalue()).hexdigest())\n")
    out = subprocess.run([sys.executable, "-c", code, path, "1" if lean else "0"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_lean_parse_cuts_only_the_large_plain_weights(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_model(), str(path))
    data = path.read_bytes()
    model, weights = lean_parse.parse_lean(memoryview(data), INFERENCE_DATA_LIMIT)
    assert sorted(weights) == ["w16", "w32", "w64", "w8"]
    full = onnx.load(str(path))
    assert [t.name for t in model.graph.initializer] == [t.name for t in full.graph.initializer]
    for t, whole in zip(model.graph.initializer, full.graph.initializer):
        want = onnx.TensorProto()
        want.CopyFrom(whole)
        if t.name in weights:
            assert not t.HasField("raw_data") and weights[t.name] == whole.raw_data
            want.ClearField("raw_data")
        assert t == want
    model.graph.ClearField("initializer")
    full.graph.ClearField("initializer")
    assert model == full


@pytest.mark.parametrize("unsorted", [False, True])
def test_lean_import_is_the_whole_import(tmp_path, unsorted):
    """The module the importer builds is byte-identical with and without
    the lean parse (also when validation sorts a copy of the graph)."""
    model = _model()
    if unsorted:
        nodes = list(model.graph.node)[::-1]
        model.graph.ClearField("node")
        model.graph.node.extend(nodes)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    assert _import_in_child(str(path), True) == _import_in_child(str(path), False)


def test_lean_compile_matches_onnxruntime(tmp_path):
    """End to end from a file whose weights are cut: the library's outputs
    against onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    path = tmp_path / "m.onnx"
    onnx.save(_model(), str(path))
    so = onnx_mlir_py.compile(str(path), opt_level=0)
    x = np.random.default_rng(1).standard_normal((N, N)).astype(np.float32)
    got = ExecutionSession(so).run([x])[0]
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def _tensor_field(name: str, payload: bytes) -> bytes:
    """A serialized initializer (GraphProto field 5) with only a name and raw_data."""
    t = onnx.TensorProto()
    t.name = name
    t.data_type = T.FLOAT
    t.dims.extend([len(payload) // 4])
    t.raw_data = payload
    body = t.SerializeToString()
    return lean_parse._encode(5 << 3 | 2) + lean_parse._encode(len(body)) + body


@pytest.mark.parametrize("case", ["two_graph_fields", "duplicate_names", "truncated",
                                  "group_wire_type", "nothing_to_cut"])
def test_other_layouts_fall_back(tmp_path, case):
    """Not the plain layout: parse_lean says so (None) and load_model gives
    what the whole parse gives, or its error."""
    from onnx_mlir_py.errors import ModelLoadError
    model = _model()
    data = model.SerializeToString()
    if case == "two_graph_fields":      # protobuf merges them
        extra = h.make_graph([], "", [], [], initializer=[
            nh.from_array(np.zeros(BIG, np.float32), "w_more")]).SerializeToString()
        data += lean_parse._encode(7 << 3 | 2) + lean_parse._encode(len(extra)) + extra
    elif case == "duplicate_names":
        g = model.graph.SerializeToString() + _tensor_field("w32", bytes(4 * BIG))
        model.ClearField("graph")
        data = model.SerializeToString() + lean_parse._encode(7 << 3 | 2) + \
            lean_parse._encode(len(g)) + g
    elif case == "truncated":
        data = data[:-9]
    elif case == "group_wire_type":
        data += lean_parse._encode(99 << 3 | 3) + lean_parse._encode(99 << 3 | 4)
    elif case == "nothing_to_cut":
        model.graph.ClearField("initializer")
        model.graph.initializer.extend([nh.from_array(np.ones((4,), np.float32), "w32")])
        data = model.SerializeToString()
    assert lean_parse.parse_lean(memoryview(data), INFERENCE_DATA_LIMIT) is None
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    weights = {}
    try:
        want = onnx.load(str(path))
    except Exception:               # noqa: BLE001
        with pytest.raises(ModelLoadError, match="cannot read"):
            load_model(path, weights)
        return
    assert load_model(path, weights) == want and weights == {}
