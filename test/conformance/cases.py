"""ONNX backend test cases as self-contained tasks, and the code that runs one.

Shared by the conformance runner (``backend_tests.py``) and the pytest
regression net (``test/python/backend/test_onnx_backend.py``).

Suites: the kinds of ``onnx.backend.test.loader.load_model_tests`` (all on
disk in onnx 1.23, no download: ``real`` are the 9 "light" models shipped in
``onnx/backend/test/data/light`` with fixed inputs and reference outputs).
Modes: ``static`` (model as given), ``dynamic`` (every input dim unknown,
through the compiler's ``shape_information`` override, like
``--shapeInformation 0:-1x-1``), ``constant`` (inputs turned into initializers).
"""
from __future__ import annotations

import glob
import os
import re
import time
import warnings
from dataclasses import dataclass, field

SUITES = ("node", "simple", "pytorch-converted", "pytorch-operator", "real")
MODES = ("static", "dynamic", "constant")


@dataclass
class Case:
    name: str
    suite: str
    model: object                 # onnx.ModelProto
    data_sets: list               # [(inputs, expected outputs)]
    rtol: float = 1e-3
    atol: float = 1e-7
    ops: list = field(default_factory=list)   # op types in the graph (main graph only)


def _load_pb(path: str, type_proto):
    import onnx
    from onnx import numpy_helper
    data = open(path, "rb").read()
    if type_proto is not None and type_proto.HasField("sequence_type"):
        s = onnx.SequenceProto()
        s.ParseFromString(data)
        return numpy_helper.to_list(s)
    if type_proto is not None and type_proto.HasField("optional_type"):
        o = onnx.OptionalProto()
        o.ParseFromString(data)
        return numpy_helper.to_optional(o)
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return numpy_helper.to_array(t)


def _dir_data_sets(model, model_dir: str) -> list:
    out = []
    g = model.graph
    for d in sorted(glob.glob(os.path.join(model_dir, "test_data_set*"))):
        n_in = len(glob.glob(os.path.join(d, "input_*.pb")))
        n_out = len(glob.glob(os.path.join(d, "output_*.pb")))
        ins = [_load_pb(os.path.join(d, f"input_{i}.pb"),
                        g.input[i].type if i < len(g.input) else None) for i in range(n_in)]
        outs = [_load_pb(os.path.join(d, f"output_{i}.pb"),
                         g.output[i].type if i < len(g.output) else None) for i in range(n_out)]
        out.append((ins, outs))
    return out


def _light_case(t) -> Case:
    import onnx
    from onnx.backend.test.runner import Runner
    root = os.path.dirname(os.path.dirname(os.path.abspath(onnx.__file__)))
    path = os.path.join(root, t.url)
    model = onnx.load(path)
    inits = {i.name for i in model.graph.initializer}
    ins = [Runner.generate_dummy_data(x, seed=0, name=t.model_name, random=False)
           for x in model.graph.input if x.name not in inits]
    prefix = os.path.splitext(path)[0]
    outs = [_load_pb(f"{prefix}_output_{i}.pb", o.type) for i, o in enumerate(model.graph.output)]
    return Case(t.name, "real", model, [(ins, outs)], t.rtol, t.atol)


def load_cases(suites=SUITES, name_filter: str | None = None) -> list[Case]:
    """Cases of ``suites`` whose name matches ``name_filter`` (a regex)."""
    warnings.simplefilter("ignore")
    import onnx
    import onnx.backend.test.loader as loader
    rx = re.compile(name_filter) if name_filter else None
    cases = []
    for suite in suites:
        for t in loader.load_model_tests(kind=suite):
            if rx and not rx.search(t.name):
                continue
            if suite == "node":
                c = Case(t.name, suite, t.model, list(t.data_sets), t.rtol, t.atol)
            elif t.model_dir is None:
                c = _light_case(t)
            else:
                model = onnx.load(os.path.join(t.model_dir, "model.onnx"))
                c = Case(t.name, suite, model, _dir_data_sets(model, t.model_dir), t.rtol, t.atol)
            c.ops = sorted({n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
                            for n in c.model.graph.node})
            cases.append(c)
    return sorted(cases, key=lambda c: (SUITES.index(c.suite), c.name))


# -- modes -------------------------------------------------------------------
def _real_inputs(graph):
    inits = {t.name for t in graph.initializer}
    return [i for i in graph.input if i.name not in inits]


def dynamic_shapes(model) -> dict:
    """shape_information making every dim of every tensor input unknown."""
    out = {}
    for i, vi in enumerate(_real_inputs(model.graph)):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is not None and tt.HasField("shape") and len(tt.shape.dim) > 0:
            out[i] = [-1] * len(tt.shape.dim)
    return out


