"""The on-disk kernel cache (codegen/kernel_cache.py, #29): -O3 kernels'
objects reused across models.

What can go wrong, and what each test checks:
- a hit that links another kernel's code (a key or content name that
  misses a difference) gives wrong numbers: every compile with hits runs
  against onnxruntime, and against the cold compile bit for bit, on
  models that share some kernels and not others, at two run-time shapes
  when a dim is dynamic;
- a damaged or planted entry (truncated, not ELF, another user's, group
  writable) must never be linked: one warning, the kernel compiled again;
- a cache that cannot be written (read-only, not a directory) must not
  fail the compile: one warning;
- two processes filling the same entries at once: both compiles succeed,
  no warning, and the entries are whole;
- the key covers the target: another --march misses.
"""
from __future__ import annotations

import errno
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from helpers_models import conv_relu_stack

import onnx_mlir_py
from onnx_mlir_py.codegen import kernel_cache
from onnx_mlir_py.errors import CacheEntryWarning
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import assert_match, reference


def _convs(widths=(16, 16, 32), hw=12, seed=0, dynamic=False):
    """Conv + ReLU layers over an 8-channel input: the kernels depend on the
    shapes, not the weights (``seed``)."""
    return conv_relu_stack(widths, 8, hw, seed, "N" if dynamic else 1)


def _feeds(batch=1, hw=12, seed=5):
    return {"x": np.random.default_rng(seed).standard_normal((batch, 8, hw, hw))
            .astype(np.float32)}


