"""The build machine's LLVM triple and CPU name from the in-process LLVM
(codegen/llvm_capi.host_llvm, #29) are what ``llc --version`` prints, and the
compiler falls back to llc when the in-process LLVM is turned off."""
from __future__ import annotations

from onnx_mlir_py.codegen import link, llvm_capi as llvm_host
from onnx_mlir_py.codegen.llvm_capi import IN_PROCESS_ENV


def _llc_says(key: str) -> str:
    return next(ln.split(":", 1)[1].strip() for ln in link._llc_version().splitlines()
                if f"{key}:" in ln)


def test_same_answers_as_llc():
    known = llvm_host.host_llvm()
    assert known is not None
    assert known == (_llc_says("Default target"), _llc_says("Host CPU"))
    assert link._host_triple() == known[0] and link.llc_host_cpu() == known[1]


def test_llc_when_in_process_llvm_is_off(monkeypatch):
    monkeypatch.setenv(IN_PROCESS_ENV, "0")
    llvm_host.host_llvm.cache_clear()
    try:
        assert llvm_host.host_llvm() is None
        assert link._host_triple() == _llc_says("Default target")
        assert link.llc_host_cpu() == _llc_says("Host CPU")
    finally:
        llvm_host.host_llvm.cache_clear()
