"""AMX needs the OS's permission per process (Linux: arch_prctl
ARCH_REQ_XCOMP_PERM), or the first tile instruction is SIGILL. A library
that records the ``amx-tile`` feature asks for it before its code runs
(runtime/c/om_cpu.c), from Python at load and from C on each entry call;
where it is refused (simulated with the test-only override) the library
refuses with a message instead of a signal."""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

import onnx_mlir_py
from onnx_mlir_py import compiler, isa
from onnx_mlir_py.testing import models

pytestmark = pytest.mark.skipif(not isa.is_x86_host(), reason="x86-64 only")
AMX = isa.host_has("amx-tile")


@pytest.fixture(scope="module")
def amx_lib(tmp_path_factory):
    """An MLP whose library records amx-tile / amx-int8, as a library with an
    AMX kernel does (its code has no tile instruction: the check is what is tested)."""
    real = compiler.used_features

    def with_amx(module, opts):
        opts = real(module, opts)
        t = dataclasses.replace(opts.target, features=opts.target.features + ("amx-tile", "amx-int8"))
        return dataclasses.replace(opts, target=t)
    mp = pytest.MonkeyPatch()
    mp.setattr(compiler, "used_features", with_amx)
    try:
        d = tmp_path_factory.mktemp("amx")
        return onnx_mlir_py.compile(models.mlp(batch=3, sizes=(40, 48, 10)), output=d / "mlp.so")
    finally:
        mp.undo()


_RUN = """
import ctypes, sys
import numpy as np
from onnx_mlir_py import ExecutionSession
from onnx_mlir_py.errors import OnnxMlirError
libc = ctypes.CDLL(None)
def granted():
    bits = ctypes.c_uint64(0)     # ARCH_GET_XCOMP_PERM: the granted xfeatures
    return libc.syscall(158, 0x1022, ctypes.byref(bits)) == 0 and bool(bits.value >> 18 & 1)
print("before", granted())
try:
    s = ExecutionSession(sys.argv[1])
    print("ran", s.run([np.ones((3, 40), np.float32)])[0].shape)
except OnnxMlirError as e:
    print("refused:", e)
print("after", granted())
"""


def _run(path, hide=""):
    env = {k: v for k, v in __import__("os").environ.items() if k != isa.HIDE_ENV}
    if hide:
        env[isa.HIDE_ENV] = hide
    r = subprocess.run([sys.executable, "-c", _RUN, str(path)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr          # no SIGILL
    return r.stdout


def test_library_records_amx(amx_lib):
    if AMX:
        assert {"amx-tile", "amx-int8"} <= set(
            onnx_mlir_py.ExecutionSession(amx_lib).target["features"])
    else:       # a CPU without AMX: the load refuses, naming what the record asks for
        from onnx_mlir_py.runtime.errors import ModelRunError
        with pytest.raises(ModelRunError, match="needs CPU features this machine lacks: "
                                                "amx-tile, amx-int8"):
            onnx_mlir_py.ExecutionSession(amx_lib)


@pytest.mark.skipif(not AMX, reason="needs a CPU with AMX")
def test_library_asks_for_tile_data_before_it_runs(amx_lib):
    out = _run(amx_lib)
    assert "before False" in out, out        # a new process has no tile data ...
    assert "ran (3, 10)" in out and "after True" in out, out   # ... until the library asks


def test_refused_amx_is_a_message_not_a_signal(amx_lib):
    out = _run(amx_lib, hide="amx-tile")
    assert "refused:" in out and "needs CPU features this machine lacks: amx-tile" in out, out
    assert "ran" not in out


def test_compiler_asks_for_the_build_machine():
    from onnx_mlir_py import target
    t = target.resolve(host_default=True)
    assert t.amx_tile == (AMX and target.host_amx_permitted())
