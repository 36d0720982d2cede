"""``InferenceSession``: onnxruntime's Python API on a compiled model.

    import onnx_mlir_py as ort
    sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    outputs = sess.run(None, {"input": x})          # list of numpy arrays

The model is compiled on first use into the compile cache (see
:mod:`.compiled`); a later session on the same model and options loads the
cached library. Inputs are checked as onnxruntime checks them, with its
messages (each naming the input), raising :class:`.errors.InvalidArgument`.
"""
from __future__ import annotations

import os
import threading
import time
import warnings

import numpy as np

from onnx_mlir_py.inference.config_entries import precision, spin_us
from onnx_mlir_py.inference.errors import Fail, InvalidArgument
from onnx_mlir_py.inference.io_binding import IOBinding
from onnx_mlir_py.inference.model_info import ModelMetadata, node_args, np_dtype, type_of_array
from onnx_mlir_py.inference.options import PROVIDERS, RunOptions, SessionOptions
from onnx_mlir_py.inference.ort_value import OrtValue, as_array, c_array
from onnx_mlir_py.errors import NeedsInputShapesError
from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError

# keyword arguments beyond onnxruntime's: where and how to compile
_COMPILE_KW = ("mcpu", "march", "cache_dir", "in_process", "timeout", "signature")


def _provider_names(providers) -> list[str]:
    """onnxruntime's rule: a provider this build lacks is warned about and
    dropped; none left (or none given) means the CPU provider."""
    names = []
    for p in providers or []:
        name = p[0] if isinstance(p, (tuple, list)) else p
        if name in PROVIDERS:
            names.append(name)
        else:
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          f"Available providers: '{', '.join(PROVIDERS)}'", stacklevel=3)
    return names or list(PROVIDERS)


def _compile_options(so: SessionOptions, kw: dict) -> dict:
    opts = {"opt_level": so.opt_level}
    if so.enable_profiling:             # a library that times every node (--profile)
        opts["profile"] = True
    for k in ("mcpu", "march"):
        if kw.get(k) is not None:
            opts[k] = kw[k]
    if precision(so._config) != "fp32":    # session.onnx_mlir_py.precision
        opts["precision"] = precision(so._config)
    if opts["opt_level"] == 3 and "mcpu" not in opts and "march" not in opts:
        # the ISA level -O3 compiles for is part of the key: a cache shared by
        # machines must not hand an AVX-512 library to one without it. With
        # an extension the kernels use (VNNI: the int8 kernels), the library
        # is built for the host by default and the key names level and
        # extensions ("host"); else for the bare level (portable).
        from onnx_mlir_py.isa import host_level
        from onnx_mlir_py.target import host_kernel_extensions
        level = host_level()
        if level is not None:
            ext = list(host_kernel_extensions(level))
            if ext:
                opts["host"] = "+".join([level] + ext)
            else:
                opts["mcpu"] = level
    if "precision" in opts and "mcpu" not in kw and "march" not in kw:
        # bf16 is checked against and built for this machine: its bf16
        # extensions are in the key, so a shared cache hands neither a library
        # nor a cached refusal to a machine with other ones
        from onnx_mlir_py.isa import host_flags
        bf16 = [f for f in ("avx512_bf16", "amx_bf16") if f in host_flags()]
        opts["host"] = "+".join([opts.get("host") or opts.pop("mcpu", None) or "host"] + bf16)
    return opts


def _tf_converted(path: str | None, signature: str | None):
    """A TensorFlow model's ONNX ModelProto (frontends/tensorflow), else None."""
    from onnx_mlir_py.frontends.tensorflow.detect import tf_format
    if path is None or tf_format(path) is None:
        if signature is not None:
            raise TypeError("InferenceSession: 'signature' is for a TensorFlow SavedModel path")
        return None
    from onnx_mlir_py.frontends.tensorflow import TfOptions, load
    return load(path, TfOptions(signature=signature))


