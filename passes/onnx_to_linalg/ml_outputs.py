"""Graph outputs of classic-ML models that the Python runtime presents
(before lowering; ``driver.lower_to_linalg`` calls ``prepare_ml_outputs``):

* ZipMap on a graph output: the output becomes ZipMap's input, the [N, C]
  score tensor, marked with the class labels (result attribute
  ``onnx.zipmap``, a JSON list, copied into the output signature); the
  Python runtime returns the list of {label: score} dicts onnxruntime
  returns. (A ZipMap anywhere else is refused by its lowering, ml_zipmap.py.)
* String class labels (TreeEnsembleClassifier / LinearClassifier
  ``classlabels_strings``) whose label tensor is a graph output: the library
  returns int64 indices into the labels (the op gets the discardable
  attribute ``onnx_mlir_py.label_index``, its lowering then emits indices),
  the output is marked ``onnx.labels`` (a JSON list), and the Python runtime
  returns the numpy array of label strings (dtype object, as onnxruntime).
  A string label tensor used by another node is refused (no string ABI).
"""
from __future__ import annotations

import json

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ml_zipmap import zipmap_labels

ZIPMAP_ATTR = "onnx.zipmap"
LABELS_ATTR = "onnx.labels"
LABEL_INDEX = "onnx_mlir_py.label_index"
CLASSIFIERS = ("onnx_ml.tree_ensemble_classifier", "onnx_ml.linear_classifier")


class _Results:
    """The function's result types and attribute dicts, written back once."""

    def __init__(self, func: ir.Operation):
        self.func = func
        body = func.regions[0].blocks[0]
        self.ret = list(body.operations)[-1]
        self.ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        self.types = list(self.ftype.results)
        arr = func.attributes["res_attrs"] if "res_attrs" in func.attributes else None
        self.dicts = []
        for i in range(len(self.types)):
            d = ir.DictAttr(arr[i]) if arr is not None else None
            self.dicts.append({a.name: a.attr for a in d} if d is not None else {})
        self.changed = False

    def only_returned(self, v: ir.Value) -> list[int] | None:
        """The return positions of ``v`` when the return is its only user."""
        uses = list(v.uses)
        if not uses or any(u.owner != self.ret for u in uses):
            return None
        return [u.operand_number for u in uses]

    def write(self) -> None:
        if not self.changed:
            return
        self.func.attributes["res_attrs"] = ir.ArrayAttr.get(
            [ir.DictAttr.get(d) for d in self.dicts])
        self.func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(self.ftype.inputs), self.types))


def prepare_ml_outputs(func: ir.Operation) -> None:
    res = _Results(func)
    for op in walk_ops(func, "onnx_ml.zip_map"):
        where = res.only_returned(op.results[0])
        if where is None:
            continue            # refused by lower_zipmap, naming the node
        v = OnnxOp(op)
        _, labels = zipmap_labels(v)
        src = v.input(0)
        if not isinstance(src.type, ir.RankedTensorType) or src.type.rank != 2:
            v.fail("the scores must be a 2-D tensor")
        for i in where:
            res.ret.operands[i] = src
            res.types[i] = src.type
            res.dicts[i][ZIPMAP_ATTR] = ir.StringAttr.get(json.dumps(labels))
        res.changed = True
        op.erase()
    for op in walk_ops(func, lambda o: o.name.split("_v")[0] in CLASSIFIERS):
        v = OnnxOp(op)
        if not v.attrs.classlabels_strings:
            continue
        label = op.results[0]
        where = res.only_returned(label)
        if where is None or not isinstance(label.type, ir.RankedTensorType):
            continue            # refused by the lowering (a string tensor for another node)
        idx_t = ir.RankedTensorType.get(label.type.shape, ir.IntegerType.get_signless(64))
        label.set_type(idx_t)
        op.attributes[LABEL_INDEX] = ir.UnitAttr.get()
        for i in where:
            res.types[i] = idx_t
            res.dicts[i][LABELS_ATTR] = ir.StringAttr.get(
                json.dumps(list(v.attrs.classlabels_strings)))
        res.changed = True
    res.write()


def label_table(op: OnnxOp) -> list:
    """The labels a classifier's lowering writes: int64 labels, or for
    string labels prepared above the indices 0..C-1 (else refused)."""
    strs = op.attrs.classlabels_strings
    if not strs:
        return list(op.attrs.classlabels_int64s if "classlabels_int64s" in op.spec.attributes
                    else op.attrs.classlabels_ints)
    if LABEL_INDEX not in op.op.attributes:
        op.fail("string class labels used by another node than the graph output need the "
                "string tensor ABI (not supported yet)")
    return list(range(len(strs)))
