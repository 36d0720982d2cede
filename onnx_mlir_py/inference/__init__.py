"""onnxruntime's Python API on models compiled by onnx-mlir-py; see
:class:`.session.InferenceSession`. ``import onnx_mlir_py as ort`` gives the
same names (``InferenceSession``, ``SessionOptions``, ``GraphOptimizationLevel``,
``get_available_providers``, ``OrtValue``, ``set_default_logger_severity``, ...)."""
from onnx_mlir_py.inference.errors import (Fail, InvalidArgument, InvalidProtobuf, NoSuchFile,
                                           NotImplemented)
from onnx_mlir_py.inference.io_binding import IOBinding
from onnx_mlir_py.inference.log_level import (set_default_logger_severity,
                                              set_default_logger_verbosity)
from onnx_mlir_py.inference.model_info import ModelMetadata, NodeArg
from onnx_mlir_py.inference.options import (ExecutionMode, GraphOptimizationLevel, RunOptions,
                                            SessionOptions, get_all_providers,
                                            get_available_providers, get_device)
from onnx_mlir_py.inference.ort_value import OrtValue
from onnx_mlir_py.inference.session import InferenceSession

__all__ = ["InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel",
           "ExecutionMode", "NodeArg", "ModelMetadata", "get_available_providers",
           "get_all_providers", "get_device", "InvalidArgument", "Fail",
           "NoSuchFile", "InvalidProtobuf", "NotImplemented", "OrtValue", "IOBinding",
           "set_default_logger_severity", "set_default_logger_verbosity"]
