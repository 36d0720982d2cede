"""Run a compiled model ``.so`` from Python (ctypes; onnx-mlir's API shape).

    sess = ExecutionSession("model.so")
    outs = sess.run([x, y])            # list of numpy arrays in, list out
    sess.input_signature()             # JSON text, as onnx-mlir returns it
    sess.input_specs                   # parsed: [TensorSig(name, dtype, dims)]

Inputs are checked in Python (count, dtype, rank, static dims) and raise
:class:`RuntimeInputError` naming the input; the library checks again and
returns NULL + a message instead of crashing. Outputs are fresh numpy arrays
of their own memory: copied out of the library's buffers, which are then
released, or, an output of dynamic shape of at least ``ADOPT_MIN_BYTES``,
the library's own buffer (every output has a fresh one: om_wrap_results),
taken over and freed when the last array over it goes (no copy: a KV-cache
decode step's presents are megabytes).
"""
from __future__ import annotations

import ctypes
import os

import numpy as np

from onnx_mlir_py.runtime.arguments import address, check_inputs, fast_specs, static_match
from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError
from onnx_mlir_py.runtime.library import acquire, bind, check_target, release
from onnx_mlir_py.runtime.signature import (CODE_TO_DTYPE, DTYPE_CODE, SIG_TYPES, TensorSig,
                                            parse_sig, sig_type, zipmap_rows)
from onnx_mlir_py.runtime.strings import STRING_CODE, as_object_array, from_pointers, to_pointers

__all__ = ["ExecutionSession", "OMExecutionSession", "TensorSig"]

OM_ERROR_CHECK = 2          # omGetLastErrorKind(): a run-time check failed

_P, _I64 = ctypes.c_void_p, ctypes.c_int64
ADOPT_MIN_BYTES = 1 << 16   # a smaller output is copied (one call ~2 us: a 16 KiB memcpy)
_free = ctypes.CDLL(None).free      # the C library's, which allocated the buffers
_free.restype, _free.argtypes = None, [_P]


