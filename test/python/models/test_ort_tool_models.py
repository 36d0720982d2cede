"""Models made by onnxruntime's own tools (issue 28), compiled once, run at two shapes.

Small plain-torch models (seeded random weights, no downloads; data/ort_tool_modules.py)
exported by the legacy TorchScript exporter with dynamic batch (and sequence)
dims, once, by data/export_torch_models.py into the committed files
data/ort_tools_{bert,gpt2,llama,cnn,lstm}.onnx (these tests need no torch), are
rewritten by one of onnxruntime's tools:

* ``quantize_dynamic`` of a BERT-like encoder layer (DynamicQuantizeLinear,
  MatMulInteger, dequantized embeddings) and of a 2-layer bidirectional LSTM
  (``op_types_to_quantize`` with "LSTM": com.microsoft DynamicQuantizeLSTM);
* ``quantize_static`` of a small residual CNN (``quant_pre_process`` first, as
  onnxruntime asks; per-channel S8 weights, a calibration reader of random
  batches) in QDQ format and in QOperator format (QLinearConv, QLinearAdd,
  QLinearGlobalAveragePool, QGemm), with U8 and with S8 activations;
* ``MatMulNBitsQuantizer`` (4 bits, block 32, symmetric / asymmetric) of a
  LLaMA-style decoder block (RMSNorm from torch ops, SwiGLU MLP, LM head);
* ``onnxruntime.transformers.optimizer.optimize_model`` of an HF-BERT-like
  encoder (model_type "bert") and of an HF-GPT-2-like decoder with past
  key/values as inputs and presents as outputs (model_type "gpt2"): once with
  the default fusion options, once without the EmbedLayerNormalization
  fusion, and (BERT) once more with ``use_multi_head_attention``
  (MultiHeadAttention instead of Attention). :func:`test_tool_op_set` asserts
  each tool's model really holds the ops the tool is meant to write (fused
  Attention, SkipLayerNormalization, BiasGelu / FastGelu, ...), so the
  end-to-end tests mean something.

Each model is compiled ONCE per opt level (-O3; two also at -O0; the
MultiHeadAttention variant only at -O0) in a child process and run at two
run-time shapes; onnxruntime runs the same .onnx file.

The onnxruntime sessions are single-threaded. Besides sparing the shared
machine, this is needed for a deterministic oracle: onnxruntime's LSTM kernel
splits a batch of >= 2 rows (hidden size <= 256) among its intra-op threads,
and DynamicQuantizeLSTM quantizes the hidden state of each thread's rows with
that chunk's own scale, so its results depend on ``intra_op_num_threads``
(differences of ~1e-3 at batch 3, hidden 32 in an earlier form of the model). With one thread the whole batch
shares one scale per step.

Tolerances (see :func:`_compare`): each output is compared with onnxruntime's
ORT_ENABLE_ALL session, and the same inputs are run by an ORT_DISABLE_ALL
session to measure how much onnxruntime disagrees with itself (QDQ graphs are
fused into QLinear kernels only under ENABLE_ALL; quantize_dynamic graphs into
DynamicQuantizeMatMul / MatMulIntegerToFloat).

* Outputs of a DequantizeLinear (the quantized CNNs): counted in steps of that
  output's scale. The number of elements off by >= 1 step, and the largest
  number of steps, may not exceed those of DISABLE_ALL vs ENABLE_ALL (0 on these
  models today, i.e. exact); the message gives both fractions. Apart from
  whole steps, only float rounding (RTOL / ATOL below) is allowed.
* Float outputs: |ours - ort| <= ATOL + RTOL * |ort| + max|DISABLE_ALL - ENABLE_ALL|.
  RTOL = ATOL = 1e-5: the outputs are O(1) float32 values computed by 1-2 layers
  with reductions over <= 128 terms, where reassociation / FMA contraction /
  the transcendental approximations cost a few ulps (measured <= 1e-6), while any
  semantic slip (one int8 step of an activation, a mask, a scale) is >= 1e-3.

``XFAIL`` lists the cases that fail today, with the exception type and the exact
one-line message (checked: a case failing with another message fails); they are
strict, so a case that starts to pass shows up as XPASS (remove its row).
"""
from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import sys
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import onnxruntime as ort

