"""onnxruntime's option objects: :class:`SessionOptions`, :class:`RunOptions`,
the :class:`GraphOptimizationLevel` / :class:`ExecutionMode` enums, and the
provider queries.

``graph_optimization_level`` maps to the compiler's ``-O`` level
(``ORT_DISABLE_ALL`` -O0, ``ORT_ENABLE_BASIC`` -O1, ``ORT_ENABLE_EXTENDED``
-O2, ``ORT_ENABLE_LAYOUT`` / ``ORT_ENABLE_ALL`` (the default) -O3).
``intra_op_num_threads`` is the thread count of the -O3 kernels (0 = the
library's default: ``ONNX_MLIR_PY_NUM_THREADS``, else 1).
"""
from __future__ import annotations

import enum

# The compiled code is this package's CPU provider; the name is onnxruntime's,
# so scripts that ask for it (or for get_available_providers()) run unchanged.
PROVIDERS = ("CPUExecutionProvider",)


class _Enum(enum.IntEnum):
    def __str__(self) -> str:         # as onnxruntime prints it
        return f"{type(self).__name__}.{self.name}"


class GraphOptimizationLevel(_Enum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


OPT_LEVEL = {GraphOptimizationLevel.ORT_DISABLE_ALL: 0, GraphOptimizationLevel.ORT_ENABLE_BASIC: 1,
             GraphOptimizationLevel.ORT_ENABLE_EXTENDED: 2,
             GraphOptimizationLevel.ORT_ENABLE_LAYOUT: 3, GraphOptimizationLevel.ORT_ENABLE_ALL: 3}


class ExecutionMode(_Enum):
    """Accepted for compatibility: the compiled model runs its nodes in order
    (multi-threading is inside the -O3 kernels)."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


def get_available_providers() -> list[str]:
    return list(PROVIDERS)


def get_all_providers() -> list[str]:
    return list(PROVIDERS)


def get_device() -> str:
    return "CPU"


class _Slots:
    """Unknown attributes raise AttributeError, as onnxruntime's bound
    objects do (a misspelt option must not be silently ignored)."""
    __slots__ = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__
                           if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


class SessionOptions(_Slots):
    __slots__ = ("intra_op_num_threads", "inter_op_num_threads", "_graph_optimization_level",
                 "enable_profiling", "profile_file_prefix", "optimized_model_filepath",
                 "execution_mode", "log_severity_level", "log_verbosity_level", "logid",
                 "enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse",
                 "use_deterministic_compute", "use_per_session_threads", "_config",
                 "_free_dims")

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self._graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.optimized_model_filepath = ""
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self.use_per_session_threads = True
        self._config: dict[str, str] = {}
        self._free_dims: dict[str, dict[str, int]] = {"name": {}, "denotation": {}}

    @property
    def graph_optimization_level(self) -> GraphOptimizationLevel:
        return self._graph_optimization_level

    @graph_optimization_level.setter
    def graph_optimization_level(self, level) -> None:
        try:
            self._graph_optimization_level = GraphOptimizationLevel(level)
        except ValueError:
            raise TypeError(f"graph_optimization_level must be a GraphOptimizationLevel, "
                            f"got {level!r}") from None

    @property
    def opt_level(self) -> int:
        """The compiler's -O level for ``graph_optimization_level``."""
        return OPT_LEVEL[self._graph_optimization_level]

    def add_session_config_entry(self, key: str, value: str) -> None:
        """Set a session config entry; see :mod:`.config_entries` for the
        keys honoured (others warn once and are ignored)."""
        from onnx_mlir_py.inference.config_entries import check_entry
        check_entry(key, value)
        self._config[key] = value

    def get_session_config_entry(self, key: str) -> str:
        if key not in self._config:
            raise RuntimeError(f"SessionOptions does not have configuration with key: {key}")
        return self._config[key]

    def add_free_dimension_override_by_name(self, dim_name: str, dim_value: int) -> None:
        """Specify values of named dimensions within model inputs: the session
        compiles the model with them fixed (see :mod:`.free_dims`)."""
        from onnx_mlir_py.inference.free_dims import check_override
        k, v = check_override("name", dim_name, dim_value)
        self._free_dims["name"][k] = v

    def add_free_dimension_override_by_denotation(self, dim_denotation: str,
                                                  dim_value: int) -> None:
        """Specify the dimension size for each denotation associated with an
        input's free dimension (e.g. ``DATA_BATCH``)."""
        from onnx_mlir_py.inference.free_dims import check_override
        k, v = check_override("denotation", dim_denotation, dim_value)
        self._free_dims["denotation"][k] = v

    @property
    def free_dimension_overrides(self) -> dict | None:
        """The overrides given (``{"name": {...}, "denotation": {...}}``), or
        None."""
        fd = self._free_dims
        return {k: dict(v) for k, v in fd.items()} if fd["name"] or fd["denotation"] else None


class RunOptions(_Slots):
    """Accepted by ``run``; ``terminate = True`` makes the next run refuse to
    start (the compiled code has no cancellation point inside a run)."""
    __slots__ = ("log_severity_level", "log_verbosity_level", "logid", "run_tag",
                 "terminate", "only_execute_path_to_fetches")

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False
