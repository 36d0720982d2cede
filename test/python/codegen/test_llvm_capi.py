"""LLVM in this process (codegen/llvm_capi.py): translate, opt + llc of the
split parts. Its output must be the tools' byte for byte; its failures are
one CompileError, never an abort; ONNX_MLIR_PY_LLVM_IN_PROCESS=0 and the
targets it does not take fall back to the tools."""
from __future__ import annotations

import subprocess
import time

import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py.codegen import llvm_capi, split
from onnx_mlir_py.codegen.tools import tool
from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.testing.check import assert_match, reference
from onnx_mlir_py.timings import Timings

pytestmark = pytest.mark.skipif(not llvm_capi.available(), reason="no LLVM C API in the wheel")

TRIPLE = "x86_64-unknown-linux-gnu"
# a vectorizable loop and a call: opt's cost model, the inliner and llc's
# register allocation all see the target
LOOP_IR = """
define internal void @axpy(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr float, ptr %x, i64 %i
  %py = getelementptr float, ptr %y, i64 %i
  %a = load float, ptr %px
  %b = load float, ptr %py
  %m = fmul float %a, 3.0
  %s = fadd float %m, %b
  %e = call float @llvm.exp.f32(float %s)
  store float %e, ptr %py
  %i1 = add i64 %i, 1
  %c = icmp ult i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
  ret void
}
declare float @llvm.exp.f32(float)
define void @entry(ptr %x, ptr %y) {
  call void @axpy(ptr %x, ptr %y, i64 1000)
  ret void
}
"""
# not valid (%a is used before it is defined), written without the verifier
BROKEN_IR = """
define i32 @f(i32 %x) {
  %b = add i32 %a, 1
  %a = add i32 %x, 1
  ret i32 %b
}
"""

# llc's error (reported through the LLVM context, whose default handler exits)
BAD_ASM_IR = """
define void @f() {
  call void asm sideeffect "notaninstruction %eax", ""()
  ret void
}
"""


def _bitcode(tmp_path, text: str, name: str = "m") -> bytes:
    src, bc = tmp_path / f"{name}.ll", tmp_path / f"{name}.bc"
    src.write_text(text)
    subprocess.run([tool("llvm-as"), "-disable-verify", str(src), "-o", str(bc)], check=True)
    return bc.read_bytes()


def _tools_object(tmp_path, bc: bytes, level: int, cpu: str, features: str) -> bytes:
    target = [f"-mtriple={TRIPLE}", f"-mcpu={cpu}"] + ([f"-mattr={features}"] if features else [])
    src, opt, obj = tmp_path / "t.bc", tmp_path / "t.opt.bc", tmp_path / "t.o"
    src.write_bytes(bc)
    subprocess.run([tool("opt"), f"-O{level}", *llvm_capi.LLVM_OPTIONS, *target, str(src), "-o",
                    str(opt)], check=True)
    subprocess.run([tool("llc"), f"-O{level}", "-relocation-model=pic", "-filetype=obj",
                    *target, str(opt), "-o", str(obj)], check=True)
    return obj.read_bytes()


@pytest.mark.parametrize("level,cpu,features", [
    (3, "x86-64-v4", ""), (3, "x86-64-v3", "+avx512vnni"), (2, "x86-64-v2", ""),
    (1, "znver4", ""), (0, "x86-64-v4", "")])
def test_object_is_the_tools(tmp_path, level, cpu, features):
    bc = _bitcode(tmp_path, LOOP_IR)
    got = llvm_capi.compile_part(bc, level, TRIPLE, cpu, features)
    assert got == _tools_object(tmp_path, bc, level, cpu, features)


