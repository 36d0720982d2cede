"""``onnx.backend`` implementation: compile with onnx-mlir-py, run the ``.so``.

    from onnx_mlir_py import backend
    rep = backend.prepare(model)                 # compiles (cached) in a child process
    outputs = rep.run([x])                       # -> tuple of numpy arrays
    backend.run_model(model, [x]); backend.run_node(node, [x])

``prepare`` options: ``opt_level``, ``mcpu``, ``march``, ``shape_information``
(compile options), ``in_process=True`` (compile in this process: faster, no
isolation from MLIR aborts), ``timeout`` (seconds), ``use_cache=False``,
``cache_dir``, ``name`` (for error messages).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from onnx_mlir_py.runtime.errors import RuntimeInputError
from onnx_mlir_py.backend.cache import CompileCache
from onnx_mlir_py.backend.compile import compile_cached

_PREPARE_KWARGS = ("in_process", "timeout", "use_cache", "cache_dir", "name")


def _np_dtype(elem_type: int):
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        return None


def _real_inputs(graph: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    inits = {t.name for t in graph.initializer}
    return [i for i in graph.input if i.name not in inits]


def _as_array(x, dtype=None) -> np.ndarray:
    if isinstance(x, onnx.TensorProto):
        return numpy_helper.to_array(x)
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x, dtype=dtype)


def _fix_dtype(out: np.ndarray, want) -> np.ndarray:
    """Give an output the element type the model declares (the library may
    hand back a same-sized storage type, e.g. int8 for uint8)."""
    if want is None or out.dtype == want:
        return out
    if out.dtype.itemsize == want.itemsize and out.dtype.kind in "iub" and want.kind in "iub":
        return out.view(want)
    return out.astype(want)


class OnnxMlirBackendRep(BackendRep):
    """A compiled model: ``run(inputs)`` returns a tuple of numpy arrays
    (also indexable by output name)."""

    def __init__(self, library_path, model: onnx.ModelProto):
        from onnx_mlir_py.runtime import ExecutionSession
        self.library_path = str(library_path)
        self.session = ExecutionSession(self.library_path)
        self.input_names = [i.name for i in _real_inputs(model.graph)]
        self.output_names = [o.name for o in model.graph.output]
        self._out_dtypes = [_np_dtype(o.type.tensor_type.elem_type)
                            if o.type.HasField("tensor_type") else None
                            for o in model.graph.output]

    def _ordered(self, inputs) -> list:
        specs = self.session.input_specs
        if isinstance(inputs, dict):
            names = [s.name for s in specs]
            missing = [n for n in names if n not in inputs]
            if missing:
                raise RuntimeInputError(f"missing input(s) {missing}; the model takes {names}")
            inputs = [inputs[n] for n in names]
        elif isinstance(inputs, (np.ndarray, onnx.TensorProto)):
            inputs = [inputs]
        else:
            inputs = list(inputs)
        out = []
        for i, x in enumerate(inputs):
            want = specs[i].dtype if i < len(specs) else None
            if i < len(specs) and specs[i].kind != "tensor" and (x is None or
                                                                 isinstance(x, (list, tuple))):
                # a sequence (list of arrays) or an empty optional (None)
                out.append(None if x is None else [_as_array(e, want) for e in x])
                continue
            out.append(_as_array(x, want))
        return out

    def run(self, inputs, **kwargs) -> tuple:
        outs = self.session.run(self._ordered(inputs))
        outs = [_fix_dtype(o, self._out_dtypes[i] if i < len(self._out_dtypes) else None)
                for i, o in enumerate(outs)]
        names = self.output_names if len(self.output_names) == len(outs) else \
            [f"output_{i}" for i in range(len(outs))]
        return namedtupledict("Outputs", names)(*outs)


class OnnxMlirBackend(Backend):
    """The onnx-mlir-py backend (CPU only)."""

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            return Device(device).type == DeviceType.CPU
        except (AttributeError, ValueError):
            return False

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs) -> OnnxMlirBackendRep:
        if not cls.supports_device(device):
            raise ValueError(f"onnx-mlir-py backend: unsupported device {device!r} (CPU only)")
        if isinstance(model, (bytes, bytearray)):
            model = onnx.load_from_string(bytes(model))
        elif not isinstance(model, onnx.ModelProto):
            model = onnx.load(model)
        how = {k: kwargs.pop(k) for k in _PREPARE_KWARGS if k in kwargs}
        for k in ("rtol", "atol"):      # onnx.backend.test passes these through
            kwargs.pop(k, None)
        cache = CompileCache(how.pop("cache_dir")) if "cache_dir" in how else None
        path = compile_cached(model, kwargs, name=how.pop("name", None) or model.graph.name,
                              cache=cache, **how)
        return OnnxMlirBackendRep(path, model)

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs) -> tuple:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs, device: str = "CPU",
                 outputs_info=None, **kwargs) -> tuple:
        """Run one node: a one-node model is built around it (inputs typed
        from the arrays given; output types from ``outputs_info`` or inferred)."""
        opset = kwargs.pop("opset_version", None)
        super().run_node(node, inputs, device, outputs_info,
                         **({"opset_version": opset} if opset else {}))
        names = [n for n in node.input if n]
        if isinstance(inputs, dict):
            arrays = [_as_array(inputs[n]) for n in names]
        else:
            arrays = [_as_array(x) for x in inputs]
        if len(arrays) != len(names):
            raise RuntimeInputError(f"node '{node.name or node.op_type}' has {len(names)} "
                                    f"input(s), got {len(arrays)} array(s)")
        g_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                                  a.shape) for n, a in zip(names, arrays)]
        outs = [n for n in node.output if n]
        if outputs_info:
            g_outputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(
                np.dtype(dt)), shape) for n, (dt, shape) in zip(outs, outputs_info)]
        else:
            g_outputs = [helper.make_empty_tensor_value_info(n) for n in outs]
        graph = helper.make_graph([node], f"run_node_{node.op_type}", g_inputs, g_outputs)
        version = opset or onnx.defs.onnx_opset_version()
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(node.domain, version)])
        if not outputs_info:
            model = onnx.shape_inference.infer_shapes(model)
        return cls.prepare(model, device, **kwargs).run(arrays)


prepare = OnnxMlirBackend.prepare
run_model = OnnxMlirBackend.run_model
run_node = OnnxMlirBackend.run_node
supports_device = OnnxMlirBackend.supports_device
