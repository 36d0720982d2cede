"""native_walk.py: the walk by op names in C finds what the bindings' walk
finds (same ops, same order, pre and post order, the found ops' insides
skipped), and its library is built, cached, checked and given up as the
module docstring says (#29)."""
from __future__ import annotations

import os

import mlir.ir as ir
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py import ir_util, native_walk
from onnx_mlir_py.context import make_context


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """native_walk's process state reset, a cache of its own; put back after."""
    saved = (native_walk._lib, native_walk._looked, native_walk._build, native_walk._tried,
             native_walk._depth)
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(native_walk.DISABLE_ENV, raising=False)
    native_walk._lib, native_walk._looked, native_walk._build = None, False, None
    native_walk._tried, native_walk._depth = False, 0
    yield tmp_path / "cache"
    assert native_walk._build is None        # no build left running by a test
    (native_walk._lib, native_walk._looked, native_walk._build, native_walk._tried,
     native_walk._depth) = saved


def _module(n_ops):
    body = "\n".join(f"  %c{i} = arith.constant {i} : i64" for i in range(n_ops))
    return ir.Module.parse("func.func @main_graph() {\n" + body + "\n  return\n}",
                           ir.Context())


def _built(fresh, n_ops=native_walk.MIN_NODES):
    with native_walk.building():
        native_walk.worth_building(_module(n_ops))
    return native_walk._lib                 # (the block's end waits for the build)


def test_small_models_do_not_build_it(fresh, tmp_path):
    assert _built(fresh, native_walk.MIN_NODES - 2) is None   # (+ the return: MIN_NODES - 1)
    assert not list(fresh.rglob("om_walk.so*"))
    # nor a compile of a small model; a large one does, and a later small one uses it
    onnx_mlir_py.compile(_conv_model(), tmp_path / "a.so", opt_level=3)
    assert native_walk._lib is None and not list(fresh.rglob("om_walk.so*"))
    nodes = [h.make_node("Relu" if i % 2 else "Neg", [f"t{i}"], [f"t{i + 1}"])
             for i in range(native_walk.MIN_NODES)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("t0", T.FLOAT, [2, 8])],
                     [h.make_tensor_value_info(f"t{len(nodes)}", T.FLOAT, [2, 8])])
    big = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    big.ir_version = 8
    so = onnx_mlir_py.compile(big, tmp_path / "big.so", opt_level=3)
    assert native_walk._lib is not None
    assert sorted(p.name for p in fresh.rglob("om_walk.so*")) == ["om_walk.so",
                                                                  "om_walk.so.sha256"]
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    want = x
    for i in range(len(nodes)):
        want = np.maximum(want, 0) if i % 2 else -want
    np.testing.assert_array_equal(onnx_mlir_py.ExecutionSession(so).run([x])[0], want)