def test_bad_input_is_an_error_not_an_abort(tmp_path):
    with pytest.raises(CompileError, match="invalid module: .*does not dominate"):
        llvm_capi.compile_part(_bitcode(tmp_path, BROKEN_IR), 3, TRIPLE, "x86-64-v4", "")
    with pytest.raises(CompileError, match="llc: .*invalid instruction mnemonic"):
        llvm_capi.compile_part(_bitcode(tmp_path, BAD_ASM_IR), 3, TRIPLE, "x86-64-v4", "")
    with pytest.raises(CompileError, match="unreadable bitcode: "):
        llvm_capi.compile_part(b"BC\xc0\xde not bitcode", 3, TRIPLE, "x86-64-v4", "")
    with pytest.raises(CompileError, match="unreadable LLVM IR: .*expected"):
        llvm_capi.compile_part(b"define void @f( {", 3, TRIPLE, "x86-64-v4", "")
    with pytest.raises(CompileError, match="no optimisation level 4"):
        llvm_capi.compile_part(_bitcode(tmp_path, LOOP_IR), 4, TRIPLE, "x86-64-v4", "")


def test_parts_failure_is_raised_after_the_rest(tmp_path):
    good, bad = tmp_path / "good.bc", tmp_path / "bad.bc"
    good.write_bytes(_bitcode(tmp_path, LOOP_IR, "g"))
    bad.write_bytes(_bitcode(tmp_path, BROKEN_IR, "b"))
    objs = [str(tmp_path / "bad.o"), str(tmp_path / "good.o")]
    with pytest.raises(CompileError, match="does not dominate"):
        llvm_capi.compile_parts([bad, good], objs, 2, 3, TRIPLE, "x86-64-v4", "")
    parts = [good] * 5
    objs = [str(tmp_path / f"p{i}.o") for i in range(5)]
    llvm_capi.compile_parts(parts, objs, 2, 3, TRIPLE, "x86-64-v4", "")
    first = open(objs[0], "rb").read()
    assert all(open(o, "rb").read() == first for o in objs)


def test_usable(monkeypatch):
    assert llvm_capi.usable(TRIPLE, "x86-64-v4")
    assert not llvm_capi.usable(TRIPLE, "native")       # resolved by the tools
    assert not llvm_capi.usable(TRIPLE, None)
    assert not llvm_capi.usable("aarch64-unknown-linux-gnu", "generic")
    monkeypatch.setenv(llvm_capi.IN_PROCESS_ENV, "0")
    assert not llvm_capi.available() and not llvm_capi.usable(TRIPLE, "x86-64-v4")


# a small LLVM-dialect function: the square of a[n]
_SQUARE = """
    llvm.func @f(%a: !llvm.ptr, %n: i64) -> f32 {
      %0 = llvm.getelementptr %a[%n] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %1 = llvm.load %0 : !llvm.ptr -> f32
      %2 = llvm.fmul %1, %1 : f32
      llvm.return %2 : f32
    }"""


def test_translate_is_mlir_translate():
    from onnx_mlir_py.codegen.tools import run
    text = _SQUARE
    with ir.Context():
        module = ir.Module.parse(text)
        got = llvm_capi.translate(module)
    assert got == run([tool("mlir-translate"), "--mlir-to-llvmir"], stdin=text.encode())


def test_translate_bitcode_is_the_text():
    """``bitcode=True`` (what a split library's parts come from, #29): the
    module of the text, as bitcode (llvm-dis gives the text back)."""
    from onnx_mlir_py.codegen.tools import run
    text = _SQUARE
    with ir.Context():
        module = ir.Module.parse(text)
        ll = llvm_capi.translate(module)
        bc = llvm_capi.translate(module, bitcode=True)
    assert bc[:4] == b"BC\xc0\xde" and split.compiled_whole(bc)
    dis = run([tool("llvm-dis")], stdin=bc)

    def body(t: bytes) -> list[bytes]:      # the ModuleID comment names the input
        return [line for line in t.splitlines() if not line.startswith(b"; ModuleID")]
    assert body(dis) == body(ll)


def test_translate_failure_is_one_error():
    with ir.Context():
        module = ir.Module.parse("func.func @f() { return }")       # not the LLVM dialect
        with pytest.raises(CompileError, match="mlir-translate --mlir-to-llvmir failed: .*func"):
            llvm_capi.translate(module)


