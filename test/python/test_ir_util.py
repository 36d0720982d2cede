"""onnx_mlir_py.ir_util: the one IR walker (order, filters, root, errors)."""
import mlir.ir as ir
import pytest

from onnx_mlir_py.ir_util import child_blocks, first_op, walk_ops

IR = """
func.func @f(%a: i32) -> i32 {
  %c = arith.constant 1 : i32
  %b = scf.execute_region -> i32 {
    %d = arith.addi %a, %c : i32
    scf.yield %d : i32
  }
  return %b : i32
}
func.func @g() {
  return
}"""


@pytest.fixture
def module():
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        yield ir.Module.parse(IR)


def names(ops):
    return [o.name for o in ops]


def test_pre_and_post_order(module):
    assert names(walk_ops(module)) == [
        "func.func", "arith.constant", "scf.execute_region", "arith.addi", "scf.yield",
        "func.return", "func.func", "func.return"]
    assert names(walk_ops(module, order="post")) == [
        "arith.constant", "arith.addi", "scf.yield", "scf.execute_region", "func.return",
        "func.func", "func.return", "func.func"]


def test_root_excluded_unless_asked(module):
    f = module.body.operations[0]
    assert "func.func" not in names(walk_ops(f))
    assert names(walk_ops(f, include_root=True))[0] == "func.func"
    assert names(walk_ops(module, include_root=True))[0] == "builtin.module"


def test_select_by_name_set_and_predicate(module):
    assert names(walk_ops(module, "func.return")) == ["func.return", "func.return"]
    assert names(walk_ops(module, {"arith.addi", "scf.yield"})) == ["arith.addi", "scf.yield"]
    assert names(walk_ops(module, lambda o: len(o.regions) > 0)) == [
        "func.func", "scf.execute_region", "func.func"]


def test_first_op(module):
    assert first_op(module, "scf.yield").name == "scf.yield"
    assert first_op(module, "scf.forall") is None


def test_collected_list_allows_erasing(module):
    with module.context:
        for op in walk_ops(module, "arith.addi"):
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
        assert walk_ops(module, "arith.addi") == []
        module.operation.verify()


def test_predicate_error_comes_out_as_itself(module):
    def bad(op):
        raise KeyError("boom")
    with pytest.raises(KeyError, match="boom"):
        walk_ops(module, bad)


def test_child_blocks_one_level(module):
    f = module.body.operations[0]
    assert len(child_blocks(f)) == 1
    assert len(child_blocks(module)) == 1    # the module's body only


@pytest.mark.parametrize("select", [None, "func.func", "scf.yield", {"arith.addi", "func.return"},
                                    ["func.func", "arith.constant"]])
@pytest.mark.parametrize("order", ["pre", "post"])
@pytest.mark.parametrize("include_root", [False, True])
def test_name_walk_is_the_predicate_walk(module, select, order, include_root):
    """walk_ops' fast path for names (no prune) finds what the general
    walk with the same test as a predicate finds, root rules included."""
    from onnx_mlir_py.ir_util import _matcher
    keep = _matcher(select)
    f = module.body.operations[0]
    for root in (module, f):
        fast = walk_ops(root, select, order=order, include_root=include_root)
        slow = walk_ops(root, lambda op: keep(op), order=order, include_root=include_root)
        assert len(fast) == len(slow) and all(a == b for a, b in zip(fast, slow))


@pytest.mark.parametrize("exclude", [set(), {"func.func"}, {"arith.addi", "func.return"},
                                     {"builtin.module", "scf.yield"}])
@pytest.mark.parametrize("order", ["pre", "post"])
@pytest.mark.parametrize("include_root", [False, True])
def test_exclude_is_the_negated_predicate_walk(module, exclude, order, include_root):
    """``exclude``: every op but those names, the root rules as a predicate
    walk's (an excluded root is left out even with include_root)."""
    f = module.body.operations[0]
    for root in (module, f):
        fast = walk_ops(root, exclude=exclude, order=order, include_root=include_root)
        slow = walk_ops(root, lambda op: op.name not in exclude, order=order,
                        include_root=include_root)
        assert len(fast) == len(slow) and all(a == b for a, b in zip(fast, slow))
    assert "func.func" not in names(walk_ops(module, exclude={"func.func"}))
    with pytest.raises(AssertionError):
        walk_ops(module, "func.func", exclude={"scf.yield"})


_AMX_LOOKUPS = r"""
import sys, importlib.abc
asked = []
class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.endswith(".amx") or name.endswith(".x86vector"):
            asked.append(name)
        return None
import mlir.ir as ir
if sys.argv[1] == "compiler":
    from onnx_mlir_py.context import make_context
    ctx = make_context()
else:
    ctx = ir.Context()
sys.meta_path.insert(0, Spy())
with ctx, ir.Location.unknown():
    m = ir.Module.parse('''
func.func @f(%a: vector<16xbf16>, %b: vector<16xbf16>, %c: vector<8xf32>) -> vector<8xf32> {
  %t = amx.tile_zero : !amx.tile<16x16xbf16>
  %d = x86vector.avx512.dot %c, %a, %b : vector<16xbf16> -> vector<8xf32>
  return %d : vector<8xf32>
}''')
    for _ in range(50):
        ops = [op for op in m.body.operations[0].regions[0].blocks[0].operations]
print(len(asked))
"""


@pytest.mark.parametrize("how", ["compiler", "bare"])
def test_upstream_dialects_without_python_modules_are_looked_up_once(how):
    """The bindings look up a dialect's Python module each time they wrap one
    of its ops and remember only a module they found; the wheel has none for
    amx and x86vector, so each op of theirs was a failed import through
    sys.path (#29: ~38,000 in a bf16 ResNet-50 compile). The compiler's
    context (make_context) registers stub modules: one lookup per dialect;
    a bare context looks them up again and again (what the test would catch)."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _AMX_LOOKUPS, how], capture_output=True,
                         text=True, check=True).stdout.split()
    asked = int(out[-1])
    if how == "compiler":
        assert asked <= 4       # once per dialect: mlir.dialects.<d>, then the stub
    else:
        assert asked >= 100     # every time: 50 walks, 2 ops