class ExecutionSession:
    """A loaded model library. ``entry`` is the entry point ("run_main_graph")."""

    def __init__(self, shared_lib_path, entry: str | None = None, *,
                 num_threads: int | None = None):
        """``num_threads``: threads for multi-threaded (-O3) model code; None
        keeps the library's setting (env ``ONNX_MLIR_PY_NUM_THREADS``, else
        1); 0 or less = all online CPUs. Ignored by single-threaded builds.
        The count is per process (libraries share nothing, but each keeps its
        own pool)."""
        path = os.fspath(shared_lib_path)
        if not os.path.isfile(path):
            raise ModelRunError(f"model library not found: {path}")
        try:
            self._loaded = acquire(os.path.abspath(path))   # released by __del__
        except OSError as e:
            raise ModelRunError(f"cannot load model library {path}: {e}") from None
        try:
            self._init(self._loaded.cdll, path, entry, num_threads)
        except BaseException:
            self.__del__()
            raise

    def __del__(self):
        loaded, self._loaded = getattr(self, "_loaded", None), None
        if loaded is not None:
            release(loaded)     # the library is unloaded if nobody else uses it

    def _init(self, lib, path: str, entry: str | None, num_threads: int | None) -> None:
        self._lib = lib
        try:
            self._query = bind(lib, "omQueryEntryPoints", ctypes.POINTER(ctypes.c_char_p),
                                [ctypes.POINTER(_I64)])
            self._in_sig = bind(lib, "omInputSignature", ctypes.c_char_p, [ctypes.c_char_p])
            self._out_sig = bind(lib, "omOutputSignature", ctypes.c_char_p, [ctypes.c_char_p])
            self._create = bind(lib, "omTensorCreate", _P, [_P, ctypes.POINTER(_I64), _I64,
                                                             ctypes.c_int])
            self._destroy = bind(lib, "omTensorDestroy", None, [_P])
            self._list_create = bind(lib, "omTensorListCreate", _P,
                                      [ctypes.POINTER(_P), _I64])
            self._list_destroy = bind(lib, "omTensorListDestroy", None, [_P])
            self._list_size = bind(lib, "omTensorListGetSize", _I64, [_P])
            self._list_get = bind(lib, "omTensorListGetOmtByIndex", _P, [_P, _I64])
            self._data = bind(lib, "omTensorGetDataPtr", _P, [_P])
            self._shape = bind(lib, "omTensorGetShape", ctypes.POINTER(_I64), [_P])
            self._rank = bind(lib, "omTensorGetRank", _I64, [_P])
            self._dtype = bind(lib, "omTensorGetDataType", ctypes.c_int, [_P])
            self._last_error = bind(lib, "omGetLastError", ctypes.c_char_p, [])
        except AttributeError as e:
            raise ModelRunError(f"{path} is not an onnx-mlir-py model library: {e}") from None
        self.target = check_target(lib, path)
        self._error_kind = getattr(lib, "omGetLastErrorKind", None)
        if self._error_kind is not None:
            self._error_kind.restype, self._error_kind.argtypes = _I64, []
        self._set_threads = getattr(lib, "omSetNumThreads", None)
        self._get_threads = getattr(lib, "omGetNumThreads", None)
        if self._set_threads is not None:
            self._set_threads.restype, self._set_threads.argtypes = None, [ctypes.c_int]
            self._get_threads.restype, self._get_threads.argtypes = ctypes.c_int, []
            if num_threads is not None:
                self.set_num_threads(num_threads)
        self._prof_write = getattr(lib, "omProfileWrite", None)    # --profile builds only
        if self._prof_write is not None:
            self._prof_write.restype, self._prof_write.argtypes = ctypes.c_int, [ctypes.c_char_p]
            self._prof_reset = bind(lib, "omProfileReset", None, [])
        self._entries = self.entry_points()
        self._entry = entry or self._entries[0]
        if self._entry not in self._entries:
            raise ModelRunError(f"entry point '{self._entry}' not in {self._entries}")
        self._run = bind(lib, self._entry, _P, [_P])
        self.input_specs = parse_sig(self.input_signature())
        self.output_specs = parse_sig(self.output_signature())
        # sequences / optionals: lists and None in and out (runtime/values.py)
        self._values = None
        if any(s.kind != "tensor" for s in self.input_specs + self.output_specs):
            from onnx_mlir_py.runtime.values import ValueAPI
            self._values = ValueAPI(lib, bind)
        self._zipmaps = [(i, s.zipmap, s.name) for i, s in enumerate(self.output_specs)
                         if s.zipmap]
        self._str_in = {i for i, s in enumerate(self.input_specs)
                        if s.type == "string" and s.kind == "tensor"}
        self._str_out = {i for i, s in enumerate(self.output_specs)
                         if s.type == "string" and s.kind == "tensor"}
        self._labels = [(i, np.array(s.labels, dtype=object), s.name)
                        for i, s in enumerate(self.output_specs) if s.labels]
        # fast path (one call in, one call for the outputs' metadata); older
        # libraries without the helpers use the per-tensor API
        self._run_arrays = getattr(lib, "omRunArrays", None)
        if self._run_arrays is not None:
            self._run_arrays.restype = _P
            self._run_arrays.argtypes = [_P, _I64, _P, _P, _P, _P]
            self._list_info = bind(lib, "omTensorListInfo", _I64, [_P, _I64, _P, _P, _P, _P])
            self._entry_addr = ctypes.cast(self._run, _P).value
        self._release = getattr(lib, "omTensorListRelease", None)
        if self._release is not None:
            self._release.restype, self._release.argtypes = _I64, [_P, _I64, _P]
        self._lean = self._lean_call(lib)
        self._plan = self._plan_call(lib)
        self._in_fast = fast_specs(self.input_specs)
        # ctypes array types of _run_fast, made once (not on every run)
        n, m = len(self.input_specs), len(self.output_specs)
        cap = sum(len(s.dims or ()) for s in self.output_specs)
        self._fast_types = (_P * max(1, n), _I64 * max(1, n), ctypes.c_int32 * max(1, n),
                            _I64 * max(1, m), ctypes.c_int32 * max(1, m), _P * max(1, m),
                            _I64 * max(1, cap), cap, m)

    def _lean_call(self, lib):
        """What :meth:`_run_lean` needs, made once: ``omRunInto`` bound, and
        the ctypes arrays of the outputs' ranks, dims and codes; None when
        the library lacks ``omRunInto`` or an output's dims are not all
        static (or an input or output is not a numeric tensor)."""
        try:    # a function object of its own: no argtypes (below)
            fn = lib["omRunInto"]
        except AttributeError:
            return None
        ins, outs = self.input_specs, self.output_specs
        if self._values is not None or self._str_in or self._str_out or \
                self._zipmaps or self._labels or \
                any(min(s.dims or (0,)) < 0 for s in outs):
            return None
        codes = [DTYPE_CODE.get(s.dtype, 0) for s in ins + outs]
        if not all(codes):
            return None
        # no argtypes: every argument is a ctypes object (the counts c_int64,
        # the entry a c_void_p, the rest arrays, passed as pointers), which
        # ctypes passes as is; converting through argtypes cost 0.8 us of a
        # 5 us call (Zen 4)
        fn.restype, fn.argtypes = _I64, None
        n, m = len(ins), len(outs)
        return (fn, _P(self._entry_addr), _I64(m), _P * max(1, m),
                _array(_I64, [len(s.dims or ()) for s in outs]),
                _array(_I64, [d for s in outs for d in s.dims or ()]),
                _array(ctypes.c_int32, codes[n:]),
                [(tuple(s.dims or ()), s.dtype) for s in outs])

    def _plan_call(self, lib):
        """What :meth:`_run_plan` needs, made once: ``omRunPlan`` bound and
        its record (the entry, the signature's input ranks, dims and codes,
        and the outputs' of the lean call); None without a lean call, with an
        input of a dynamic dim, or a library without ``omRunPlan``."""
        try:
            fn = lib["omRunPlan"]
        except AttributeError:
            return None
        ins = self.input_specs
        if self._lean is None or any(min(s.dims or (0,)) < 0 for s in ins):
            return None
        fn.restype, fn.argtypes = _I64, None    # as omRunInto: no conversion
        _, entry, m, _, out_ranks, out_shapes, out_codes, out_specs = self._lean
        plan = _RunPlan(entry, len(ins), _array(_I64, [len(s.dims or ()) for s in ins]),
                        _array(_I64, [d for s in ins for d in s.dims or ()]),
                        _array(ctypes.c_int32, [DTYPE_CODE[s.dtype] for s in ins]),
                        m, out_ranks, out_shapes, out_codes)
        return fn, ctypes.byref(plan), _P * max(1, len(ins) + m.value), out_specs, plan

    # -- threads ------------------------------------------------------------
    @property
    def multithreaded(self) -> bool:
        """True when the library has multi-threaded code (a thread pool)."""
        return self._set_threads is not None

    def set_num_threads(self, n: int) -> None:
        if not isinstance(n, int) or isinstance(n, bool):
            raise RuntimeInputError(f"num_threads must be an int, got {n!r}")
        if self._set_threads is not None:
            self._set_threads(n)

    @property
    def num_threads(self) -> int:
        return self._get_threads() if self._get_threads is not None else 1

    def set_spin_us(self, us: int) -> bool:
        """How long the pool's idle workers spin after a run before they
        sleep (0: at once; < 0: ``ONNX_MLIR_PY_SPIN_US``, else 200 us); per
        library and process, as the thread count. False: the library has no
        pool, or one without the setting."""
        fn = getattr(self._lib, "omSetSpinMicros", None)
        if fn is None:
            return False
        fn.restype, fn.argtypes = None, [_I64]
        fn(int(us))
        return True

    # -- profiling (libraries built with --profile / compile(profile=True)) ----
    @property
    def profiling(self) -> bool:
        """True when the library records the time of every node."""
        return self._prof_write is not None

    def end_profiling(self, path) -> str:
        """Write the events recorded since the library was loaded (or since
        :meth:`reset_profile`) to ``path`` as onnxruntime's profile file (a
        Chrome-trace JSON array: one ``Node`` event per node and run, one
        ``Session`` ``model_run`` event per run); returns ``path``."""
        if self._prof_write is None:
            raise ModelRunError(f"{self._lib._name} was not built with --profile "
                                "(compile(..., profile=True)): it records no node times")
        path = os.fspath(path)
        if self._prof_write(path.encode()) != 0:
            raise ModelRunError(self._error())
        return path

    def reset_profile(self) -> None:
        """Forget the events recorded so far (of every session on this library)."""
        if self._prof_write is not None:
            self._prof_reset()

    # -- signatures ---------------------------------------------------------
    def entry_points(self) -> list[str]:
        n = _I64(0)
        arr = self._query(ctypes.byref(n))
        return [arr[i].decode() for i in range(n.value)]

    def input_signature(self) -> str:
        """onnx-mlir-style JSON: ``[{"type": "f32", "dims": [1, -1], "name": "x"}]``."""
        return self._in_sig(self._entry.encode()).decode()

    def output_signature(self) -> str:
        return self._out_sig(self._entry.encode()).decode()

    # -- running ------------------------------------------------------------
    def _check(self, inputs) -> list[np.ndarray]:
        return check_inputs(inputs, self._in_fast, self.input_specs)

    def run(self, inputs) -> list[np.ndarray]:
        """Run the model on ``inputs`` (a list of numpy arrays, in signature
        order); returns the outputs as fresh numpy arrays (module docstring). A
        sequence is a list of arrays, an empty optional None; an output that
        was a ZipMap a list of {label: score} dicts, string class labels an
        array of str objects."""
        if self._plan is not None and static_match(inputs, self._in_fast):
            return self._run_plan(inputs)   # the signature's arrays: checked
        if self._lean is not None:      # numeric tensors, static output shapes
            return self._run_lean(self._check(inputs))
        if self._values is not None:
            from onnx_mlir_py.runtime.values import run_values
            outs = run_values(self, inputs)
        else:
            outs = self._run_tensors(inputs)
        for i, labels, name in self._zipmaps:
            outs[i] = zipmap_rows(outs[i], labels, name)
        for i, labels, name in self._labels:
            outs[i] = labels[outs[i]]           # class indices -> string labels
        return outs

    @property
    def can_run_into(self) -> bool:
        """True when :meth:`run_into` can run this library (tensor inputs and
        outputs of numeric types, no ZipMap or labels, ``omRunArrays``)."""
        return self._run_arrays is not None and self._values is None and not (
            self._str_in or self._str_out or self._zipmaps or self._labels)

    def run_into(self, inputs, out_alloc) -> list:
        """``run`` where ``out_alloc(i, shape, dtype)`` says where output i
        goes: a C-contiguous array of that shape and dtype (the output is
        copied from the library's buffer straight into it: one copy), or
        None (not copied out; None in the result). Needs :attr:`can_run_into`."""
        if not self.can_run_into:
            raise ModelRunError("run_into needs a library with omRunArrays and numeric "
                                "tensor inputs and outputs")
        return self._run_fast(self._check(inputs), out_alloc=out_alloc)

    def _run_tensors(self, inputs) -> list[np.ndarray]:
        if self._str_in and type(inputs) in (list, tuple):
            inputs = [as_object_array(x, "") if i in self._str_in else x
                      for i, x in enumerate(inputs)]
        arrays = self._check(inputs)
        if self._str_in or self._str_out:
            if self._run_arrays is None:
                raise ModelRunError("string tensors need a library with omRunArrays")
            keep, codes = [], [None] * len(arrays)
            for i in self._str_in:
                arrays[i], buf = to_pointers(arrays[i], f"input {i} ('{self.input_specs[i].name}')")
                keep.append(buf)
                codes[i] = STRING_CODE
            outs = self._run_fast(arrays, codes)
            del keep
            return outs
        if self._run_arrays is not None:
            return self._run_fast(arrays)
        tensors = []
        try:
            for a in arrays:
                tensors.append(self._new_tensor(a))
            arr = (_P * max(1, len(tensors)))(*tensors)
            in_list = self._list_create(arr, len(tensors))
            if not in_list:
                raise ModelRunError(f"omTensorListCreate failed: {self._error()}")
            tensors_owned_by_list = in_list
            try:
                out_list = self._run(in_list)
                if not out_list:
                    raise self._run_failure()
                try:
                    return [self._to_numpy(self._list_get(out_list, i))
                            for i in range(self._list_size(out_list))]
                finally:
                    self._list_destroy(out_list)
            finally:
                self._list_destroy(tensors_owned_by_list)   # destroys the input OMTensors
                tensors = []
        finally:
            for t in tensors:
                self._destroy(t)

    def _run_fast(self, arrays: list[np.ndarray], in_codes=None,
                  out_alloc=None) -> list[np.ndarray]:
        # the arrays' own metadata (not the signature's): the library checks it
        PtrN, I64N, I32N, RankM, CodeM, PtrM, ShapeC, cap, m = self._fast_types
        flat = [d for a in arrays for d in a.shape]
        out_list = self._run_arrays(
            self._entry_addr, len(arrays),
            PtrN(*[address(a) for a in arrays]),
            I64N(*[a.ndim for a in arrays]),
            (_I64 * max(1, len(flat)))(*flat),
            I32N(*[c or DTYPE_CODE.get(a.dtype, 0) for a, c in
                   zip(arrays, in_codes or [None] * len(arrays))]))
        if not out_list:
            raise self._run_failure()
        try:
            ranks, codes, datas, shapes = RankM(), CodeM(), PtrM(), ShapeC()
            need = self._list_info(out_list, cap, ranks, codes, datas, shapes)
            if need > cap:
                shapes = (_I64 * need)()
                self._list_info(out_list, need, ranks, codes, datas, shapes)
            owners = [None] * m     # buffers taken from the library: freed with these
            if out_alloc is None and self._release is not None:
                taken = PtrM()
                if self._release(out_list, ADOPT_MIN_BYTES, taken):
                    owners = [_Adopted(p) if p else None for p in taken[:m]]
            outs, k = [], 0
            for i in range(m):
                r = ranks[i]
                shape = tuple(shapes[k:k + r])
                k += r
                dtype = CODE_TO_DTYPE.get(codes[i])
                if dtype is None:
                    raise ModelRunError(f"output has unsupported element type code {codes[i]}")
                if owners[i] is not None and dtype.isbuiltin == 1 and dtype.kind in "biufc":
                    outs.append(owners[i].array(datas[i], shape, dtype))
                    continue
                out = np.empty(shape, dtype) if out_alloc is None else \
                    out_alloc(i, shape, dtype)
                if out is not None and out.nbytes:
                    ctypes.memmove(address(out), datas[i], out.nbytes)
                outs.append(from_pointers(out) if codes[i] == STRING_CODE else out)
            return outs
        finally:
            self._list_destroy(out_list)

    def _run_plan(self, arrays) -> list[np.ndarray]:
        """One ``omRunPlan`` call for arrays that are what the signature says
        (:func:`static_match`): the session's record (the library only reads
        it) and one per-call array of the input and output addresses (so
        concurrent runs on one session share nothing they write); the
        outputs are fresh arrays of the signature's static shapes."""
        fn, plan, Ptrs, out_specs, _ = self._plan
        outs = [np.empty(shape, dtype) for shape, dtype in out_specs]
        if fn(plan, Ptrs(*map(address, arrays), *map(address, outs))):
            raise self._run_failure()
        return outs

    def _run_lean(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """One library call: :meth:`_run_plan` when the arrays are what the
        signature says, else ``omRunInto`` with the arrays' own count,
        ranks, dims and codes, which the library checks (as it does when the
        Python check is bypassed)."""
        if self._plan is not None and static_match(arrays, self._in_fast):
            return self._run_plan(arrays)
        fn, entry, m, PtrM, out_ranks, out_shapes, out_codes, out_specs = self._lean
        outs = [np.empty(shape, dtype) for shape, dtype in out_specs]
        n, ranks, shapes, codes, PtrN = _metadata(arrays)
        if fn(entry, n, PtrN(*[address(a) for a in arrays]), ranks, shapes, codes, m,
              PtrM(*[address(o) for o in outs]), out_ranks, out_shapes, out_codes):
            raise self._run_failure()
        return outs

    def _new_tensor(self, a: np.ndarray) -> int:
        """An OMTensor over ``a``'s data (not copied: keep ``a`` alive)."""
        shape = (_I64 * max(1, a.ndim))(*a.shape)
        t = self._create(a.ctypes.data if a.size else None, shape, a.ndim,
                         SIG_TYPES[sig_type(a.dtype)][1])
        if not t:
            raise ModelRunError(f"omTensorCreate failed: {self._error()}")
        return t

    def _to_numpy(self, t) -> np.ndarray:
        rank = self._rank(t)
        shp = self._shape(t)
        shape = tuple(shp[k] for k in range(rank))
        code = self._dtype(t)
        if code not in CODE_TO_DTYPE:
            raise ModelRunError(f"output has unsupported element type code {code}")
        dtype = CODE_TO_DTYPE[code]
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        out = np.empty(shape, dtype)
        if nbytes:
            ctypes.memmove(out.ctypes.data, self._data(t), nbytes)
        return out

    def _run_failure(self) -> Exception:
        """The exception for a failed model call: a failed run-time check of
        the model code (inputs the model cannot take: dims it ties together,
        a reshape's element count, ...) is a ``RuntimeInputError``."""
        msg = f"{self._entry} failed: {self._error()}"
        if self._error_kind is not None and self._error_kind() == OM_ERROR_CHECK:
            return RuntimeInputError(msg)
        return ModelRunError(msg)

    def _error(self) -> str:
        msg = self._last_error()
        return msg.decode(errors="replace") if msg else "unknown error"

    def __repr__(self) -> str:
        return f"ExecutionSession({self._lib._name!r}, entry={self._entry!r})"


class _Adopted:
    """A model output's buffer taken from the library (``omTensorListRelease``,
    malloc'd by it): the base of the numpy array over it, freed with the C
    library's ``free`` when the last array over it goes (not the model
    library's: the array may outlive it)."""

    def __init__(self, allocated: int):
        self._allocated = allocated

    def array(self, data: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
        self.__array_interface__ = {"data": (data, False), "shape": shape,
                                    "typestr": dtype.str, "version": 3}
        return np.asarray(self)

    def __del__(self, _free=_free):     # bound now: module globals go at exit
        _free(self._allocated)


class _RunPlan(ctypes.Structure):
    """``OMRunPlan`` (OnnxMlirRuntime.h): ``omRunInto``'s arguments but the
    addresses."""
    _fields_ = [("entry", _P), ("n", _I64), ("ranks", ctypes.POINTER(_I64)),
                ("shapes", ctypes.POINTER(_I64)), ("dtypes", ctypes.POINTER(ctypes.c_int32)),
                ("m", _I64), ("out_ranks", ctypes.POINTER(_I64)),
                ("out_shapes", ctypes.POINTER(_I64)),
                ("out_dtypes", ctypes.POINTER(ctypes.c_int32))]


def _array(ctype, values):
    """A ctypes array of ``values`` (at least one element)."""
    return (ctype * max(1, len(values)))(*values)


def _metadata(arrays: list[np.ndarray]) -> tuple:
    """(count, ranks, dims (flat), ONNX codes) of ``arrays`` as ctypes
    objects, as ``omRunInto`` takes them, and the type of its address array."""
    flat = [d for a in arrays for d in a.shape]
    k = max(1, len(arrays))
    return (_I64(len(arrays)), (_I64 * k)(*[a.ndim for a in arrays]),
            (_I64 * max(1, len(flat)))(*flat),
            (ctypes.c_int32 * k)(*[DTYPE_CODE.get(a.dtype, 0) for a in arrays]), _P * k)


OMExecutionSession = ExecutionSession
