"""MLIR text pieces shared by the two im2col writers (:mod:`.conv`'s plain
``[B, K, M]`` matrix and :mod:`.im2col_packed`'s column panels): the zero
fill of the padding regions and the end of the per-channel loop."""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type

def zero_regions(lines: list[str], init: str, full, regions, pad: str) -> str:
    """Append a zero fill (``pad``, an f32 zero) of each ``(name, offsets,
    sizes)`` region of ``init`` (a ``full``-shaped tensor), skipping empty
    ones; returns the filled value."""
    for nm, off, size in regions:
        if 0 in size:
            continue
        lines += [f"    %{nm}_s = tensor.extract_slice {init}{off} {size} [1, 1, 1] : {tensor_type(full)} to {tensor_type(size)}",
                  f"    %{nm}_z = linalg.fill ins({pad} : f32) outs(%{nm}_s : {tensor_type(size)}) -> {tensor_type(size)}",
                  f"    %{nm}_i = tensor.insert_slice %{nm}_z into {init}{off} {size} [1, 1, 1] "
                  f": {tensor_type(size)} into {tensor_type(full)}"]
        init = f"%{nm}_i"
    return init


def end_channel_loop(lines: list[str], par: bool, value: str, dest: str, row0: str, one, full,
                     name: str) -> None:
    """Close the per-channel loop (an ``scf.forall`` when ``par``, else an
    ``scf.for``): ``value`` (the channel's ``one``-shaped rows) goes into
    ``dest`` at ``[0, row0, 0]``; ``name`` names the insert of the scf.for."""
    ins = f"{value} into {dest}[0, {row0}, 0] {one} [1, 1, 1] : {tensor_type(one)} into {tensor_type(full)}"
    if par:
        lines.append("      scf.forall.in_parallel {")
        lines.append(f"        tensor.parallel_insert_slice {ins}\n      }}\n    }}")
    else:
        lines.append(f"      {name} = tensor.insert_slice {ins}")
        lines.append(f"      scf.yield {name} : {tensor_type(full)}\n    }}")
