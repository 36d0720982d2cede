"""The ISA a library is compiled for (onnx_mlir_py/isa.py): the -O3 default is the
build machine's level, ``march="x86-64-v3"`` the portable choice; the
library records its target and refuses to run on a CPU without its
features (simulated with the test-only env override) instead of SIGILL."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import onnx
import pytest

import onnx_mlir_py
from onnx_mlir_py import ExecutionSession
from onnx_mlir_py import isa
from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.testing import models

pytestmark = pytest.mark.skipif(not isa.is_x86_host(), reason="x86-64 ISA levels")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """A small MLP compiled at -O3 with each choice (and the default)."""
    d = tmp_path_factory.mktemp("isa")
    m = models.mlp(batch=3, sizes=(40, 48, 10))
    return {march: onnx_mlir_py.compile(m, output=d / f"mlp_{march}.so", march=march)
            for march in (None, "x86-64-v3", "x86-64-v4", "native")}


def test_recorded_target(libs):
    assert isa.host_level() in ("x86-64-v3", "x86-64-v4")     # this project's machines
    t = {k: ExecutionSession(p).target for k, p in libs.items()}
    assert t[None]["cpu"] == isa.host_level()                   # -O3 default: the host level
    assert t["x86-64-v3"] == {"cpu": "x86-64-v3", "features": list(isa.LEVELS["x86-64-v3"])}
    assert "avx2" in t["x86-64-v3"]["features"] and "avx512f" not in t["x86-64-v3"]["features"]
    assert t["x86-64-v4"]["features"][-5:] == ["avx512f", "avx512bw", "avx512cd", "avx512dq",
                                               "avx512vl"]
    assert t["native"]["cpu"].startswith("native (")
    assert set(isa.LEVELS[isa.host_level()]) <= set(t["native"]["features"])


def test_o0_default_stays_portable(tmp_path):
    so = onnx_mlir_py.compile(models.mlp(batch=2, sizes=(8, 4)), output=tmp_path / "m.so",
                              opt_level=0)
    assert ExecutionSession(so).target["cpu"] == "x86-64-v2"


def test_march_selects_vector_width(tmp_path):
    """x86-64-v4 code uses the 512-bit registers (zmm), x86-64-v3 code none."""
    from onnx_mlir_py.codegen.tools import tool
    m = models.mlp(batch=16, sizes=(64, 64))
    asm = {}
    for march in ("x86-64-v3", "x86-64-v4"):
        obj = onnx_mlir_py.compile(m, output=tmp_path / f"{march}.o", emit="EmitObj", march=march)
        asm[march] = subprocess.run([tool("llvm-objdump"), "-d", obj], capture_output=True,
                                    text=True, check=True).stdout
    assert asm["x86-64-v4"].count("zmm") > 100
    assert "zmm" not in asm["x86-64-v3"] and asm["x86-64-v3"].count("ymm") > 100


def test_march_validation():
    with pytest.raises(CompileError, match="march must be one of native, x86-64-v2"):
        onnx_mlir_py.compile(models.mlp(), output="x.so", march="x86-64-v5")
    with pytest.raises(CompileError, match="not both"):
        onnx_mlir_py.compile(models.mlp(), output="x.so", march="x86-64-v3", mcpu="znver4")


def test_cli_march(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(models.mlp(batch=2, sizes=(8, 4)), path)
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", str(path), "--march",
                        "x86-64-v3"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert ExecutionSession(tmp_path / "m.so").target["cpu"] == "x86-64-v3"


_LOAD = """
import ctypes, sys
import numpy as np
from onnx_mlir_py import ExecutionSession
from onnx_mlir_py.errors import OnnxMlirError
path = sys.argv[1]
try:
    s = ExecutionSession(path)
    print("loaded", s.run([np.ones((3, 40), np.float32)])[0].shape)
except OnnxMlirError as e:
    print("refused:", e)