def constant_model(model, inputs):
    """A copy of ``model`` whose inputs are initializers holding ``inputs``."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    m = onnx.ModelProto()
    m.CopyFrom(model)
    real = _real_inputs(m.graph)
    moved = set()
    for vi, value in zip(real, inputs):
        if isinstance(value, onnx.TensorProto):
            t = onnx.TensorProto()
            t.CopyFrom(value)
        elif isinstance(value, (np.ndarray, np.generic)):
            t = numpy_helper.from_array(np.asarray(value))
        else:
            continue      # sequences / optionals cannot be initializers
        t.name = vi.name
        m.graph.initializer.append(t)
        moved.add(vi.name)
    if m.ir_version >= 4:
        keep = [vi for vi in m.graph.input if vi.name not in moved]
        del m.graph.input[:]
        m.graph.input.extend(keep)
    rest = [v for vi, v in zip(real, inputs) if vi.name not in moved]
    return m, rest


def make_task(case: Case, mode: str, compile_options: dict | None = None) -> dict:
    """A picklable unit of work: the models to compile and the data to check."""
    base = dict(compile_options or {})
    runs = []
    for inputs, expected in case.data_sets:
        if mode == "constant":
            model, inputs = constant_model(case.model, inputs)
            runs.append((model.SerializeToString(), base, inputs, expected))
        else:
            opts = dict(base)
            if mode == "dynamic":
                si = dynamic_shapes(case.model)
                if si:
                    opts["shape_information"] = si
            runs.append((case.model.SerializeToString(), opts, inputs, expected))
    return {"name": case.name, "suite": case.suite, "mode": mode, "ops": case.ops,
            "rtol": case.rtol, "atol": case.atol, "runs": runs}


# -- running one task (in a worker process) ---------------------------------
def _normalize(values) -> list:
    """TensorProto -> array, numpy scalar -> 0-d array; other values unchanged."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    out = []
    for v in values:
        if isinstance(v, onnx.TensorProto):
            v = numpy_helper.to_array(v)
        elif isinstance(v, np.generic):
            v = np.asarray(v)
        elif isinstance(v, (list, tuple)):      # a sequence
            v = _normalize(v)
        out.append(v)
    return out


def _check_data(values) -> str | None:
    import numpy as np
    for v in values:
        if v is None:                           # an empty optional
            continue
        if isinstance(v, list):                 # a sequence
            bad = _check_data(v)
            if bad:
                return bad
            continue
        if not isinstance(v, np.ndarray):
            return f"non-tensor value ({type(v).__name__})"
        if v.dtype == object and all(isinstance(x, (str, bytes)) for x in v.reshape(-1)):
            continue                            # a string tensor
        if v.dtype == object or v.dtype.kind in "SU" or v.dtype.name not in _RUNTIME_DTYPES:
            return f"element type {v.dtype.name} not supported by the runtime"
    return None


