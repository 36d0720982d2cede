"""The C runtime is compiled once and its objects reused by every link
(codegen/runtime_objects.py, #29): a second library compiles no runtime
source; a corrupt object is compiled again; an unsafe or unusable cache
folder is not used (the runtime is compiled into the link's work folder),
and every library still runs. The link's own compiles are counted with the
background prefetch off; the prefetch has its own tests at the end."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnx_mlir_py
from onnx_mlir_py.codegen import runtime_objects as ro
from onnx_mlir_py.codegen.cwrapper import RUNTIME_SOURCES
from onnx_mlir_py.runtime import ExecutionSession


def _model():
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture
def compiled(monkeypatch, tmp_path):
    """(cache dir, list of runtime sources compiled, build(name) -> checked .so)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(cache))
    monkeypatch.setattr(ro, "PREFETCH", False)
    calls = []
    real = ro._compile

    def counting(source, out):
        calls.append(source)
        real(source, out)
    monkeypatch.setattr(ro, "_compile", counting)

    def build(name):
        so = onnx_mlir_py.compile(_model(), output=str(tmp_path / f"{name}.so"), opt_level=0)
        x = np.array([-1.0, 0.5, 2.0], np.float32)
        np.testing.assert_array_equal(ExecutionSession(so).run([x])[0], np.maximum(x, 0))
        return so
    return cache, calls, build


def _folder(cache):
    return cache / "runtime" / ro._key()


def test_second_library_compiles_no_runtime_source(compiled):
    cache, calls, build = compiled
    build("a")
    assert sorted(calls) == ["om_cpu.c", "om_runtime.c", "om_seq.c", "om_string.c"]
    calls.clear()
    build("b")
    assert calls == []
    folder = _folder(cache)
    for d in (cache / "runtime", folder):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    for f in folder.iterdir():
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f


def test_corrupt_object_is_compiled_again(compiled):
    cache, calls, build = compiled
    build("a")
    obj = _folder(cache) / "om_runtime.o"
    obj.write_bytes(obj.read_bytes()[:100])         # truncated, as a crash can leave it
    calls.clear()
    build("b")
    assert calls == ["om_runtime.c"]
    assert obj.read_bytes()[:4] == b"\x7fELF" and obj.stat().st_size > 100


def test_unsafe_folder_is_not_used(compiled):
    cache, calls, build = compiled
    build("a")
    folder = _folder(cache)
    planted = folder / "om_cpu.o"
    planted.write_bytes(b"\x7fELF planted")
    os.chmod(folder, 0o777)                          # anybody could have written it
    calls.clear()
    build("b")                                       # links its own objects, runs
    assert sorted(calls) == ["om_cpu.c", "om_runtime.c", "om_seq.c", "om_string.c"]
    assert planted.read_bytes() == b"\x7fELF planted"


def test_unwritable_cache_falls_back(compiled, tmp_path, monkeypatch):
    _, calls, build = compiled
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(blocker / "cache"))  # mkdir fails
    build("c")
    assert len(calls) == len(RUNTIME_SOURCES)


def _no_claims(monkeypatch):
    """The link waits for the prefetch chains instead of claiming the
    sources they have not started (a small model's link comes first)."""
    monkeypatch.setattr(ro, "PREFETCH", True)
    monkeypatch.setattr(ro.Prefetch, "claim", lambda self, sources: None)


def test_prefetch_compiles_before_the_link(compiled, monkeypatch):
    """An empty cache: the runtime's objects are compiled by the processes
    started before codegen (none by the link), stored, and the library runs;
    the thread pool's and image decoders' objects, not linked here, are
    stored too when their compile has ended."""
    cache, calls, build = compiled
    _no_claims(monkeypatch)
    build("a")
    assert calls == []
    folder = _folder(cache)
    assert {"om_cpu.o", "om_runtime.o", "om_seq.o", "om_string.o"} <= \
        {p.name for p in folder.iterdir()}
    for s in RUNTIME_SOURCES:
        assert ro._valid(s, folder)
    build("b")
    assert calls == []


