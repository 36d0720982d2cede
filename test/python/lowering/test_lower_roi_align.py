"""RoiAlign vs onnx.reference: modes avg and max, both coordinate modes
(half_pixel, v16/v22's default, and output_half_pixel, v10's behaviour),
sampling_ratio 0 (adaptive: a run-time sample count) and 2, spatial_scale
0.5 and 1, rois partly or wholly outside the image and malformed ones,
f32 and f64, a dynamic number of rois run at two counts, a static model,
and out-of-range batch indices (a run-time error naming the node; a
compile-time one when they are constant)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.errors import VerificationError
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

ONNX_TYPE = {np.float32: T.FLOAT, np.float64: T.DOUBLE}
N, C, H, W = 2, 3, 6, 7
# (x1, y1, x2, y2) in input coordinates (before spatial_scale): inside, partly
# outside on every side, wholly outside, malformed (x2 < x1), tiny, the whole image
ROIS = [[0, 0, 3, 3], [1, 1.5, 9, 4], [-2, -3, 2, 8], [5, 5, 5.2, 5.1], [6, 6, 1, 1],
        [-9, -9, -4, -5], [4.5, 2.25, 16, 13], [0, 0, 7, 6], [12, 10, 20, 18]]
BATCH = [0, 1, 1, 0, 1, 0, 1, 0, 1]
# (sampling_ratio, spatial_scale, output_height, output_width)
VARIANTS = [(0, 1.0, 2, 3), (2, 0.5, 3, 2), (0, 0.5, 1, 1), (2, 1.0, 2, 2)]


def _nodes(opset, mode):
    cms = [None] if opset == 10 else ["half_pixel", "output_half_pixel"]
    nodes = []
    for cm in cms:
        for k, (sr, scale, oh, ow) in enumerate(VARIANTS):
            kw = {} if cm is None else {"coordinate_transformation_mode": cm}
            nodes.append(h.make_node("RoiAlign", ["x", "rois", "bi"], [f"y{len(nodes)}"],
                                     name=f"ra{len(nodes)}", mode=mode, sampling_ratio=sr,
                                     spatial_scale=scale, output_height=oh, output_width=ow,
                                     **kw))
    return nodes


def _model(nodes, dtype, opset, rois_dim="R", bi_init=None):
    et = ONNX_TYPE[dtype]
    ins = [h.make_tensor_value_info("x", et, [N, C, H, W]),
           h.make_tensor_value_info("rois", et, [rois_dim, 4])]
    inits = []
    if bi_init is None:
        ins.append(h.make_tensor_value_info("bi", T.INT64, [rois_dim]))
    else:
        inits.append(nh.from_array(np.array(bi_init, np.int64), "bi"))
    outs = [h.make_tensor_value_info(n.output[0], et, None) for n in nodes]
    m = h.make_model(h.make_graph(nodes, "g", ins, outs, inits),
                     opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def _reference(m, feeds):
    """onnx.reference; a v10 model runs as v16 with 'output_half_pixel' (v10's
    behaviour: onnx.reference would default to v16's 'half_pixel')."""
    if m.opset_import[0].version == 10:
        m2 = type(m)()
        m2.CopyFrom(m)
        m2.opset_import[0].version = 16
        for n in m2.graph.node:
            n.attribute.append(h.make_attribute("coordinate_transformation_mode",
                                                "output_half_pixel"))
        m = m2
    return ReferenceEvaluator(m).run(None, feeds)


def _inputs(dtype, count, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W)).astype(dtype)
    idx = np.arange(count) % len(ROIS)
    rois = np.array(ROIS, dtype)[idx]
    bi = np.array(BATCH, np.int64)[idx]
    return x, rois, bi


def _check(got, want, dtype):
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype)
        np.testing.assert_allclose(g, w, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("opset", [10, 16, 22])
def test_roi_align_vs_reference(tmp_path, opset, mode, dtype):
    """Every coordinate mode x sampling_ratio x spatial_scale in one model,
    the number of rois dynamic and run at two counts."""
    m = _model(_nodes(opset, mode), dtype, opset)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    for count in (len(ROIS), 3):
        x, rois, bi = _inputs(dtype, count, seed=count)
        got = sess.run([x, rois, bi])
        want = _reference(m, {"x": x, "rois": rois, "bi": bi})
        assert got[0].shape[0] == count
        _check(got, want, dtype)
        # the values are not trivially 0: most bins have samples inside
        assert np.count_nonzero(got[0]) > got[0].size // 2


def test_v10_is_output_half_pixel_as_onnxruntime(tmp_path):
    """v10 has no coordinate_transformation_mode: it behaves as
    'output_half_pixel' (onnxruntime), which differs from 'half_pixel'."""
    m = _model(_nodes(10, "avg"), np.float32, 10)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    x, rois, bi = _inputs(np.float32, len(ROIS))
    got = sess.run([x, rois, bi])
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x, "rois": rois, "bi": bi})
    _check(got, want, np.float32)
    m16 = _model(_nodes(16, "avg")[:4], np.float32, 16)      # half_pixel
    half = ReferenceEvaluator(m16).run(None, {"x": x, "rois": rois, "bi": bi})
    assert not np.allclose(got[0], half[0])


def test_static_shapes_and_opt_level(tmp_path):
    nodes = _nodes(22, "avg")[:2] + _nodes(22, "max")[5:6]
    for k, n in enumerate(nodes):
        n.output[0], n.name = f"y{k}", f"ra{k}"
    m = _model(nodes, np.float32, 22, rois_dim=len(ROIS))
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3))
    x, rois, bi = _inputs(np.float32, len(ROIS))
    _check(sess.run([x, rois, bi]), _reference(m, {"x": x, "rois": rois, "bi": bi}), np.float32)


@pytest.mark.parametrize("bad", [2, -1, 1 << 40])
def test_batch_index_out_of_range(tmp_path, bad):
    m = _model(_nodes(16, "avg")[:1], np.float32, 16)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    x, rois, bi = _inputs(np.float32, 4)
    sess.run([x, rois, bi])             # in range: runs
    bi[2] = bad
    with pytest.raises(RuntimeInputError) as e:
        sess.run([x, rois, bi])
    msg = str(e.value)
    assert "'ra0'" in msg and "RoiAlign" in msg and "batch index" in msg, msg
    assert f"{bad}" in msg and "[0, 1]" in msg, msg


def test_rois_and_batch_indices_counts_differ(tmp_path):
    m = _model(_nodes(22, "max")[:1], np.float32, 22)
    m.graph.input[2].type.tensor_type.shape.dim[0].dim_param = "B"
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    x, rois, bi = _inputs(np.float32, 4)
    with pytest.raises(RuntimeInputError, match="'ra0'.*4 rois but batch_indices has 3"):
        sess.run([x, rois, bi[:3]])


def test_constant_batch_index_out_of_range_at_compile_time(tmp_path):
    m = _model(_nodes(22, "avg")[:1], np.float32, 22, rois_dim=2, bi_init=[0, 5])
    with pytest.raises(Exception, match=r"'ra0'.*batch index 5 is out of range \[0, 1\]"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


def test_verifier_refuses_a_bad_mode(tmp_path):
    nodes = _nodes(16, "avg")[:1]
    (attr,) = [a for a in nodes[0].attribute if a.name == "mode"]
    attr.s = b"median"
    with pytest.raises(VerificationError, match="'ra0'.*'mode' = 'median'"):
        onnx_mlir_py.compile(_model(nodes, np.float32, 16), tmp_path / "m.so")
