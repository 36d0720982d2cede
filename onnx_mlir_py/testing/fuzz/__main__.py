import sys

from onnx_mlir_py.testing.fuzz.cli import main

if __name__ == "__main__":
    sys.exit(main())