def _conv_model(shape=(1, 3, 16, 16)):
    w = nh.from_array(np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32),
                      "w")
    g = h.make_graph([h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                      h.make_node("Relu", ["c"], ["r"]),
                      h.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                     "g", [h.make_tensor_value_info("x", T.FLOAT, list(shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_built_cached_and_the_same_ops(fresh, tmp_path):
    lib = _built(fresh)
    assert lib is not None, "gcc and the cache are here: the library must build"
    files = sorted(p.name for p in fresh.rglob("om_walk.so*"))
    assert files == ["om_walk.so", "om_walk.so.sha256"]
    # linked against libc only (the MLIR library's functions are handed over
    # at load: linking against its 200 MB cost ld ~0.5 s a build)
    assert b"libMLIRPythonCAPI" not in next(fresh.rglob("om_walk.so")).read_bytes()
    # a compiled module at three levels: every name set, both orders, the same
    # ops in the same order as the bindings' walk
    text = open(onnx_mlir_py.compile(_conv_model(), tmp_path / "m.mlir", emit="EmitMLIR",
                                     opt_level=3)).read()
    with make_context() as ctx, ir.Location.unknown():
        m = ir.Module.parse(text)
        names = sorted({op.name for op in ir_util.py_walk_names(m.operation, None, "pre",
                                                                 True)})
        assert len(names) > 10
        sets = [n for n in names] + [set(names[::3]), set(names[1::2]), set(names)]
        for sel in sets:
            for order in ("pre", "post"):
                for root in (m.operation, m.body.operations[0].operation):
                    for inc in (False, True):
                        want = ir_util.py_walk_names(root, sel, order, inc)
                        got = ir_util._walk_names(root, sel, order, inc)
                        assert got == want, (sel, order, inc)
        # the found ops' insides skipped (walk_ops' prune = select)
        for sel in (["scf.for", "scf.forall"], ["linalg.generic"], "func.func"):
            for inc in (False, True):
                py = ir_util._walk(m, sel, "pre", inc, first=False,
                                   prune=lambda op, s=frozenset([sel] if isinstance(
                                       sel, str) else sel): op.name in s)   # Python path
                assert ir_util.walk_ops(m, sel, prune=sel, include_root=inc) == py
        del ctx


def test_walks_in_a_compile_use_it_and_answer_the_same(fresh, tmp_path, monkeypatch):
    assert _built(fresh) is not None
    calls = []
    real = native_walk._found

    def spy(*a, **k):
        calls.append(a[2])
        return real(*a, **k)
    monkeypatch.setattr(native_walk, "_found", spy)
    m = _conv_model()
    so = onnx_mlir_py.compile(m, tmp_path / "a.so", opt_level=3)
    assert len(calls) > 10
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    import onnxruntime as ort
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(onnx_mlir_py.ExecutionSession(so).run([x])[0], want,
                               rtol=1e-4, atol=1e-4)


def test_same_library_without_it(fresh, tmp_path, monkeypatch):
    """The -O3 IR with the C walk and without it (every walk Python's)."""
    assert _built(fresh) is not None
    m = _conv_model()
    with_c = open(onnx_mlir_py.compile(m, tmp_path / "c.mlir", emit="EmitMLIR",
                                       opt_level=3)).read()
    monkeypatch.setattr(native_walk, "_lib", None)
    monkeypatch.setattr(native_walk, "_tried", True)
    monkeypatch.setattr(native_walk, "_looked", True)
    assert native_walk.walk_names(ir.Module.parse("", ir.Context()).operation,
                                  "func.func", "pre") is None
    without = open(onnx_mlir_py.compile(m, tmp_path / "p.mlir", emit="EmitMLIR",
                                        opt_level=3)).read()
    assert with_c == without


def test_corrupt_library_is_built_again(fresh):
    assert _built(fresh) is not None
    so = next(fresh.rglob("om_walk.so"))
    # a new file (as the cache writes: this process has the old one mapped)
    so.unlink()
    so.write_bytes(b"\x7fELF" + b"\0" * 100)   # not what its sha256 says
    native_walk._lib, native_walk._looked, native_walk._tried = None, False, False
    assert _built(fresh) is not None            # rebuilt, stored, loaded
    assert len(so.read_bytes()) > 1000


def test_disabled_and_unusable_cache_fall_back(fresh, monkeypatch, tmp_path):
    monkeypatch.setenv(native_walk.DISABLE_ENV, "0")
    assert _built(fresh) is None
    assert not list(fresh.rglob("om_walk.so*"))
    monkeypatch.delenv(native_walk.DISABLE_ENV)
    native_walk._looked = native_walk._tried = False
    # a cache that cannot be used: its path a file (also as root); and one
    # writable by others (unsafe)
    bad = tmp_path / "not_a_dir"
    bad.write_text("x")
    unsafe = tmp_path / "unsafe"
    unsafe.mkdir()
    unsafe.chmod(0o777)
    for cache in (bad, unsafe):
        native_walk._looked = native_walk._tried = False
        monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(cache))
        assert _built(fresh) is None                # no cache, no build
        assert not list(tmp_path.rglob("om_walk.so*"))
    # and a compile still works, its walks in Python
    so = onnx_mlir_py.compile(_conv_model(), tmp_path / "m.so", opt_level=0)
    assert os.path.exists(so)


def test_build_killed_on_an_error_leaves_nothing(fresh):
    before = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
    with pytest.raises(RuntimeError):
        with native_walk.building():
            native_walk.worth_building(_module(native_walk.MIN_NODES))
            assert native_walk._build is not None     # started
            raise RuntimeError("the compile failed")
    assert native_walk._build is None and native_walk._lib is None
    after = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
    assert not {n for n in after - before if n.startswith("onnx-mlir-py")}
    assert not list(fresh.rglob("om_walk.so"))


def test_a_library_that_disagrees_is_not_used(fresh, monkeypatch):
    monkeypatch.setattr(native_walk, "_agrees", lambda lib: False)
    assert _built(fresh) is None


def test_a_library_not_given_the_c_api_is_not_used(fresh, monkeypatch):
    # a C API function the bindings' library lacks: om_walk_init never runs,
    # the library is not used (its walk would have no function to call)
    monkeypatch.setattr(native_walk, "_CAPI_FUNCTIONS",
                        ("mlirOperationWalk", "mlirOperationGetName", "mlirNoSuchFunction"))
    assert _built(fresh) is None
    # and one whose init is given a null pointer refuses it
    lib = native_walk.ctypes.CDLL(str(next(fresh.rglob("om_walk.so"))))
    assert lib.om_walk_init(None, None, None) == 0
