"""Python modules for the upstream MLIR dialects the compiler emits whose
Python bindings the MLIR wheel does not ship (``amx``, ``x86vector``).

The bindings look up a dialect's module (``mlir.dialects.<name>``, then each
search prefix) whenever they wrap one of its ops in an OpView, and remember
only a module they found: without one, every ``amx.*`` op a walk or a block
iteration met was a failed import searched through ``sys.path`` (#29: a bf16
ResNet-50 on AMX 38,000 of them, a QDQ ResNet-50 11,000, ~35 us each).
:func:`register` adds this package as a search prefix; its modules define no
op classes, so the ops stay generic OpViews, as they were.
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def register() -> None:
    """Add this package to the bindings' dialect search prefixes (once)."""
    from mlir._mlir_libs import _mlir
    _mlir.globals.append_dialect_search_prefix(__name__)
