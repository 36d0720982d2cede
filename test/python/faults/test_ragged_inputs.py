"""Python lists that are not tensors (ragged rows, non-numbers) given as
inputs: one error naming the input and what it expected, not numpy's bare
ValueError (issue 30 item 7). InferenceSession makes lists into arrays;
ExecutionSession takes numpy arrays only and says so, naming the input."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.inference import InvalidArgument
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.runtime.errors import RuntimeInputError


def _model(elem=T.FLOAT):
    op = "Identity"
    g = h.make_graph([h.make_node(op, ["x"], ["y"], name="id")], "g",
                     [h.make_tensor_value_info("x", elem, [2, "n"])],
                     [h.make_tensor_value_info("y", elem, [2, "n"])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    d = tmp_path_factory.mktemp("ragged")
    f = onnx_mlir_py.InferenceSession(_model().SerializeToString(), cache_dir=str(d))
    s = onnx_mlir_py.InferenceSession(_model(T.STRING).SerializeToString(), cache_dir=str(d))
    return f, s


@pytest.mark.parametrize("value,why", [
    ([[1, 2], [3]], "ragged nested lists"),
    ([[1.0, 2.0], [[3.0], 4.0]], "ragged nested lists"),
    ([[1, 2], [3, "a"]], "could not convert string to float"),
])
def test_inference_session_names_the_input(sessions, value, why):
    with pytest.raises(InvalidArgument) as e:
        sessions[0].run(None, {"x": value})
    msg = str(e.value)
    assert len(msg.splitlines()) == 1, msg
    assert msg.startswith("Invalid input x: ") and "tensor(float)" in msg and why in msg, msg


def test_inference_session_string_input_ragged(sessions):
    with pytest.raises(InvalidArgument, match=r"^Invalid input x: .*tensor\(string\).*ragged"):
        sessions[1].run(None, {"x": [["a", "b"], ["c"]]})
    out = sessions[1].run(None, {"x": [["a", "b"], ["c", "d"]]})[0]       # a good list works
    assert out.tolist() == [["a", "b"], ["c", "d"]]


def test_inference_session_good_list_still_works(sessions):
    out = sessions[0].run(None, {"x": [[1, 2, 3], [4, 5, 6]]})[0]
    np.testing.assert_array_equal(out, np.array([[1, 2, 3], [4, 5, 6]], np.float32))


@pytest.mark.quick
def test_execution_session_names_the_input(sessions):
    es = ExecutionSession(sessions[0].library_path)
    for value in ([[1, 2], [3]], np.array([[1, 2], [3]], dtype=object)):
        with pytest.raises(RuntimeInputError, match=r"^input 0 \('x'\): expected (a numpy "
                                                    r"array|dtype float32)"):
            es.run([value])
