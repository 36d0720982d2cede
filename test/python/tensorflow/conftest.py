"""TensorFlow frontend tests: they need the ``[tf]`` extra; without it they
are skipped with that reason (and test/python/conftest.py says so in the
run's header and summary). The saved models are built once per worker."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def zoo(tmp_path_factory):
    """{model name: tf_models.Saved} for the four tiny models, each saved in
    the four formats, with inputs and TensorFlow's outputs."""
    import tf_models
    return tf_models.build_all(tmp_path_factory.mktemp("tf_zoo"))