def test_prefetch_starts_before_the_import(compiled, monkeypatch, tmp_path):
    """A library's runtime compiles start at the compile's start (before the
    model's import: the other core idles during the front end, #29), the
    link compiles none of them, and the library runs; an -O0 MLIR emit
    starts none."""
    from onnx_mlir_py import compiler
    cache, calls, build = compiled
    _no_claims(monkeypatch)
    events, real_start, real_import = [], ro.Prefetch.start, compiler.import_onnx

    def start(self, sources):
        real_start(self, sources)
        events.append(("start", sorted(self.running)))

    def import_onnx(*args):
        events.append(("import",))
        return real_import(*args)
    monkeypatch.setattr(ro.Prefetch, "start", start)
    monkeypatch.setattr(compiler, "import_onnx", import_onnx)
    build("a")
    assert events[0][0] == "start" and set(RUNTIME_SOURCES) <= set(events[0][1])
    assert events[1] == ("import",) and calls == []
    events.clear()
    onnx_mlir_py.compile(_model(), output=str(tmp_path / "a.mlir"), emit="EmitMLIR",
                         opt_level=0)
    assert events == [("import",)]


def test_a_failed_prefetch_is_compiled_by_the_link(compiled, monkeypatch):
    cache, calls, build = compiled
    _no_claims(monkeypatch)
    real = ro._command

    def broken(source, out):
        cmd = real(source, out)
        return cmd + ["-DOM_NO_SUCH_MACRO=", "-include", "/nonexistent.h"] \
            if source == "om_seq.c" else cmd
    monkeypatch.setattr(ro, "_command", broken)

    def compile_(source, out):        # the link's own compile: the real command
        calls.append(source)
        from onnx_mlir_py.codegen.tools import run
        run(real(source, out), what="test")
    monkeypatch.setattr(ro, "_compile", compile_)
    build("a")
    assert calls == ["om_seq.c"]
    assert ro._valid("om_seq.c", _folder(cache))


def test_prefetch_runs_one_chain_per_other_core(compiled, monkeypatch):
    """On two cores the missing sources compile one after the other in one
    process (the compile keeps its own core), each marked when done."""
    from onnx_mlir_py import tool_process
    cache, calls, build = compiled
    _no_claims(monkeypatch)
    monkeypatch.setattr(tool_process, "split_jobs", lambda: 2)
    chains = []
    real = ro.Prefetch.start

    def start(self, sources):
        real(self, sources)
        chains.append({id(p) for p, _ in self.running.values()})
    monkeypatch.setattr(ro.Prefetch, "start", start)
    build("a")
    assert len(chains[0]) == 1 and calls == []


def test_the_link_claims_what_the_chain_has_not_started(compiled, monkeypatch):
    """A link that comes before the prefetch chain (here: one that waits
    30 s before its first compile) compiles the sources the chain has not
    started itself, each once; the chain is killed at the end and the
    library runs."""
    import time
    cache, calls, build = compiled
    monkeypatch.setattr(ro, "PREFETCH", True)
    real = ro._chain
    monkeypatch.setattr(ro, "_chain", lambda sources, outs: "sleep 30\n" + real(sources, outs))
    t0 = time.monotonic()
    build("a")
    assert time.monotonic() - t0 < 30
    assert sorted(calls) == ["om_cpu.c", "om_runtime.c", "om_seq.c", "om_string.c"]
    for s in RUNTIME_SOURCES:
        assert ro._valid(s, _folder(cache))


def test_entry_object_is_cached_by_its_text(compiled, tmp_path, monkeypatch):
    """The entry wrapper's object is compiled once per wrapper text: a second
    library of the same signature compiles none, one of another signature
    its own; a corrupt one is compiled again; each library runs."""
    cache, _, build = compiled
    gcc, waited = [], []
    real, real_run = ro._gcc, ro.run

    def counting(source, out):
        if str(source).endswith("entry.c"):
            gcc.append(source)
        return real(source, out)

    def running(args, **kw):        # a compile the link waits for
        if any(str(a).endswith("entry.c") for a in args):
            waited.append(args)
        return real_run(args, **kw)
    monkeypatch.setattr(ro, "_gcc", counting)
    monkeypatch.setattr(ro, "run", running)
    build("a")
    build("b")
    assert len(gcc) == 1
    assert not waited       # compiled in the background (EntryBuild), not by the link
    (obj,) = _folder(cache).glob("entry-*.o")
    obj.write_bytes(obj.read_bytes()[:64])
    build("c")
    assert len(gcc) == 2 and ro.elf_verified(obj)
    m = _model()
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 4
    m.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 4
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "d.so"), opt_level=0)
    assert len(gcc) == 3 and len(list(_folder(cache).glob("entry-*.o"))) == 2
    x = np.array([-1.0, 0.5, 2.0, -3.0], np.float32)
    np.testing.assert_array_equal(ExecutionSession(so).run([x])[0], np.maximum(x, 0))


