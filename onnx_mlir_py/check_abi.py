"""The run-time check contract between lower-to-linalg, codegen and the C
runtime: ``LoweringContext.require`` emits calls of ``CHECK_FN`` (defined in
runtime/c/om_runtime.c) with a message id and up to ``CHECK_VALUES`` values,
and lists the messages in the module attribute ``CHECKS_ATTR``, which codegen
(signature.py) turns into the entry wrapper's message table.
``NO_CHECKS_ATTR`` on the module (compile(runtime_checks=False),
--no-runtime-checks) makes ``require`` emit nothing.
"""
CHECK_FN = "om_check_failed"
CHECK_VALUES = 4
CHECKS_ATTR = "onnx_mlir_py.checks"
# UNSAFE: bad inputs then read out of bounds
NO_CHECKS_ATTR = "onnx_mlir_py.no_runtime_checks"
# On the module of a multi-threaded (-O3) build: lowerings may emit
# scf.forall loops (codegen runs them on the library's thread pool)
THREADS_ATTR = "onnx_mlir_py.threads"

# Allocation failures name the node (codegen/alloc_sites.py): lowering lists
# node name -> op type in NODE_TYPES_ATTR; codegen calls ALLOC_SITE_FN(id)
# (om_runtime.c) before each allocation, id into the table ALLOC_SITES_ATTR
# (the entry wrapper's om_alloc_sites[]), -1 for none.
NODE_TYPES_ATTR = "onnx_mlir_py.node_types"
ALLOC_SITE_FN = "om_alloc_site"
ALLOC_SITES_ATTR = "onnx_mlir_py.alloc_sites"

# Per-node profiling (--profile, passes/instrument.py): each top-level ONNX
# node's code is bracketed by PROF_BEGIN_FN(id) / PROF_END_FN(id)
# (runtime/c/om_profile.c, linked only into profiled libraries); ids index
# PROFILE_NODES_ATTR at the ONNX level, PROFILE_EVENTS_ATTR (the entry
# wrapper's om_prof_events[]) once resolved after the tensor passes.
PROF_BEGIN_FN = "om_prof_begin"
PROF_END_FN = "om_prof_end"
PROFILE_NODES_ATTR = "onnx_mlir_py.profile_nodes"
PROFILE_EVENTS_ATTR = "onnx_mlir_py.profile_events"
