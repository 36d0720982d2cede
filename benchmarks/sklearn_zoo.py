"""Classic-ML models of the benchmark: scikit-learn models trained here on
generated data (fixed seeds) and exported by skl2onnx (ai.onnx.ml opset 3,
no ZipMap), timed on 10,000 rows.

    rf100_10k      RandomForestClassifier, 100 trees (sklearn defaults: full depth),
                   trained on 10,000 rows x 20 features, 2 classes
    gbdt100_10k    GradientBoostingRegressor, 100 trees of depth 5, 10,000 x 20

``build(name)`` trains and exports one; ``feeds(name)`` makes its 10,000
input rows. Requires scikit-learn and skl2onnx (the ``bench`` extra).
"""
from __future__ import annotations

import numpy as np
import onnx

MODELS = ("rf100_10k", "gbdt100_10k")
ROWS, FEATURES = 10_000, 20


def _data(name: str, seed: int = 0):
    from sklearn.datasets import make_classification, make_regression
    if name == "rf100_10k":
        x, y = make_classification(ROWS, FEATURES, n_informative=10, random_state=seed)
    else:
        x, y = make_regression(ROWS, FEATURES, n_informative=10, random_state=seed)
    return x.astype(np.float32), y


def build(name: str) -> onnx.ModelProto:
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
    from skl2onnx import to_onnx
    x, y = _data(name)
    if name == "rf100_10k":
        m = RandomForestClassifier(n_estimators=100, random_state=0).fit(x, y)
        return to_onnx(m, x[:1], options={"zipmap": False},
                       target_opset={"": 17, "ai.onnx.ml": 3})
    if name == "gbdt100_10k":
        m = GradientBoostingRegressor(n_estimators=100, max_depth=5, random_state=0).fit(x, y)
        return to_onnx(m, x[:1], target_opset={"": 17, "ai.onnx.ml": 3})
    raise KeyError(name)


def feeds(name: str, seed: int = 1) -> dict[str, np.ndarray]:
    """10,000 rows from the training distribution (another seed)."""
    return {"X": _data(name, seed)[0]}
