"""LLVM in this process, through its C API (issue #29): ``mlir-translate
--mlir-to-llvmir`` (:func:`translate`) and ``opt -O<n>`` + ``llc -O<n>
-filetype=obj`` of a split part (:func:`compile_part`, :func:`compile_parts`).

The MLIR wheel's ``libMLIRPythonCAPI.so`` links the LLVM wheel's
``libLLVM.so``, the library the tools run on, so the same code runs here
without a process per tool (opt and llc: 27 ms of CPU start-up each, per
part), without MLIR bytecode written for mlir-translate to read back, and
without the optimised bitcode between opt and llc::

    mlirTranslateModuleToLLVMIR   the module in memory -> LLVM IR text
    LLVMParseBitcodeInContext     a part, in a context of its own
    LLVMVerifyModule              a broken module is an error, not an abort
    (triple, data layout, target-cpu / target-features: what the tools'
     -mtriple / -mcpu / -mattr set)
    LLVMRunPasses("default<O<n>>")    the pipeline ``opt -O<n>`` runs
    LLVMTargetMachineEmitToMemoryBuffer   ``llc``'s object file

ctypes releases the GIL during each LLVM call, so a :class:`Pool` runs
the parts on ``jobs`` threads, started by the first part submitted: the
kernel cache's misses compile while the caller's thread finds the rest,
translates and splits the model (#29; :func:`compile_parts`: a list at once). LLVM's error diagnostics are collected
and raised as CompileError (its default handler would print and exit). The
output is the tools' byte for byte (test_llvm_capi; ResNet-50's library).
:func:`usable` says whether the parts can be compiled here: the library
and every symbol found, an x86-64 triple (the one target initialised here),
an explicit CPU (``native`` is resolved by the tools), and
``ONNX_MLIR_PY_LLVM_IN_PROCESS`` not ``0``; otherwise the callers run the
tools (codegen/split.py, codegen/link.py).
"""
from __future__ import annotations

import ctypes
import heapq
import os
import threading
from functools import lru_cache
from pathlib import Path

from onnx_mlir_py.codegen.mlir_capi import capi_pointer as _capi_pointer, diagnostics
from onnx_mlir_py.errors import CompileError

# "0": always run the opt / llc tools (A/B, debugging)
IN_PROCESS_ENV = "ONNX_MLIR_PY_LLVM_IN_PROCESS"

_P = ctypes.c_void_p
_S = ctypes.c_char_p
_I = ctypes.c_int


class _MlirOperation(ctypes.Structure):     # MLIR C API handles: a pointer, by value
    _fields_ = [("ptr", _P)]


class _MlirContext(ctypes.Structure):
    _fields_ = [("ptr", _P)]