def test_split_library_is_the_tools(tmp_path, monkeypatch):
    """A split -O3 library in this process is the tools' one, byte for byte."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    from test_codegen_split import _model
    monkeypatch.setattr(split, "SPLIT_MIN_BYTES", 0)
    monkeypatch.setenv(split.JOBS_ENV, "2")
    monkeypatch.setenv("ONNX_MLIR_PY_KERNEL_CACHE", "0")    # in this process only
    m, feeds = _model()
    libs = {}
    for mode in ("1", "0"):
        monkeypatch.setenv(llvm_capi.IN_PROCESS_ENV, mode)
        t = Timings()
        libs[mode] = onnx_mlir_py.compile(m, output=str(tmp_path / f"m{mode}.so"), opt_level=3,
                                          timings=t)
        assert ("codegen: opt + llc" in t) == (mode == "1")
    assert open(libs["1"], "rb").read() == open(libs["0"], "rb").read()
    got = ExecutionSession(libs["1"], num_threads=2).run([feeds["x"]])
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=1e-4, atol=1e-5)


# a process compiling 2000 parts of tmp_path/m.bc (the body between the two
# halves), printing its counts of objects before / after an interrupt ended
# and of threads left (see _interrupted)
_SCRIPT_HEAD = """
import os, sys, threading, time
from pathlib import Path
from onnx_mlir_py.codegen import llvm_capi
d = Path(sys.argv[1])
objs = [str(d / f"p{i}.o") for i in range(2000)]
print("start", flush=True)
try:
"""
_SCRIPT_TAIL = """    print("finished")
except KeyboardInterrupt:
    done = sum(os.path.exists(o) for o in objs)
    time.sleep(0.3)         # nothing may be written after the interrupt left
    print("interrupted", done, sum(os.path.exists(o) for o in objs), threading.active_count())
"""
INTERRUPT_SCRIPT = _SCRIPT_HEAD + """\
    llvm_capi.compile_parts([d / "m.bc"] * len(objs), objs, 2, 3, "x86_64-unknown-linux-gnu",
                            "x86-64-v4", "")
""" + _SCRIPT_TAIL


def test_interrupt_stops_the_parts(tmp_path):
    """Ctrl-C during the parts: no part starts after it, the running ones end
    before the interrupt goes on (the caller then removes their folder)."""
    before, after, threads = _interrupted(tmp_path, INTERRUPT_SCRIPT)
    assert 0 < before < 2000 and after == before and threads == 1


def _interrupted(tmp_path, script: str) -> tuple[int, int, int]:
    """Run ``script`` (compiling parts of a loop module in ``tmp_path``) in a
    process, SIGINT it once the first parts are written (a fixed sleep let a
    quiet machine finish 400 parts before it: ~2.2 ms each); its counts of
    objects before / after the interrupt ended, and of LLVM threads left."""
    import signal
    import sys
    (tmp_path / "m.bc").write_bytes(_bitcode(tmp_path, LOOP_IR))
    p = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "start\n"
    end = time.monotonic() + 60
    while not any(tmp_path.glob("p*.o")) and time.monotonic() < end and p.poll() is None:
        time.sleep(0.01)
    p.send_signal(signal.SIGINT)
    out = p.communicate(timeout=120)[0].split()
    assert out[0] == "interrupted", out
    return tuple(map(int, out[1:]))


# -- the streaming pool (llvm_capi.Pool) --------------------------------------

def test_pool_compiles_while_the_caller_goes_on(tmp_path):
    """A part starts compiling when it is submitted, on jobs - 1 threads
    while the caller works (its thread is the other core), on all jobs once
    it waits; each object is compile_part's."""
    src = tmp_path / "m.bc"
    src.write_bytes(_bitcode(tmp_path, LOOP_IR))
    want = llvm_capi.compile_part(src.read_bytes(), 3, TRIPLE, "x86-64-v4", "")
    objs = [tmp_path / f"p{i}.o" for i in range(6)]
    with llvm_capi.Pool(2, 3, TRIPLE, "x86-64-v4", "") as pool:
        pool.submit(src, objs[0])
        end = time.monotonic() + 60
        while not objs[0].exists() and time.monotonic() < end:
            time.sleep(0.005)
        assert objs[0].exists() and len(pool.threads) == 1     # before wait
        for o in objs[1:]:
            pool.submit(src, o)
        assert len(pool.threads) == 1
        pool.wait()
        assert len(pool.threads) == 2
        with pytest.raises(RuntimeError, match="after wait"):
            pool.submit(src, objs[0])
    assert all(o.read_bytes() == want for o in objs)