def test_linked_runtime_sources():
    import mlir.ir as ir
    from onnx_mlir_py.codegen.link import runtime_sources
    from onnx_mlir_py.context import make_context

    def module(*callees):
        with make_context():
            return ir.Module.parse("\n".join(f"llvm.func @{c}(i64) -> i64" for c in callees))
    assert runtime_sources(False, [module("foo")]) == list(RUNTIME_SOURCES)
    assert runtime_sources(False, [module("om_image_decode")])[-1:] == ["om_image.c"]
    assert runtime_sources(True, [module("foo"), module("om_parallel_for")])[-2:] == \
        ["om_profile.c", "om_parallel.c"]
    assert runtime_sources(True)[-3:] == ["om_profile.c", "om_parallel.c", "om_image.c"]


def test_prefetch_starts_the_image_decoders_only_for_an_image_decoder(compiled, monkeypatch,
                                                                      tmp_path):
    """om_image.c (0.3 s of gcc) is compiled ahead only when the model
    declares its entry (ImageDecoder); such a library, its object
    prefetched, decodes a PNG as onnx.reference does."""
    import io
    from onnx import TensorProto as T
    from onnx.reference import ReferenceEvaluator
    from PIL import Image
    from onnx_mlir_py.codegen.cwrapper import IMAGE_RUNTIME_SOURCE
    cache, calls, build = compiled
    monkeypatch.setattr(ro, "PREFETCH", True)
    started, real = [], ro.Prefetch.start

    def spy(self, sources):
        started.append(list(sources))
        real(self, sources)
    monkeypatch.setattr(ro.Prefetch, "start", spy)
    build("a")
    assert IMAGE_RUNTIME_SOURCE not in started[-1] and "om_runtime.c" in started[-1]
    node = helper.make_node("ImageDecoder", ["x"], ["y"], name="dec", pixel_format="RGB")
    m = helper.make_model(helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", T.UINT8, [None])],
        [helper.make_tensor_value_info("y", T.UINT8, [None, None, None])]),
        opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 10
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "img.so"), opt_level=0)
    assert IMAGE_RUNTIME_SOURCE in started[-1] and IMAGE_RUNTIME_SOURCE not in calls
    png = io.BytesIO()
    Image.fromarray(np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)).save(png, "PNG")
    data = np.frombuffer(png.getvalue(), np.uint8)
    (want,) = ReferenceEvaluator(m).run(None, {"x": data})
    np.testing.assert_array_equal(ExecutionSession(so).run([data])[0], want)


def test_objects_keyed_by_the_compiler_executable(tmp_path, monkeypatch):
    # the key tells C compilers apart by their executable (path, size, time),
    # with no process started; a name that is no file is asked its --version
    import shutil
    gcc = shutil.which("gcc")
    copy = tmp_path / "gcc"
    shutil.copy2(gcc, copy)
    a = ro.compiler_identity(gcc)
    assert a == ro.compiler_identity(gcc) and a != ro.compiler_identity(str(copy))
    before = ro.compiler_identity(str(copy))
    os.utime(copy, ns=(0, 0))               # another install of the same file
    assert ro.compiler_identity(str(copy)) != before
    calls = []
    monkeypatch.setattr(ro, "run", lambda args, **k: calls.append(args) or b"v1")
    assert ro.compiler_identity(gcc) == a and not calls
    assert ro.compiler_identity("no-such-cc-here") == b"v1"
    assert calls == [["no-such-cc-here", "--version"]]


def test_entry_build_failed_or_killed_is_compiled_by_the_link(compiled, monkeypatch, tmp_path):
    """A background entry compile that fails is done again by the link (its
    error reported the usual way); one still running when the compile fails
    is killed and leaves no object."""
    import subprocess
    cache, _, build = compiled
    real = ro._gcc
    # the background one fails (a bad flag), the link's own succeeds
    monkeypatch.setattr(ro, "_gcc", lambda s, o: real(s, o) + ["--no-such-flag"])
    monkeypatch.setattr(ro, "run", lambda args, **kw: subprocess.run(
        [a for a in args if a != "--no-such-flag"], check=True, capture_output=True).stdout)
    build("a")                      # runs: the link compiled the wrapper itself
    assert len(list(_folder(cache).glob("entry-*.o"))) == 1
    # a build killed on the way out
    entry = tmp_path / "entry.c"
    entry.write_text("int om_x(void) { return 1; }\n")
    monkeypatch.setattr(ro, "_gcc", lambda s, o: ["/bin/sh", "-c", "sleep 30"])
    with ro.EntryBuild(entry) as eb:
        assert eb.proc is not None and eb.proc.poll() is None
        p = eb.proc
    assert p.poll() is not None and eb.proc is None
    assert not entry.with_suffix(".o").exists()