_SIGNATURES = {
    # name: (result, arguments)
    "LLVMInitializeX86TargetInfo": (None, []),
    "LLVMInitializeX86Target": (None, []),
    "LLVMInitializeX86TargetMC": (None, []),
    "LLVMInitializeX86AsmPrinter": (None, []),
    "LLVMInitializeX86AsmParser": (None, []),       # inline asm in an object file
    "LLVMContextCreate": (_P, []),
    "LLVMContextDispose": (None, [_P]),
    "LLVMCreateMemoryBufferWithMemoryRangeCopy": (_P, [_S, ctypes.c_size_t, _S]),
    "LLVMDisposeMemoryBuffer": (None, [_P]),
    "LLVMGetBufferStart": (_P, [_P]),
    "LLVMGetBufferSize": (ctypes.c_size_t, [_P]),
    # not ...InContext2: it reports through the context's handler (the default one exits)
    "LLVMParseBitcodeInContext": (_I, [_P, _P, ctypes.POINTER(_P), ctypes.POINTER(_P)]),
    # takes the buffer (text or bitcode): a kernel cache unit (codegen/kernel_cache.py)
    "LLVMParseIRInContext": (_I, [_P, _P, ctypes.POINTER(_P), ctypes.POINTER(_P)]),
    "LLVMContextSetDiagnosticHandler": (None, [_P, _P, _P]),
    "LLVMGetDiagInfoSeverity": (_I, [_P]),
    "LLVMGetDiagInfoDescription": (_P, [_P]),
    "LLVMDisposeModule": (None, [_P]),
    "LLVMVerifyModule": (_I, [_P, _I, ctypes.POINTER(_P)]),
    "LLVMDisposeMessage": (None, [_P]),
    "LLVMGetDefaultTargetTriple": (_P, []),         # host_llvm: llc --version's two lines
    "LLVMGetHostCPUName": (_P, []),
    "LLVMGetTargetFromTriple": (_I, [_S, ctypes.POINTER(_P), ctypes.POINTER(_P)]),
    "LLVMCreateTargetMachine": (_P, [_P, _S, _S, _S, _I, _I, _I]),
    "LLVMDisposeTargetMachine": (None, [_P]),
    "LLVMSetTarget": (None, [_P, _S]),
    "LLVMCreateTargetDataLayout": (_P, [_P]),
    "LLVMSetModuleDataLayout": (None, [_P, _P]),
    "LLVMDisposeTargetData": (None, [_P]),
    "LLVMGetFirstFunction": (_P, [_P]),
    "LLVMGetNextFunction": (_P, [_P]),
    "LLVMGetStringAttributeAtIndex": (_P, [_P, ctypes.c_uint, _S, ctypes.c_uint]),
    "LLVMCreateStringAttribute": (_P, [_P, _S, ctypes.c_uint, _S, ctypes.c_uint]),
    "LLVMAddAttributeAtIndex": (None, [_P, ctypes.c_uint, _P]),
    "LLVMGetStringAttributeValue": (_P, [_P, ctypes.POINTER(ctypes.c_uint)]),
    "LLVMPrintModuleToString": (_P, [_P]),
    "LLVMWriteBitcodeToMemoryBuffer": (_P, [_P]),
    "LLVMCreatePassBuilderOptions": (_P, []),
    "LLVMPassBuilderOptionsSetLoopVectorization": (None, [_P, _I]),
    "LLVMPassBuilderOptionsSetSLPVectorization": (None, [_P, _I]),
    "LLVMDisposePassBuilderOptions": (None, [_P]),
    "LLVMRunPasses": (_P, [_P, _S, _P, _P]),
    "LLVMParseCommandLineOptions": (None, [_I, ctypes.POINTER(_S), _S]),
    "LLVMGetErrorMessage": (_P, [_P]),
    "LLVMDisposeErrorMessage": (None, [_P]),
    "LLVMTargetMachineEmitToMemoryBuffer": (_I, [_P, _P, _I, ctypes.POINTER(_P),
                                                  ctypes.POINTER(_P)]),
}
# LLVM options of every opt run, in this process and given to the opt tool
# (codegen/split.py, codegen/link.py). -unroll-max-iteration-count-to-analyze=0:
# the loop unrollers do not simulate a loop with a constant trip count
# (up to 10) iteration by iteration to see whether full unrolling would fold
# it away. MLIR's kernels arrive tiled and unrolled, and their inner loops
# (a matmul tile's reduction: 8 vector accumulators, ~150 instructions) were
# simulated for nothing: up to 40% of a kernel's opt time (one of
# ResNet-50's 53 -> 33 ms of CPU), and no unrolling decision changed in
# ResNet-50, YOLO, MobileNetV3 and GPT-2 (their libraries byte-identical).
# The option has existed since LLVM 3.8.
LLVM_OPTIONS = ("-unroll-max-iteration-count-to-analyze=0",)

# LLVMCodeGenOptLevel by -O level; LLVMRelocPIC; LLVMCodeModelDefault; LLVMObjectFile
_CODEGEN_LEVEL = {0: 0, 1: 1, 2: 2, 3: 3}
_RELOC_PIC, _CODE_MODEL_DEFAULT, _OBJECT_FILE = 2, 0, 1
# LLVMAttributeFunctionIndex
_FUNCTION_INDEX = 0xFFFFFFFF
# LLVMReturnStatusAction: LLVMVerifyModule reports, never aborts
_RETURN_STATUS = 2


# MLIR's: errors reach a ctypes diagnostic handler (mlir_capi.diagnostics),
# which takes the GIL itself, so these run without it too
_MLIR_SIGNATURES = {
    "mlirTranslateModuleToLLVMIR": (_P, [_MlirOperation, _P]),
    "mlirRegisterAllLLVMTranslations": (None, [_MlirContext]),
}


