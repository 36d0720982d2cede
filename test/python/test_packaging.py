"""Every Python package directory of the source tree is listed in
pyproject.toml (setuptools would silently leave it out of a wheel), and every
import names the installed path (``onnx_mlir_py.passes....`` for a file under
``passes/``), so no reader needs ``package-dir`` to follow one."""
import ast
import os
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_every_package_is_listed():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        cfg = tomllib.load(f)["tool"]["setuptools"]
    listed = set(cfg["packages"])
    found = set()
    for pkg, src in cfg["package-dir"].items():
        base = os.path.join(ROOT, src)
        for dirpath, dirnames, files in os.walk(base):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            if "__init__.py" in files:
                rel = os.path.relpath(dirpath, base)
                name = pkg if rel == "." else pkg + "." + rel.replace(os.sep, ".")
                # a sub-tree mapped separately is checked under its own key
                if not any(name.startswith(k + ".") or name == k for k in cfg["package-dir"]
                           if k != pkg and k.startswith(pkg + ".")):
                    found.add(name)
    assert found - listed == set(), f"packages missing from pyproject.toml: {found - listed}"
    assert listed - found == set(), f"listed packages that do not exist: {listed - found}"


def test_imports_are_absolute():
    relative = []
    for top in ("onnx_mlir_py", "dialects", "passes"):
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in files:
                if not f.endswith(".py"):
                    continue
                path = os.path.join(dirpath, f)
                with open(path) as fh:
                    tree = ast.parse(fh.read())
                relative += [f"{os.path.relpath(path, ROOT)}:{n.lineno}" for n in ast.walk(tree)
                             if isinstance(n, ast.ImportFrom) and n.level]
    assert not relative, f"relative imports (use onnx_mlir_py.*): {relative[:10]}"
