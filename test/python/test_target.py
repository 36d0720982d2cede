"""onnx_mlir_py.target: one Target resolved from --march / --mcpu / the host."""
from __future__ import annotations

import pytest

from onnx_mlir_py import target as T
from onnx_mlir_py.isa import host_level, is_x86_host

x86 = pytest.mark.skipif(not is_x86_host(), reason="x86-64 ISA levels")


@x86
def test_levels_give_vector_width_and_registers():
    v4, v3, v2 = (T.target_for(c) for c in ("x86-64-v4", "x86-64-v3", "x86-64-v2"))
    assert (v4.vector_width, v4.num_registers, v4.matmul_tile) == (16, 32, (8, 32, 8))
    assert (v3.vector_width, v3.num_registers, v3.matmul_tile) == (8, 16, (6, 16, 8))
    assert (v2.vector_width, v2.num_registers) == (4, 16)
    # a bare level allows no extension instruction (llc -mcpu=x86-64-v4 emits none)
    assert not (v4.vnni or v4.avx512_bf16 or v4.amx_tile)


@x86
def test_named_cpus_from_the_table():
    spr, zen4, clx = (T.target_for(c) for c in ("sapphirerapids", "znver4", "cascadelake"))
    assert spr.level == zen4.level == clx.level == "x86-64-v4"
    assert (spr.fma_pipes, zen4.fma_pipes, clx.fma_pipes) == (2, 1, 2)
    assert spr.amx_tile and spr.amx_int8 and spr.amx_bf16 and spr.vnni and spr.avx512_bf16
    assert zen4.vnni and zen4.avx512_bf16 and not zen4.amx_tile
    assert clx.vnni and not clx.avx512_bf16
    assert T.target_for("haswell").level == "x86-64-v3"
    assert T.target_for("haswell").vector_width == 8


def test_march_choice_and_cross_compile():
    t = T.resolve(None, "aarch64")
    assert (t.arch, t.level, t.vector_width) == ("aarch64", None, 4)
    if is_x86_host():
        assert T.resolve(None, "x86-64-v3").cpu == "x86-64-v3"
        assert T.resolve(None, None).cpu == T.DEFAULT_CPU          # below -O3
        assert T.resolve(None, None, host_default=True).cpu == host_level()
        assert T.resolve("znver4", None, host_default=True).cpu == "znver4"


@x86
def test_native_reads_the_host(monkeypatch):
    t = T.resolve("native")
    assert t.cpu == "native" and t.level == host_level()
    assert t.tuned_for.startswith("host")
    flags = T.host_flags()
    assert t.vnni == ("avx512_vnni" in flags) and t.amx_tile == ("amx_tile" in flags)


def test_cache_sizes_from_sysfs(tmp_path, monkeypatch):
    for i, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"),
                                             (2, "Unified", "2048K"), (3, "Unified", "105M")]):
        d = tmp_path / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    monkeypatch.setattr(T, "CACHE_DIR", str(tmp_path))
    T.host_cache_sizes.cache_clear()
    try:
        assert T.host_cache_sizes() == {1: 48 << 10, 2: 2 << 20, 3: 105 << 20}
    finally:
        T.host_cache_sizes.cache_clear()


def test_unreadable_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(T, "CACHE_DIR", str(tmp_path / "missing"))
    T.host_cache_sizes.cache_clear()
    try:
        assert T.host_cache_sizes() == {}
    finally:
        T.host_cache_sizes.cache_clear()


def test_describe_names_everything():
    line = T.target_for("sapphirerapids").describe() if is_x86_host() else \
        T.resolve(None, "aarch64").describe()
    for word in ("target:", "f32 x", "vector registers", "FMA pipe", "L1d", "L2", "L3",
                 "extensions"):
        assert word in line


def test_pass_options_pick_the_target():
    from onnx_mlir_py.errors import CompileError
    from onnx_mlir_py.passes.pipeline import pass_options
    assert pass_options("o3-depthwise=target=x86-64-v3,threads=1") == \
        ("o3-depthwise", {"target": "x86-64-v3", "threads": "1"})
    with pytest.raises(CompileError, match="o3-resolve-dims: option 'target'"):
        pass_options("o3-resolve-dims=target=x86-64-v4")
    with pytest.raises(CompileError, match="option 'tile'"):
        pass_options("o3-depthwise=tile=8")


@pytest.mark.parametrize("hide", ["", "amx_int8", "amx_tile", "avx512vnni"])
def test_cache_key_extensions_follow_the_int8_kernels(monkeypatch, hide):
    """The extensions an InferenceSession's cache key names (host_kernel_extensions)
    are the ones the -O3 default target's int8 kernels use: "amx-int8" exactly
    when the target has AMX-INT8 (its library needs AMX: a VNNI-only machine
    sharing the cache must not be handed it), "avx512vnni" when it has VNNI."""
    from onnx_mlir_py.inference import session as S
    from onnx_mlir_py.isa import HIDE_ENV, host_level
    import onnx_mlir_py as ort
    if hide:
        monkeypatch.setenv(HIDE_ENV, hide)
    T.resolve.cache_clear()
    try:
        level = host_level()
        t = T.resolve(host_default=True)
        ext = T.host_kernel_extensions(level)
        assert ("amx-int8" in ext) == t.amx_int8
        assert ("avx512vnni" in ext) == (t.vnni and level == "x86-64-v4")
        key = S._compile_options(ort.SessionOptions(), {}).get("host", "")
        assert ("amx-int8" in key) == t.amx_int8
    finally:
        monkeypatch.delenv(HIDE_ENV, raising=False)
        T.resolve.cache_clear()
