"""onnxruntime's ``OrtValue`` on the CPU: a tensor in a numpy array.

``OrtValue.ortvalue_from_numpy(a)`` shares ``a``'s memory, as onnxruntime's
does: the value keeps a reference to ``a`` (``_numpy_obj``), ``numpy()``
returns a view of the same buffer, and a write to either shows in the other.
A non-contiguous ``a`` is copied once (onnxruntime copies it too).
``ortvalue_from_shape_and_type`` allocates a zero-filled tensor. Only tensors
of numeric / bool types (no strings, sequences, maps or sparse tensors), and
only on ``device_type="cpu"``.
"""
from __future__ import annotations

import numpy as np

from onnx_mlir_py.inference.model_info import type_of_array
from onnx_mlir_py.runtime.signature import CODE_TO_DTYPE, DTYPE_CODE

# onnxruntime's message for an array it cannot hold
NOT_NUMERIC = "Creation of OrtValues is currently only supported from non-string numpy arrays"
_OTHER_DEVICES = ("cuda", "cann", "dml", "webgpu", "gpu", "npu")


def check_device(device_type) -> None:
    """``device_type`` must be ``"cpu"`` (onnxruntime's names and errors)."""
    if device_type == "cpu":
        return
    if device_type in _OTHER_DEVICES:
        raise RuntimeError(f"Can't allocate memory on the device '{device_type}': "
                           "onnx-mlir-py runs models on the CPU only (device_type='cpu')")
    raise ValueError(f"Unsupported device type: {device_type}")


def element_dtype(element_type) -> np.dtype:
    """numpy dtype of ``element_type``: a numpy type / dtype, or an ONNX
    ``TensorProto`` element type code (``onnx.TensorProto.FLOAT`` = 1)."""
    if isinstance(element_type, (int, np.integer)) and not isinstance(element_type, bool):
        code = int(element_type)
        if code == 8:                                    # TensorProto.STRING
            raise RuntimeError(NOT_NUMERIC)
        if code not in CODE_TO_DTYPE:
            raise RuntimeError(f"tensor type {code} is not supported")
        return CODE_TO_DTYPE[code]
    try:
        dt = np.dtype(element_type)
    except TypeError:
        raise TypeError(f"element_type must be a numpy type or an ONNX element type code, "
                        f"got {element_type!r}") from None
    if dt not in DTYPE_CODE:
        raise RuntimeError(NOT_NUMERIC if dt.kind in "OUS" else
                           f"numpy type {dt} is not a tensor element type onnx-mlir-py supports")
    return dt


def check_shape(shape) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise TypeError(f"shape must be a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise RuntimeError(f"Tensor shape.Size() must be >= 0: shape {list(dims)}")
    return dims


class OrtValue:
    """A CPU tensor (see the module doc). Made by :meth:`ortvalue_from_numpy`,
    :meth:`ortvalue_from_shape_and_type`, or returned by
    ``run_with_ort_values`` and ``IOBinding.get_outputs``."""
    __slots__ = ("_value", "_numpy_obj")

    def __init__(self, ortvalue, numpy_obj=None):
        """``ortvalue``: the tensor's C-contiguous numpy array (its storage);
        ``numpy_obj``: an object kept alive with it (the array it shares)."""
        if not isinstance(ortvalue, np.ndarray) or not ortvalue.flags.c_contiguous:
            raise ValueError("OrtValue(...) takes a C-contiguous numpy array; use "
                             "OrtValue.ortvalue_from_numpy(array)")
        self._value = ortvalue
        self._numpy_obj = numpy_obj

    @classmethod
    def ortvalue_from_numpy(cls, numpy_obj, /, device_type="cpu", device_id=0,
                            vendor_id=-1) -> OrtValue:
        """An OrtValue over ``numpy_obj``'s buffer (not copied when it is
        C-contiguous; the array is kept alive by the value)."""
        check_device(device_type)
        if not isinstance(numpy_obj, np.ndarray) or numpy_obj.dtype not in DTYPE_CODE:
            raise RuntimeError(NOT_NUMERIC if not isinstance(numpy_obj, np.ndarray) or
                               numpy_obj.dtype.kind in "OUS" else
                               f"numpy type {numpy_obj.dtype} is not a tensor element type "
                               "onnx-mlir-py supports")
        return cls(c_array(numpy_obj), numpy_obj)

    @classmethod
    def ortvalue_from_shape_and_type(cls, shape, element_type, device_type: str = "cpu",
                                     device_id: int = 0, vendor_id=-1) -> OrtValue:
        """A new zero-filled tensor of ``shape`` and ``element_type`` (a numpy
        type or an ONNX element type code)."""
        check_device(device_type)
        return cls(np.zeros(check_shape(shape), element_dtype(element_type)))

    # -- onnxruntime's queries ----------------------------------------------------
    def data_ptr(self) -> int:
        """Address of the first element (0 for an empty tensor)."""
        return self._value.ctypes.data if self._value.size else 0

    def device_name(self) -> str:
        return "cpu"

    def shape(self) -> list[int]:
        return list(self._value.shape)

    def data_type(self) -> str:
        """onnxruntime's type string, e.g. ``'tensor(float)'``."""
        return type_of_array(self._value)

    def element_type(self) -> int:
        """The ONNX ``TensorProto`` element type code (1 for float)."""
        return DTYPE_CODE.get(self._value.dtype, 8 if self._value.dtype.kind in "OUS" else 0)

    def tensor_size_in_bytes(self) -> int:
        return self._value.nbytes

    def has_value(self) -> bool:
        return True

    def is_tensor(self) -> bool:
        return True

    def is_sparse_tensor(self) -> bool:
        return False

    def is_tensor_sequence(self) -> bool:
        return False

    def numpy(self) -> np.ndarray:
        """The tensor as a numpy array sharing the value's memory."""
        return self._value.view()

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        arr = self.numpy()
        if copy is not None:
            return np.array(arr, dtype=dtype, copy=copy)
        return arr if dtype is None else np.asarray(arr, dtype=dtype)

    def update_inplace(self, data) -> None:
        """Copy ``data`` (an array or OrtValue of the same shape) into this
        value's memory."""
        src = data._value if isinstance(data, OrtValue) else data
        if not isinstance(src, np.ndarray):
            raise TypeError("data must be a numpy.ndarray or an OrtValue.")
        if src.shape != self._value.shape or src.dtype != self._value.dtype:
            raise ValueError(f"update_inplace: got {type_of_array(src)} of shape "
                             f"{list(src.shape)}, the value is {self.data_type()} of shape "
                             f"{self.shape()}")
        np.copyto(self._value, src)

    def __repr__(self) -> str:
        return f"OrtValue({self.data_type()}, shape={self.shape()}, device='cpu')"


def c_array(a: np.ndarray) -> np.ndarray:
    """``a``, or a C-contiguous copy (a 0-d array stays 0-d, unlike
    ``np.ascontiguousarray``)."""
    return a if a.flags.c_contiguous else np.array(a, order="C")


def as_array(v):
    """The array of an input given as an OrtValue (else ``v`` itself)."""
    return v._value if isinstance(v, OrtValue) else v