def _list_array(x, dtype, name: str, type_str: str, shape) -> np.ndarray:
    """A Python value (nested lists, a scalar) as the array of input ``name``;
    InvalidArgument naming the input when it is not one: ragged nested lists
    (rows of different lengths), or elements that are not numbers of the type."""
    want = f"{type_str} of shape {list(shape) if shape is not None else '(any)'}"
    try:
        a = np.array(x, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as e:
        why = "ragged nested lists (rows of different lengths)" \
            if "inhomogeneous" in str(e) or "sequence" in str(e) else str(e).splitlines()[0]
        raise InvalidArgument(f"Invalid input {name}: cannot make a {want} of the given "
                              f"{type(x).__name__}: {why}") from None
    if dtype == object and any(isinstance(v, (list, tuple)) for v in a.reshape(-1)):
        raise InvalidArgument(f"Invalid input {name}: cannot make a {want} of the given "
                              f"{type(x).__name__}: ragged nested lists (rows of different "
                              "lengths)")
    return a


class InferenceSession:
    """onnxruntime's ``InferenceSession`` on a model compiled by onnx-mlir-py.

    ``path_or_bytes``: the model file (external data is read from its folder)
    or its serialized bytes. ``sess_options``: a :class:`SessionOptions`.
    ``providers``: accepted for compatibility; the compiled code is the
    ``CPUExecutionProvider``. Extra keywords: ``mcpu`` / ``march`` (codegen
    target, as for ``compile``), ``cache_dir`` (default
    ``$ONNX_MLIR_PY_CACHE`` or ``~/.cache/onnx-mlir-py``), ``in_process``
    (compile in this process instead of the isolated child), ``timeout``
    (seconds for a compile). A TensorFlow model path (SavedModel folder,
    ``.keras``/``.h5``, ``.tflite``; the ``[tf]`` extra) is converted to ONNX
    in this process first (``signature=``: a SavedModel's, default
    ``serving_default``); the compile cache is keyed on the converted model.
    """

    def __init__(self, path_or_bytes, sess_options: SessionOptions | None = None,
                 providers=None, provider_options=None, **kwargs):
        bad = sorted(set(kwargs) - set(_COMPILE_KW) - {"disabled_optimizers"})
        if bad:
            raise TypeError(f"InferenceSession got unexpected keyword argument(s) {bad}")
        so = SessionOptions() if sess_options is None else sess_options
        if not isinstance(so, SessionOptions):
            raise TypeError(f"sess_options must be an onnx_mlir_py.SessionOptions, got "
                            f"{type(so).__name__}")
        self._sess_options = so
        self._providers = _provider_names(providers)
        from onnx_mlir_py.backend.cache import CompileCache
        from onnx_mlir_py.inference import compiled
        self._model_path = os.fspath(path_or_bytes) \
            if isinstance(path_or_bytes, (str, os.PathLike)) else None
        converted = _tf_converted(self._model_path, kwargs.get("signature"))
        if converted is not None:
            path_or_bytes = converted
        cache = CompileCache(kwargs.get("cache_dir"))
        how = {"in_process": bool(kwargs.get("in_process", False)),
               "timeout": kwargs.get("timeout")}
        free_dims = so.free_dimension_overrides
        options = _compile_options(so, kwargs)
        try:
            self._library, info = compiled.library(path_or_bytes, options, cache,
                                                   free_dims=free_dims, **how)
        except NeedsInputShapesError as e:  # compiled for each run's input shapes
            from onnx_mlir_py.inference.shape_specialise import dispatch
            self._library = None
            info, self._sess = dispatch(path_or_bytes, free_dims, str(e), self._model_path,
                                        lambda d: compiled.library(d, options, cache, **how)[0],
                                        lambda path: self._load(path, so))
        else:
            self._sess = self._load(self._library, so)
        if so.optimized_model_filepath:
            data = compiled.specialised(compiled.model_data(path_or_bytes), free_dims)[0]
            compiled.write_optimized_model(data, so.opt_level, so.optimized_model_filepath,
                                           **how)
        self._inputs = node_args(info["inputs"])
        self._outputs = node_args(info["outputs"])
        self._meta = ModelMetadata(**info["meta"])
        if self._library is not None:   # (per-shape libraries: known at run time)
            lib_in = [s.name for s in self._sess.input_specs]
            if lib_in != [a.name for a in self._inputs] or \
                    len(self._sess.output_specs) != len(self._outputs):
                raise Fail(f"the compiled library's signature ({lib_in}) does not match the "
                           f"model's inputs {[a.name for a in self._inputs]}")
        # per input: (name, numpy dtype, type string, declared shape, rank or None)
        self._in_checks = [(e["name"], np_dtype(e["type"]), e["type"], e["shape"], e.get("rank"))
                           for e in info["inputs"]]
        # run()'s common case, when every input is a numeric tensor of static
        # shape: (name, dtype, shape) to compare a fed array with, else None
        self._feed_fast = [(n, dt, tuple(sh)) for n, dt, t, sh, _ in self._in_checks] if all(
            t.startswith("tensor(") and t != "tensor(string)" and dt is not None and
            sh is not None and all(type(d) is int and d >= 0 for d in sh)
            for _, dt, t, sh, _ in self._in_checks) else None
        self._in_index = {a.name: i for i, a in enumerate(self._inputs)}
        self._out_index = {a.name: i for i, a in enumerate(self._outputs)}
        self._out_dtypes = [np_dtype(a.type) for a in self._outputs]
        self._out_ranks = [e.get("rank") for e in info["outputs"]]
        self._lock = threading.Lock()

    @staticmethod
    def _load(library, so: SessionOptions):
        """The ExecutionSession of a compiled library, with the options' threads
        and spin time."""
        from onnx_mlir_py.runtime import ExecutionSession
        try:
            sess = ExecutionSession(library, num_threads=so.intra_op_num_threads or None)
        except (ModelRunError, RuntimeInputError) as e:
            raise Fail(f"cannot load the compiled model: {e}") from None
        spin = spin_us(so._config)
        if spin is not None:
            sess.set_spin_us(spin)
        return sess

    # -- onnxruntime's queries ------------------------------------------------
    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []       # initializers are compiled into the code

    def get_modelmeta(self) -> ModelMetadata:
        return self._meta

    def get_providers(self) -> list[str]:
        return list(self._providers)

    def get_provider_options(self) -> dict:
        return {p: {} for p in self._providers}

    def set_providers(self, providers=None, provider_options=None) -> None:
        self._providers = _provider_names(providers)

    def get_session_options(self) -> SessionOptions:
        return self._sess_options

    def end_profiling(self) -> str:
        """With ``enable_profiling``: write the events recorded so far (every
        node of every run, and each run as a whole) to
        ``<profile_file_prefix>_<date>_<time>.json`` in onnxruntime's format
        and return its path; the next file starts from there. Else ""."""
        if not self._sess_options.enable_profiling:
            return ""
        now = time.time()
        stamp = time.strftime("%Y-%m-%d_%H-%M-%S", time.localtime(now))
        path = f"{self._sess_options.profile_file_prefix}_{stamp}_{int(now * 1000) % 1000:03d}.json"
        with self._lock:
            try:
                self._sess.end_profiling(path)
            except ModelRunError as e:
                raise Fail(str(e)) from None
            self._sess.reset_profile()
        return path

    @property
    def library_path(self) -> str:
        """The compiled ``.so`` this session runs (in the compile cache); for a
        model compiled for each run's input shapes, the last run's ("" before
        the first run)."""
        if self._library is None:
            return self._sess.last_library
        return str(self._library)

    # -- running ----------------------------------------------------------------
    def _check_feed(self, input_feed) -> None:
        """The feed is a dict with every input (onnxruntime checks this
        before a run, run_async too)."""
        if not isinstance(input_feed, dict):
            raise InvalidArgument(f"input_feed must be a dict of input name -> array, got "
                                  f"{type(input_feed).__name__}")
        missing = [n for n, *_ in self._in_checks if n not in input_feed]
        if missing:
            raise InvalidArgument(f"Required inputs ({missing}) are missing from input feed "
                                  f"({list(input_feed)}).")

    def _arrays(self, input_feed) -> list[np.ndarray]:
        fast = self._feed_fast      # a dict of exactly the inputs, arrays as declared
        if fast is not None and type(input_feed) is dict and len(input_feed) == len(fast):
            arrays = []
            for name, dtype, shape in fast:
                x = input_feed.get(name)
                if type(x) is not np.ndarray or x.dtype != dtype or x.shape != shape:
                    break
                arrays.append(x)
            else:
                return arrays
        self._check_feed(input_feed)
        for name in input_feed:
            if name not in self._in_index:
                raise InvalidArgument(f"Invalid input name: {name} (the model's inputs: "
                                      f"{list(self._in_index)})")
        arrays = []
        for name, dtype, type_str, shape, rank in self._in_checks:
            x = as_array(input_feed[name])
            if type_str.startswith(("seq(", "optional(")):
                arrays.append(x)    # a list of arrays or None: runtime/values.py checks it
                continue
            if type_str == "tensor(string)":         # str objects, '<U' or bytes arrays
                x = _list_array(x, object, name, type_str, shape) \
                    if not isinstance(x, np.ndarray) else \
                    x.astype(object) if x.dtype.kind in "US" else x
                dtype = x.dtype if x.dtype == object else dtype
            elif not isinstance(x, np.ndarray):      # a list: made the input's type
                x = _list_array(x, dtype, name, type_str, shape)
            if x.dtype != dtype:
                raise InvalidArgument(f"Unexpected input data type for input: {name}. Actual: "
                                      f"({type_of_array(x)}) , expected: ({type_str})")
            if rank is not None and x.ndim != rank:
                raise InvalidArgument(f"Invalid rank for input: {name} Got: {x.ndim} Expected: "
                                      f"{rank} Please fix either the inputs/outputs or "
                                      "the model.")
            bad = [(i, got, want) for i, (got, want) in enumerate(zip(x.shape, shape))
                   if isinstance(want, int) and got != want]
            if bad:
                lines = "".join(f"\n index: {i} Got: {g} Expected: {w}" for i, g, w in bad)
                raise InvalidArgument(f"Got invalid dimensions for input: {name} for the "
                                      f"following indices{lines}\n Please fix either the "
                                      "inputs/outputs or the model.")
            arrays.append(x)
        return arrays

    def _output_indices(self, output_names) -> list[int]:
        if output_names is None:
            return list(range(len(self._outputs)))
        if isinstance(output_names, str):
            raise InvalidArgument("output_names must be a list of names or None, got a str")
        out = []
        for n in output_names:
            if n not in self._out_index:
                raise InvalidArgument(f"Invalid output name:{n} (the model's outputs: "
                                      f"{list(self._out_index)})")
            out.append(self._out_index[n])
        return out

    @staticmethod
    def _check_terminate(run_options) -> None:
        if run_options is not None and getattr(run_options, "terminate", False):
            raise Fail("Exiting due to terminate flag being set to true.")

    def _run_arrays(self, arrays, out_alloc=None) -> list:
        """One run of the library on checked ``arrays`` (see
        ``ExecutionSession.run_into`` for ``out_alloc``)."""
        with self._lock:
            try:
                if out_alloc is not None:
                    return self._sess.run_into(arrays, out_alloc)
                return self._sess.run(arrays)
            except (RuntimeInputError, ModelRunError) as e:   # e.g. a failed run-time check
                raise Fail(str(e)) from None

    def run(self, output_names, input_feed, run_options: RunOptions | None = None) -> list:
        """The outputs named by ``output_names`` (None: all), as numpy arrays,
        for ``input_feed`` (input name -> array or :class:`.OrtValue`)."""
        which = self._output_indices(output_names)
        arrays = self._arrays(input_feed)
        self._check_terminate(run_options)
        outs = self._run_arrays(arrays)
        return [self._typed(outs[i], self._out_dtypes[i]) for i in which]

    def run_with_ort_values(self, output_names, input_dict_ort_values,
                            run_options: RunOptions | None = None) -> list[OrtValue]:
        """``run`` with :class:`.OrtValue` inputs (input name -> OrtValue)
        and outputs."""
        self._check_feed(input_dict_ort_values)
        for name, v in input_dict_ort_values.items():
            if not isinstance(v, OrtValue):
                raise InvalidArgument(f"Invalid input {name}: run_with_ort_values takes "
                                      f"OrtValues, got {type(v).__name__}")
        outs = self.run(output_names, input_dict_ort_values, run_options)
        for i, o in zip(self._output_indices(output_names), outs):
            if not isinstance(o, np.ndarray):
                raise Fail(f"run_with_ort_values: output {self._outputs[i].name} is not a "
                           "tensor (a sequence, map or None): use run()")
        return [OrtValue(c_array(o)) for o in outs]

    def run_async(self, output_names, input_feed, callback, user_data,
                  run_options: RunOptions | None = None) -> None:
        """``run`` on a worker thread, then ``callback(outputs, user_data,
        err)`` there: the outputs (numpy arrays) and ``""``, or ``[]`` and
        the error's message. A missing input raises here, as in onnxruntime."""
        from onnx_mlir_py.inference.run_async import start
        self._check_feed(input_feed)
        start(lambda: self.run(output_names, input_feed, run_options), callback, user_data)

    def io_binding(self) -> IOBinding:
        """An :class:`.IOBinding` of this session's inputs and outputs."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding: IOBinding,
                           run_options: RunOptions | None = None) -> None:
        """Run on the inputs bound in ``iobinding``; its bound outputs are
        written (pre-allocated buffers in place) and ``get_outputs()`` returns them."""
        if not isinstance(iobinding, IOBinding) or iobinding._session is not self:
            raise ValueError("IOBinding must be used with the session that created it.")
        iobinding.run(run_options)

    @staticmethod
    def _typed(out: np.ndarray, want) -> np.ndarray:
        """The declared element type (the library may hand back a same-sized
        storage type, e.g. int8 for uint8)."""
        if want is None or not isinstance(out, np.ndarray) or out.dtype == want:
            return out      # (a ZipMap output is a list of dicts)
        if out.dtype.itemsize == want.itemsize and out.dtype.kind in "iub" and \
                want.kind in "iub":
            return out.view(want)
        return out.astype(want)

    def __repr__(self) -> str:
        return f"InferenceSession({self._model_path or '<bytes>'!r}, library={self.library_path!r})"