_RUNTIME_DTYPES = {"float32", "float64", "float16", "int8", "int16", "int32", "int64",
                   "uint8", "uint16", "uint32", "uint64", "bool", "bfloat16",
                   "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                   "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint4", "int2", "uint2"}


def run_task(task: dict) -> dict:
    """Compile (in this process, through the backend and its cache) and run
    every data set of ``task``; returns {"status", "category", "key", "detail"}."""
    warnings.simplefilter("ignore")
    import onnx
    from onnx_mlir_py.backend import OnnxMlirBackend
    t0 = time.perf_counter()
    result = {"status": "pass", "category": "", "key": "", "detail": ""}
    try:
        for data, opts, inputs, expected in task["runs"]:
            model = onnx.load_from_string(data)
            rep = OnnxMlirBackend.prepare(model, "CPU", in_process=True, name=task["name"],
                                          **opts)
            inputs, expected = _normalize(inputs), _normalize(expected)
            bad = _check_data(inputs) or _check_data(expected)
            if bad:
                result.update(status="fail", category="unsupported test data", key=bad,
                              detail=bad)
                break
            outputs = list(rep.run(inputs))
            assert_similar_values(expected, outputs, task["rtol"], task["atol"])
    except AssertionError as e:
        result.update(status="fail", **classify_mismatch(str(e), task))
    except Exception as e:  # noqa: BLE001 - every failure is classified
        result.update(status="fail", **classify_error(e, task))
    result["seconds"] = round(time.perf_counter() - t0, 3)
    return result


def assert_similar_values(expected: list, outputs: list, rtol: float, atol: float) -> None:
    """onnx's Runner.assert_similar_outputs, also for sequences (lists: the
    same length, element by element) and empty optionals (None)."""
    from onnx.backend.test.runner import Runner
    assert len(outputs) == len(expected), f"{len(outputs)} outputs, expected {len(expected)}"
    for i, (e, o) in enumerate(zip(expected, outputs)):
        if e is None or o is None:
            assert e is None and o is None, f"output {i}: got {type(o).__name__}, expected " \
                f"{type(e).__name__}"
        elif isinstance(e, list):
            assert isinstance(o, list) and len(o) == len(e), \
                f"output {i}: got {type(o).__name__} of length {len(o)}, expected a " \
                f"sequence of length {len(e)}"
            assert_similar_values(e, o, rtol, atol)
        else:
            assert not isinstance(o, list), f"output {i}: got a sequence, expected a tensor"
            Runner.assert_similar_outputs([e], [o], rtol=rtol, atol=atol)


_NODE_RX = re.compile(r"node '[^']*' \(([\w.]+)\)")


def _main_op(task) -> str:
    ops = [o for o in task["ops"] if o not in ("Constant",)]
    return ", ".join(ops[:3]) + (", ..." if len(ops) > 3 else "") if ops else "-"


def _one_line(text: str) -> str:
    lines = [s.strip() for s in str(text).splitlines() if s.strip()]
    return (lines[0] if lines else "")[:300]


def classify_error(e: BaseException, task: dict) -> dict:
    from onnx_mlir_py import errors as E
    from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError
    msg = _one_line(e)
    name = type(e).__name__
    m = _NODE_RX.search(msg)
    node_op = m.group(1) if m else _main_op(task)
    if isinstance(e, E.UnsupportedOpsError):
        what = re.search(r"\(([^)]*)\):", msg)
        ops = sorted({op for op, _ in getattr(e, "nodes", [])}) or [node_op]
        return {"category": f"unsupported op ({what.group(1) if what else 'unsupported'})",
                "key": ", ".join(ops), "detail": msg}
    if isinstance(e, E.ShapeInferenceError):
        return {"category": "shape inference error", "key": node_op, "detail": msg}
    if isinstance(e, E.VerificationError):
        return {"category": "verification error", "key": node_op, "detail": msg}
    if isinstance(e, (E.ImportError_, E.ModelLoadError)):
        return {"category": "import error", "key": node_op, "detail": msg}
    if name == "InternalCompilerError":
        return {"category": "internal compiler error", "key": node_op, "detail": msg}
    if isinstance(e, E.CompileError):
        return {"category": "compile error", "key": node_op, "detail": msg}
    if isinstance(e, RuntimeInputError) and "images are not supported by this build" in msg:
        # ImageDecoder decodes BMP / PNG / PNM only: exact JPEG pixels need
        # libjpeg's arithmetic, and a codec library would be a system
        # dependency (passes/onnx_to_linalg/image_decoder.py)
        return {"category": "image format without a decoder (JPEG, JPEG 2000, TIFF, WebP "
                "need codec libraries)", "key": _main_op(task), "detail": msg}
    if isinstance(e, (RuntimeInputError, ModelRunError)):
        return {"category": "runtime error", "key": _main_op(task), "detail": msg}
    if isinstance(e, E.OnnxMlirError):
        return {"category": "error", "key": node_op, "detail": f"{name}: {msg}"}
    return {"category": "internal error", "key": f"{name} ({_main_op(task)})",
            "detail": f"{name}: {msg}"}


RANDOM_OPS = {"Bernoulli", "RandomUniform", "RandomNormal", "RandomUniformLike",
              "RandomNormalLike", "Multinomial"}
# Dropout in training mode with a ratio > 0 draws its mask at random
# (test/python/lowering/test_lower_dropout.py checks the kept fraction); the
# zero-ratio training tests are deterministic and compared as usual
RANDOM_TESTS = {"test_training_dropout", "test_training_dropout_default",
                "test_training_dropout_default_mask", "test_training_dropout_mask"}


# Tests whose expected data is itself outside onnx's tolerance of the exact
# answer (measured against float64 numpy); ours is within it. Only a
# category: the test still counts as failed.
EXPECTED_DATA_ERRORS = {
    # ifft of the ramp 10t+j: onnx builds the expected data with numpy 2's
    # complex64 FFT (float32), 1.9e-7 where the exact value is 0 (Nyquist
    # imaginary parts); ours 3e-15; onnx's atol is 1e-7.
    # test/python/lowering/test_lower_dft.py pins ours against float64 numpy.
    "test_dft_inverse": "float32 round-off of numpy's FFT in the expected data",
    "test_dft_inverse_opset19": "float32 round-off of numpy's FFT in the expected data",
}


def classify_mismatch(msg: str, task: dict) -> dict:
    text = " ".join(msg.split())
    if task.get("name") in EXPECTED_DATA_ERRORS:
        return {"category": "expected data outside tolerance (ours exact)",
                "key": _main_op(task), "detail": EXPECTED_DATA_ERRORS[task["name"]]}
    if "incorrect shape" in text:
        cat = "wrong shape"
    elif "dtype(" in text:
        cat = "wrong dtype"
    elif "Items are not equal" in text:
        cat = "wrong output count"
    elif RANDOM_OPS & set(task.get("ops", ())) or task.get("name") in RANDOM_TESTS:
        # the expected outputs are samples of numpy's generator: no
        # implementation can reproduce them (onnxruntime skips these tests);
        # test/python/lowering/test_lower_random.py checks the distributions
        cat = "random samples (not comparable)"
    else:
        cat = "wrong numbers"
    m = re.search(r"Mismatched elements: [^\n]*", msg)
    detail = m.group(0) if m else text[:200]
    return {"category": cat, "key": _main_op(task), "detail": detail}
