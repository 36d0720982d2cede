"""MLIR diagnostics -> one-line ``OnnxMlirError`` messages naming the node."""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.errors import VerificationError
from onnx_mlir_py.ir_util import loc_name


def verify_mlir(module: ir.Module, phase: str = "verification") -> None:
    """Run MLIR's verifier (IRDL constraints included); first error, one line."""
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        diags = list(getattr(e, "error_diagnostics", []) or [])
        if not diags:
            raise VerificationError(f"{phase}: {str(e).splitlines()[0]}") from None
        d = diags[0]
        name = loc_name(d.location)
        msg = d.message.splitlines()[0]
        where = f"node '{name}': " if name else ""
        raise VerificationError(f"{where}{msg}") from None
