"""One library with an x86-64-v3 and an x86-64-v4 variant of the model code
(``march="x86-64-v3+x86-64-v4"``, codegen/fat.py), chosen once per process
by the CPU or by ONNX_MLIR_PY_FORCE_ISA: both variants against onnxruntime
(conv and attention models, static and dynamic batch), the choice, the
refusals, the shared weights and a C caller."""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import onnx_mlir_py
from onnx_mlir_py import ExecutionSession
from onnx_mlir_py import isa
from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.testing import models

pytestmark = pytest.mark.skipif(not isa.is_x86_host(), reason="x86-64 ISA levels")
FAT = "x86-64-v3+x86-64-v4"
HAS_V4 = isa.host_level() == "x86-64-v4"
# the variants this machine can run (a CI machine without AVX-512: only v3)
RUNNABLE = ("x86-64-v3", "x86-64-v4") if HAS_V4 else ("x86-64-v3",)

BUILDS = {
    "conv": lambda b: models.mnist_cnn(batch=b),
    "attention": lambda b: models.encoder_layer(d=64, heads=4, seq=16, batch=b),
}


@pytest.fixture(scope="module")
def fat_libs(tmp_path_factory):
    d = tmp_path_factory.mktemp("fat")
    out = {}
    for name, build in BUILDS.items():
        for batch in (2, "N"):
            m = build(batch)
            so = onnx_mlir_py.compile(m, output=d / f"{name}_{batch}.so", march=FAT)
            out[name, batch] = (m, so)
    return out


def _session(so, tmp_path, force, monkeypatch):
    """A session of a private copy of ``so`` (its own choice, made at the
    first call) with ONNX_MLIR_PY_FORCE_ISA=force; and the variant it runs."""
    copy = tmp_path / f"{os.path.basename(so)[:-3]}_{force or 'auto'}.so"
    shutil.copyfile(so, copy)
    if force:
        monkeypatch.setenv(isa.FORCE_ENV, force)
    else:
        monkeypatch.delenv(isa.FORCE_ENV, raising=False)
    monkeypatch.delenv(isa.HIDE_ENV, raising=False)
    sess = ExecutionSession(str(copy))
    lib = ctypes.CDLL(str(copy))         # the same handle: the same choice
    lib.omTargetVariant.restype = ctypes.c_char_p
    return sess, lib


@pytest.mark.parametrize("batch", [2, "N"])
@pytest.mark.parametrize("name", list(BUILDS))
@pytest.mark.parametrize("force", ["x86-64-v3", "x86-64-v4"])
def test_variant_matches_onnxruntime(fat_libs, tmp_path, monkeypatch, name, batch, force):
    ort = pytest.importorskip("onnxruntime")
    if force not in RUNNABLE:
        pytest.skip(f"this CPU cannot run {force}")
    m, so = fat_libs[name, batch]
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    sess, lib = _session(so, tmp_path, force, monkeypatch)
    for n in ((2,) if batch == 2 else (1, 3)):
        feeds = models.random_inputs(m, batch=n, seed=n)
        got = sess.run(list(feeds.values()))
        want = ref.run(None, feeds)
        assert got[0].shape[0] == n
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
    assert lib.omTargetVariant().decode() == force


def test_default_is_the_best_the_cpu_has(fat_libs, tmp_path, monkeypatch):
    m, so = fat_libs["conv", 2]
    sess, lib = _session(so, tmp_path, None, monkeypatch)
    assert lib.omTargetVariant().decode() == RUNNABLE[-1]
    assert sess.target == {"cpu": FAT, "features": list(isa.LEVELS["x86-64-v3"]),
                           "variants": ["x86-64-v3", "x86-64-v4"]}


_RUN = """
import sys
import numpy as np
from onnx_mlir_py import ExecutionSession
from onnx_mlir_py.errors import OnnxMlirError
try:
    print("ran", ExecutionSession(sys.argv[1]).run([np.ones((2, 1, 28, 28), np.float32)])[0].shape)
except OnnxMlirError as e:
    print("refused:", e)
"""


def _run(so, env_extra):
    env = {k: v for k, v in os.environ.items() if k not in (isa.FORCE_ENV, isa.HIDE_ENV)}
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", _RUN, str(so)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr           # no SIGILL, no crash
    return r.stdout


def test_without_avx512_runs_v3_and_refuses_forced_v4(fat_libs):
    """On a CPU without AVX-512 (simulated) the library runs its v3 code (a
    v4-only library refuses there, test_target_isa); forcing v4 is refused,
    and so is a level the library has no variant for."""
    so = fat_libs["conv", 2][1]
    assert "ran (2, 10)" in _run(so, {isa.HIDE_ENV: "avx512f"})
    out = _run(so, {isa.HIDE_ENV: "avx512f", isa.FORCE_ENV: "x86-64-v4"})
    assert "refused:" in out and "ONNX_MLIR_PY_FORCE_ISA=x86-64-v4: this CPU lacks avx512f" in out
    out = _run(so, {isa.FORCE_ENV: "x86-64-v2"})
    assert "names no variant of this library (it has x86-64-v3, x86-64-v4)" in out
    out = _run(so, {isa.HIDE_ENV: "avx2"})         # below the lowest variant
    assert "refused:" in out and "lacks: avx2" in out


