"""The .onnx files of the tests that check torch's exporters, exported once.

    python test/python/models/data/export_torch_models.py [--out DIR]

writes into this folder (or DIR), from seeded random weights:

* ``{case}.legacy.onnx`` / ``{case}.dynamo.onnx``: each case of
  ``onnx_mlir_py.testing.torch_models`` exported by the legacy TorchScript
  exporter (``dynamic_axes``, opset 17) and by the dynamo exporter
  (``dynamic_shapes``, opset 18), and ``torch_exports.json`` (each case's
  inputs: export-time shape, dtype, dynamic axes; its three run-time dims):
  test_torch_exports.py;
* ``ort_tools_{bert,gpt2,llama,cnn,lstm}.onnx``: the float models that
  test_ort_tool_models.py hands to onnxruntime's tools (legacy exporter,
  opset 17, dynamic batch / sequence);
* ``attention_{gpt,bert}.onnx``: the decoder and encoder of
  test/python/optimize/test_o3_attention.py;
* ``class_{squeeze_last,mask_attention}.onnx``: issue #31's classes 1 and 3
  as torch's legacy exporter writes them: test_real_exporter_classes.py.

Exporting needs the ``[export]`` extra (torch, onnxscript); importing this
module does not (the tests take the file names and the input makers from it
without torch). ``test_torch_exports.py::test_script_reproduces_committed_files``
(marker ``export``, CI's export step) re-runs this script and compares its
output with the committed files.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import io
import json
import logging
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = 97
MANIFEST = "torch_exports.json"


def path(name: str, folder: str = HERE) -> str:
    """The file of model ``name`` (e.g. "lstm.dynamo", "ort_tools_bert")."""
    return os.path.join(folder, f"{name}.onnx")


# ------------------------------------------------- torch_models cases (test_torch_exports.py)

def manifest(folder: str = HERE) -> dict:
    with open(os.path.join(folder, MANIFEST)) as f:
        return json.load(f)


def case_feeds(case: dict, dims: dict, seed: int) -> dict:
    """Inputs of a ``torch_exports.json`` case at ``dims`` (e.g. {"batch": 3,
    "seq": 11}): float inputs normal, token ids uniform in the vocabulary, an
    ``attention_mask`` of ones with right padding of a different length per
    row."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, spec in case["inputs"].items():
        shape = [dims[spec["dynamic"][str(a)]] if str(a) in spec["dynamic"] else s
                 for a, s in enumerate(spec["shape"])]
        if spec["dtype"] == "float32":
            feeds[name] = rng.standard_normal(shape).astype(np.float32)
        elif name == "attention_mask":
            mask = np.ones(shape, np.int64)
            for i in range(shape[0]):
                mask[i, shape[1] - (i % max(shape[1] - 1, 1)):] = 0
            feeds[name] = mask
        else:
            feeds[name] = rng.integers(0, case["vocab"], shape).astype(np.int64)
    return feeds


# Narrower transformers / LSTM than torch_models' defaults (the files stay a
# few KB each; the exporters' patterns, the dynamic axes and the dynamo Dim
# ranges are the same): case -> constructor arguments.
SMALLER = {"bert_encoder": dict(d=16, heads=2, ff=32), "gpt_decoder": dict(d=16, heads=2, ff=32),
           "vit": dict(d=16, heads=2, ff=32), "lstm": dict(hidden=12)}


@contextlib.contextmanager
def _smaller_cases(T):
    """torch_models.export builds ``CASES[name]``: the cases of SMALLER are
    swapped for their narrower forms while the script exports."""
    saved = dict(T.CASES)
    for name, kwargs in SMALLER.items():
        T.CASES[name] = dataclasses.replace(saved[name],
                                            build=functools.partial(saved[name].build, **kwargs))
    try:
        yield
    finally:
        T.CASES.update(saved)


def _export_torch_models_cases(folder: str) -> list[str]:
    from onnx_mlir_py.testing import torch_models as T
    cases = {}
    with _smaller_cases(T):
        written = _export_cases(T, folder, cases)
    with open(os.path.join(folder, MANIFEST), "w") as f:
        json.dump(cases, f, indent=1, sort_keys=True)
        f.write("\n")
    return written


def _export_cases(T, folder: str, cases: dict) -> list[str]:
    written = []
    for name, case in T.CASES.items():
        example = T.example_inputs(name)
        cases[name] = {
            "inputs": {k: {"shape": list(v.shape), "dtype": str(v.dtype),
                           "dynamic": {str(a): n for a, n in case.dynamic.get(k, {}).items()}}
                       for k, v in example.items()},
            "outputs": list(case.outputs), "example": case.example,
            "run_dims": list(case.run_dims), "vocab": T.VOCAB,
            "narrowed": SMALLER.get(name, {})}
        for exporter in T.EXPORTERS:
            T.export(name, exporter, path(f"{name}.{exporter}", folder))
            written.append(f"{name}.{exporter}")
    return written


