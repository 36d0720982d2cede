"""onnxruntime's ``IOBinding`` (``InferenceSession.io_binding()``) on the CPU.

Inputs are bound to arrays (``bind_cpu_input``; a C-contiguous array is
used in place, so later writes to it are seen by the next run; another is
copied once at bind time, as onnxruntime does), raw buffers (``bind_input``)
or OrtValues. Outputs are bound by name, with or without a buffer:

* with a pre-allocated buffer (``bind_output(..., element_type, shape,
  buffer_ptr)`` or ``bind_ortvalue_output``) the run writes the output into
  that memory. The compiled library allocates its outputs itself (its ABI has
  no caller-provided output buffers), so the output is copied once, from the
  library's buffer straight into the bound one (no intermediate array), and
  the library's buffer is freed. A buffer whose type, rank or shape is not
  the output's is refused with onnxruntime's message, before the run for
  type and rank, after it for the shape (the buffer is then left unchanged).
* without one, each run returns a fresh output (``get_outputs()``).
  Deliberately unlike onnxruntime, which reuses the first run's output
  buffer in later runs of the same binding (overwriting OrtValues taken
  earlier, and failing when a dynamic output changes shape).
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from onnx_mlir_py.inference.errors import Fail, InvalidArgument
from onnx_mlir_py.inference.model_info import type_of_array
from onnx_mlir_py.inference.ort_value import (OrtValue, c_array, check_device, check_shape,
                                              element_dtype)


def array_at(buffer_ptr, element_type, shape) -> np.ndarray:
    """A numpy array over ``shape`` elements of ``element_type`` at address
    ``buffer_ptr`` (the memory is the caller's; not copied)."""
    dtype, dims = element_dtype(element_type), check_shape(shape)
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes == 0:
        return np.empty(dims, dtype)
    if not isinstance(buffer_ptr, (int, np.integer)) or int(buffer_ptr) <= 0:
        raise ValueError(f"buffer_ptr must be the address of the data (an int > 0), got "
                         f"{buffer_ptr!r}")
    buf = (ctypes.c_char * nbytes).from_address(int(buffer_ptr))
    return np.frombuffer(buf, dtype=dtype).reshape(dims)


def _bound_value(what: str, name: str, ortvalue) -> tuple[np.ndarray, OrtValue]:
    """(storage, the OrtValue kept alive) of an OrtValue bound to ``name``."""
    if not isinstance(ortvalue, OrtValue):
        raise TypeError(f"bind_ortvalue_{what}: {what} {name}: expected an OrtValue, got "
                        f"{type(ortvalue).__name__}")
    return ortvalue._value, ortvalue


def _dims(shape) -> str:
    return "{" + ",".join(str(d) for d in shape) + "}"


class IOBinding:
    """Inputs and outputs bound for ``InferenceSession.run_with_iobinding``
    (see the module doc)."""

    def __init__(self, session):
        self._session = session
        self._inputs: dict[str, tuple[np.ndarray, object]] = {}    # name -> (array, kept alive)
        self._outputs: dict[str, tuple[np.ndarray, object] | None] = {}
        self._results: list[OrtValue] = []

    # -- inputs ------------------------------------------------------------------
    def _input_name(self, name: str) -> str:
        if name not in self._session._in_index:
            raise Fail(f"Failed to find NodeArg with name: {name} in the def list")
        return name

    def bind_cpu_input(self, name, arr_on_cpu) -> None:
        """Bind input ``name`` to a numpy array (kept alive by the binding)."""
        self._input_name(name)
        if not isinstance(arr_on_cpu, np.ndarray):
            raise Fail(f"Unable to create OrtValue from the given python object (input "
                       f"{name}: {type(arr_on_cpu).__name__}, expected a numpy array)")
        self._inputs[name] = (c_array(arr_on_cpu), arr_on_cpu)

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr) -> None:
        """Bind input ``name`` to the memory at ``buffer_ptr`` (``shape``
        elements of ``element_type``: a numpy type or an ONNX type code)."""
        self._input_name(name)
        check_device(device_type)
        self._inputs[name] = (array_at(buffer_ptr, element_type, shape), None)

    def bind_ortvalue_input(self, name, ortvalue) -> None:
        self._inputs[self._input_name(name)] = _bound_value("input", name, ortvalue)

    def synchronize_inputs(self) -> None:
        """Nothing to do: inputs are in CPU memory."""

    def clear_binding_inputs(self) -> None:
        self._inputs.clear()

    # -- outputs -------------------------------------------------------------------
    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None,
                    buffer_ptr=None) -> None:
        """Bind output ``name``: to the memory at ``buffer_ptr`` (``shape``
        elements of ``element_type``), written in place by each run; without
        a buffer, each run makes a new output."""
        check_device(device_type)
        if buffer_ptr is None:
            self._outputs[name] = None
            return
        if element_type is None or shape is None:
            raise ValueError("`element_type` and `shape` are to be provided if pre-allocated "
                             "memory is provided")
        self._outputs[name] = (array_at(buffer_ptr, element_type, shape), None)

    def bind_ortvalue_output(self, name, ortvalue) -> None:
        """Bind output ``name`` to an OrtValue's memory (written in place)."""
        self._outputs[name] = _bound_value("output", name, ortvalue)

    def synchronize_outputs(self) -> None:
        """Nothing to do: outputs are in CPU memory."""

    def clear_binding_outputs(self) -> None:
        self._outputs.clear()

    def get_outputs(self) -> list[OrtValue]:
        """The bound outputs of the last run, in binding order, as OrtValues
        (over the bound buffer for a pre-allocated output)."""
        return list(self._results)

    def copy_outputs_to_cpu(self) -> list[np.ndarray]:
        """Copies of the last run's outputs (new arrays)."""
        return [v._value.copy() for v in self._results]

    # -- the run (InferenceSession.run_with_iobinding) ----------------------------
    def _plan(self) -> list[tuple[int, tuple[np.ndarray, object] | None]]:
        """(model output index, bound buffer or None) per bound output;
        Fail with onnxruntime's message for a binding the model cannot fill."""
        sess = self._session
        if not self._outputs:
            raise Fail("Error in execution: At least one output should be requested.")
        plan = []
        for name, bound in self._outputs.items():
            i = sess._out_index.get(name)
            if i is None:
                raise Fail(f"Error in execution: Invalid output name: {name}")
            if bound is not None:
                arr, want = bound[0], sess._outputs[i]
                if sess._out_dtypes[i] is None:
                    raise Fail(f"Error in execution: output {name} is a {want.type}, not a "
                               "numeric tensor: bind it without a buffer")
                if arr.dtype != sess._out_dtypes[i]:
                    raise Fail(f"Error in execution: Unexpected output data type. Actual: "
                               f"({type_of_array(arr)}) , expected: ({want.type})")
                rank = sess._out_ranks[i]
                if rank is not None and arr.ndim != rank:
                    raise Fail(f"Error in execution: Invalid rank for output: {name} Got: "
                               f"{arr.ndim} Expected: {rank} Please fix either the "
                               "inputs/outputs or the model.")
            plan.append((i, bound))
        return plan

    def run(self, run_options=None) -> None:
        sess = self._session
        plan = self._plan()
        feed = {n: a for n, (a, _) in self._inputs.items()}
        try:
            arrays = sess._arrays(feed)
        except InvalidArgument as e:
            raise Fail(f"Error in execution: {e}") from None
        sess._check_terminate(run_options)
        bound = {i: b[0] for i, b in plan if b is not None}
        wanted = {i for i, _ in plan}
        if sess._sess.can_run_into:
            def out_alloc(i, shape, dtype):
                if i not in wanted:
                    return None                      # not bound: not copied out
                if i not in bound:
                    return np.empty(shape, dtype)
                return self._destination(i, bound[i], shape, dtype)
            outs = sess._run_arrays(arrays, out_alloc)
        else:       # (sequences, strings, ZipMap): a second copy into the buffer
            outs = sess._run_arrays(arrays)
            for i, arr in bound.items():
                got = sess._typed(outs[i], arr.dtype)
                np.copyto(self._destination(i, arr, got.shape, got.dtype), got)
        results = []
        for i, b in plan:
            if b is None:
                out = sess._typed(outs[i], sess._out_dtypes[i])
                if not isinstance(out, np.ndarray):
                    raise Fail(f"Error in execution: output {sess._outputs[i].name} is not a "
                               "tensor (a sequence, map or None): use run()")
                results.append(OrtValue(c_array(out)))
            else:
                results.append(OrtValue(b[0], b[1]))
        self._results = results

    def _destination(self, i: int, arr: np.ndarray, shape, dtype) -> np.ndarray:
        """The bound buffer ``arr`` of output ``i`` as the library's
        ``dtype`` (a same-sized storage type is a view), checked against the
        computed ``shape``."""
        if tuple(arr.shape) != tuple(shape):
            name = self._session._outputs[i].name
            raise Fail(f"Error in execution: The output OrtValue provided for output '{name}' "
                       f"has shape {_dims(arr.shape)} but the computed output shape for this "
                       f"run is {_dims(shape)}.")
        if arr.dtype == dtype:
            return arr
        if arr.dtype.itemsize != dtype.itemsize:
            raise Fail(f"Error in execution: Unexpected output data type. Actual: "
                       f"({type_of_array(arr)}) , expected: (tensor({dtype}))")
        return arr.view(dtype)      # the library's same-sized storage type (int8 for uint8)
