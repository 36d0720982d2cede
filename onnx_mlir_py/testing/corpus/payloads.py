"""Bad initializer payloads and external data: raw_data whose size does not
match the dims, data in the wrong field, unknown dtypes, negative or huge
dims, EXTERNAL tensors with missing or nonsensical fields, and external-data
paths outside the model's folder (absolute, ``..``, a symlink), a missing
file, offsets and lengths past the end of the file. The files outside the
folder exist and hold valid data: reading them would make the compile
succeed, so the case proves they are refused before reading."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

from onnx_mlir_py.testing.corpus.case import F, Case, Run, model

GOOD = np.arange(6, dtype=np.float32).reshape(2, 3)
GOOD_BYTES = GOOD.tobytes()


def _add_model(w: onnx.TensorProto, opset: int = 17) -> bytes:
    """y = x + w, w an initializer (any payload)."""
    node = h.make_node("Add", ["x", w.name], ["y"], name="add")
    return model([node], [("x", F, [2, 3])], [("y", F, None)], [(w.name, w)],
                 opset=opset).SerializeToString()


def _tensor(dims=(2, 3), dtype=F, name="w", **fields) -> onnx.TensorProto:
    t = onnx.TensorProto(name=name, data_type=dtype)
    t.dims.extend(dims)
    for k, v in fields.items():
        if isinstance(v, (list, tuple)):
            getattr(t, k).extend(v)
        else:
            setattr(t, k, v)
    return t


def _external(location=None, offset=None, length=None, dims=(2, 3), **extra) -> onnx.TensorProto:
    t = _tensor(dims)
    t.data_location = T.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length), *extra.items()):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def _payload_cases():
    yield "raw_data_too_short", _tensor(raw_data=GOOD_BYTES[:20])
    yield "raw_data_too_long", _tensor(raw_data=GOOD_BYTES + b"\0" * 4)
    yield "raw_data_odd_size", _tensor(raw_data=GOOD_BYTES[:-1])
    yield "float_data_too_few", _tensor(float_data=[1.0, 2.0])
    yield "float_data_too_many", _tensor(float_data=[1.0] * 7)
    yield "no_data_at_all", _tensor()
    yield "wrong_field_int64_data", _tensor(int64_data=list(range(6)))
    yield "wrong_field_double_data", _tensor(double_data=[1.0] * 6)
    yield "raw_and_float_data", _tensor(raw_data=GOOD_BYTES, float_data=[1.0] * 6)
    yield "dtype_undefined", _tensor(dtype=0, raw_data=GOOD_BYTES)
    yield "dtype_unknown_999", _tensor(dtype=999, raw_data=GOOD_BYTES)
    yield "dtype_string", _tensor(dtype=T.STRING, string_data=[b"a"] * 6)
    yield "dtype_double_for_float_add", _tensor(dtype=T.DOUBLE, double_data=[1.0] * 6)
    yield "dims_negative", _tensor(dims=(-2, -3), raw_data=GOOD_BYTES)
    yield "dims_huge_no_data", _tensor(dims=(2 ** 40, 3))
    yield "dims_huge_product_overflow", _tensor(dims=(2 ** 62, 2 ** 62), raw_data=GOOD_BYTES)
    yield "dims_zero_with_data", _tensor(dims=(0, 3), raw_data=GOOD_BYTES)
    yield "float16_odd_raw_bytes", _tensor(dtype=T.FLOAT16, raw_data=b"\0" * 11)
    yield "external_no_location", _external()
    yield "external_empty_location", _external(location="")
    yield "external_offset_not_a_number", _external(location="w.bin", offset="abc")
    yield "external_length_negative", _external(location="w.bin", length=-24)
    yield "external_offset_negative", _external(location="w.bin", offset=-8)
    yield "external_unknown_key", _external(location="w.bin", colour="blue")
    yield "external_and_raw_data", _with(_external(location="w.bin"), raw_data=GOOD_BYTES)


def _with(t, **fields):
    for k, v in fields.items():
        setattr(t, k, v)
    return t


def _path_cases():
    """(name, tensor, files) — files hold valid data wherever they are."""
    here = {"w.bin": GOOD_BYTES}
    yield "absolute_path", _external(location="/etc/hostname"), here
    yield "absolute_path_to_real_data", _external(location="/tmp/../tmp"), here
    yield "dotdot", _external(location="../w.bin"), {"../w.bin": GOOD_BYTES}
    yield "dotdot_nested", _external(location="sub/../../w.bin"), {"../w.bin": GOOD_BYTES}
    yield "dotdot_deep", _external(location="../../../../../../etc/hostname"), here
    yield "symlink_outside", _external(location="link.bin"), \
        {"../w.bin": GOOD_BYTES, "link.bin": ("symlink", "../w.bin")}
    yield "symlink_dir_outside", _external(location="d/w.bin"), \
        {"../o/w.bin": GOOD_BYTES, "d": ("symlink", "../o")}
    yield "missing_file", _external(location="nothere.bin"), here
    yield "location_is_folder", _external(location="."), here
    yield "location_is_subfolder", _external(location="sub"), {"sub/x.bin": GOOD_BYTES}
    yield "offset_past_end", _external(location="w.bin", offset=4096), here
    yield "length_past_end", _external(location="w.bin", length=4096), here
    yield "offset_plus_length_past_end", _external(location="w.bin", offset=8, length=24), here
    yield "length_not_matching_dims", _external(location="w.bin", length=16), here
    yield "file_shorter_than_dims", _external(location="w.bin"), {"w.bin": GOOD_BYTES[:12]}
    yield "file_longer_than_dims", _external(location="w.bin"), {"w.bin": GOOD_BYTES * 2}
    yield "backslash_dotdot", _external(location="..\\w.bin"), {"../w.bin": GOOD_BYTES}
    yield "nul_in_location", _external(location="w.bin\0.txt"), here


# the dtype is a valid one, the Add node refuses it
# a valid tensor of the wrong type for Add: refused by Add's type check
# (string initializers are supported since the string tensor ABI)
MATCH = {"dtype_double_for_float_add": "'add'", "dtype_string": "'add'.*tensor\\(string\\)"}
# both raw_data and float_data: onnxruntime reads raw_data; the same answer or a refusal
CLEAN = {"raw_and_float_data"}


def cases() -> list[Case]:
    out = []
    x = np.ones((2, 3), np.float32)
    for name, t in _payload_cases():
        out.append(Case(f"payload/{name}", "payloads", _add_model(t), match=MATCH.get(name, "'w'"),
                        runs=[Run([x])], expect="clean" if name in CLEAN else "error",
                        files={"w.bin": GOOD_BYTES} if name.startswith("external") else {}))
    for name, t, files in _path_cases():
        out.append(Case(f"external/{name}", "external", _add_model(t), match="'w'",
                        files=files, runs=[Run([x])]))
    # valid external data (the control: it must compile and match onnxruntime)
    out.append(Case("external/valid_control", "external",
                    _add_model(_external(location="w.bin")), expect="ok",
                    files={"w.bin": GOOD_BYTES}, runs=[Run([x])]))
    out.append(Case("external/valid_offset_control", "external",
                    _add_model(_external(location="sub/w.bin", offset=8, length=24)),
                    expect="ok", files={"sub/w.bin": b"\0" * 8 + GOOD_BYTES}, runs=[Run([x])]))
    # the same payloads in a Constant node's value attribute
    for name, t in [("raw_data_too_short", _tensor(raw_data=GOOD_BYTES[:20])),
                    ("dtype_unknown_999", _tensor(dtype=999, raw_data=GOOD_BYTES)),
                    ("external_dotdot", _external(location="../w.bin"))]:
        node = h.make_node("Constant", [], ["c"], name="const", value=t)
        m = model([node, h.make_node("Add", ["x", "c"], ["y"], name="add")],
                  [("x", F, [2, 3])], [("y", F, None)])
        out.append(Case(f"payload/constant_{name}", "payloads", m.SerializeToString(),
                        match="'const'", files={"../w.bin": GOOD_BYTES}, runs=[Run([x])]))
    node = h.make_node("Constant", [], ["c"], name="const")
    m = model([node], [], [("c", F, None)])
    out.append(Case("payload/constant_without_value", "payloads", m.SerializeToString(),
                    match="'const'"))
    node = h.make_node("Constant", [], ["c"], name="const", value_float=1.0, value_int=2)
    m = model([node], [], [("c", F, None)])
    out.append(Case("payload/constant_two_values", "payloads", m.SerializeToString(),
                    match="'const'"))
    return out