class _Api:
    """The LLVM-C functions, typed: ctypes releases the GIL while they run."""

    def __init__(self, path: str):
        lib = ctypes.CDLL(path)
        for table in (_SIGNATURES, _MLIR_SIGNATURES):
            for name, (res, args) in table.items():
                fn = getattr(lib, name)         # AttributeError: the caller's "not usable"
                fn.restype, fn.argtypes = res, args
                setattr(self, name[4:] if name.startswith("LLVM") else name, fn)


@lru_cache(maxsize=1)
def _api() -> _Api | None:
    """The C API of the MLIR wheel's LLVM, X86 initialised; None when any
    part is missing."""
    try:
        import mlir._mlir_libs as libs
        api = _Api(os.path.join(list(libs.__path__)[0], "libMLIRPythonCAPI.so"))
    except (ImportError, OSError, AttributeError, IndexError):
        return None
    api.InitializeX86TargetInfo()
    api.InitializeX86Target()
    api.InitializeX86TargetMC()
    api.InitializeX86AsmPrinter()
    api.InitializeX86AsmParser()
    # LLVM's options are global to the process: set with the API, once
    argv = (_S * (1 + len(LLVM_OPTIONS)))(b"onnx-mlir-py", *(o.encode() for o in LLVM_OPTIONS))
    api.ParseCommandLineOptions(len(argv), argv, None)
    return api


def available() -> bool:
    """Whether LLVM's C API is here (and not turned off): :func:`translate`."""
    return os.environ.get(IN_PROCESS_ENV, "1") != "0" and _api() is not None


def usable(triple: str, cpu: str | None) -> bool:
    """Whether :func:`compile_parts` can compile for ``triple`` / ``cpu``."""
    return triple.startswith("x86_64-") and cpu not in (None, "", "native") and available()


def _message(api: _Api, ptr, dispose, missing: str = "?") -> str:
    text = ctypes.string_at(ptr).decode(errors="replace").strip() if ptr else missing
    if ptr:
        dispose(ptr)
    return text


@lru_cache(maxsize=1)
def host_llvm() -> tuple[str, str] | None:
    """(default target triple, host CPU name) from the in-process LLVM, or
    None (the caller asks ``llc --version``).

    The compiler needs LLVM's default target triple (the host's, given to
    ``opt`` / ``llc`` explicitly: ``link.target_triple``) and its name for
    the build machine's CPU (``-mcpu=native``, the -O3 default's tuning:
    ``target.host_cpu_name``). ``llc --version`` prints them ("Default
    target", "Host CPU") after loading all of LLVM, ~15 ms of every compile
    (#29); the C API answers the same two questions with the functions behind
    llc's lines (``sys::getDefaultTargetTriple``, ``sys::getHostCPUName``).
    None when the library or the functions are missing or
    ``ONNX_MLIR_PY_LLVM_IN_PROCESS=0`` asks for the tools."""
    if os.environ.get(IN_PROCESS_ENV, "1") == "0":
        return None
    api = _api()
    if api is None:
        return None
    found = tuple(_message(api, fn(), api.DisposeMessage, missing="")
                  for fn in (api.GetDefaultTargetTriple, api.GetHostCPUName))
    return found if found[0] else None


def _error(api: _Api, err) -> str:
    """The text of an LLVMErrorRef (consumed)."""
    msg = api.GetErrorMessage(err)
    return _message(api, msg, api.DisposeErrorMessage)


