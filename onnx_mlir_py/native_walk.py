"""The walk by op names in C (#29): :func:`walk_names`, which
``ir_util.walk_ops`` uses when it can.

The bindings' ``Operation.walk`` calls back into Python for every op, with
a new Python object each time (~1.5 us an op): the -O3 stage and codegen walk
the module ~30 times and each chunk of kernels ~10 times, 0.5-0.9 s of a
ResNet-50 compile's main thread, nearly all of it on ops no step asked for.
``native_walk.c`` walks with MLIR's C API (``mlirOperationWalk``) and
compares each op's name in C; Python then wraps only the ops it found
(``Operation._CAPICreate``): the ResNet-50 -O3 module's 10,765 ops, a walk
for ``vector.transpose`` 13.7 -> 0.8 ms, for ``func.func`` 14.4 -> 0.8 ms;
for 1,961 ``vector.fma`` / ``scf.for`` 15.1 -> 4.9 ms. Same ops, same order.

It is built with gcc, linked against nothing but libc (``-z defs``: no
symbol left for the loader to find), into the compile cache's folder
(``<cache>/tools/<key>/om_walk.so``, keyed by the source, the machine and
the flags), under the cache's rules as the tool launcher
(``tool_launcher.py``): a private folder, written atomically, checked
against its recorded sha256 before it is loaded. The three C API functions
it calls (the wheel ships no headers; the C file declares their types) are
handed to it at load (``om_walk_init``), taken from the bindings' own
``libMLIRPythonCAPI.so``: the walk runs on the very MLIR the ops live in,
whatever other copy the process holds (TensorFlow bundles one). Linking
against that 200 MB library instead cost ld ~0.5 s of CPU a build, and the
-O3 stage's first walks stayed Python's meanwhile. On an empty cache the
build starts once a model of at least :data:`MIN_NODES` nodes is imported
(:func:`worth_building`, inside :func:`building`; on another core: the
compile's stages hold one) and the walks are Python's until it is done;
the compile waits for it at its end, once per cache (~0.05 s of gcc), and
stores it. Before first use the library must find what the Python walk
finds on a small module. Where it cannot be built or loaded (no gcc, an unusable
cache, another platform, ``ONNX_MLIR_PY_NATIVE_WALK=0``) every walk is
Python's: it only saves time.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path

import mlir.ir as ir

SOURCE = Path(__file__).with_name("native_walk.c")
NAME = "om_walk.so"
DISABLE_ENV = "ONNX_MLIR_PY_NATIVE_WALK"    # "0": every walk in Python
_CAPSULE = b"mlir.ir.Operation._CAPIPtr"    # the bindings' capsule name for an operation
_ORDER = {"pre": 0, "post": 1}              # MlirWalkOrder
_FLAGS = ("-O2", "-shared", "-fPIC", "-Wl,-z,defs")
# the compile's wait for a build still running when it ends, seconds
BUILD_WAIT = 60.0

_lock = threading.RLock()
_lib: ctypes.CDLL | None = None
_looked = False                             # the cache looked at (once a process)
_build: tuple | None = None                 # (Popen, tmp folder, built file, cache path, capi)
_tried = False                              # a build was started in this process
_depth = 0

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def _enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1") != "0" and platform.system() == "Linux"


def capi_library() -> Path | None:
    try:
        import mlir._mlir_libs as libs
        p = Path(list(libs.__path__)[0]) / "libMLIRPythonCAPI.so"
    except (ImportError, IndexError, AttributeError):
        return None
    return p if p.is_file() else None


def _cache_path() -> Path:
    """The library's path in the cache (its folders created private);
    OSError / UnsafeCacheError when the cache cannot be used."""
    from onnx_mlir_py.tool_launcher import tools_folder
    h = hashlib.sha256(SOURCE.read_bytes())
    for part in (platform.machine(), " ".join(_FLAGS)):
        h.update(b"\0" + part.encode())
    return tools_folder(h.hexdigest()[:24]) / NAME


def _command(out: Path) -> list[str]:
    from onnx_mlir_py.codegen.tools import tool
    return [tool("gcc"), *_FLAGS, "-o", str(out), str(SOURCE)]


# the C API functions native_walk.c calls, in om_walk_init's order
_CAPI_FUNCTIONS = ("mlirOperationWalk", "mlirOperationGetName", "mlirIdentifierStr")


def _load(path: Path, capi: Path) -> ctypes.CDLL | None:
    """``path`` loaded, given the C API functions of the bindings' library
    ``capi`` (already loaded by them: the same handle) and checked (see the
    module docstring), else None."""
    try:
        lib = ctypes.CDLL(str(path))
        lib.om_walk_names.restype = ctypes.c_size_t
        lib.om_walk_names.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                      ctypes.POINTER(ctypes.c_size_t), ctypes.c_int,
                                      ctypes.c_int, ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        lib.om_walk_init.restype = ctypes.c_int
        lib.om_walk_init.argtypes = [ctypes.c_void_p] * 3
        ours = ctypes.CDLL(str(capi))
        if not lib.om_walk_init(*(ctypes.cast(getattr(ours, f), ctypes.c_void_p).value
                                  for f in _CAPI_FUNCTIONS)):
            return None
    except (OSError, AttributeError):
        return None
    return lib if _agrees(lib) else None


_CHECK = """
func.func @f(%a: i64) -> i64 {
  %c = arith.constant 1 : i64
  %s = arith.addi %a, %c : i64
  %r = scf.execute_region -> i64 {
    %t = arith.muli %s, %c : i64
    scf.yield %t : i64
  }
  return %r : i64
}"""


def _agrees(lib) -> bool:
    """The library finds what the bindings' walk finds, in both orders and
    with the found ops' insides skipped."""
    from onnx_mlir_py.ir_util import py_walk_names, walk_ops
    with ir.Context():
        m = ir.Module.parse(_CHECK)
        for names in (("arith.constant", "arith.muli", "scf.yield"), ("func.func",)):
            for order in ("pre", "post"):
                want = py_walk_names(m.operation, frozenset(names), order, True)
                if _found(lib, m.operation, names, order) != want:
                    return False
        names = ("scf.execute_region", "arith.muli", "arith.addi")
        # (a predicate prune: the Python walk, whatever this module has loaded)
        want = walk_ops(m.operation, set(names), prune=lambda op: op.name in names)
        if _found(lib, m.operation, names, "pre", skip_found=True) != want:
            return False
    return True


