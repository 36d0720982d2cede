"""Front ends: models in other formats, converted to ONNX before the pipeline.

``tensorflow/``: SavedModel directories, frozen GraphDef ``.pb``, Keras
``.keras``/``.h5`` and ``.tflite`` files, through tf2onnx (the ``[tf]`` extra).
"""
