"""The one exception hierarchy of onnx-mlir-py.

Every user-facing failure is an ``OnnxMlirError`` whose ``str()`` is a single
line naming the model node or input and what was expected; the CLI prints it
as ``error: <message>`` and exits with status 1, never with a traceback.
Warnings (``OnnxMlirWarning``, through :mod:`warnings`) are one line too; the
CLI prints them as ``warning: <message>``.
"""
from __future__ import annotations


class OnnxMlirError(Exception):
    """Base class; ``str(e)`` is the one-line message shown to users."""


class ModelLoadError(OnnxMlirError):
    """The file is not a readable ONNX model (truncated, not protobuf, ...)."""


class UnsupportedOpsError(OnnxMlirError):
    """Some nodes use ops this compiler cannot handle; lists all of them."""

    def __init__(self, what: str, nodes: list[tuple[str, str]]):
        self.nodes = nodes
        by_op: dict[str, list[str]] = {}
        for op, node in nodes:
            by_op.setdefault(op, []).append(node)
        parts = [f"{op} (nodes: {', '.join(repr(n) for n in ns[:5])}"
                 f"{', ...' if len(ns) > 5 else ''})" for op, ns in sorted(by_op.items())]
        super().__init__(f"{len(by_op)} unsupported op type(s) ({what}): " + "; ".join(parts))


class ImportError_(OnnxMlirError):
    """A node or value of the model cannot be imported as it is."""


class InvalidModelError(ImportError_):
    """The model breaks a rule of ONNX that onnxruntime enforces at load time (a
    value defined twice, an undefined input, a cycle, an opset or IR version
    newer than the installed onnx, a negative dim, a malformed subgraph)."""


class VerificationError(OnnxMlirError):
    """A node breaks a rule of its op (operand count, rank, attribute, ...)."""


class ShapeInferenceError(OnnxMlirError):
    """Shapes of a node's inputs are inconsistent with its op."""


class CompileError(OnnxMlirError):
    """Lowering or native code generation failed."""


class NeedsInputShapesError(CompileError):
    """The generic (dynamic-shape) compile needs a property that concrete
    input shapes give: a rank known only at run time (an If whose branches
    yield different ranks, as torch traces ``if x.shape[-1] == 1: x =
    x.squeeze(-1)``; AffineGrid's grid rank, ``size``'s length).
    ``InferenceSession`` then compiles for the input shapes of each run
    (``inference/shape_specialise.py``); the CLI and ``compile()`` say to
    pass the shapes."""


class EnvironmentFailure(CompileError):
    """A compile failed because of the machine, not the model: a full disk or
    quota, a tool killed by a signal (the out-of-memory killer's SIGKILL),
    out of memory, a directory that cannot be written. Never cached: the same
    compile succeeds once the cause is gone."""


# errnos that mean the machine failed a write or a read, not the compiler
MACHINE_ERRNOS = frozenset(("ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EIO", "EFBIG",
                            "ENOMEM", "EMFILE", "ENFILE"))


def environment_failure(e: BaseException, what: str) -> EnvironmentFailure:
    """``e`` (an ``OSError`` or ``MemoryError``) as one line naming what
    failed and why (errno name and message, the file)."""
    import errno
    if isinstance(e, MemoryError):
        return EnvironmentFailure(f"{what}: out of memory (MemoryError)")
    name = errno.errorcode.get(getattr(e, "errno", None) or 0, "")
    where = f" ({e.filename})" if getattr(e, "filename", None) else ""
    return EnvironmentFailure(f"{what}: {getattr(e, 'strerror', None) or e}"
                              f"{f' [{name}]' if name else ''}{where}")


def is_machine_error(e: BaseException) -> bool:
    """A ``MemoryError``, or an ``OSError`` of MACHINE_ERRNOS (a full disk, a
    read-only or unwritable directory, ...): the machine's failure, not a bug."""
    import errno
    return isinstance(e, MemoryError) or (
        isinstance(e, OSError) and errno.errorcode.get(e.errno or 0, "") in MACHINE_ERRNOS)


class UnsafeCacheError(OnnxMlirError):
    """A compile cache directory or entry that another user could have written
    (not owned by this user, or writable by group or others): not loaded."""


class OnnxMlirWarning(UserWarning):
    """Base class of the warnings; the CLI prints them as ``warning: <message>``."""


class CacheEntryWarning(OnnxMlirWarning):
    """A compile cache entry failed its check (truncated, not an ELF file, a
    content hash or key that differs from its record, unreadable JSON): it
    is removed and rebuilt (a shared cache's entry is skipped)."""


class ShapesSpecialisedWarning(OnnxMlirWarning):
    """A note: an ``InferenceSession`` compiled the model for the input
    shapes of a run, because its generic compile needs them
    (``NeedsInputShapesError``); once per session and input signature."""


class DeclaredTypeWarning(OnnxMlirWarning):
    """A type the model declares (graph output, ``value_info``) contradicts the
    inferred one; the inferred type is used (as onnxruntime does)."""


class KernelBudgetWarning(OnnxMlirWarning):
    """A node's -O3 kernel grew past its budget (passes/optimize/kernel_budget.py):
    the node is compiled on the generic path."""


class NegativeDimWarning(OnnxMlirWarning):
    """A declared dim is negative (Paddle2ONNX writes ``-1`` for a dynamic
    dim): it is read as a dynamic dim, as onnxruntime does."""


def node_error(cls, node_name: str, op_type: str, message: str) -> OnnxMlirError:
    """``node 'conv1' (Conv): expected ...`` in one line."""
    return cls(f"node '{node_name}' ({op_type}): {message}")