from onnx_mlir_py.testing.isolated import compile_isolated, run_isolated

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
from export_torch_models import ORT_TOOLS, image_feeds, path as export_path  # noqa: E402

RTOL = ATOL = 1e-5
MS = "com.microsoft"


@contextlib.contextmanager
def _quiet():
    """The tools' advice ("consider pre-processing") and per-node INFO logs."""
    root = logging.getLogger()
    level = root.level
    nbits = logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer")
    nlevel = nbits.level
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        root.setLevel(logging.ERROR)
        nbits.setLevel(logging.ERROR)
        try:
            yield
        finally:
            root.setLevel(level)
            nbits.setLevel(nlevel)


# ---------------------------------------------------------------- the tools

def _quantize_dynamic(src, dst, **kw):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    quantize_dynamic(src, dst, weight_type=QuantType.QInt8, **kw)


def _quantize_static(fmt: str, act: str):
    def make(src, dst):
        from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                              quantize_static)
        from onnxruntime.quantization.shape_inference import quant_pre_process

        class Reader(CalibrationDataReader):
            def __init__(self):
                rng = np.random.default_rng(7)
                self.batches = iter([image_feeds({"batch": 2}, rng) for _ in range(4)])

            def get_next(self):
                return next(self.batches, None)

        pre = dst[:-len(".onnx")] + ".pre.onnx"
        quant_pre_process(src, pre)
        quantize_static(pre, dst, Reader(), quant_format=getattr(QuantFormat, fmt),
                        per_channel=True, weight_type=QuantType.QInt8,
                        activation_type={"u8": QuantType.QUInt8, "s8": QuantType.QInt8}[act])
    return make


def _nbits(sym: bool):
    def make(src, dst):
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
        q = MatMulNBitsQuantizer(onnx.load(src), bits=4, block_size=32, is_symmetric=sym)
        q.process()
        q.model.save_model_to_file(dst)
    return make


def _transformers(model_type: str, embed: bool, mha: bool = False):
    def make(src, dst):
        from onnxruntime.transformers.fusion_options import FusionOptions
        from onnxruntime.transformers.optimizer import optimize_model
        options = FusionOptions(model_type)
        options.enable_embed_layer_norm = embed
        options.use_multi_head_attention = mha
        # opt_level 0: the fusions without onnxruntime's graph pre-pass, whose
        # code imports torch (the same fused ops as the default level; 5 more
        # Constant nodes in the BERT model without EmbedLayerNormalization)
        optimize_model(src, model_type=model_type, num_heads=4, hidden_size=32, opt_level=0,
                       optimization_options=options).save_model_to_file(dst)
    return make


@dataclass(frozen=True)
class Case:
    """The float export ``source`` rewritten by ``tool(src, dst)``; ``ops``:
    op types ("domain:Op") the tool's model must hold, ``absent``: op types
    it must not hold any more; ``run_dims``: the two run-time shapes."""
    source: str
    tool: Callable[[str, str], None]
    ops: frozenset
    absent: frozenset
    run_dims: tuple


def _c(source, tool, ops, absent=()):
    run_dims = {"bert": ({"batch": 1, "seq": 5}, {"batch": 3, "seq": 11}),
               # a left-padded prompt (rows whose first queries see only padding)
               # with an empty past, then a decoding step
               "gpt2": ({"batch": 3, "seq": 5, "past": 0}, {"batch": 2, "seq": 1, "past": 7}),
               "llama": ({"batch": 1, "seq": 5}, {"batch": 3, "seq": 11}),
               "cnn": ({"batch": 1}, {"batch": 4}),
               "lstm": ({"batch": 1, "seq": 5}, {"batch": 3, "seq": 11})}[source]
    return Case(source, tool, frozenset(ops), frozenset(absent), run_dims)