# ------------------------------------------------- onnxruntime's tools (test_ort_tool_models.py)

def bert_feeds(d, rng):
    b, s = d["batch"], d["seq"]
    mask = np.ones((b, s), np.int64)
    for i in range(b):                  # right padding (the fused mask index needs it)
        mask[i, s - min(i, s - 1):] = 0
    types = (np.arange(s)[None, :] >= rng.integers(1, s + 1, (b, 1))).astype(np.int64)
    return {"input_ids": rng.integers(0, VOCAB, (b, s)).astype(np.int64),
            "attention_mask": mask, "token_type_ids": types}


def gpt2_feeds(d, rng):
    b, s, p = d["batch"], d["seq"], d["past"]
    mask = np.ones((b, p + s), np.int64)
    for i in range(b):                  # left padding, as in batched generation
        mask[i, :min(i, p + s - 1)] = 0
    return {"input_ids": rng.integers(0, VOCAB, (b, s)).astype(np.int64),
            "position_ids": np.broadcast_to(np.arange(p, p + s), (b, s)).astype(np.int64),
            "attention_mask": mask,
            "past_0": rng.standard_normal((2, b, 4, p, 8)).astype(np.float32)}


def ids_feeds(d, rng):
    return {"input_ids": rng.integers(0, VOCAB, (d["batch"], d["seq"])).astype(np.int64)}


def image_feeds(d, rng):
    return {"x": rng.standard_normal((d["batch"], 3, 8, 8)).astype(np.float32)}


def seq_feeds(d, rng):
    return {"x": rng.standard_normal((d["batch"], d["seq"], 16)).astype(np.float32)}


BS = {0: "batch", 1: "seq"}


@dataclass(frozen=True)
class OrtToolExport:
    """A model (its class name in ort_tool_modules.py, or in torch_models for
    CLASSES, and arguments), the feeds maker, its export-time example dims,
    the dynamic axes of its inputs / outputs (names in order)."""
    module: str
    kwargs: dict
    feeds: Callable[[dict, np.random.Generator], dict]
    example: dict
    inputs: dict
    outputs: dict


ORT_TOOLS = {
    "bert": OrtToolExport("HFBert", dict(d=32, heads=4, ff=32, max_pos=16), bert_feeds,
                          {"batch": 2, "seq": 8},
                          {"input_ids": BS, "attention_mask": BS, "token_type_ids": BS},
                          {"y": BS}),
    "gpt2": OrtToolExport("GPT2", dict(d=32, heads=4, ff=32, max_pos=16), gpt2_feeds,
                          {"batch": 2, "seq": 8, "past": 3},
                          {"input_ids": BS, "position_ids": BS,
                           "attention_mask": {0: "batch", 1: "total"},
                           "past_0": {1: "batch", 3: "past"}},
                          {"y": BS, "present_0": {1: "batch", 3: "total"}}),
    # K = 32 for each MatMul: the block size of MatMulNBits
    "llama": OrtToolExport("LlamaDecoder", dict(d=32, heads=2, ff=32), ids_feeds,
                           {"batch": 2, "seq": 8}, {"input_ids": BS}, {"y": BS}),
    "cnn": OrtToolExport("ResidualCNN", {}, image_feeds, {"batch": 2}, {"x": {0: "batch"}},
                         {"y": {0: "batch"}}),
    "lstm": OrtToolExport("LSTMModel", dict(hidden=8), seq_feeds, {"batch": 2, "seq": 8},
                          {"x": BS}, {"y": BS}),
}


# ------------------------------------------------- fused attention (test_o3_attention.py)

ATTENTION_VOCAB = 16
# name -> (torch_models class, its arguments, input names): head sizes 32
# (decoder) and 16 (encoder), positions up to 72, a small vocabulary and MLP
ATTENTION = {
    "gpt": ("GPTDecoder", dict(d=32, heads=1, layers=2, max_pos=72, ff=16,
                               vocab=ATTENTION_VOCAB), ["input_ids"]),
    "bert": ("BertEncoder", dict(d=32, heads=2, layers=1, max_pos=40, ff=16,
                                 vocab=ATTENTION_VOCAB), ["input_ids", "attention_mask"]),
}


def attention_feeds(name: str, b: int = 1, s: int = 8, seed: int = 0) -> dict:
    ids = np.random.default_rng(seed).integers(0, ATTENTION_VOCAB, (b, s)).astype(np.int64)
    return dict(zip(ATTENTION[name][2], (ids, np.ones_like(ids))))


# ------------------------------------------------- issue #31's classes (test_real_exporter_classes.py)

def squeeze_feeds(d, rng):
    return {"x": rng.standard_normal((d["batch"], 4, d["t"])).astype(np.float32)}


def mask_feeds(d, rng):
    b, s = d["batch"], d["seq"]
    feeds = {n: rng.standard_normal((b, 2, s, 8)).astype(np.float32) for n in ("q", "k", "v")}
    feeds["mask"] = rng.standard_normal((b, 1, d["m"], s)).astype(np.float32)
    return feeds


