"""Python modules for the upstream MLIR dialects the compiler emits whose
Python bindings the MLIR wheel does not ship (``amx``, ``x86vector``), and
a light one for ``linalg``.

The bindings look up a dialect's module (``mlir.dialects.<name>``, then each
search prefix) whenever they wrap one of its ops in an OpView, and remember
only a module they found: without one, every ``amx.*`` op a walk or a block
iteration met was a failed import searched through ``sys.path`` (#29: a bf16
ResNet-50 on AMX 38,000 of them, a QDQ ResNet-50 11,000, ~35 us each).
:func:`register` adds this package as a search prefix; its modules define no
op classes, so the ops stay generic OpViews, as they were.

``linalg``'s wheel module, ``mlir.dialects.linalg``, imports opdsl (every
named op's Python definition, and PyYAML: ~60 ms, #29), which the compiler
does not use (it builds linalg ops with :mod:`onnx_mlir_py.ir_linalg`), and
the bindings would import it at the first linalg op or attribute they wrap.
:func:`register` has them load this package's ``linalg`` instead (the same
op classes, ``_linalg_ops_gen``'s), with this package as the only prefix for
that one lookup: the bindings remember the dialect as loaded. (If they loaded
``mlir.dialects.linalg`` already, they keep it.)
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def register() -> None:
    """Add this package to the bindings' dialect search prefixes and load
    its ``linalg`` as the dialect's module (once)."""
    from mlir._mlir_libs import _mlir
    g = _mlir.globals
    # (a private function of the bindings: without it, or should it fail,
    # they import mlir.dialects.linalg themselves when they need it, as before)
    check = getattr(g, "_check_dialect_module_loaded", None)
    if check is not None:
        prefixes = list(g.dialect_search_modules)
        try:
            g.dialect_search_modules = [__name__]
            check("linalg")
        except Exception:       # noqa: BLE001 (only a lost saving)
            pass
        finally:
            g.dialect_search_modules = prefixes
    g.append_dialect_search_prefix(__name__)