def _compile(m, path, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        so = onnx_mlir_py.compile(m, output=str(path), opt_level=3, **kw)
    stats = kernel_cache.LAST
    return so, stats, [x for x in w if issubclass(x.category, CacheEntryWarning)]


def _run(so, feeds):
    return ExecutionSession(so).run(list(feeds.values()))


def _checked(m, so, batches=(1,)):
    """Outputs of ``so`` (one list per batch), each matched to onnxruntime."""
    outs = []
    for b in batches:
        f = _feeds(b)
        got = _run(so, f)
        assert_match(got, reference(m, f, "onnxruntime"), rtol=1e-4, atol=1e-4)
        outs.append(got)
    return outs


def _entries(d):
    return sorted(p for p in d.rglob("*.o"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "kernels"
    monkeypatch.setenv(kernel_cache.ENV, str(d))
    return d


def _same(a, b):
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)


def test_hits_across_models_match_the_cold_compile(cache, tmp_path):
    a = _convs(seed=0)
    so_a, st, warned = _compile(a, tmp_path / "a.so")
    assert st.units >= 2 and st.misses >= 2 and st.hits == 0, st
    assert not warned and len(_entries(cache)) == st.misses
    cold = _checked(a, so_a)
    # the same layers with other weights: every kernel a hit, the same numbers as cold
    b = _convs(seed=0)
    so_b, st_b, warned = _compile(b, tmp_path / "b.so")
    assert st_b.hits == st.misses and st_b.misses == 0 and not warned, st_b
    assert st_b.early_hits >= 1, st_b       # keyed at the memref level: not lowered
    _same(cold, _checked(b, so_b))
    c = _convs(seed=3)
    so_c, st_c, _ = _compile(c, tmp_path / "c.so")
    assert st_c.misses == 0, st_c
    _checked(c, so_c)
    # other widths: some kernels shared, some new
    d = _convs(widths=(16, 16, 24), seed=1)
    so_d, st_d, warned = _compile(d, tmp_path / "d.so")
    assert st_d.hits >= 1 and st_d.misses >= 1 and not warned, st_d
    _checked(d, so_d)


def test_dynamic_batch_hits_match_at_two_shapes(cache, tmp_path):
    m = _convs(dynamic=True, seed=2)
    so1, st1, _ = _compile(m, tmp_path / "cold.so")
    so2, st2, _ = _compile(_convs(dynamic=True, seed=4), tmp_path / "hit.so")
    assert st1.units >= 1 and st2.hits == st1.hits + st1.misses and st2.misses == 0, (st1, st2)
    cold = _checked(m, so1, batches=(1, 3))
    hit = [_run(so2, _feeds(b)) for b in (1, 3)]
    m2 = _convs(dynamic=True, seed=4)
    for b in (1, 3):
        assert_match(_run(so2, _feeds(b)), reference(m2, _feeds(b), "onnxruntime"),
                     rtol=1e-4, atol=1e-4)
    assert len(hit) == len(cold)


def test_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(kernel_cache.ENV, "0")
    m = _convs()
    so, st, _ = _compile(m, tmp_path / "m.so")
    assert st.units == 0 and kernel_cache.cache_dir() is None
    _checked(m, so)


def _damage_one(cache, how):
    obj = _entries(cache)[0]
    if how == "truncated":
        obj.write_bytes(obj.read_bytes()[:100])
    elif how == "not elf":
        data = obj.read_bytes()
        obj.write_bytes(b"\x00BAD" + data[4:])
    elif how == "flipped":
        data = bytearray(obj.read_bytes())
        data[len(data) // 2] ^= 0xFF
        obj.write_bytes(bytes(data))
    return obj


@pytest.mark.parametrize("how", ["truncated", "not elf", "flipped"])
def test_a_damaged_entry_is_compiled_again_with_one_warning(cache, tmp_path, how):
    m = _convs()
    so, st, _ = _compile(m, tmp_path / "a.so")
    cold = _checked(m, so)
    bad = _damage_one(cache, how)
    so2, st2, warned = _compile(m, tmp_path / "b.so")
    assert len(warned) == 1 and str(bad) in str(warned[0].message), warned
    assert st2.misses == 1 and st2.hits == st.misses - 1, st2
    _same(cold, _checked(m, so2))
    # repaired: all hits, no warning
    _, st3, warned = _compile(m, tmp_path / "c.so")
    assert st3.misses == 0 and not warned, st3


@pytest.mark.parametrize("how", ["group-writable", "foreign owner", "unsafe directory"])
def test_an_unsafe_entry_is_not_linked(cache, tmp_path, how, monkeypatch):
    m = _convs()
    so, st, _ = _compile(m, tmp_path / "a.so")
    obj = _entries(cache)[0]
    if how == "group-writable":
        os.chmod(obj, 0o660)
    elif how == "unsafe directory":
        os.chmod(cache, 0o777)
    elif os.geteuid() == 0:
        os.chown(obj, 65534, -1)
    else:           # not root: this user looks like another one to the checks
        uid = os.geteuid() + 1
        monkeypatch.setattr(os, "geteuid", lambda: uid)
    so2, st2, warned = _compile(m, tmp_path / "b.so")
    assert len(warned) == 1 and "not used by this compile" in str(warned[0].message), warned
    assert st2.hits + st2.misses == st.misses and st2.misses >= 1, st2
    _same(_checked(m, so), _checked(m, so2))


def test_a_read_only_cache_is_skipped_with_one_warning(cache, tmp_path, monkeypatch):
    from onnx_mlir_py.backend import cache_files

    def read_only(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))
    monkeypatch.setattr(cache_files, "write_atomic", read_only)
    m = _convs()
    so, st, warned = _compile(m, tmp_path / "a.so")
    assert st.misses >= 2 and len(warned) == 1 and "cannot be written" in str(warned[0].message)
    assert not _entries(cache)
    _checked(m, so)


def test_a_cache_path_that_is_a_file_is_skipped(tmp_path, monkeypatch):
    f = tmp_path / "file"
    f.write_text("x")
    monkeypatch.setenv(kernel_cache.ENV, str(f / "kernels"))
    m = _convs()
    so, st, warned = _compile(m, tmp_path / "a.so")
    assert st.misses >= 1 and len(warned) == 1, warned
    _checked(m, so)


_FILL = """
import sys, warnings
import onnx, onnx_mlir_py
from onnx_mlir_py.codegen import kernel_cache
from onnx_mlir_py.errors import CacheEntryWarning
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    onnx_mlir_py.compile(onnx.load(sys.argv[1]), output=sys.argv[2], opt_level=3)
print(sum(issubclass(x.category, CacheEntryWarning) for x in w), kernel_cache.LAST.misses)
"""


def test_two_processes_fill_the_same_entries(cache, tmp_path):
    import onnx
    m = _convs(widths=(16, 24, 32, 16))
    onnx.save(m, tmp_path / "m.onnx")
    env = dict(os.environ, **{kernel_cache.ENV: str(cache)})
    procs = [subprocess.Popen([sys.executable, "-c", _FILL, str(tmp_path / "m.onnx"),
                               str(tmp_path / f"p{i}.so")], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.split()[0] == "0", (out, err)        # no warning
    so, st, warned = _compile(m, tmp_path / "after.so")
    assert st.misses == 0 and st.hits >= 3 and not warned, st
    ref = _checked(m, so)
    for i in range(2):
        _same(ref, [_run(str(tmp_path / f"p{i}.so"), _feeds())])


def test_another_target_misses(cache, tmp_path):
    m = _convs()
    so4, st4, _ = _compile(m, tmp_path / "v4.so", march="x86-64-v4")
    so3, st3, _ = _compile(m, tmp_path / "v3.so", march="x86-64-v3")
    assert st4.misses >= 1 and st3.hits == 0 and st3.misses >= 1, (st4, st3)
    _checked(m, so3)
    _, again, _ = _compile(m, tmp_path / "v3b.so", march="x86-64-v3")
    assert again.misses == 0 and again.hits == st3.misses


def test_key_and_names_cover_the_target_and_opt_level():
    import mlir.ir as ir
    text = """
    llvm.func @ext(i64)
    llvm.func internal @__om_pfor_0(%a: i64) { llvm.call @ext(%a) : (i64) -> () llvm.return }
    llvm.func internal @__om_kernel_0(%a: i64) { llvm.call @__om_pfor_0(%a) : (i64) -> ()
      llvm.return }
    llvm.func @main_graph(%a: i64) { llvm.call @__om_kernel_0(%a) : (i64) -> () llvm.return }
    """
    keys = set()
    with ir.Context():
        for target in ("x86_64\0x86-64-v4\0\0O3", "x86_64\0x86-64-v3\0\0O3",
                       "x86_64\0x86-64-v4\0\0O2", "x86_64\0x86-64-v4\0+avx512vnni\0O3"):
            m = ir.Module.parse(text)
            units, skipped, defined, _ = kernel_cache.find_units(m)
            assert len(units) == 1 and skipped == 0
            assert units[0].names == ["__om_kernel_0", "__om_pfor_0"]
            kernel_cache.name_units(units, target)
            keys.add((units[0].key, units[0].name))
            kernel_cache.declare_units(m, units, defined)
            names = [ir.StringAttr(op.operation.attributes["sym_name"]).value
                     for op in m.body.operations]
            assert names == ["ext", units[0].name, "main_graph"], names
            assert m.operation.verify()
    assert len(keys) == 4


def test_a_unit_that_cannot_stand_alone_stays_in_the_model(cache, tmp_path, monkeypatch):
    """The first unit's module cannot be made: compiled ahead it goes back
    to the model (kernel_ahead.py), whose kernel cache meets the same
    failure and leaves it in the model's own code."""
    from onnx_mlir_py.errors import CompileError
    real, calls = kernel_cache._unit_ir, []

    def first_fails(u, *args):
        calls.append(u.name)
        if u.name == calls[0]:
            raise CompileError("cannot translate")
        return real(u, *args)
    monkeypatch.setattr(kernel_cache, "_unit_ir", first_fails)
    m = _convs()
    so, st, warned = _compile(m, tmp_path / "a.so")
    assert calls.count(calls[0]) == 2, calls        # ahead, then the model's kernel cache
    assert st.skipped == 1 and st.misses == len(calls) - 2 >= 1 and not warned, st
    assert len(_entries(cache)) == st.misses
    _checked(m, so)


def test_the_misses_compile_with_the_model_in_one_pool(cache, tmp_path, monkeypatch):
    """A cold compile: the misses' bitcode (cloned units, not text parsed
    back) goes to one llvm_capi.Pool as each is written, before the model's
    own code is even translated (its threads compile while the kernel cache
    goes on, #29); the model's part goes to the same pool, one wait (one
    barrier), then the entries are stored; the library is right."""
    from onnx_mlir_py.codegen import llvm_capi
    pools, submits, waits = [], [], []
    real_submit, real_wait, real_translate = (llvm_capi.Pool.submit, llvm_capi.Pool.wait,
                                              llvm_capi.translate)

    def submit(self, src, obj):
        if self not in pools:
            pools.append(self)
        submits.append((str(src), self.submitted, len(self.threads)))
        return real_submit(self, src, obj)

    def wait(self):
        waits.append(self)
        return real_wait(self)

    def translate(module, bitcode=False):       # the model's: the one with main_graph
        if "main_graph" in str(module.operation.get_asm(large_elements_limit=1)):
            submits.append(("translate", 0, 0))
        return real_translate(module, bitcode)
    monkeypatch.setattr(llvm_capi.Pool, "submit", submit)
    monkeypatch.setattr(llvm_capi.Pool, "wait", wait)
    monkeypatch.setattr(llvm_capi, "translate", translate)
    m = _convs()
    so, st, warned = _compile(m, tmp_path / "a.so")
    assert st.misses >= 2 and not warned, st
    assert len(pools) == 1 and waits == pools, (pools, waits)
    names = [s for s, _, _ in submits]
    assert len(names) == st.misses + 2, submits       # misses, the translate, the model
    assert all(n.endswith(".bc") and "kernel" in n for n in names[:st.misses]), submits
    assert names[st.misses] == "translate" and "kernel" not in names[-1], submits
    # LLVM started with the first miss, on jobs - 1 threads (this one is busy)
    from onnx_mlir_py.codegen.split import split_jobs
    assert submits[1][2] == min(split_jobs() - 1, 1), submits
    assert len(_entries(cache)) == st.misses
    _checked(m, so)


def test_misses_compile_ahead_of_the_model(cache, tmp_path, monkeypatch):
    """A cold compile: each missed kernel is bufferized and lowered in a
    module of its own and given to the LLVM pool before the model's own
    bufferization starts (kernel_ahead.py); in the model it is a stub
    whose bufferized type matched. The library matches onnxruntime; a
    model with other weights then takes every kernel from the cache at the
    tensor level, with the same numbers."""
    from onnx_mlir_py.codegen import llvm as codegen_llvm
    from onnx_mlir_py.codegen import llvm_capi
    from onnx_mlir_py.codegen.split import split_jobs
    if split_jobs() < 2:
        pytest.skip("one job: nothing compiles ahead (the pool starts at its wait)")
    events = []
    real_submit, real_bufferize = llvm_capi.Pool.submit, codegen_llvm.bufferize_prepared

    def submit(self, src, obj):
        events.append(("submit", os.path.basename(str(src))))
        return real_submit(self, src, obj)

    def bufferize(module, entry="main_graph", *a, **k):
        events.append(("bufferize", entry))
        return real_bufferize(module, entry, *a, **k)
    monkeypatch.setattr(llvm_capi.Pool, "submit", submit)
    monkeypatch.setattr(codegen_llvm, "bufferize_prepared", bufferize)
    m = _convs()
    so, st, warned = _compile(m, tmp_path / "a.so")
    assert st.misses >= 2 and st.hits == 0 and not warned, st
    ahead = [e for e in events if e[0] == "submit" and e[1].startswith("kernel_a")]
    assert len(ahead) == st.misses, events          # every miss went ahead
    model = events.index(("bufferize", "main_graph"))
    assert events.index(ahead[-1]) < model, events  # all before the model's bufferization
    assert len(_entries(cache)) == st.misses and len(list(cache.rglob("*.t"))) == st.misses
    cold = _checked(m, so)
    so2, st2, warned = _compile(_convs(), tmp_path / "b.so")
    assert st2.tensor_hits == st.misses and st2.misses == 0 and not warned, st2
    _same(cold, _checked(m, so2))



def test_copies_the_o3_stage_left_apart_share_one_symbol_ahead(cache, tmp_path, monkeypatch):
    """Two kernel functions that print the same once bufferized, missed in
    one chunk of kernel_ahead.py: one definition of their memref-level symbol
    (two were a "redefinition of symbol" that failed the compile: the -O3
    stage's kernel merge can leave identical kernels apart, as a text CNN's
    two 3-tap convs were, one with an un-CSE'd constant that only the last
    canonicalize removed). Simulated by the merge kept from merging."""
    from onnx_mlir_py.codegen import kernel_functions
    from onnx_mlir_py.codegen.split import split_jobs
    if split_jobs() < 2:
        pytest.skip("one job: nothing compiles ahead (the pool starts at its wait)")
    monkeypatch.setattr(kernel_functions, "_merge", lambda funcs, calls, printed: 0)
    m = _convs(widths=(16, 16, 16, 16))         # layers 2-4: one kernel
    so, st, warned = _compile(m, tmp_path / "a.so")
    assert st.misses >= 2 and not warned, st
    cold = _checked(m, so)
    so2, st2, warned = _compile(_convs(widths=(16, 16, 16, 16)), tmp_path / "b.so")
    assert st2.misses == 0 and st2.tensor_hits >= 2 and not warned, st2
    _same(cold, _checked(m, so2))


_MEMREF_KERNELS = """
module {
  memref.global "private" constant @g : memref<4xf32> = dense<1.0>
  func.func private @__om_kernel_0(%a: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>} {
    %c = arith.constant 2.0 : f32
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    return
  }
  func.func private @__om_kernel_1(%a: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>} {
    %c = arith.constant 2.0 : f32
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    return
  }
  func.func private @__om_kernel_2(%a: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>} {
    %g = memref.get_global @g : memref<4xf32>
    memref.copy %g, %a : memref<4xf32> to memref<4xf32>
    return
  }
  func.func private @__om_kernel_3(%a: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>} {
    %t = memref.alloc() : memref<4xf32>
    memref.copy %t, %a : memref<4xf32> to memref<4xf32>
    memref.dealloc %t : memref<4xf32>
    return
  }
  func.func private @__om_kernel_4(%a: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>} {
    %c = arith.constant 3.0 : f32
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
      memref.store %c, %a[%i] : memref<4xf32>
    }
    return
  }
  func.func private @__om_kernel_5(%a: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>} {
    %c0 = arith.constant 0 : index
    %v = arith.constant dense_resource<blob> : vector<4xf32>
    vector.store %v, %a[%c0] : memref<4xf32>, vector<4xf32>
    return
  }
  func.func @main_graph(%a: memref<4xf32>) {
    call @__om_kernel_0(%a) : (memref<4xf32>) -> ()
    call @__om_kernel_1(%a) : (memref<4xf32>) -> ()
    call @__om_kernel_2(%a) : (memref<4xf32>) -> ()
    call @__om_kernel_3(%a) : (memref<4xf32>) -> ()
    call @__om_kernel_4(%a) : (memref<4xf32>) -> ()
    call @__om_kernel_5(%a) : (memref<4xf32>) -> ()
    return
  }
}
{-#
  dialect_resources: { builtin: { blob: "0x040000000000803F0000803F0000803F0000803F" } }
#-}
"""


def _keyed(tmp_path, target="x86_64\0x86-64-v4\0\0O3\0fp"):
    import mlir.ir as ir
    from onnx_mlir_py.codegen.parallel_for import PARALLEL_FOR_FN
    early = kernel_cache.Early(tmp_path, target, kernel_cache._Store(tmp_path / "kc"))
    m = ir.Module.parse(_MEMREF_KERNELS)
    kernel_cache.key_kernels(m, early)
    assert m.operation.verify()
    funcs = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
             for op in m.body.operations if op.operation.name == "func.func"}
    callees = [ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value
               for op in funcs["main_graph"].regions[0].blocks[0].operations
               if op.operation.name == "func.call"]
    return early, funcs, callees, PARALLEL_FOR_FN in early.calls


def test_kernels_keyed_at_the_memref_level(tmp_path):
    """Keyed after bufferization: copies merged, calls retargeted; a kernel
    that references a global, allocates (its allocation site ids are the
    model's) or holds a dense_resource (bytes not in its text) is left to
    the LLVM-level key; a hit is an external declaration
    before the lowering, its object linked, and a parallel one links the
    thread pool; another target is another key."""
    with ir_context():
        early, funcs, callees, pool = _keyed(tmp_path)
        assert early.skipped == 3 and early.hits == 0 and len(early.keys) == 2, early
        assert callees[0] == callees[1] and callees[0] in early.keys
        assert callees[2:4] == ["__om_kernel_2", "__om_kernel_3"] and callees[4] in early.keys
        assert callees[5] == "__om_kernel_5"
        assert not pool
        store = kernel_cache._Store(tmp_path / "kc")
        for key in early.keys.values():
            store.store(key, b"\x7fELF" + key.encode())
        again, funcs, callees2, pool = _keyed(tmp_path)
        assert callees2 == callees and again.hits == 2 and not again.keys and pool, again
        assert all(not len(funcs[c].regions[0].blocks) for c in (callees[0], callees[4]))
        assert sorted(open(o, "rb").read()[4:].decode() for o in again.objects) == \
            sorted(early.keys.values())
        other, _, callees3, _ = _keyed(tmp_path, "x86_64\0x86-64-v3\0\0O3\0fp")
        assert other.hits == 0 and {callees3[0], callees3[4]}.isdisjoint(callees)


def ir_context():
    from onnx_mlir_py.context import make_context
    return make_context()


# -- keyed at the tensor level (kernel_stubs.py) -------------------------------

def _entry_code(monkeypatch):
    """The model's own LLVM-dialect code of each compile (after the kernel
    cache took its kernels out), internal loop names numbered by first use."""
    import re
    texts = []
    orig = kernel_cache.cached_kernels

    def wrap(module, *a, **k):
        out = orig(module, *a, **k)
        text = module.operation.get_asm(large_elements_limit=16, assume_verified=True)
        # what only a lowered kernel declares (its hit links the thread pool)
        text = re.sub(r"\n  llvm.func @om_parallel_for\(.*\)(?=\n)", "", text).replace(
            ' attributes {sym_visibility = "private"}\n', "\n")
        names = {}
        texts.append(re.sub(r"@__om_loop_\d+",
                            lambda m: names.setdefault(m.group(0), f"@L{len(names)}"), text))
        return out
    monkeypatch.setattr(kernel_cache, "cached_kernels", wrap)
    return texts


def test_tensor_level_hits_are_not_bufferized_and_change_no_model_code(cache, tmp_path,
                                                                        monkeypatch):
    """A second compile takes its kernels at the tensor level (stubs in
    their place through bufferization): the model's own code is the cold
    compile's (no new copy or allocation), outputs bit-identical, and each
    hit's entry is a sidecar beside its object."""
    texts = _entry_code(monkeypatch)
    m = _convs(dynamic=True, seed=2)
    so1, st1, _ = _compile(m, tmp_path / "cold.so")
    assert st1.misses >= 2 and st1.tensor_hits == 0, st1
    assert len(list(cache.rglob("*.t"))) >= 2
    so2, st2, warned = _compile(_convs(dynamic=True, seed=2), tmp_path / "hit.so")
    assert not warned and st2.misses == 0 and st2.tensor_hits >= 2, st2
    assert texts[0] == texts[1]
    for b in (1, 3):
        np.testing.assert_array_equal(_run(so1, _feeds(b))[0], _run(so2, _feeds(b))[0])
    _checked(m, so2, batches=(1, 3))


def test_a_damaged_sidecar_is_not_used(cache, tmp_path):
    m = _convs()
    so, st, _ = _compile(m, tmp_path / "a.so")
    cold = _checked(m, so)
    side = sorted(cache.rglob("*.t"))[0]
    side.write_bytes(side.read_bytes().replace(b'"read', b'"writ', 1))
    so2, st2, warned = _compile(m, tmp_path / "b.so")
    assert len(warned) == 1 and str(side) in str(warned[0].message), warned
    # that kernel keyed at the memref level again (its object is whole): a hit
    assert st2.misses == 0 and st2.tensor_hits == st.misses - 1, st2
    _same(cold, _checked(m, so2))


def test_a_sidecar_whose_type_differs_is_removed_and_the_compile_redone(cache, tmp_path):
    """An entry whose kernel bufferizes to another signature than recorded
    (cannot happen with one compiler; planted here) never links: one
    warning naming the entry, the entry removed, the module compiled again
    without tensor-level hits (a right library, the entry recorded again),
    the next compile right."""
    import hashlib
    import json
    m = _convs()
    so0, st0, _ = _compile(m, tmp_path / "a.so")
    cold = _checked(m, so0)
    side = sorted(cache.rglob("*.t"))[0]
    d = json.loads(side.read_bytes())
    d["type"] = d["type"].replace("memref<", "memref<2x", 1)
    data = json.dumps(d, sort_keys=True).encode()
    side.write_bytes(data)
    side.with_name(side.name + ".sha256").write_bytes(hashlib.sha256(data).hexdigest().encode())
    so1, st1, warned = _compile(m, tmp_path / "b.so")
    assert len(warned) == 1 and f"kernel cache entry {d['key']}" in str(warned[0].message), \
        warned
    # the redone compile recorded the entry again, right
    assert st1.tensor_hits == 0 and json.loads(side.read_bytes())["type"] != d["type"], st1
    _same(cold, _checked(m, so1))
    so, st, warned = _compile(m, tmp_path / "c.so")
    assert st.misses == 0 and not warned, st
    _checked(m, so)


_SUMMARY_KERNELS = """
func.func private @__om_kernel_0(%a: tensor<8xf32>, %d: tensor<8xf32>, %i: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %x = tensor.extract %a[%i] : tensor<8xf32>
  %y = tensor.extract %d[%c0] : tensor<8xf32>
  %s = arith.addf %x, %y : f32
  %r = tensor.insert %s into %d[%i] : tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func private @__om_kernel_1(%a: tensor<8xf32>, %d: tensor<8xf32>, %i: index,
                                %j: index) -> tensor<8xf32> {
  %f = arith.constant 1.0 : f32
  %w = tensor.insert %f into %a[%i] : tensor<8xf32>
  %x = tensor.extract %w[%j] : tensor<8xf32>
  %r = tensor.insert %x into %d[%i] : tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func private @__om_kernel_2(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.copy ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"""


def test_summaries_are_one_shot_bufferizations_own():
    """The recorded summary is upstream's analysis: an argument written in
    place that is no destination is written (the caller must copy it); a
    result that is a new buffer is not cached at the tensor level."""
    import mlir.ir as ir
    from onnx_mlir_py.codegen.bufferize import prepare
    from onnx_mlir_py.codegen.kernel_stubs import _summaries
    with ir_context():
        m = ir.Module.parse(_SUMMARY_KERNELS)
        prepare(m)          # as the model's bufferization prepares them
        fns = [op.operation for op in m.body.operations]
        got = _summaries(m, fns)
    assert got[0] == (["read", "read-write", ""], [1]), got
    assert got[1] == (["read-write", "read-write", "", ""], [1]), got
    assert got[2] is None, got


def _pointwise_clip(seed, hw=112):
    """A 1x1 Conv (32 -> 16 channels) + Clip over a dynamic batch at
    ``hw`` x ``hw``: its kernel is keyed at the memref level and holds a
    parallel loop inside the batch's."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(seed)
    inits = [nh.from_array((rng.standard_normal((16, 32, 1, 1)) * 0.2).astype(np.float32), "w"),
             nh.from_array(np.array(0, np.float32), "lo"),
             nh.from_array(np.array(6, np.float32), "hi")]
    nodes = [h.make_node("Conv", ["x", "w"], ["c"]), h.make_node("Clip", ["c", "lo", "hi"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", 32, hw, hw])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["N", 16, hw, hw])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_nested_parallel_loops_keyed_at_the_memref_level(cache, tmp_path, capfd):
    """A kernel keyed after bufferization whose outer parallel body calls
    the inner loop's launcher: its unit reaches the inner loop's functions
    (find_units' ``nested``; before, the unit lacked them, its translation
    failed with LLVM's "Operand is null" on stderr, and the kernel stayed in
    the model uncached). Compiled ahead and cold: every kernel a unit,
    nothing printed; the hits match onnxruntime at two batches."""
    m = _pointwise_clip(0)
    so, st, warned = _compile(m, tmp_path / "cold.so")
    assert st.skipped == 0 and st.misses == st.units >= 1 and not warned, st
    assert "Operand is null" not in capfd.readouterr().err
    m2 = _pointwise_clip(1)
    so2, st2, _ = _compile(m2, tmp_path / "hit.so")
    assert st2.hits == st.units and st2.misses == 0, st2
    for b in (1, 3):
        f = {"x": np.random.default_rng(b).standard_normal((b, 32, 112, 112)).astype(np.float32)}
        assert_match(_run(so, f), reference(m, f, "onnxruntime"), rtol=1e-4, atol=1e-4)
        assert_match(_run(so2, f), reference(m2, f, "onnxruntime"), rtol=1e-4, atol=1e-4)


def test_nested_parallel_loops_stand_alone(cache, tmp_path, capfd):
    """A dynamic batch's parallel loop around a threaded kernel's: the outer
    body calls the inner loop's launcher. The unit's clone renames that call
    too (it called a missing symbol: LLVM's verifier printed "Operand is
    null" to stderr and the kernel stayed in the model); every kernel is a
    unit, nothing is printed, and the hits match onnxruntime at two batches."""
    m = conv_relu_stack((32, 32, 32), 8, 32, 0, "N")
    so, st, warned = _compile(m, tmp_path / "cold.so")
    assert st.skipped == 0 and st.misses == st.units >= 3 and not warned, st
    assert "Operand is null" not in capfd.readouterr().err
    so2, st2, _ = _compile(conv_relu_stack((32, 32, 32), 8, 32, 1, "N"), tmp_path / "hit.so")
    assert st2.hits == st.units and st2.misses == 0, st2
    for b in (1, 3):
        f = {"x": np.random.default_rng(b).standard_normal((b, 8, 32, 32)).astype(np.float32)}
        assert_match(_run(so, f), reference(m, f, "onnxruntime"), rtol=1e-4, atol=1e-4)
        m2 = conv_relu_stack((32, 32, 32), 8, 32, 1, "N")
        assert_match(_run(so2, f), reference(m2, f, "onnxruntime"), rtol=1e-4, atol=1e-4)