_QDQ = {":QuantizeLinear", ":DequantizeLinear", ":Conv", ":Add", ":GlobalAveragePool", ":Gemm"}
_QOP = {":QuantizeLinear", ":QLinearConv", f"{MS}:QLinearAdd", f"{MS}:QLinearGlobalAveragePool",
        f"{MS}:QGemm", ":DequantizeLinear"}
_FLOAT_CNN = {":Conv", ":Add", ":GlobalAveragePool", ":Gemm"}
_BERT = {f"{MS}:Attention", f"{MS}:SkipLayerNormalization", f"{MS}:BiasGelu"}
_GPT2 = {f"{MS}:Attention", f"{MS}:SkipLayerNormalization", f"{MS}:FastGelu"}
_UNFUSED = {":Softmax", ":Erf", ":Tanh", ":Pow"}

CASES: dict[str, Case] = {
    "bert_quantize_dynamic": _c("bert", _quantize_dynamic,
                                {":DynamicQuantizeLinear", ":MatMulInteger", ":DequantizeLinear"}),
    "lstm_quantize_dynamic": _c("lstm", lambda s, d: _quantize_dynamic(
        s, d, op_types_to_quantize=["LSTM", "MatMul", "Gemm"]),
        {f"{MS}:DynamicQuantizeLSTM", ":DynamicQuantizeLinear", ":MatMulInteger"}, {":LSTM"}),
    "cnn_qdq_u8": _c("cnn", _quantize_static("QDQ", "u8"), _QDQ),
    "cnn_qdq_s8": _c("cnn", _quantize_static("QDQ", "s8"), _QDQ),
    "cnn_qoperator_u8": _c("cnn", _quantize_static("QOperator", "u8"), _QOP, _FLOAT_CNN),
    "cnn_qoperator_s8": _c("cnn", _quantize_static("QOperator", "s8"), _QOP, _FLOAT_CNN),
    "llama_nbits_sym": _c("llama", _nbits(True), {f"{MS}:MatMulNBits"}),
    "llama_nbits_asym": _c("llama", _nbits(False), {f"{MS}:MatMulNBits"}),
    "bert_optimizer": _c("bert", _transformers("bert", True),
                         _BERT | {f"{MS}:EmbedLayerNormalization"},
                         _UNFUSED | {":LayerNormalization"}),
    "bert_optimizer_no_embed": _c("bert", _transformers("bert", False), _BERT, _UNFUSED),
    "bert_optimizer_mha": _c("bert", _transformers("bert", False, mha=True),
                             (_BERT - {f"{MS}:Attention"}) | {f"{MS}:MultiHeadAttention"},
                             _UNFUSED | {f"{MS}:Attention"}),
    "gpt2_optimizer": _c("gpt2", _transformers("gpt2", True),
                         _GPT2 | {f"{MS}:EmbedLayerNormalization"},
                         _UNFUSED | {":LayerNormalization"}),
    "gpt2_optimizer_no_embed": _c("gpt2", _transformers("gpt2", False), _GPT2, _UNFUSED),
}

# -O3 for each case but these (each -O3 compile of a transformer adds ~15 s of
# CI): the MultiHeadAttention variant and the optimizer models without
# EmbedLayerNormalization (their ops are the -O3 cases with it, plus Embed)
# run at -O0, and the asymmetric MatMulNBits model too (the symmetric one is -O3)
_O0_ONLY = {"bert_optimizer_mha", "bert_optimizer_no_embed", "gpt2_optimizer_no_embed",
            "llama_nbits_asym"}
RUNS = ([(name, 3) for name in CASES if name not in _O0_ONLY]
        + [("cnn_qoperator_u8", 0)] + [(name, 0) for name in sorted(_O0_ONLY)])

# (case, opt level) -> (exception type, the exact one-line error of today)
XFAIL: dict[tuple[str, int], tuple[type, str]] = {}


