"""The generated C entry wrapper of a model ``.so`` (onnx-mlir's entry ABI).

``run_main_graph(OMTensorList *)`` checks the inputs against the signature,
builds one memref descriptor per input, calls
``_mlir_ciface_main_graph(results*, in0*, in1*, ...)`` and wraps the returned
descriptors into an owning ``OMTensorList`` (``om_wrap_results``). The
signature strings and entry-point table are static data.
"""
from __future__ import annotations

import json
from pathlib import Path

from onnx_mlir_py.codegen.signature import EntrySignature, TensorSpec

RUNTIME_DIR = Path(__file__).resolve().parent.parent / "runtime" / "c"
RUNTIME_SOURCES = ("om_runtime.c", "om_cpu.c", "om_seq.c", "om_string.c")
# linked only into libraries whose code calls it (ImageDecoder)
IMAGE_RUNTIME_SOURCE = "om_image.c"
IMAGE_DECODE_FN = "om_image_decode"


def _c_string(s: str) -> str:
    """A C string literal for ``s`` (JSON escaping is a C-compatible subset
    except for non-ASCII, which json.dumps escapes as \\uXXXX - avoid that)."""
    out = ['"']
    for ch in s.encode("utf-8"):
        c = chr(ch)
        if c in '"\\':
            out.append("\\" + c)
        elif 32 <= ch < 127 and c != "?":
            out.append(c)
        else:
            out.append(f"\\{ch:03o}")
    out.append('"')
    return "".join(out)


def _json_sig(specs: tuple[TensorSpec, ...]) -> str:
    return json.dumps([t.to_json_obj() for t in specs], ensure_ascii=False)


def _spec_table(prefix: str, specs: tuple[TensorSpec, ...]) -> list[str]:
    lines = []
    for i, t in enumerate(specs):
        dims = ", ".join(str(d) for d in t.dims) or "0"
        lines.append(f"static const int64_t {prefix}_dims{i}[] = {{{dims}}};")
    lines.append(f"static const om_arg_spec {prefix}_specs[] = {{")
    for i, t in enumerate(specs):
        lines.append(f"  {{{_c_string(t.name)}, (OM_DATA_TYPE){t.type_code}, {t.c_rank}, "
                     f"{prefix}_dims{i}, {t.kind_code}}},")
    if not specs:
        lines.append("  {0, ONNX_TYPE_UNDEFINED, 0, 0, 0},")
    lines.append("};")
    return lines


def _check_table(checks: tuple[str, ...]) -> list[str]:
    """The messages of the model's run-time checks, with ``{0}``..``{3}`` for
    the values om_check_failed prints."""
    lines = ["const char *const om_check_messages[] = {"]
    lines += [f"  {_c_string(m)}," for m in checks]
    lines += ["  0,", "};", f"const int64_t om_check_count = {len(checks)};"]
    return lines


def _alloc_site_table(sites: tuple[str, ...]) -> list[str]:
    """The nodes named by allocation failures (om_alloc_site ids)."""
    return ["const char *const om_alloc_sites[] = {", *(f"  {_c_string(m)}," for m in sites),
            "  0,", "};", f"const int64_t om_alloc_site_count = {len(sites)};"]


def profile_event_json(e: dict) -> str:
    """The ``"name"`` and ``"args"`` members of a node event in onnxruntime's
    profile format (``<node>_kernel_time``, ``op_name``, ``provider``,
    ``node_index``) for an event of ``passes/instrument.resolve_profile``;
    a kernel that took over other nodes' code lists them in
    ``fused_nodes`` / ``fused_op_names``."""
    others = [(n, t) for n, t in zip(e["nodes"], e["op_types"]) if n != e["name"]]
    args = {"op_name": e["op_type"], "provider": "CPUExecutionProvider",
            "node_index": str(e["node_index"]),
            "fused_nodes": [n for n, _ in others], "fused_op_names": [t for _, t in others]}
    return json.dumps({"name": f"{e['name']}_kernel_time", "args": args},
                      separators=(",", ":"))[1:-1]


def _profile_table(events: list[dict]) -> list[str]:
    """The trace records of the events of a --profile build (om_profile.c)."""
    return ["const char *const om_prof_events[] = {",
            *(f"  {_c_string(profile_event_json(e))}," for e in events),
            "  0,", "};", f"const int64_t om_prof_event_count = {len(events)};"]


