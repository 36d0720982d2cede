"""context.py: the ONNX dialects' IRDL module comes from the cache's bytecode
of it once a process stored it (#29: ~half the parse of the 0.5 MB text); a
corrupt, foreign or unusable cache entry falls back to the text, and the
context is the same either way."""
from __future__ import annotations

import os

import mlir.ir as ir
import pytest

from onnx_mlir_py import context

_OP = '''func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _parses(ctx) -> str:
    with ctx, ir.Location.unknown():
        m = ir.Module.parse(_OP)
        assert m.operation.verify()
        return str(m)


def test_bytecode_stored_then_used(cache, monkeypatch):
    want = _parses(context.make_context())
    (bc,) = (cache / "irdl").glob("*.mlirbc")
    assert bc.read_bytes()[:4] == b"ML\xefR" and os.stat(bc.parent).st_mode & 0o077 == 0
    seen = []
    parse = ir.Module.parse
    monkeypatch.setattr(context.ir.Module, "parse",
                        staticmethod(lambda src, *a: seen.append(src) or parse(src, *a)))
    ctx = context.make_context()
    assert [type(s) for s in seen] == [bytes]       # the bytecode, not the text
    assert _parses(ctx) == want


@pytest.mark.parametrize("damage", ["corrupt", "foreign", "unsafe"])
def test_bad_bytecode_falls_back_to_the_text(cache, damage):
    want = _parses(context.make_context())
    (bc,) = (cache / "irdl").glob("*.mlirbc")
    if damage == "corrupt":          # its sha256 no longer matches
        data = bytearray(bc.read_bytes())
        data[len(data) // 2] ^= 0xFF
        bc.write_bytes(bytes(data))
    elif damage == "foreign":        # well recorded, but not bytecode this MLIR reads
        import hashlib
        junk = b"ML\xefR" + b"\x00" * 64
        bc.write_bytes(junk)
        bc.with_name(bc.name + ".sha256").write_text(hashlib.sha256(junk).hexdigest())
    else:                            # a folder others may write: not used
        bc.parent.chmod(0o777)
    assert _parses(context.make_context()) == want
    if damage != "unsafe":           # stored again, and good
        assert bc.read_bytes()[:4] == b"ML\xefR" and len(bc.read_bytes()) > 1000