def _as_tools_set(api: _Api, ctx, module, tm, triple: str, cpu: str, features: str) -> None:
    """What ``opt`` / ``llc`` do to the module their ``-mtriple`` / ``-mcpu`` /
    ``-mattr`` name before anything runs: its triple and the target's data
    layout (mlir-translate writes neither; without them opt has no cost
    model), and each function's ``target-cpu`` / ``target-features``
    attributes (``codegen::setFunctionAttributes``: the CPU unless the
    function names one; the features appended to its own)."""
    api.SetTarget(module, triple.encode())
    layout = api.CreateTargetDataLayout(tm)
    api.SetModuleDataLayout(module, layout)
    api.DisposeTargetData(layout)

    def attr(key: str, value: str):
        k, v = key.encode(), value.encode()
        return api.CreateStringAttribute(ctx, k, len(k), v, len(v))

    fn = api.GetFirstFunction(module)
    while fn:
        if not api.GetStringAttributeAtIndex(fn, _FUNCTION_INDEX, b"target-cpu", 10):
            api.AddAttributeAtIndex(fn, _FUNCTION_INDEX, attr("target-cpu", cpu))
        if features:
            old = api.GetStringAttributeAtIndex(fn, _FUNCTION_INDEX, b"target-features", 15)
            n = ctypes.c_uint()
            own = ctypes.string_at(api.GetStringAttributeValue(old, ctypes.byref(n)),
                                   n.value).decode() if old else ""
            api.AddAttributeAtIndex(fn, _FUNCTION_INDEX,
                                    attr("target-features", f"{own},{features}" if own else features))
        fn = api.GetNextFunction(fn)


def translate(module, bitcode: bool = False) -> bytes:
    """``mlir-translate --mlir-to-llvmir`` of the LLVM-dialect ``module``
    (an ``mlir.ir.Module``): the same LLVM IR text, without writing the
    module as bytecode for a tool that reads it back; with ``bitcode``,
    the same module as LLVM bitcode (what ``llvm-as`` makes of the text:
    ResNet-50's 3.8 MB of text is 0.37 MB, written and read back faster).
    CompileError with MLIR's diagnostics when it cannot be translated."""
    api = _api()
    with module.context:
        api.mlirRegisterAllLLVMTranslations(_MlirContext(_capi_pointer(module.context)))
        ctx = api.ContextCreate()
        try:
            with diagnostics(module.context) as diags:
                llvm = api.mlirTranslateModuleToLLVMIR(
                    _MlirOperation(_capi_pointer(module.operation)), ctx)
            if not llvm:
                raise CompileError("mlir-translate --mlir-to-llvmir failed: " +
                                   ("; ".join(diags) or "no diagnostic"))
            try:
                if bitcode:
                    buf = api.WriteBitcodeToMemoryBuffer(llvm)
                    try:
                        return ctypes.string_at(api.GetBufferStart(buf), api.GetBufferSize(buf))
                    finally:
                        api.DisposeMemoryBuffer(buf)
                text = api.PrintModuleToString(llvm)
                try:
                    return ctypes.string_at(text)
                finally:
                    api.DisposeMessage(text)
            finally:
                api.DisposeModule(llvm)
        finally:
            api.ContextDispose(ctx)


