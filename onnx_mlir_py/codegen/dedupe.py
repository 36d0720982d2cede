"""Each kernel compiled once (issue #29): outlined loop bodies that are the
same function are merged before the module is lowered to LLVM.

The -O3 kernels' parallel loops become private functions
``__om_pfor_<k>(lo, hi, captured...)`` (:mod:`.parallel_for`). A loop's
weights are captured values (``memref.get_global`` of the externalized
constant is passed, not cloned into the body), so two convs of one shape
with the same fused neighbours give the same function text whatever their
weights: ResNet-50's bottleneck blocks repeat one shape per stage.

Functions are compared by their printed text (the name left out; nothing
elided: ``dense_resource`` constants compare by their blob's name, so two
different blobs never merge) and their argument types. Nested loops are
outlined after the loops that contain them (larger ``k``), so functions are
visited from the largest ``k`` down: the calls inside a function are
renamed to the kept copies before the function itself is compared, and
parents whose nested loops merged can merge too. Every call of a dropped
copy then calls the kept one, and the copy is erased.

What is left is compiled once: fewer functions through the LLVM lowering,
``mlir-translate``, ``opt`` and ``llc``. The allocation-site table
(:mod:`.alloc_sites`, which names the node in an out-of-memory error) is
built afterwards, so an allocation inside a shared body names the first
node that uses it.

In a module whose entry was cut into chunks (:mod:`.bufferize_chunks`: more
than a thousand top-level ops), a kept function that stands for merged
copies is marked ``noinline`` too: LLVM's inliner otherwise copied the small
loop nest back into every call site (a 20,000-node elementwise chain at -O2:
20,000 loop nests through ``opt`` / ``llc``, 38 s of their CPU, though only
four are different). Smaller modules keep LLVM's choice (their code does not
change).
"""
from __future__ import annotations

from collections import Counter

import mlir.ir as ir

from onnx_mlir_py.codegen.bufferize_chunks import PREFIX as CHUNK_PREFIX
from onnx_mlir_py.ir_util import rename_symbol_refs


def _name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _index(name: str, prefix: str) -> int:
    tail = name[len(prefix):]
    return int(tail) if tail.isdigit() else -1


def shared_types(funcs) -> set[str]:
    """The function types (printed) of more than one of ``funcs``: only
    functions of one type can be the same, so one whose type is its own is
    not printed to be compared (#29: 39 of ResNet-50's 47 parallel bodies,
    29 of its 97 kernels)."""
    counts = Counter(str(f.attributes["function_type"]) for f in funcs)
    return {t for t, n in counts.items() if n > 1}


def _rename_calls(root, renamed: dict[str, str]) -> None:
    rename_symbol_refs(root, "func.call", "callee", renamed)


def merge_identical_functions(module: ir.Module, prefix: str) -> int:
    """Merge the ``func.func`` ops of ``module`` named ``<prefix><k>`` that
    are the same function (see the module docstring); returns how many
    were dropped."""
    with module.context:
        funcs = [op.operation for op in module.body.operations
                 if op.operation.name == "func.func" and _name(op.operation).startswith(prefix)]
        funcs.sort(key=lambda f: -_index(_name(f), prefix))
        kept: dict[str, str] = {}          # function text (name left out) -> kept name
        renamed: dict[str, str] = {}       # dropped name -> kept name
        dropped = []
        shared = shared_types(funcs)
        for f in funcs:
            if str(f.attributes["function_type"]) not in shared:
                continue        # nothing to merge with (its calls are renamed below)
            name = _name(f)
            _rename_calls(f, renamed)
            text = f.get_asm(large_elements_limit=None, use_local_scope=True).replace(f"@{name}(", "@_(", 1)
            other = kept.get(text)
            if other is None:
                kept[text] = name
            else:
                renamed[name] = other
                dropped.append(f)
        if not dropped:
            return 0
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func" and _name(op) not in renamed:
                _rename_calls(op, renamed)
        kept_funcs = [f for f in funcs if _name(f) not in renamed]
        for f in dropped:
            f.erase()
        if any(_name(op.operation).startswith(CHUNK_PREFIX) for op in module.body.operations
               if op.operation.name == "func.func"):
            shared = set(renamed.values())
            noinline = ir.Attribute.parse('["noinline"]')
            for f in kept_funcs:
                if _name(f) in shared:
                    f.attributes["passthrough"] = noinline
    return len(dropped)
