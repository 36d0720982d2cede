"""The compile options, validated once, where they enter the compiler.

Every entry point (the CLI, ``onnx_mlir_py.compile``, the codegen API)
builds one :class:`Options`; the pipeline stages then trust it.
"""
from __future__ import annotations

from dataclasses import dataclass

from onnx_mlir_py.errors import CompileError

# The stop points of the pipeline (compiler.run_pipeline), in order. EmitONNX:
# the ONNX model converted from a TensorFlow input (frontends/tensorflow).
EMIT_LEVELS = ("EmitONNX", "EmitONNXBasic", "EmitONNXIR", "EmitMLIR", "EmitLLVMIR", "EmitObj", "EmitLib")
OPT_LEVELS = (0, 1, 2, 3)
DEFAULT_OPT_LEVEL = 3
# --precision: of the f32 contractions' inputs (passes/onnx_to_linalg/bf16.py)
PRECISIONS = ("fp32", "bf16")


@dataclass(frozen=True)
class Options:
    """``emit``: where the pipeline stops (one of :data:`EMIT_LEVELS`).
    ``opt_level``: 0..3 (-O2 adds the ONNX graph rewrites, -O3 the tensor
    kernels of passes/optimize). ``mcpu`` / ``march``: codegen target
    (``march`` also takes the ISA levels of ``onnx_mlir_py.isa.CHOICES``).
    ``shape_information``: ``{input_index: [dims]}`` (``None`` or ``-1`` =
    dynamic) or the CLI's string form ``"0:1x3x224x224"``.
    ``runtime_checks=False`` is UNSAFE (``--no-runtime-checks``): the compiled
    code no longer checks index values, dims that must agree and allocation
    sizes, so a bad input reads or writes out of bounds instead of raising
    ``RuntimeInputError``; only for measuring the checks' cost or for inputs
    already validated. ``profile=True`` (``--profile``) builds a library whose
    code records the time of every ONNX node (passes/instrument.py); without
    it the library has no profiling code at all. ``target``: the
    :class:`~onnx_mlir_py.target.Target` resolved from ``mcpu`` / ``march``
    (set by ``compiler.resolve_target``, not given by users). ``precision``:
    ``"fp32"`` or ``"bf16"`` (``--precision bf16``: the f32 Conv / MatMul /
    Gemm read bf16 inputs and accumulate in f32; passes/onnx_to_linalg/bf16.py)."""
    emit: str = "EmitLib"
    opt_level: int = DEFAULT_OPT_LEVEL
    mcpu: str | None = None
    march: str | None = None
    shape_information: dict | str | None = None
    runtime_checks: bool = True
    profile: bool = False
    precision: str = "fp32"
    target: object = None       # onnx_mlir_py.target.Target, once resolved

    def _check_variants(self) -> None:
        """``march="x86-64-v3+x86-64-v4"``: one library, a variant per level
        (codegen/fat.py); only for x86-64 hosts and whole libraries."""
        from onnx_mlir_py.isa import fat_levels, is_x86_host
        try:
            levels = fat_levels(self.march)
        except ValueError as e:
            raise CompileError(str(e)) from None
        if levels is None:
            return
        if not is_x86_host():
            raise CompileError(f"march={self.march!r}: ISA variants are for x86-64 hosts only")
        if self.mcpu is not None:
            raise CompileError(f"march={self.march!r} chooses the CPUs: give it or "
                               f"mcpu={self.mcpu!r}, not both")
        if self.emit in ("EmitLLVMIR", "EmitObj"):
            raise CompileError(f"march={self.march!r} builds a library with one variant per "
                               f"level; --{self.emit} writes one: give one level")
        if self.profile:
            raise CompileError(f"march={self.march!r}: --profile builds take one level")

    def __post_init__(self):
        if self.emit not in EMIT_LEVELS:
            raise CompileError(f"emit must be one of {', '.join(EMIT_LEVELS)}, got {self.emit!r}")
        if self.opt_level not in OPT_LEVELS:
            raise CompileError(f"opt_level must be 0..3, got {self.opt_level!r}")
        object.__setattr__(self, "opt_level", int(self.opt_level))
        if self.precision not in PRECISIONS:
            raise CompileError(f"precision must be one of {', '.join(PRECISIONS)}, "
                               f"got {self.precision!r}")
        from onnx_mlir_py.isa import CHOICES
        if self.march in CHOICES and self.mcpu is not None:
            raise CompileError(f"march={self.march!r} is a CPU choice: give it or "
                               f"mcpu={self.mcpu!r}, not both")
        self._check_variants()
        if isinstance(self.march, str) and self.march.startswith("x86-64-v") \
                and "+" not in self.march and self.march not in CHOICES:
            raise CompileError(f"march must be one of {', '.join(CHOICES)} or an "
                               f"architecture, got {self.march!r}")
        if isinstance(self.shape_information, str):   # the CLI form; "" = none
            from onnx_mlir_py.importer.model import parse_shape_information
            object.__setattr__(self, "shape_information",
                               parse_shape_information(self.shape_information))