def test_pool_takes_the_largest_waiting_part_first(tmp_path, monkeypatch):
    """With one job nothing starts before wait (the caller's thread is the
    one core); then the parts run largest first, ties in submit order."""
    order = []
    monkeypatch.setattr(llvm_capi, "compile_part", lambda data, *a: order.append(data) or b"o")
    sizes = [3, 10, 1, 10, 7]
    pool = llvm_capi.Pool(1, 3, TRIPLE, "x86-64-v4", "")
    for i, n in enumerate(sizes):
        (tmp_path / f"s{i}").write_bytes(bytes([i]) * n)
        pool.submit(tmp_path / f"s{i}", tmp_path / f"s{i}.o")
    assert not pool.threads and not order
    pool.wait()
    assert [d[0] for d in order] == [1, 3, 4, 0, 2]


def test_pool_failure_and_the_callers_failure(tmp_path):
    """A failed part is raised by wait once the others ended, and the pool
    takes no part after it; when the caller's own work fails inside the
    ``with``, the parts not started are dropped and the running ones end
    before the exception goes on (nothing written after)."""
    good, bad = tmp_path / "good.bc", tmp_path / "bad.bc"
    good.write_bytes(_bitcode(tmp_path, LOOP_IR, "g"))
    bad.write_bytes(_bitcode(tmp_path, BROKEN_IR, "b"))
    with llvm_capi.Pool(2, 3, TRIPLE, "x86-64-v4", "") as pool:
        pool.submit(bad, tmp_path / "bad.o")
        end = time.monotonic() + 60
        while not pool.errors and time.monotonic() < end:
            time.sleep(0.005)
        pool.submit(good, tmp_path / "late.o")
        with pytest.raises(CompileError, match="does not dominate"):
            pool.wait()
    assert not (tmp_path / "late.o").exists() and not (tmp_path / "bad.o").exists()
    objs = [tmp_path / f"p{i}.o" for i in range(200)]
    with pytest.raises(ValueError):
        with llvm_capi.Pool(2, 3, TRIPLE, "x86-64-v4", "") as pool:
            for o in objs:
                pool.submit(good, o)
            raise ValueError
    assert pool.busy == 0 and not pool.todo
    done = sum(o.exists() for o in objs)
    time.sleep(0.2)
    assert sum(o.exists() for o in objs) == done < len(objs)


POOL_INTERRUPT_SCRIPT = _SCRIPT_HEAD + """\
    with llvm_capi.Pool(2, 3, "x86_64-unknown-linux-gnu", "x86-64-v4", "") as pool:
        for o in objs:                  # the caller's own work between the parts
            pool.submit(d / "m.bc", o)
            t = time.perf_counter() + 0.004
            while time.perf_counter() < t:
                pass
        pool.wait()
""" + _SCRIPT_TAIL


def test_interrupt_while_the_caller_submits(tmp_path):
    """Ctrl-C while the caller works between its parts (not in wait): the
    ``with`` block drops the waiting parts and waits for the running ones
    before the interrupt goes on."""
    before, after, threads = _interrupted(tmp_path, POOL_INTERRUPT_SCRIPT)
    assert 0 < before < 2000 and after == before and threads == 1