def _param(run):
    marks = []
    if run in XFAIL:
        exc, msg = XFAIL[run]
        marks.append(pytest.mark.xfail(strict=True, raises=exc, reason=msg))
    return pytest.param(*run, id=f"{run[0]}-O{run[1]}", marks=marks)


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def tool_model(tmp_path_factory):
    """name -> path of the case's tool-made model (each float export and each
    tool run once per module)."""
    d = tmp_path_factory.mktemp("ort_tools")
    cache: dict = {}

    def get(name):
        if name not in cache:
            case = CASES[name]
            src = os.fspath(d / f"{case.source}.onnx")
            if not os.path.exists(src):     # a copy: some tools write next to their input
                shutil.copyfile(export_path(f"ort_tools_{case.source}"), src)
            dst = os.fspath(d / f"{name}.onnx")
            with _quiet():
                case.tool(src, dst)
            cache[name] = dst
        return cache[name]
    return get


@pytest.fixture(scope="module")
def compiled(tool_model):
    cache: dict = {}

    def get(name, opt):
        key = (name, opt)
        if key not in cache:
            path = tool_model(name)
            try:
                cache[key] = compile_isolated(path, path[:-len(".onnx")] + f".O{opt}.so", opt)
            except Exception as e:          # the same error for each later request
                cache[key] = e
        if isinstance(cache[key], Exception):
            raise cache[key]
        return cache[key]
    return get


# ---------------------------------------------------------------- checks

def op_set(m: onnx.ModelProto) -> Counter:
    return Counter(f"{n.domain if n.domain not in ('', 'ai.onnx') else ''}:{n.op_type}"
                   for n in m.graph.node)


