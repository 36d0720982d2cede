"""A script written for onnxruntime, using only its public API (no main
guard, as such scripts often have none). test_ort_script.py runs it as is
and with its import line changed to ``import onnx_mlir_py as ort``.

    python ort_script.py MODEL.onnx '[{"N": 2}, {"N": 5}]' OUT.npz

Runs the model once per dims setting (values of its symbolic dims) on seeded
random inputs built from get_inputs(), saves the outputs to OUT.npz, and
prints what the session reports (inputs, outputs, providers, metadata) as JSON.
"""
import json
import sys

import numpy as np
import onnxruntime as ort

model_path, settings, out_path = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]

opts = ort.SessionOptions()
opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
opts.intra_op_num_threads = 1
sess = ort.InferenceSession(model_path, sess_options=opts, providers=["CPUExecutionProvider"])

rng = np.random.default_rng(0)
saved = {}
for k, dims in enumerate(settings):
    feed = {}
    for inp in sess.get_inputs():
        shape = [d if isinstance(d, int) else dims[d] for d in inp.shape]
        if inp.type == "tensor(float)":
            feed[inp.name] = rng.standard_normal(shape).astype(np.float32)
        elif inp.type == "tensor(int64)":
            feed[inp.name] = rng.integers(0, 4, shape).astype(np.int64)
        else:
            raise SystemExit(f"input {inp.name}: type {inp.type} not handled by this script")
    outputs = sess.run(None, feed)
    for out, value in zip(sess.get_outputs(), outputs):
        saved[f"{k}/{out.name}"] = value
    last = sess.get_outputs()[-1].name
    saved[f"{k}/only/{last}"] = sess.run([last], feed)[0]

np.savez(out_path, **saved)
meta = sess.get_modelmeta()
print(json.dumps({
    "inputs": [[i.name, i.shape, i.type] for i in sess.get_inputs()],
    "outputs": [[o.name, o.shape, o.type] for o in sess.get_outputs()],
    "providers": sess.get_providers(),
    "meta": [meta.producer_name, meta.graph_name, meta.version, meta.custom_metadata_map],
}))