def _tie_table(sig: EntrySignature) -> list[str]:
    """Pairs of input dims with the same ONNX dim_param (checked equal by
    om_check_dim_ties before the model runs)."""
    ties = sig.dim_ties()
    lines = ["static const om_dim_tie om_in_ties[] = {"]
    lines += [f"  {{{i}, {k}, {j}, {l}, {_c_string(name)}}}," for i, k, j, l, name in ties]
    if not ties:
        lines.append("  {0, 0, 0, 0, 0},")
    lines.append("};")
    return lines


def _target_table(target: str) -> list[str]:
    """The target record of ``codegen.link.target_json``: checked by om_cpu.c."""
    t = json.loads(target)
    return [f"const char om_target_cpu[] = {_c_string(t['cpu'])};",
            f"const char om_target_info[] = {_c_string(target)};",
            "const char *const om_target_features[] = {"
            + "".join(f"{_c_string(f)}, " for f in t["features"]) + "0};"]


def variant_symbol(entry: str, level: str) -> str:
    """The C-interface entry of a library's ``level`` variant (codegen/fat.py)."""
    return f"_mlir_ciface_{entry}__{level.replace('-', '_')}"


def _variant_table(entry: str, variants, ret: str, params: str) -> list[str]:
    """The variants of a library with ISA variants (``(level, features)``,
    lowest first), their entries, and ``omTargetVariant()``: the level this
    process runs (om_pick_variant in om_cpu.c), NULL with the last error set
    when ONNX_MLIR_PY_FORCE_ISA names none it can run."""
    lines = [f"extern {ret}{variant_symbol(entry, lv)}({params});" for lv, _ in variants]
    for i, (_, feats) in enumerate(variants):
        lines.append(f"static const char *const om_var_features{i}[] = {{"
                     + "".join(f"{_c_string(f)}, " for f in feats) + "0};")
    lines.append("static const om_variant om_variants[] = {"
                 + ", ".join(f"{{{_c_string(lv)}, om_var_features{i}}}"
                             for i, (lv, _) in enumerate(variants)) + "};")
    lines.append(f"static {ret}(*const om_variant_fns[])({params}) = {{"
                 + ", ".join(variant_symbol(entry, lv) for lv, _ in variants) + "};")
    lines += ["const char *omTargetVariant(void) {",
              f'  int v = om_pick_variant(om_variants, {len(variants)}, "omTargetVariant");',
              "  return v < 0 ? 0 : om_variants[v].name;", "}"]
    return lines