# the C entry checks too (a C caller, no Python check): NULL and a message
lib = ctypes.CDLL(path)
lib.run_main_graph.restype = ctypes.c_void_p
lib.omGetLastError.restype = ctypes.c_char_p
lib.omTensorCreate.restype = ctypes.c_void_p
lib.omTensorCreate.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int]
lib.omTensorListCreate.restype = ctypes.c_void_p
lib.omTensorListCreate.argtypes = [ctypes.c_void_p, ctypes.c_int64]
lib.run_main_graph.argtypes = [ctypes.c_void_p]
x = np.ones((3, 40), np.float32)
shape = (ctypes.c_int64 * 2)(3, 40)
t = (ctypes.c_void_p * 1)(lib.omTensorCreate(x.ctypes.data, shape, 2, 1))
out = lib.run_main_graph(lib.omTensorListCreate(t, 1))
print("C entry:", "ran" if out else "NULL " + lib.omGetLastError().decode())
"""


def _load(path, hide):
    env = dict(os.environ)
    env.pop(isa.HIDE_ENV, None)
    if hide:
        env[isa.HIDE_ENV] = hide
    r = subprocess.run([sys.executable, "-c", _LOAD, str(path)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr          # no SIGILL, no crash
    return r.stdout


def test_refuses_on_a_cpu_without_its_features(libs):
    out = _load(libs["x86-64-v4"], "avx512f,avx512vl")
    assert "refused: cannot run" in out and "compiled for x86-64-v4" in out
    assert "lacks: avx512f, avx512vl" in out and "--march x86-64-v3" in out
    assert re.search(r"C entry: NULL run_main_graph: this model library was compiled for "
                     r"x86-64-v4 and needs CPU features this machine lacks: avx512f, avx512vl",
                     out), out
    # the portable library runs there
    out = _load(libs["x86-64-v3"], "avx512f,avx512vl")
    assert "loaded (3, 10)" in out and "C entry: ran" in out
    # and needs AVX2 itself
    out = _load(libs["x86-64-v3"], "avx2")
    assert "lacks: avx2 " in out and "C entry: NULL" in out
    if isa.host_level() == "x86-64-v4":       # without the override it runs here
        assert "loaded (3, 10)" in _load(libs["x86-64-v4"], "")


def test_runtime_knows_every_feature_name():
    """om_cpu.c probes each name onnx_mlir_py/isa.py can record (an unknown one
    would count as missing and refuse a good CPU)."""
    src = open(os.path.join(ROOT, "onnx_mlir_py", "runtime", "c", "om_cpu.c")).read()
    probed = set(re.findall(r'OM_F\("([^"]+)"\)', src))
    names = {f for feats in isa.LEVELS.values() for f in feats} | set(isa._EXTRAS)
    assert names <= probed, names - probed


@pytest.mark.parametrize("name,build", [
    ("mnist_cnn", lambda: models.mnist_cnn(batch=2)),
    ("mobilenetv3", lambda: models.mobilenetv3(size=64, num_classes=16)),
    ("encoder_layer", lambda: models.encoder_layer(d=64, heads=4, seq=24)),
])
def test_v3_v4_onnxruntime_agree(tmp_path, name, build):
    ort = pytest.importorskip("onnxruntime")
    m = build()
    feeds = models.random_inputs(m, seed=1)
    ref = ort.InferenceSession(m.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, feeds)
    outs = {}
    for march in ("x86-64-v3", "x86-64-v4"):
        so = onnx_mlir_py.compile(m, output=tmp_path / f"{march}.so", march=march)
        if march == "x86-64-v4" and isa.host_level() != "x86-64-v4":
            # a CI machine without AVX-512: the v4 library must refuse to load
            with pytest.raises(Exception, match="lacks"):
                ExecutionSession(so).run(list(feeds.values()))
            outs[march] = outs["x86-64-v3"]
            continue
        outs[march] = ExecutionSession(so).run(list(feeds.values()))
    for a, b, r in zip(outs["x86-64-v3"], outs["x86-64-v4"], ref):
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(b, r, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