def test_symbols_and_shared_weights(tmp_path):
    """One global entry per variant and nothing else of the model code; at
    -O0 (no per-level weight packing) the variants share every weight."""
    from onnx_mlir_py.codegen.tools import tool
    m = models.mlp(batch=2, sizes=(64, 48, 10))
    one = onnx_mlir_py.compile(m, output=tmp_path / "one.so", opt_level=0)
    fat = onnx_mlir_py.compile(m, output=tmp_path / "fat.so", opt_level=0, march=FAT)
    syms = {}
    for k, so in (("one", one), ("fat", fat)):
        nm = subprocess.run([tool("llvm-nm"), "--defined-only", so], capture_output=True,
                            text=True, check=True).stdout.split("\n")
        syms[k] = [ln.split()[-1] for ln in nm if ln.strip()]
    weights = {k: sorted(s for s in v if s.startswith("__om_weight_")) for k, v in syms.items()}
    assert weights["one"] and weights["fat"] == weights["one"]
    glob = subprocess.run([tool("llvm-nm"), "--defined-only", "--extern-only", fat],
                          capture_output=True, text=True, check=True).stdout
    assert "_mlir_ciface_main_graph__x86_64_v3" in glob
    assert "_mlir_ciface_main_graph__x86_64_v4" in glob
    assert " main_graph" not in glob and "_mlir_ciface_main_graph\n" not in glob
    x = np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32)
    np.testing.assert_allclose(ExecutionSession(fat).run([x])[0],
                               ExecutionSession(one).run([x])[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("march,msg", [
    ("x86-64-v4+x86-64-v4", "two or more distinct levels"),
    ("x86-64-v3+native", "'native' is not one"),
    ("x86-64-v3+x86-64-v5", "'x86-64-v5' is not one"),
    ("x86-64-v3+", "'' is not one"),
])
def test_bad_combination_refused(march, msg):
    with pytest.raises(CompileError, match=msg):
        onnx_mlir_py.compile(models.mlp(), output="x.so", march=march)


def test_refused_with_one_variant_outputs():
    with pytest.raises(CompileError, match="not both"):
        onnx_mlir_py.compile(models.mlp(), output="x.so", march=FAT, mcpu="znver4")
    with pytest.raises(CompileError, match="--EmitObj writes one: give one level"):
        onnx_mlir_py.compile(models.mlp(), output="x.o", march=FAT, emit="EmitObj")
    with pytest.raises(CompileError, match="--profile builds take one level"):
        onnx_mlir_py.compile(models.mlp(), output="x.so", march=FAT, profile=True)


def test_cli(tmp_path):
    import onnx
    path = tmp_path / "m.onnx"
    onnx.save(models.mlp(batch=2, sizes=(8, 4)), path)
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", str(path), "--march", FAT],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert ExecutionSession(tmp_path / "m.so").target["variants"] == ["x86-64-v3", "x86-64-v4"]
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", str(path), "--march",
                        "x86-64-v3+x86-64-v3"], capture_output=True, text=True)
    assert r.returncode != 0 and "two or more distinct levels" in r.stderr


def test_both_variants_in_the_library(tmp_path, monkeypatch):
    """The v4 variant's object is AVX-512 code (zmm), the v3 one's AVX2 (ymm)."""
    from onnx_mlir_py.codegen import fat, link
    from onnx_mlir_py.codegen.tools import tool
    keep = tmp_path / "keep"
    monkeypatch.setattr(fat, "temp_dir", lambda _: link.temp_dir(str(keep)))
    onnx_mlir_py.compile(models.mlp(batch="N", sizes=(64, 64, 10)), output=tmp_path / "m.so",
                         march=FAT)
    asm = {lv: subprocess.run([tool("llvm-objdump"), "-d", keep / f"model_{lv}.o"],
                              capture_output=True, text=True, check=True).stdout
           for lv in ("x86-64-v3", "x86-64-v4")}
    assert "zmm" not in asm["x86-64-v3"] and asm["x86-64-v3"].count("ymm") > 50
    assert asm["x86-64-v4"].count("zmm") > 50


def test_c_caller(fat_libs, tmp_path):
    """examples/c/run_model.c runs the library as any other: same entry
    points, both variants (forced) give Python's numbers."""
    from test_c_example import _build_example, _parse_outputs
    exe = _build_example(tmp_path)
    m, so = fat_libs["conv", "N"]
    x = models.random_inputs(m, batch=3, seed=5)["input"]
    f = tmp_path / "in0.bin"
    x.tofile(f)
    (want,) = ExecutionSession(so).run([x])
    for force in RUNNABLE:
        env = {k: v for k, v in os.environ.items() if k != isa.HIDE_ENV}
        env[isa.FORCE_ENV] = force
        p = subprocess.run([exe, str(so), f"{f}:3x1x28x28"], capture_output=True, text=True,
                           env=env, check=True)
        assert "entry point: run_main_graph" in p.stdout
        (got,) = _parse_outputs(p.stdout)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_codegen_api(tmp_path):
    """codegen.emit_*: no ISA variants (the compiler's -O3 stages run per
    level); an ISA level as march is the CPU there too (it used to be taken
    for a target triple)."""
    import mlir.ir as ir
    from onnx_mlir_py.codegen import emit_library, emit_llvm_ir
    from codegen_samples import MATMUL
    with ir.Context():
        with pytest.raises(CompileError, match="built by onnx_mlir_py.compile"):
            emit_library(ir.Module.parse(MATMUL), tmp_path / "m.so", march=FAT)
        ll = emit_llvm_ir(ir.Module.parse(MATMUL), march="x86-64-v3")
        so = emit_library(ir.Module.parse(MATMUL), tmp_path / "m.so", march="x86-64-v3")
    assert '"target-cpu"="x86-64-v3"' in ll
    assert ExecutionSession(so).target["cpu"] == "x86-64-v3"
