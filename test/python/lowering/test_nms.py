"""NonMaxSuppression: compiled once with dynamic batches / classes / boxes
and run-time max_output_boxes_per_class / iou_threshold / score_threshold,
compared exactly with onnxruntime (its selection order: per batch, per
class, by descending score, lower box index first on ties)."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_rejects, check_shapes, model

IN = {"boxes": (T.FLOAT, ["b", "n", 4]), "scores": (T.FLOAT, ["b", "c", "n"]),
      "max_out": (T.INT64, [1]), "iou": (T.FLOAT, [1]), "score_thr": (T.FLOAT, [1])}


def nms_model(names=("boxes", "scores", "max_out", "iou", "score_thr"), opset=11, **attrs):
    return model([h.make_node("NonMaxSuppression", list(names), ["y"], **attrs)],
                 [(n, *IN[n]) for n in names if n], [("y", T.INT64, None)], opset=opset)


def _boxes(rng, b, n, center):
    c = rng.uniform(0, 10, (b, n, 2))
    wh = rng.uniform(0.5, 5, (b, n, 2))
    if center:
        return np.concatenate([c, wh], -1).astype(np.float32)
    lo, hi = c - wh / 2, c + wh / 2
    flip = rng.random((b, n, 1)) < 0.3  # corners given in either order
    y1x1 = np.where(flip, hi, lo)
    y2x2 = np.where(flip, lo, hi)
    return np.concatenate([y1x1, y2x2], -1).astype(np.float32)


def _feeds(rng, b, c, n, max_out, iou, thr, center):
    return {"boxes": _boxes(rng, b, n, center),
            # few distinct scores: many ties
            "scores": (rng.integers(0, 6, (b, c, n)) / 5).astype(np.float32),
            "max_out": np.array([max_out], np.int64),
            "iou": np.array([iou], np.float32), "score_thr": np.array([thr], np.float32)}


@pytest.mark.parametrize("center", [0, 1])
def test_nms_run_time_shapes_and_thresholds(tmp_path, center):
    rng = np.random.default_rng(center)
    cases = [(1, 1, 6, 3, 0.5, 0.0), (2, 3, 10, 5, 0.3, 0.2), (3, 1, 50, 100, 0.5, -1.0),
             (1, 2, 0, 10, 0.5, 0.0),             # no boxes
             (2, 2, 8, 4, 0.5, 2.0),              # no box above the score threshold
             (1, 1, 5, 0, 0.5, 0.0),              # max_output 0
             (1, 2, 5, -3, 0.5, 0.0),             # negative max_output counts as 0
             (2, 2, 20, 2 ** 63 - 1, 0.0, 0.1),   # any overlap suppresses
             (1, 3, 12, 50, 1.0, 0.0)]            # nothing suppressed
    feeds = [_feeds(rng, *c, center) for c in cases]
    same = _feeds(rng, 1, 2, 7, 10, 0.5, 0.0, center)
    same["boxes"][:] = same["boxes"][:, :1]      # identical boxes, tied scores
    same["scores"][:] = 0.5
    feeds.append(same)
    check_shapes(tmp_path, nms_model(center_point_box=center), feeds, engine="onnxruntime",
                 opt_level=3 if center else 0)


@pytest.mark.parametrize("names", [
    ("boxes", "scores"),                          # max_output absent: nothing selected
    ("boxes", "scores", "max_out"),               # iou_threshold 0, no score filter
    ("boxes", "scores", "max_out", "iou"),
    ("boxes", "scores", "max_out", "", "score_thr")])
def test_nms_optional_inputs(tmp_path, names):
    rng = np.random.default_rng(7)
    feeds = [{k: v for k, v in _feeds(rng, *c, 0).items() if k in names}
             for c in ((1, 1, 6, 3, 0.5, 0.3), (2, 2, 9, 4, 0.4, 0.5), (1, 1, 0, 2, 0.5, 0.0))]
    check_shapes(tmp_path, nms_model(names), feeds, engine="onnxruntime")


def test_nms_opset10_degenerate_boxes(tmp_path):
    """Zero and negative widths/heights (center format), zero-area corners."""
    rng = np.random.default_rng(9)
    feeds = []
    for n in (4, 9, 16):
        f = _feeds(rng, 1, 2, n, 10, 0.2, 0.0, 1)
        f["boxes"][0, ::3, 2] = 0.0
        f["boxes"][0, 1::3, 3] *= -1
        feeds.append(f)
    check_shapes(tmp_path, nms_model(opset=10, center_point_box=1), feeds,
                 engine="onnxruntime")
    f = _feeds(rng, 1, 1, 6, 10, 0.0, 0.0, 0)
    f["boxes"][0, :3, 2] = f["boxes"][0, :3, 0]  # y1 == y2
    check_shapes(tmp_path, nms_model(opset=10), [f, _feeds(rng, 2, 1, 5, 3, 0.1, 0.0, 0),
                                                 _feeds(rng, 1, 3, 11, 3, 0.6, 0.1, 0)],
                 engine="onnxruntime")


def test_nms_rejects_bad_inputs(tmp_path):
    rng = np.random.default_rng(11)
    bad_iou = _feeds(rng, 1, 1, 4, 2, 1.5, 0.0, 0)
    check_rejects(tmp_path, nms_model(), [bad_iou], match="iou_threshold must be in")
    fewer = _feeds(rng, 1, 1, 4, 2, 0.5, 0.0, 0)
    fewer["scores"] = fewer["scores"][:, :, :3]
    batches = _feeds(rng, 2, 1, 4, 2, 0.5, 0.0, 0)
    batches["scores"] = batches["scores"][:1]
    m = model([h.make_node("NonMaxSuppression", ["boxes", "scores", "max_out"], ["y"])],
              [("boxes", T.FLOAT, ["b", "n", 4]), ("scores", T.FLOAT, ["b2", "c", "k"]),
               ("max_out", T.INT64, [1])], [("y", T.INT64, None)], opset=11)
    for f, match in ((fewer, "boxes have 4 boxes per batch but scores have 3"),
                     (batches, "boxes have 2 batches but scores have 1")):
        check_rejects(tmp_path, m, [{k: f[k] for k in ("boxes", "scores", "max_out")}], match)