def compile_part(bitcode: bytes, opt_level: int, triple: str, cpu: str,
                 features: str) -> bytes:
    """The object file ``llc -O<n> -relocation-model=pic -filetype=obj`` makes
    of ``opt -O<n>`` of ``bitcode`` (or LLVM IR text; ``-mtriple``, ``-mcpu``, ``-mattr`` =
    ``features``). CompileError with LLVM's message when it fails."""
    api = _api()
    if opt_level not in _CODEGEN_LEVEL:
        raise CompileError(f"in-process LLVM: no optimisation level {opt_level}")
    ctx = api.ContextCreate()
    errors: list[str] = []
    handler = _DIAGNOSTIC_HANDLER(lambda info, _: _diagnostic(api, info, errors))
    # LLVM's default handler prints an error and exits the process: this one
    # keeps it (it runs Python, with the GIL, only when LLVM reports something)
    api.ContextSetDiagnosticHandler(ctx, ctypes.cast(handler, _P), None)
    module = tm = pbo = None

    def check(step: str) -> None:
        if errors:
            raise CompileError(f"in-process LLVM: {step}: {'; '.join(errors)}")
    try:
        buf = api.CreateMemoryBufferWithMemoryRangeCopy(bitcode, len(bitcode), b"part")
        module, msg = _P(), _P()
        what = "bitcode" if bitcode[:2] == b"BC" else "LLVM IR"
        if what == "bitcode":
            failed = api.ParseBitcodeInContext(ctx, buf, ctypes.byref(module), ctypes.byref(msg))
            api.DisposeMemoryBuffer(buf)        # the module is materialised: not its
        else:           # text (it takes the buffer)
            failed = api.ParseIRInContext(ctx, buf, ctypes.byref(module), ctypes.byref(msg))
        if failed:
            module = None
            raise CompileError(f"in-process LLVM: unreadable {what}: "
                               f"{_message(api, msg.value, api.DisposeMessage)}")
        if api.VerifyModule(module, _RETURN_STATUS, ctypes.byref(msg)):
            raise CompileError(f"in-process LLVM: invalid module: "
                               f"{_message(api, msg.value, api.DisposeMessage)}")
        if msg.value:
            api.DisposeMessage(msg.value)
        target, err = _P(), _P()
        if api.GetTargetFromTriple(triple.encode(), ctypes.byref(target), ctypes.byref(err)):
            raise CompileError(f"in-process LLVM: {_message(api, err.value, api.DisposeMessage)}")
        tm = api.CreateTargetMachine(target, triple.encode(), cpu.encode(), features.encode(),
                                     _CODEGEN_LEVEL[opt_level], _RELOC_PIC, _CODE_MODEL_DEFAULT)
        if not tm:
            raise CompileError(f"in-process LLVM: no target machine for {triple} {cpu}")
        _as_tools_set(api, ctx, module, tm, triple, cpu, features)
        # opt -O<n>: its pipeline, vectorizers on from -O2 (as opt sets them)
        pbo = api.CreatePassBuilderOptions()
        api.PassBuilderOptionsSetLoopVectorization(pbo, int(opt_level >= 2))
        api.PassBuilderOptionsSetSLPVectorization(pbo, int(opt_level >= 2))
        e = api.RunPasses(module, f"default<O{opt_level}>".encode(), tm, pbo)
        if e:
            raise CompileError(f"in-process LLVM: opt -O{opt_level}: {_error(api, e)}")
        check(f"opt -O{opt_level}")
        out = _P()
        if api.TargetMachineEmitToMemoryBuffer(tm, module, _OBJECT_FILE, ctypes.byref(err),
                                               ctypes.byref(out)):
            raise CompileError(f"in-process LLVM: llc: "
                               f"{_message(api, err.value, api.DisposeMessage)}")
        try:
            check("llc")
            return ctypes.string_at(api.GetBufferStart(out), api.GetBufferSize(out))
        finally:
            api.DisposeMemoryBuffer(out)
    finally:
        if pbo:
            api.DisposePassBuilderOptions(pbo)
        if tm:
            api.DisposeTargetMachine(tm)
        if module:
            api.DisposeModule(module)
        api.ContextDispose(ctx)


# void (*LLVMDiagnosticHandler)(LLVMDiagnosticInfoRef, void *)
_DIAGNOSTIC_HANDLER = ctypes.CFUNCTYPE(None, _P, _P)
_DS_ERROR = 0       # LLVMDSError


def _diagnostic(api: _Api, info, errors: list[str]) -> None:
    """An LLVM diagnostic: errors kept (warnings and remarks dropped, as the
    tools' stderr is when they succeed)."""
    if api.GetDiagInfoSeverity(info) == _DS_ERROR:
        errors.append(_message(api, api.GetDiagInfoDescription(info), api.DisposeMessage))


