"""A script written for onnxruntime, using only its public API (no main
guard, as such scripts often have none). test_ort_script.py runs it as is
and with its import line changed to ``import onnx_mlir_py as ort``.

    python ort_script.py MODEL.onnx '[{"N": 2}, {"N": 5}]' OUT.npz

Runs the model once per dims setting (values of its symbolic dims) on seeded
random inputs built from get_inputs(): with run(), with OrtValues
(run_with_ort_values), through an IOBinding with pre-allocated output
buffers, and with run_async; then in a session whose first symbolic dim is
fixed by a free-dimension override. Saves the outputs to OUT.npz, and prints
what the sessions report (inputs, outputs, providers, metadata, whether the
bound buffers were written in place) as JSON.
"""
import json
import sys
import threading

import numpy as np
import onnxruntime as ort

model_path, settings, out_path = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]

opts = ort.SessionOptions()
opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
opts.intra_op_num_threads = 2     # onnxruntime's run_async needs a pool thread
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
    names = [out.name for out in sess.get_outputs()]
    for name, value in zip(names, outputs):
        saved[f"{k}/{name}"] = value
    last = names[-1]
    saved[f"{k}/only/{last}"] = sess.run([last], feed)[0]

    # OrtValues in and out
    values = {n: ort.OrtValue.ortvalue_from_numpy(a) for n, a in feed.items()}
    for name, v in zip(names, sess.run_with_ort_values(None, values)):
        saved[f"{k}/ortvalue/{name}"] = v.numpy()

    # an IOBinding: every output written into a buffer allocated here
    binding = sess.io_binding()
    for n, a in feed.items():
        binding.bind_cpu_input(n, a)
    buffers = {name: np.full(value.shape, -7, value.dtype) for name, value in zip(names, outputs)}
    for name, buf in buffers.items():
        binding.bind_output(name, "cpu", 0, buf.dtype, list(buf.shape), buf.ctypes.data)
    sess.run_with_iobinding(binding)
    inplace = [o.data_ptr() == buffers[name].ctypes.data or buffers[name].size == 0
               for name, o in zip(names, binding.get_outputs())]
    for name, buf in buffers.items():
        saved[f"{k}/bound/{name}"] = buf

    # run_async: the callback gets the outputs on another thread
    done, got = threading.Event(), {}

    def on_done(results, user_data, err):
        got.update(results=results, user_data=user_data, err=err)
        done.set()

    sess.run_async([last], feed, on_done, k)
    if not done.wait(300) or got["err"] or got["user_data"] != k:
        raise SystemExit(f"run_async: {got}")
    saved[f"{k}/async/{last}"] = got["results"][0]

# a session specialised to the first setting's value of its first symbolic dim
dim = next((d for i in sess.get_inputs() for d in i.shape if isinstance(d, str)), None)
fixed = None
if dim is not None and settings[0]:
    opts2 = ort.SessionOptions()
    opts2.add_free_dimension_override_by_name(dim, settings[0][dim])
    sess2 = ort.InferenceSession(model_path, sess_options=opts2,
                                 providers=["CPUExecutionProvider"])
    fixed = [[i.name, i.shape] for i in sess2.get_inputs() + sess2.get_outputs()]
    rng = np.random.default_rng(0)
    feed = {}
    for inp in sess2.get_inputs():
        shape = [d if isinstance(d, int) else settings[0][d] for d in inp.shape]
        feed[inp.name] = rng.standard_normal(shape).astype(np.float32) \
            if inp.type == "tensor(float)" else rng.integers(0, 4, shape).astype(np.int64)
    for out, value in zip(sess2.get_outputs(), sess2.run(None, feed)):
        saved[f"fixed/{out.name}"] = value

np.savez(out_path, **saved)
meta = sess.get_modelmeta()
print(json.dumps({
    "inputs": [[i.name, i.shape, i.type] for i in sess.get_inputs()],
    "outputs": [[o.name, o.shape, o.type] for o in sess.get_outputs()],
    "providers": sess.get_providers(),
    "meta": [meta.producer_name, meta.graph_name, meta.version, meta.custom_metadata_map],
    "inplace": inplace,
    "fixed": fixed,
}))