def _found(lib, root: ir.Operation, names, order: str,
           skip_found: bool = False) -> list[ir.Operation]:
    ptr = _get_pointer(root._CAPIPtr, _CAPSULE)
    enc = [n.encode() for n in names]
    arr = (ctypes.c_char_p * len(enc))(*enc)
    lengths = (ctypes.c_size_t * len(enc))(*map(len, enc))
    capacity = 1024
    while True:
        out = (ctypes.c_void_p * capacity)()
        n = lib.om_walk_names(ptr, arr, lengths, len(enc), _ORDER[order], int(skip_found),
                              out, capacity)
        if n <= capacity:
            break
        capacity = n                    # the module did not change: a second walk fits
    create = ir.Operation._CAPICreate
    return [create(_new_capsule(out[i], _CAPSULE, None)) for i in range(n)]


def walk_names(root: ir.Operation, names, order: str,
               skip_found: bool = False) -> list[ir.Operation] | None:
    """The ops nested in ``root`` (``root`` included) whose name is one of
    ``names`` (a str or a collection), in ``order`` ("pre" / "post";
    ``skip_found``, pre-order only: not the ops inside a found one), or None
    when the C walk is not at hand (the caller walks in Python)."""
    lib = _library()
    if lib is None:
        return None
    assert not skip_found or order == "pre"
    return _found(lib, root, (names,) if isinstance(names, str) else tuple(names), order,
                  skip_found)


