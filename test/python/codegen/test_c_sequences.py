"""Sequence and optional values through the C API (OnnxMlirRuntime.h): a C
program builds a sequence input (omTensorCreateSeq over an OMTensorList),
reads a sequence output (omTensorGetSeq) and a None optional
(omTensorIsNone), and gets a RuntimeInputError-kind failure for a position
out of range; under valgrind, no invalid access, double free or leak (every
element record and buffer of a run is freed exactly once, also on the
failure path)."""
from __future__ import annotations

import shutil
import subprocess

import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.codegen.cwrapper import RUNTIME_DIR
from onnx_mlir_py.codegen.tools import tool

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "OnnxMlirRuntime.h"

int main(int argc, char **argv) {
  int64_t pos = atoll(argv[1]);
  static float e0[3] = {0, 1, 2}, e1[3] = {5, 6, 7}, x[3] = {9, 9, 9};
  int64_t shape[1] = {3};
  OMTensor **elems = malloc(2 * sizeof *elems);
  elems[0] = omTensorCreate(e0, shape, 1, ONNX_TYPE_FLOAT);
  elems[1] = omTensorCreate(e1, shape, 1, ONNX_TYPE_FLOAT);
  OMTensor *in[3] = {omTensorCreateSeq(omTensorListCreateWithOwnership(elems, 2, 1)),
                     omTensorCreate(x, shape, 1, ONNX_TYPE_FLOAT),
                     omTensorCreate(&pos, NULL, 0, ONNX_TYPE_INT64)};
  OMTensorList *ins = omTensorListCreate(in, 3);
  OMTensorList *outs = run_main_graph(ins);
  if (!outs) {
    printf("error kind %lld: %s\n", (long long)omGetLastErrorKind(), omGetLastError());
    omTensorListDestroy(ins);
    return 1;
  }
  OMTensorList *seq = omTensorGetSeq(omTensorListGetOmtByIndex(outs, 0));
  printf("len %lld:", (long long)omTensorListGetSize(seq));
  for (int64_t i = 0; i < omTensorListGetSize(seq); ++i) {
    float *d = omTensorGetDataPtr(omTensorListGetOmtByIndex(seq, i));
    printf(" [%g %g %g]", d[0], d[1], d[2]);
  }
  float *a = omTensorGetDataPtr(omTensorListGetOmtByIndex(outs, 1));
  printf("\nat [%g %g %g]\nnone %lld seq %d\n", a[0], a[1], a[2],
         (long long)omTensorIsNone(omTensorListGetOmtByIndex(outs, 2)),
         omTensorGetSeq(omTensorListGetOmtByIndex(outs, 2)) != NULL);
  omTensorListDestroy(outs);
  omTensorListDestroy(ins);
  return 0;
}
"""


def _model():
    f = T.FLOAT
    seq = h.make_sequence_type_proto(h.make_tensor_type_proto(f, [3]))
    opt = h.make_optional_type_proto(h.make_tensor_type_proto(f, [3]))
    nodes = [h.make_node("SequenceInsert", ["s", "x", "p"], ["o"]),
             h.make_node("SequenceAt", ["o", "p"], ["a"], name="at"),
             h.make_node("Optional", [], ["none"], type=h.make_tensor_type_proto(f, [3]))]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_value_info("s", seq),
                                               h.make_tensor_value_info("x", f, [3]),
                                               h.make_tensor_value_info("p", T.INT64, [])],
                                  [h.make_value_info("o", seq),
                                   h.make_tensor_value_info("a", f, [3]),
                                   h.make_value_info("none", opt)]),
                     opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 8
    return m


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    d = tmp_path_factory.mktemp("cseq")
    so = onnx_mlir_py.compile(_model(), d / "libseqmodel.so", opt_level=0)
    src = d / "main.c"
    src.write_text(PROGRAM)
    exe = d / "main"
    subprocess.run([tool("gcc"), "-O1", "-g", "-Wall", "-Werror", "-o", str(exe), str(src),
                    f"-I{RUNTIME_DIR}", str(so), f"-Wl,-rpath,{d}"], check=True)
    return str(exe)


def _run(program, pos, valgrind=False):
    cmd = [program, str(pos)]
    if valgrind:
        cmd = ["valgrind", "-q", "--error-exitcode=9", "--leak-check=full",
               "--errors-for-leak-kinds=definite,indirect", "--show-leak-kinds=definite,indirect"
               ] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_c_caller_sequences(program):
    p = _run(program, 1)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["len 3: [0 1 2] [9 9 9] [5 6 7]", "at [9 9 9]",
                                     "none 1 seq 0"]
    p = _run(program, -7)
    assert p.returncode == 1
    assert p.stdout.startswith("error kind 2: node 'SequenceInsert:o' (SequenceInsert): "
                               "position -7 is out of range [-2, 2]"), p.stdout


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
@pytest.mark.parametrize("pos", [1, -7])
def test_c_caller_sequences_valgrind(program, pos):
    p = _run(program, pos, valgrind=True)
    assert p.returncode == (0 if pos == 1 else 1), p.stderr[-3000:]    # 9: valgrind errors
