"""One library, several ISA variants of the model code (``--march
x86-64-v3+x86-64-v4``), chosen once per process by the CPU it runs on.

The compiler runs the target-dependent stages (the -O3 kernels of
``passes/optimize``, which size vectors and register tiles by the level, and
codegen) once per level on a clone of the lowered module, and hands the
variants here. Each becomes an object of its own, compiled with
``-mcpu=<level>``, whose C-interface entry is renamed
``_mlir_ciface_main_graph__x86_64_v4`` (cwrapper.variant_symbol) and whose
every other definition is made internal (LLVM's internalize pass, before
``opt``), so the variants' kernels and outlined loops cannot clash. One
:class:`~.weights.WeightStore` takes every variant's large constants: the
weights both use with the same bytes (all but those packed differently per
level) are one copy in the library. The allocation-site table is shared
(each variant extends the one before); the run-time check messages come
from lowering, before the variants part, so they are one table.

The entry wrapper (cwrapper.generate_entry_c ``variants``) calls the entry
of the variant ``om_pick_variant`` (runtime/c/om_cpu.c) chooses: the
highest level whose features the CPU has (``__builtin_cpu_supports``), or
the one ``ONNX_MLIR_PY_FORCE_ISA`` names. The library records the lowest
level's features as its requirement (checked at load and on each call, as
for a library of one level), plus the list of variants in ``omTargetInfo()``;
``omTargetVariant()`` says which one this process runs. A C caller sees the
same entry points and signatures as for any library.
"""
from __future__ import annotations

import json

import mlir.ir as ir

from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.isa import LEVELS
from onnx_mlir_py.options import Options
from onnx_mlir_py.timings import Timings
from onnx_mlir_py.codegen.alloc_sites import alloc_sites
from onnx_mlir_py.codegen.cwrapper import generate_entry_c, variant_symbol
from onnx_mlir_py.codegen.link import link_library, runtime_sources, temp_dir, to_object
from onnx_mlir_py.codegen.llvm import emit_mlir_llvm
from onnx_mlir_py.codegen.signature import ENTRY_NAME, extract_signature
from onnx_mlir_py.codegen.weights import WeightStore


def fat_target_json(levels: tuple[str, ...]) -> str:
    """The target record: the lowest level's features are required."""
    return json.dumps({"cpu": "+".join(levels), "features": list(LEVELS[levels[0]]),
                       "variants": list(levels)})


def _rename_entry(llvm_mod: ir.Module, level: str) -> str:
    """Give the LLVM-dialect module's C-interface entry its variant name."""
    old, new = f"_mlir_ciface_{ENTRY_NAME}", variant_symbol(ENTRY_NAME, level)
    with llvm_mod.context:
        for op in llvm_mod.body.operations:
            op = op.operation
            if op.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value == old:
                ir.SymbolTable.replace_all_symbol_uses(old, new, llvm_mod.operation)
                op.attributes["sym_name"] = ir.StringAttr.get(new)
                return new
    raise CompileError(f"codegen: no {old} in the lowered module")     # pragma: no cover


def to_fat_library(variants: list[tuple[str, ir.Module]], path, opts: Options,
                   timings: Timings, keep_temps: str | None = None) -> str:
    """Link the tensor-level modules of ``variants`` (``(level, module)``,
    lowest level first, each already through the -O3 stages for its level)
    into the one shared object ``path``."""
    levels = tuple(lv for lv, _ in variants)
    store = WeightStore()
    sites: tuple[str, ...] = ()
    sig = None
    lowered = []
    with timings.phase("codegen: mlir"):
        for level, module in variants:
            s = extract_signature(module, ENTRY_NAME)
            if sig is not None and s != sig:      # pragma: no cover - same front end
                raise CompileError(f"codegen: the {level} variant's signature differs")
            sig = s
            llvm_mod = emit_mlir_llvm(module, weights=store, alloc_seed=sites)
            sites = alloc_sites(llvm_mod)
            lowered.append((level, llvm_mod, _rename_entry(llvm_mod, level)))
    with temp_dir(keep_temps) as tmp:
        objects = []
        for level, llvm_mod, public in lowered:
            obj = tmp / f"model_{level}.o"
            to_object(llvm_mod, obj, Options(opt_level=opts.opt_level, mcpu=level),
                      timings, public=public)
            objects.append(obj)
        entry_c = generate_entry_c(sig, fat_target_json(levels), sites, None,
                                   variants=tuple((lv, LEVELS[lv]) for lv in levels))
        return link_library(path, objects, entry_c, store, tmp, timings,
                            runtime_sources(False, [m for _, m, _ in lowered]))