class Pool:
    """opt + llc (:func:`compile_part`) of bitcode files into object files,
    at most ``jobs`` at a time, on threads that start with the first
    :meth:`submit` and take parts while the caller goes on (its MLIR work
    overlaps LLVM's, #29); then :meth:`wait`. Until then ``jobs - 1``
    threads run (the caller's thread is busy; with one job the parts start
    at :meth:`wait`), then ``jobs``. Of the parts waiting, the largest
    starts first (the longest runs first: a short tail). A ``with`` block
    waits for the running parts when it ends (an interrupt or a failure of
    the caller's own work included), so nothing is written after the
    caller removes its folder; :meth:`wait` raises the first failure once
    every started part has ended, and so is an interrupt: no part starts
    after it. A failed part stops the pool taking new ones."""

    def __init__(self, jobs: int, opt_level: int, triple: str, cpu: str, features: str):
        self.jobs, self.args = max(1, jobs), (opt_level, triple, cpu, features)
        self.cond = threading.Condition()
        self.todo: list[tuple[int, int, str, str]] = []     # (-size, seq, src, obj): a heap
        self.errors: list[Exception] = []
        self.busy = 0           # parts taken and not yet written
        self.closed = False     # no more parts: the workers return when none is left
        self.threads: list[threading.Thread] = []
        self.submitted = 0

    def submit(self, src, obj) -> None:
        """Compile bitcode file ``src`` into ``obj``."""
        size = Path(src).stat().st_size
        with self.cond:
            if self.closed:
                raise RuntimeError("llvm_capi.Pool: a part submitted after wait")
            heapq.heappush(self.todo, (-size, self.submitted, str(src), str(obj)))
            self.submitted += 1
            # before wait, jobs - 1 threads: the caller's is busy (all jobs
            # then: the kernel cache's phase 0.25 -> 0.7 s, no wall time won)
            start = len(self.threads) < min(self.jobs - 1, self.submitted) and not self.errors
            self.cond.notify()
        if start:
            self._start()

    def _start(self) -> None:
        t = threading.Thread(target=self._work, name=f"om-llvm-{len(self.threads)}",
                             daemon=True)
        self.threads.append(t)
        t.start()

    def _work(self) -> None:
        while True:
            with self.cond:
                while not self.todo and not self.closed and not self.errors:
                    self.cond.wait()
                if not self.todo or self.errors:
                    return
                _, _, src, obj = heapq.heappop(self.todo)
                self.busy += 1
            try:
                data = compile_part(Path(src).read_bytes(), *self.args)
                Path(obj).write_bytes(data)
            except Exception as e:       # noqa: BLE001 (raised by wait)
                with self.cond:
                    self.errors.append(e)
            finally:
                with self.cond:
                    self.busy -= 1
                    self.cond.notify_all()

    # LLVM runs on worker threads only: the caller's thread waits, so an
    # interrupt (a signal handler runs on the main thread) is raised there,
    # never inside LLVM's diagnostic callback, where ctypes would drop it.
    # The wait counts the parts in flight rather than joining the threads: a
    # join that an interrupt breaks marks a still running thread as stopped
    # (CPython 3.11's Thread._wait_for_tstate_lock), and a part would then be
    # written after the caller removed its folder. A part is taken (busy)
    # under the lock that cancel() empties the queue with: once it is empty
    # and no part is busy, none runs or starts
    def _until(self, done) -> None:
        with self.cond:
            while not done():
                self.cond.wait(0.05)

    def cancel(self) -> None:
        """No part starts any more; wait for the running ones."""
        with self.cond:
            self.todo.clear()
            self.closed = True
            self.cond.notify_all()
        self._until(lambda: self.busy == 0)

    def wait(self) -> None:
        """Every part compiled; else the first failure, raised once every
        started part ended (an interrupt too: no part starts after it)."""
        try:
            with self.cond:
                self.closed = True
                self.cond.notify_all()
            while len(self.threads) < min(self.jobs, self.submitted) and not self.errors:
                self._start()
            self._until(lambda: self.busy == 0 and (not self.todo or bool(self.errors)))
        except BaseException:
            self.cancel()
            raise
        for t in self.threads:
            t.join()
        if self.errors:
            raise self.errors[0]

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc) -> None:
        self.cancel()


def compile_parts(parts: list[Path], objects: list[str], jobs: int, opt_level: int,
                  triple: str, cpu: str, features: str) -> None:
    """Each bitcode file of ``parts`` compiled (:func:`compile_part`) into
    the matching path of ``objects``, at most ``jobs`` at a time, in the
    order given. The first failure is raised once every started part has
    ended; so is an interrupt (KeyboardInterrupt, SIGTERM): the threads
    stop taking parts and the running ones finish first (a part is a
    fraction of a second), so nothing runs on after the caller cleans up.
    (A :class:`Pool` given every part before its threads start.)"""
    with Pool(jobs, opt_level, triple, cpu, features) as pool:
        with pool.cond:         # the order given: no thread takes one before the rest
            for i, (src, obj) in enumerate(zip(parts, objects)):
                heapq.heappush(pool.todo, (0, i, str(src), str(obj)))
            pool.submitted = len(pool.todo)
        pool.wait()