def _library() -> ctypes.CDLL | None:
    global _looked
    if _lib is not None:
        return _lib
    if _looked and _build is None:
        return None
    with _lock:
        if not _looked:
            _looked = True
            _from_cache()
        elif _build is not None and _build[0].poll() is not None:
            _finish_build()
    return _lib


def worth_building(module: ir.Module) -> None:
    """Start the build (inside :func:`building`, when the library is not
    there) for an imported model of at least :data:`MIN_NODES` nodes: the
    ops of its functions' bodies, at the top level."""
    global _tried
    if _lib is not None or _build is not None or _tried or _depth == 0 or not _enabled():
        return
    nodes = 0
    for f in module.body.operations:
        for r in f.operation.regions:
            for b in r.blocks:
                nodes += len(b.operations)
    if nodes < MIN_NODES:
        return
    with _lock:
        if _lib is None and _build is None and not _tried and not _from_cache():
            _tried = True               # once a process: a failed build is not retried
            _start_build()


def _from_cache() -> bool:
    """Load the cached library if it is there and verified."""
    global _lib
    if not _enabled():
        return False
    from onnx_mlir_py.backend.cache_files import elf_verified
    from onnx_mlir_py.errors import UnsafeCacheError
    capi = capi_library()
    if capi is None:
        return False
    try:
        path = _cache_path()
        if elf_verified(path):
            _lib = _load(path, capi)
            return True
    except (OSError, UnsafeCacheError):
        pass
    return False


def _start_build() -> None:
    global _build
    from onnx_mlir_py.backend.cache_files import unlink_verified
    from onnx_mlir_py.errors import CompileError, UnsafeCacheError
    from onnx_mlir_py.scratch import make_temp_dir
    from onnx_mlir_py.tool_process import spawn_quiet
    capi = capi_library()
    if capi is None:
        return
    try:
        path = _cache_path()
        unlink_verified(path)
        tmp = make_temp_dir()
    except (OSError, UnsafeCacheError):
        return                          # no cache: no build (it would be lost)
    built = tmp / NAME
    try:
        p = spawn_quiet(_command(built), tmp)
    except (OSError, CompileError):
        shutil.rmtree(tmp, ignore_errors=True)
        return
    except BaseException:       # an interrupt (in the tool launcher's own first build)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _build = (p, tmp, built, path, capi)


def _finish_build(wait: float = 0.0) -> None:
    """The build's end: stored and loaded when it succeeded; killed if
    still running after ``wait`` seconds; its folder removed."""
    global _build, _lib
    from onnx_mlir_py.backend.cache_files import store_verified
    from onnx_mlir_py.tool_process import kill_group
    p, tmp, built, path, capi = _build
    _build = None
    try:
        try:
            if wait > 0:
                p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass
        except BaseException:
            kill_group(p)               # an interrupt in the wait: the build goes too
            raise
        if p.poll() is None:
            kill_group(p)
            return
        if p.returncode == 0 and built.is_file():
            try:
                store_verified(path, built.read_bytes(), mode=0o700, durable=False)
                _lib = _load(path, capi)
            except OSError:
                pass                    # the cache only saves time
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# a model of fewer nodes is not worth the build to its compile (its walks
# cost a few ms; the build, when it linked against the MLIR library, ~0.5 s
# of gcc beside the runtime's own, waited for at the end: an MLP's cold
# compile 1.75-1.99 -> 2.44-2.57 s): its compile uses the library when it is
# in the cache but does not build it
MIN_NODES = 64


@contextmanager
def building():
    """Within the block (a compile), the C walk is used once it is there:
    loaded from the cache, or built meanwhile once :func:`worth_building`
    says so (see the module docstring); a build still running at the
    block's end is waited for (its normal end) or killed (an exception).
    Nested and concurrent blocks share one build."""
    global _depth, _looked
    with _lock:
        _depth += 1
        if _lib is None and _build is None and not _looked and _enabled():
            _looked = True
            _from_cache()
    ok = False
    try:
        yield
        ok = True
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _build is not None:
                _finish_build(BUILD_WAIT if ok else 0.0)
