"""Every Python package directory of the source tree is listed in
pyproject.toml (setuptools would silently leave it out of a wheel)."""
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