_QKV = {0: "batch", 2: "seq"}
# torch_models modules exported the way the real models of issue #31 were
# (legacy exporter, dynamic axes): "class_<name>.onnx"
CLASSES = {
    "squeeze_last": OrtToolExport("SqueezeLast", {}, squeeze_feeds, {"batch": 2, "t": 3},
                                  {"x": {0: "batch", 2: "t"}}, {}),
    "mask_attention": OrtToolExport("MaskedAttention", {}, mask_feeds,
                                    {"batch": 2, "seq": 5, "m": 5},
                                    {"q": _QKV, "k": _QKV, "v": _QKV,
                                     "mask": {0: "batch", 2: "m", 3: "seq"}},
                                    {"y": _QKV}),
}


def _export_class_models(folder: str) -> list[str]:
    from onnx_mlir_py.testing import torch_models as T
    for name, e in CLASSES.items():
        model = T.seeded(f"class_{name}", functools.partial(getattr(T, e.module), **e.kwargs))
        _legacy_export(model, example_feeds(f"class_{name}"), path(f"class_{name}", folder),
                       {**e.inputs, **e.outputs}, ["y"])
    return [f"class_{name}" for name in CLASSES]


# ------------------------------------------------- every file

def example_feeds(name: str, folder: str = HERE) -> dict:
    """Inputs at the export-time dims for the model file ``name``."""
    if name.startswith(("ort_tools_", "class_")):
        prefix, table = ("ort_tools_", ORT_TOOLS) if name.startswith("ort_tools_") \
            else ("class_", CLASSES)
        e = table[name[len(prefix):]]
        return e.feeds(e.example, np.random.default_rng(0))
    if name.startswith("attention_"):
        return attention_feeds(name[len("attention_"):])
    case = manifest(folder)[name.split(".")[0]]
    return case_feeds(case, case["example"], 0)


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        level = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)
        try:
            yield
        finally:
            logging.getLogger().setLevel(level)


def _legacy_export(model, feeds: dict, dst: str, axes: dict, outputs: list) -> None:
    import torch
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    with _quiet(), torch.no_grad():
        torch.onnx.export(model, args, dst, dynamo=False, opset_version=17,
                          input_names=list(feeds), output_names=outputs, dynamic_axes=axes,
                          do_constant_folding=True)


def _export_ort_tool_models(folder: str) -> list[str]:
    import ort_tool_modules
    from onnx_mlir_py.testing.torch_models import seeded
    for name, e in ORT_TOOLS.items():
        model = seeded(f"ort_tools_{name}",
                       functools.partial(getattr(ort_tool_modules, e.module), **e.kwargs))
        _legacy_export(model, example_feeds(f"ort_tools_{name}"), path(f"ort_tools_{name}", folder),
                       {**e.inputs, **e.outputs}, list(e.outputs))
    return [f"ort_tools_{name}" for name in ORT_TOOLS]


def _export_attention_models(folder: str) -> list[str]:
    from onnx_mlir_py.testing import torch_models as T
    for name, (cls, kwargs, inputs) in ATTENTION.items():
        model = T.seeded(f"attn_{name}", lambda: getattr(T, cls)(**kwargs))
        _legacy_export(model, attention_feeds(name), path(f"attention_{name}", folder),
                       {n: {0: "B", 1: "S"} for n in inputs}, ["y"])
    return [f"attention_{name}" for name in ATTENTION]


def strip_metadata(file: str) -> None:
    """Drops the dynamo exporter's per-node / per-value metadata (stack
    traces, FX node names: ~half of its files) and doc strings; the graph,
    its value_info shapes and the weights stay as exported."""
    import onnx
    m = onnx.load(file)
    for n in m.graph.node:
        del n.metadata_props[:]
        n.doc_string = ""
    for v in [*m.graph.value_info, *m.graph.input, *m.graph.output]:
        del v.metadata_props[:]
        v.doc_string = ""
    m.doc_string = ""
    onnx.save(m, file)


def export_all(folder: str = HERE) -> list[str]:
    """Writes every file into ``folder``; returns the model names written."""
    os.makedirs(folder, exist_ok=True)
    names = (_export_torch_models_cases(folder) + _export_ort_tool_models(folder)
             + _export_attention_models(folder) + _export_class_models(folder))
    for name in names:
        strip_metadata(path(name, folder))
    return names


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=HERE, help="folder to write into (default: this one)")
    args = p.parse_args(argv)
    try:
        import torch  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError as e:
        print(f"export_torch_models.py: needs the [export] extra "
              f"(pip install -e '.[export]'): {e}", file=sys.stderr)
        return 1
    names = export_all(args.out)
    total = sum(os.path.getsize(path(n, args.out)) for n in names)
    print(f"wrote {len(names)} models + {MANIFEST} into {args.out} ({total / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
