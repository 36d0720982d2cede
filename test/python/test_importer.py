"""Importer: structure of the module it builds from ONNX models."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from helpers_models import gemm_model
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.pipeline import to_onnx_ir

pytestmark = pytest.mark.quick   # the quick tier (README, Tests)


def text(module):
    return str(module)


def test_graph_io_names_and_opsets():
    m = import_model(gemm_model())
    s = text(m)
    assert 'onnx.name = "x"' in s and 'onnx.name = "y"' in s
    assert "onnx.opset_import = {ai.onnx = 17 : i64}" in s
    assert "func.func @main_graph" in s


def test_schema_defaults_are_materialised():
    s = text(import_model(gemm_model()))
    assert "alpha = 1.000000e+00 : f32" in s and "transA = 0 : si64" in s


def test_opset_dispatch_picks_versioned_op():
    node = h.make_node("Softmax", ["x"], ["y"], name="sm")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    for opset, name in ((11, "onnx.softmax_v11"), (13, "onnx.softmax")):
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        assert f'"{name}"' in text(import_model(m))


def test_node_names_become_locations():
    m = import_model(gemm_model())
    f = m.body.operations[0]
    ops = [op for op in f.regions[0].blocks[0].operations if op.name == "onnx.gemm"]
    assert ops[0].location.name_str == "fc"


def test_large_initializer_is_a_resource_and_elided_when_printed():
    big = nh.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "big")
    node = h.make_node("Add", ["x", "big"], ["y"])
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [64, 64])],
                     [h.make_tensor_value_info("y", T.FLOAT, [64, 64])], [big])
    m = import_model(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    assert "dense_resource<big_" in text(m)
    import io
    out = io.StringIO()
    m.operation.print(file=out, large_elements_limit=16, large_resource_limit=64)
    assert "0x04000000" not in out.getvalue()


def test_if_subgraphs_become_regions_with_captures():
    then_g = h.make_graph([h.make_node("Add", ["x", "x"], ["t"])], "then", [],
                          [h.make_tensor_value_info("t", T.FLOAT, [2])])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"])], "else", [],
                          [h.make_tensor_value_info("e", T.FLOAT, [2])])
    node = h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("c", T.BOOL, []),
                                   h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])])
    m = import_model(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    s = text(m)
    assert '"onnx.if' in s and 'gpu.yield' in s and '"onnx.add"(%arg1, %arg1)' in s
    assert m.operation.verify()


def test_external_data_is_loaded(tmp_path):
    model = gemm_model()
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    model.graph.initializer[0].CopyFrom(nh.from_array(w, "w"))
    path = tmp_path / "ext.onnx"
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.data", size_threshold=0)
    assert (tmp_path / "ext.data").exists()
    m = import_model(path)
    consts = [op for op in m.body.operations[0].regions[0].blocks[0].operations
              if op.name == "onnx.constant"]
    from onnx_mlir_py.dialects.onnx.opview import OnnxOp
    np.testing.assert_array_equal(OnnxOp.const(consts[0].result), w)


def test_model_file_parse_is_onnx_load(tmp_path):
    """load_model parses a binary .onnx file from a memory map (#29): the
    same ModelProto as onnx.load, weights included; a text-format file
    (by its extension) still goes through onnx.load; an empty or damaged
    file gets the usual one-line error."""
    from onnx_mlir_py.errors import ModelLoadError
    from onnx_mlir_py.importer.model import load_model
    model = gemm_model()
    w = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    model.graph.initializer[0].CopyFrom(nh.from_array(w, "w"))
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    assert load_model(path) == onnx.load(str(path))
    txt = tmp_path / "m.onnxtxt"
    onnx.save(model, str(txt), format="onnxtxt")
    assert load_model(txt) == onnx.load(str(txt))
    (tmp_path / "empty.onnx").write_bytes(b"")
    with pytest.raises(ModelLoadError, match="holds no ONNX graph"):
        load_model(tmp_path / "empty.onnx")
    (tmp_path / "bad.onnx").write_bytes(path.read_bytes()[:-7] + b"\xff" * 7)
    with pytest.raises(ModelLoadError, match="cannot read"):
        load_model(tmp_path / "bad.onnx")


def test_inference_runs_with_big_initializers():
    """Regression: with protobuf 7 (no FieldDescriptor.label) the copy made
    for onnx.shape_inference raised, and inference was silently skipped for
    every model with an initializer above INFERENCE_DATA_LIMIT."""
    from onnx_mlir_py.importer.model import INFERENCE_DATA_LIMIT, infer_onnx_types
    n = INFERENCE_DATA_LIMIT // 4 + 16
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [n])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     initializer=[nh.from_array(np.ones(n, np.float32), "w")])
    inferred = infer_onnx_types(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    assert inferred is not None
    assert [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim] == [n]


def test_external_data_of_in_memory_model_is_refused():
    """A ModelProto whose tensors still point at external files has no folder
    to read them from: refused (never read relative to the working directory)."""
    from onnx_mlir_py.errors import ModelLoadError
    model = gemm_model()
    t = model.graph.initializer[0]
    t.ClearField("raw_data"); t.ClearField("float_data")
    t.data_location = onnx.TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "w.bin"
    with pytest.raises(ModelLoadError, match=r"initializer 'w': external data: the model "
                       r"was given in memory"):
        import_model(model)


def test_model_local_function_is_expanded():
    f = h.make_function("local", "Twice", ["a"], ["b"], [h.make_node("Add", ["a", "a"], ["b"])],
                        opset_imports=[h.make_opsetid("", 17)])
    node = h.make_node("Twice", ["x"], ["y"], domain="local")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])])
    model = h.make_model(g, functions=[f], opset_imports=[h.make_opsetid("", 17),
                                                          h.make_opsetid("local", 1)])
    s = text(import_model(model))
    assert '"onnx.add"' in s and "Twice" not in s


def test_variadic_inputs_of_different_shapes_verify():
    node = h.make_node("Concat", ["a", "b"], ["y"], axis=0, name="cat")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("a", T.FLOAT, [2, 3]),
                                   h.make_tensor_value_info("b", T.FLOAT, [4, 3])],
                     [h.make_tensor_value_info("y", T.FLOAT, [6, 3])])
    m = import_model(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    to_onnx_ir(m)
    assert "-> tensor<6x3xf32>" in text(m)


def test_output_never_produced_is_named():
    import pytest
    from onnx_mlir_py.errors import ImportError_
    relu = h.make_node("Relu", ["x"], ["y"], name="r")
    inner = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "then_g", [],
                         [h.make_tensor_value_info("missing_in_branch", T.FLOAT, [2])])
    cond = h.make_node("If", ["c"], ["z"], name="if0", then_branch=inner, else_branch=inner)
    g = h.make_graph([relu], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("nope", T.FLOAT, [2])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    with pytest.raises(ImportError_, match="graph output 'nope' is never produced"):
        import_model(m)
    g2 = h.make_graph([cond], "g", [h.make_tensor_value_info("x", T.FLOAT, [2]),
                                    h.make_tensor_value_info("c", T.BOOL, [])],
                      [h.make_tensor_value_info("z", T.FLOAT, [2])])
    m2 = h.make_model(g2, opset_imports=[h.make_opsetid("", 17)])
    with pytest.raises(ImportError_, match="subgraph 'then_g': graph output 'missing_in_branch'"):
        import_model(m2)


@pytest.mark.parametrize("where, marker", [("node", b"NODEXX"), ("initializer", b"INITXX"),
                                           ("raw_data", None)])
def test_names_that_are_not_utf8_are_refused_data_bytes_are_not_names(tmp_path, where, marker):
    """A string field that is not UTF-8 (a damaged file) is a one-line
    ModelLoadError naming the field, also inside an initializer; raw_data
    bytes that are not UTF-8 are data (not read as names)."""
    from onnx_mlir_py.errors import ModelLoadError
    from onnx_mlir_py.importer.model import load_model
    w = np.frombuffer(b"\xff\xfe\xfd\xfc" * 16, np.float32).reshape(4, 4).copy()
    node = h.make_node("Add", ["x", "INITXX"], ["y"], name="NODEXX")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [4, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [4, 4])],
                     [nh.from_array(w, "INITXX")])
    data = h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()
    path = tmp_path / "m.onnx"
    if marker is None:
        path.write_bytes(data)
        m = load_model(str(path))
        assert m.graph.initializer[0].raw_data == w.tobytes()
        return
    at = data.rindex(marker)       # the initializer's name, not the Add's input
    path.write_bytes(data[:at] + b"\xff\xfe" + data[at + 2:])
    with pytest.raises(ModelLoadError, match="is not valid UTF-8") as e:
        load_model(str(path))
    field = "node[0].name" if where == "node" else "initializer[0].name"
    assert f"model.graph.{field}" in str(e.value) and "\n" not in str(e.value)


def test_raw_data_initializers_of_every_plain_dtype_against_onnxruntime(tmp_path):
    """Initializers read from raw_data (one read, numpy over its bytes; the
    importer's fast path) keep their values: each dtype through an Add or an
    Identity, against onnxruntime."""
    import onnxruntime as ort
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    rng = np.random.default_rng(7)
    dtypes = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.uint16,
              np.int32, np.int64, np.bool_]
    nodes, inits, outs = [], [], []
    for k, dt in enumerate(dtypes):
        vals = rng.integers(-100, 100, (40, 3)) if dt != np.bool_ else rng.integers(0, 2, (40, 3))
        w = (np.abs(vals) if np.dtype(dt).kind == "u" else vals).astype(dt)
        inits.append(nh.from_array(w, f"w{k}"))
        if dt == np.float32:
            nodes.append(h.make_node("Add", ["x", f"w{k}"], [f"y{k}"]))
        else:
            nodes.append(h.make_node("Identity", [f"w{k}"], [f"y{k}"]))
        outs.append(h.make_tensor_value_info(f"y{k}", nh.helper.np_dtype_to_tensor_dtype(
            np.dtype(dt)), [40, 3]))
    bad = nh.from_array(np.zeros((4, 4), np.float32), "short")
    bad.raw_data = bad.raw_data[:12]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [40, 3])], outs, inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    assert all(t.HasField("raw_data") for t in model.graph.initializer)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    so = onnx_mlir_py.compile(model, output=str(tmp_path / "m.so"), opt_level=0)
    got = ExecutionSession(so).run([x])
    for w, g_ in zip(want, got):
        assert w.dtype == g_.dtype
        np.testing.assert_array_equal(g_, w)
    g.initializer.append(bad)
    from onnx_mlir_py.errors import ImportError_
    with pytest.raises(ImportError_, match=r"initializer 'short': raw_data holds 12 bytes, "
                       r"dims \[4, 4\] of FLOAT need 64"):
        import_model(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