def _session(path, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1         # deterministic: see the module docstring
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _output_steps(m: onnx.ModelProto) -> dict:
    """graph output name -> the scale of the DequantizeLinear writing it."""
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    outs = {o.name for o in m.graph.output}
    steps = {}
    for n in m.graph.node:
        if n.op_type == "DequantizeLinear" and n.output[0] in outs:
            scale = inits[n.input[1]]
            assert scale.size == 1, f"{n.output[0]}: per-axis output scale {scale.shape}"
            steps[n.output[0]] = float(scale.reshape(()))
    return steps


def _compare(name, got, want, other, step) -> None:
    """``got`` (ours) vs ``want`` (ORT_ENABLE_ALL); ``other`` (ORT_DISABLE_ALL)
    measures onnxruntime's own disagreement, the only slack allowed beyond
    float rounding."""
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{name}: got {got.shape} {got.dtype}, expected {want.shape} {want.dtype}"
    if step is not None:
        ours = np.rint((got.astype(np.float64) - want) / step)
        theirs = np.rint((other.astype(np.float64) - want) / step)
        n_ours, n_theirs = int(np.count_nonzero(ours)), int(np.count_nonzero(theirs))
        msg = (f"{name}: {n_ours}/{ours.size} ({n_ours / ours.size:.2%}) elements off by >= 1 "
               f"step of {step:g} (max {int(np.abs(ours).max())} steps); onnxruntime "
               f"DISABLE_ALL vs ENABLE_ALL: {n_theirs} ({n_theirs / ours.size:.2%}), "
               f"max {int(np.abs(theirs).max())} steps")
        assert n_ours <= n_theirs and np.abs(ours).max() <= np.abs(theirs).max(), msg
        off_grid = np.abs(got - want - ours * step) - (ATOL + RTOL * np.abs(want))
        assert off_grid.max() <= 0, f"{name}: not whole steps of {step:g} apart: {msg}"
        return
    slack = float(np.abs(other.astype(np.float64) - want).max())
    err = np.abs(got.astype(np.float64) - want)
    bad = err > ATOL + RTOL * np.abs(want) + slack
    assert not bad.any(), (
        f"{name}: {int(bad.sum())}/{bad.size} ({bad.mean():.2%}) elements beyond "
        f"{ATOL:g} + {RTOL:g}*|ort| + {slack:.3g} (onnxruntime DISABLE_ALL vs ENABLE_ALL); "
        f"max |ours - ort| {err.max():.3g}")


@pytest.mark.parametrize("name", list(CASES))
def test_tool_op_set(name, tool_model):
    """The tool wrote what it is meant to write (else the end-to-end test
    below would not exercise it)."""
    case = CASES[name]
    ops = op_set(onnx.load(tool_model(name)))
    assert case.ops <= set(ops), f"missing {sorted(case.ops - set(ops))}: {dict(ops)}"
    assert not case.absent & set(ops), f"left {sorted(case.absent & set(ops))}: {dict(ops)}"


def test_tool_op_set_details(tool_model):
    """The numbers behind the op sets: per-channel S8 QDQ weights, every
    MatMul with a constant weight turned into MatMulNBits (symmetric: no zero
    points), one fused Attention per layer with past / present for GPT-2."""
    m = onnx.load(tool_model("cnn_qdq_s8"))
    inits = {t.name: t for t in m.graph.initializer}
    weights = [n for n in m.graph.node if n.op_type == "DequantizeLinear"
               and n.input[0] in inits and inits[n.input[0]].dims[:1] == [16]
               and len(inits[n.input[0]].dims) == 4]
    assert len(weights) == 2, [n.name for n in weights]
    for n in weights:
        assert inits[n.input[0]].data_type == onnx.TensorProto.INT8
        assert list(inits[n.input[1]].dims) == [16], n.name      # one scale per channel
    for name, want in (("cnn_qdq_s8", onnx.TensorProto.INT8),
                       ("cnn_qdq_u8", onnx.TensorProto.UINT8)):
        m = onnx.load(tool_model(name))
        inits = {t.name: t for t in m.graph.initializer}
        zps = {inits[n.input[2]].data_type for n in m.graph.node
               if n.op_type == "QuantizeLinear" and len(n.input) > 2}
        assert zps == {want}, (name, zps)           # the activations' type

    for name, n_zp in (("llama_nbits_sym", 0), ("llama_nbits_asym", 8)):
        m = onnx.load(tool_model(name))
        nb = [n for n in m.graph.node if n.op_type == "MatMulNBits"]
        assert len(nb) == 8, len(nb)
        attrs = [{a.name: onnx.helper.get_attribute_value(a) for a in n.attribute} for n in nb]
        assert {(a["bits"], a["block_size"]) for a in attrs} == {(4, 32)}, attrs
        assert sum(len(n.input) > 3 and n.input[3] != "" for n in nb) == n_zp, name
        consts = {t.name for t in m.graph.initializer}
        left = [n.name for n in m.graph.node if n.op_type == "MatMul" and n.input[1] in consts]
        assert left == [], left

    m = onnx.load(tool_model("gpt2_optimizer_no_embed"))
    att = [n for n in m.graph.node if n.op_type == "Attention"]
    assert len(att) == 1 and att[0].input[4] == "past_0" and att[0].output[1] == "present_0"
    assert {a.name: a.i for a in att[0].attribute}["unidirectional"] == 1


@pytest.mark.parametrize("name,opt", [_param(r) for r in RUNS])
def test_tool_model_matches_onnxruntime(name, opt, tool_model, compiled):
    case = CASES[name]
    try:
        so = compiled(name, opt)
    except Exception as e:
        if (name, opt) in XFAIL and isinstance(e, XFAIL[name, opt][0]) \
                and str(e) != XFAIL[name, opt][1]:
            raise AssertionError(f"fails with another message: {e}") from None
        raise
    path = tool_model(name)
    model = onnx.load(path)
    feeds = [ORT_TOOLS[case.source].feeds(d, np.random.default_rng(i + 1))
             for i, d in enumerate(case.run_dims)]
    names = [i.name for i in model.graph.input]
    outputs = run_isolated(so, [[f[n] for n in names] for f in feeds])
    enable = _session(path, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    disable = _session(path, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    steps = _output_steps(model)
    shapes = set()
    for dims, f, got in zip(case.run_dims, feeds, outputs):
        want, other = enable.run(None, f), disable.run(None, f)
        assert len(got) == len(want), (len(got), len(want))
        for o, g, w, x in zip(model.graph.output, got, want, other):
            _compare(f"{o.name} at {dims}", g, w, x, steps.get(o.name))
        shapes.add(tuple(w.shape for w in want))
    assert len(shapes) == len(case.run_dims), f"run shapes not distinct: {shapes}"