def generate_entry_c(sig: EntrySignature, target: str = '{"cpu": "", "features": []}',
                     alloc_sites: tuple[str, ...] = (),
                     profile_events: list[dict] | None = None,
                     variants: tuple[tuple[str, tuple[str, ...]], ...] | None = None) -> str:
    """C source of the entry wrapper for ``sig`` (one entry point); ``target``
    is the JSON of ``codegen.link.target_json`` (the CPU features checked
    before the model code runs); ``alloc_sites`` the nodes an allocation
    failure names (``codegen.alloc_sites``); ``profile_events`` (a --profile
    build: ``passes/instrument.profile_events``) the node events, and the
    entry call is then timed as a whole too. ``variants``: a library with
    ISA variants (codegen/fat.py): ``(level, features)`` lowest first; the
    call goes to the one om_pick_variant chooses."""
    entry = sig.entry
    nin, nout = len(sig.inputs), len(sig.outputs)
    words = sum(t.words for t in sig.outputs)
    # one sequence / optional result is returned by value, not through the
    # results pointer (MLIR's C interface passes only memref results that way)
    by_value = nout == 1 and sig.outputs[0].kind != "tensor"
    params = ", ".join(["void *"] * ((0 if by_value else 1) + nin)) or "void"
    lines = [
        "/* Generated by onnx_mlir_py.codegen.cwrapper - do not edit. */",
        "#include <errno.h>",
        "#include <setjmp.h>",
        "#include <stdint.h>",
        '#include "OnnxMlirRuntime.h"',
        '#include "om_entry.h"',
        "",
        *([f"extern {'void *' if by_value else 'void '}_mlir_ciface_{entry}({params});"]
          if variants is None else
          _variant_table(entry, variants, 'void *' if by_value else 'void ', params)),
        "",
        *_spec_table("om_in", sig.inputs),
        *_spec_table("om_out", sig.outputs),
        f"static const char om_in_sig[] = {_c_string(_json_sig(sig.inputs))};",
        f"static const char om_out_sig[] = {_c_string(_json_sig(sig.outputs))};",
        f'static const char *om_entry_points[] = {{"run_{entry}", 0}};',
        *_check_table(sig.checks),
        *_alloc_site_table(alloc_sites),
        *_tie_table(sig),
        *_target_table(target),
        *(_profile_table(profile_events) if profile_events is not None else []),
        "",
        f"{'static OMTensorList *om_untimed_' if profile_events is not None else 'OMTensorList *'}"
        f"run_{entry}(OMTensorList *inputs) {{",
        "  om_clear_error();",
        f'  if (!om_check_target_cpu("run_{entry}")) return 0;',
        f'  if (!om_check_inputs(inputs, om_in_specs, {nin}, "run_{entry}")) return 0;',
    ]
    if variants is not None:
        lines.append(f'  int om_v = om_pick_variant(om_variants, {len(variants)}, "run_{entry}");')
        lines.append("  if (om_v < 0) return 0;")
    call = f"_mlir_ciface_{entry}" if variants is None else "om_variant_fns[om_v]"
    if sig.dim_ties():
        lines.append(f"  if (!om_check_dim_ties(inputs, om_in_specs, om_in_ties, "
                     f'{len(sig.dim_ties())}, "run_{entry}")) return 0;')
    for i, t in enumerate(sig.inputs):
        if t.kind == "tensor":
            lines.append(f"  int64_t in{i}[{3 + 2 * t.rank}];")
            lines.append(f"  om_fill_desc(in{i}, omTensorListGetOmtByIndex(inputs, {i}));")
        else:
            lines.append(f"  void *in{i};")
    args = ", ".join(([] if by_value else ["res"]) + [f"in{i}" for i in range(nin)])
    lines += [
        f"  int64_t res[{words}];",
        "  om_run_begin();",
        "  jmp_buf on_check_failure;",
        "  if (setjmp(on_check_failure)) {   /* a run-time check failed: message set */",
        "    om_check_target = 0;",
        "    om_run_end();",
        "    om_seq_run_end();",
        "    return 0;",
        "  }",
        "  om_check_target = &on_check_failure;",
        *(f"  in{i} = om_seq_from_input(omTensorListGetOmtByIndex(inputs, {i}), &om_in_specs[{i}]);"
          for i, t in enumerate(sig.inputs) if t.kind != "tensor"),
        f"  {'res[0] = (int64_t)(intptr_t)' if by_value else ''}{call}({args});",
        "  om_check_target = 0;",
        "  om_run_end();",
        f"  OMTensorList *outs = om_wrap_results(res, om_out_specs, {nout}, inputs);",
        "  om_seq_run_end();",
        "  return outs;",
        "}",
        "",
    ]
    if profile_events is not None:
        lines += [
            f"OMTensorList *run_{entry}(OMTensorList *inputs) {{",
            "  om_prof_run_begin();",
            f"  OMTensorList *out = om_untimed_run_{entry}(inputs);",
            "  om_prof_run_end();",
            "  return out;",
            "}",
            "",
        ]
    lines += [
        "static int om_is_entry(const char *e) {",
        "  const char *want = om_entry_points[0];",
        "  if (!e) return 0;",
        "  while (*e && *e == *want) { ++e; ++want; }",
        "  return *e == *want;",
        "}",
        "",
        "const char *omInputSignature(const char *entry_point) {",
        "  if (!om_is_entry(entry_point)) {",
        '    om_set_error(EINVAL, "unknown entry point \'%s\'", entry_point ? entry_point : "(null)");',
        "    return 0;",
        "  }",
        "  return om_in_sig;",
        "}",
        "",
        "const char *omOutputSignature(const char *entry_point) {",
        "  if (!om_is_entry(entry_point)) {",
        '    om_set_error(EINVAL, "unknown entry point \'%s\'", entry_point ? entry_point : "(null)");',
        "    return 0;",
        "  }",
        "  return om_out_sig;",
        "}",
        "",
        "const char **omQueryEntryPoints(int64_t *num_entry_points) {",
        "  if (num_entry_points) *num_entry_points = 1;",
        "  return om_entry_points;",
        "}",
        "",
    ]
    return "\n".join(lines)
