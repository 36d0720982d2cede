"""``SessionOptions.add_free_dimension_override_by_name`` / ``_by_denotation``:
the session compiles the model specialised to those dims.

As onnxruntime does, an override fixes the dims of the graph inputs whose
``dim_param`` is the name (case-sensitive), or whose ``denotation`` is the
denotation (case-insensitive, e.g. ``DATA_BATCH``); an override naming no dim
is ignored. The session compiles the model with those input dims set (the
other symbolic dims keep their names; declared dims downstream are left as
they are: a symbolic one is not stale): the compile cache key is the hash of
that specialised model (with the compile options), so each override has its
own library. ``get_inputs()`` reports the fixed dims, ``get_outputs()`` the
dims shape inference then computes, else the declared ones, as onnxruntime
does. A dim a name and a denotation both
fix to different values, or a static dim a denotation fixes to another
value, is an ``InvalidArgument``.
"""
from __future__ import annotations

from onnx_mlir_py.inference.errors import InvalidArgument


def check_override(what: str, key, value) -> tuple[str, int]:
    """(key, value) of an override; TypeError / ValueError naming it."""
    if not isinstance(key, str):
        raise TypeError(f"add_free_dimension_override_by_{what}: the {what} must be a str, got "
                        f"{type(key).__name__}")
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"add_free_dimension_override_by_{what}: the value of '{key}' must be "
                        f"an int, got {value!r}")
    if value < 1:
        raise ValueError(f"add_free_dimension_override_by_{what}: the value of '{key}' must be "
                         f">= 1 (a dim the library is compiled for), got {value}")
    return key, value


def specialise(model, by_name: dict[str, int], by_denotation: dict[str, int]) -> bool:
    """Apply the overrides to ``model`` (an ``onnx.ModelProto``, changed in
    place); True when a dim changed."""
    from onnx_mlir_py.importer.model import real_inputs
    denot = {k.lower(): v for k, v in by_denotation.items()}
    changed = False
    for vi in real_inputs(model.graph):
        if not (vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")):
            continue
        for k, d in enumerate(vi.type.tensor_type.shape.dim):
            named = by_name.get(d.dim_param) if d.HasField("dim_param") else None
            denoted = denot.get(d.denotation.lower()) if d.denotation else None
            if named is not None and denoted is not None and named != denoted:
                raise InvalidArgument(f"Conflicting free dimension overrides: input "
                                      f"'{vi.name}' dim {k} ('{d.dim_param}', denotation "
                                      f"{d.denotation}) is set to {named} by name and to "
                                      f"{denoted} by denotation")
            value = named if named is not None else denoted
            if value is None:
                continue
            if d.HasField("dim_value"):
                if d.dim_value != value:
                    raise InvalidArgument(f"Invalid free dimension override: the model has "
                                          f"input '{vi.name}' with a fixed dimension size "
                                          f"{d.dim_value} which does not equal the specified "
                                          f"override of {value}")
                continue
            d.dim_value = value
            changed = True
    return changed
