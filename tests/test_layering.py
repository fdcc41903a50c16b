"""Dependencies point one way (docs/design/architecture.md#dependency-direction):
`exports -> crowd -> qc -> annotate`, every app may use `rationale_metrics`, which
imports nothing from Django or the apps, and `config` is the infrastructure the apps
build on.

Read from the source with `ast` (nothing is imported), over product code (not tests, not
migrations): a module-level import of a higher layer, a module-level import cycle, or
`from module import _private` across modules fails this test, and so does a new
function-level import that sidesteps a cycle or reaches a higher layer. What is not
fixed yet is listed below, each entry with why: the lists may only shrink (an entry no
longer found fails too, so that it is removed).

`python tests/test_layering.py` prints the graph's cycles, upward and private imports,
and the function-level imports between product modules.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "annotate", "qc", "crowd", "exports", "frontend", "rationale_metrics")
# Higher imports lower, never the other way. The frontend serves pages over every app;
# config is beneath them all, rationale_metrics beneath everything.
LAYERS = {
    "rationale_metrics": 0,
    "config": 1,
    "annotate": 2,
    "qc": 3,
    "crowd": 4,
    "exports": 5,
    "frontend": 6,
}
# The URL root wires every app's URLs together, so it sits above them all by its nature.
WIRING = {"config.urls"}

# ---------------------------------------------------------------- what is left, and why
# Function-level imports that sidestep an import cycle: made module-level, Python would
# refuse them. (importer, imported module).
ALLOWED_CYCLE_IMPORTS: set[tuple[str, str]] = {
    # The session model's store is the backend that saves that model (Django's own shape).
    ("config.sessions.models", "config.sessions.backend"),
    # The export sweep ends lost explainer runs too.
    ("exports.services", "exports.runs"),
}
# Module-level imports of a higher layer. (importer, imported module).
ALLOWED_UPWARD: set[tuple[str, str]] = set()
# Function-level imports of a higher layer: no cycle forces them, the rule is misplaced.
ALLOWED_UPWARD_IN_FUNCTIONS: set[tuple[str, str]] = {
    # The demo's setup (an annotate command) computes qc's agreement report; the qc demo
    # command that runs after it recomputes it anyway, so the call belongs there.
    ("annotate.management.commands.demo_setup", "qc.agreement"),
    # The API's authentication refuses accounts whose password change is due: an
    # annotate account rule inside config, which belongs beneath the apps.
    ("config.api_auth", "annotate.account_selectors"),
}
# `from module import _name` across modules. (importer, module._name).
ALLOWED_PRIVATE: set[tuple[str, str]] = {
    # The assignment package's parts share their helpers by private name; they are being
    # changed for the annotators' hot path now, so renamed after that lands.
    ("annotate.services.assignments", "annotate.services.assignments.allocation._BOUND_VARIANT"),
    (
        "annotate.services.assignments.leasing",
        "annotate.services.assignments.allocation._variant_for_mixing",
    ),
    (
        "annotate.services.assignments.leasing",
        "annotate.services.assignments.allocation._variant_for_worker",
    ),
    (
        "annotate.services.assignments.leasing",
        "annotate.services.assignments.fill_counters._live_counts",
    ),
    ("annotate.services.assignments.submission", "annotate.services.assignments.leasing._owned"),
    (
        "annotate.services.assignments.submission",
        "annotate.services.assignments.leasing._take_slot",
    ),
    # The job-progress API finds the export as the export API does, by its private helper.
    ("exports.job_progress_apis", "exports.apis._export"),
    # An explainer run's heartbeat is the export's, extended (exports/runs.py).
    ("exports.runs", "exports.services._Pulse"),
}


@dataclass(frozen=True)
class Import:
    importer: str
    target: str  # the module imported (a name imported from a module counts as the module)
    names: tuple[str, ...]  # the names of `from target import ...`
    line: int
    module_level: bool


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def product_files() -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module_level: bool) -> Iterator[tuple[ast.stmt, bool]]:
    """Every import statement with whether it runs when its module is imported: at the
    top, or in an `if`/`try`/`with`/class body there, not in a function nor under
    `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, module_level
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _imports(node, False)
        elif isinstance(node, ast.If) and _is_type_checking(node):
            yield from _imports(ast.Module(body=node.orelse, type_ignores=[]), module_level)
        else:
            yield from _imports(node, module_level)


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def project_imports(modules: set[str] | None = None) -> list[Import]:
    """Every import of one product module by another, resolved to the module it runs."""
    files = list(product_files())
    known = modules or {module_name(p) for p in files}
    found = []
    for path in files:
        importer = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, module_level in _imports(tree, True):
            if isinstance(node, ast.Import):
                targets = [(alias.name, ()) for alias in node.names]
            else:
                base = _resolve(importer, path.name == "__init__.py", node)
                targets = []
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    if submodule in known:
                        targets.append((submodule, ()))
                    else:
                        targets.append((base, (alias.name,)))
            for target, names in targets:
                if target.split(".")[0] not in PACKAGES or target == importer:
                    continue
                found.append(Import(importer, target, names, node.lineno, module_level))
    return found


@functools.cache
def scanned() -> list[Import]:
    """The project's imports, read once for all the tests."""
    return project_imports()


def layer_of(module: str) -> int:
    if module in WIRING:
        return max(LAYERS.values()) + 1
    return LAYERS[module.split(".")[0]]


def upward_imports(imports: list[Import], *, module_level: bool = True) -> set[tuple[str, str]]:
    return {
        (i.importer, i.target)
        for i in imports
        if i.module_level == module_level and layer_of(i.target) > layer_of(i.importer)
    }


def private_imports(imports: list[Import]) -> set[tuple[str, str]]:
    """`from module import _name` of another module (a package's own `__init__` naming
    its parts' private names counts too)."""
    return {
        (i.importer, f"{i.target}.{name}")
        for i in imports
        for name in i.names
        if name.startswith("_") and not name.startswith("__")
    }


def import_cycles(imports: list[Import], *, module_level: bool = True) -> set[frozenset[str]]:
    """The modules of each import cycle (a strongly connected component of more than one
    module), by Tarjan's algorithm: of module-level imports, or of every import, where a
    function-level import only sidesteps the cycle Python would otherwise refuse."""
    graph: dict[str, set[str]] = {}
    for i in imports:
        if i.module_level or not module_level:
            graph.setdefault(i.importer, set()).add(i.target)
            graph.setdefault(i.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.add(frozenset(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def function_level_imports(imports: list[Import]) -> list[Import]:
    return [i for i in imports if not i.module_level]


def cycle_imports(imports: list[Import]) -> set[tuple[str, str]]:
    """The function-level imports that sidestep a cycle: both modules are in one cycle
    of the graph of every import."""
    cycle_of = {m: c for c in import_cycles(imports, module_level=False) for m in c}
    return {
        (i.importer, i.target)
        for i in function_level_imports(imports)
        if i.importer in cycle_of and cycle_of.get(i.target) is cycle_of[i.importer]
    }


# ---------------------------------------------------------------- the tests


def test_no_module_level_import_cycle():
    assert not import_cycles(scanned()), "Python refuses these when imported first"


def test_no_new_cycle_sidestepped_by_a_function_level_import():
    found = cycle_imports(scanned())
    allowed = ALLOWED_CYCLE_IMPORTS
    assert found <= allowed, f"imports that close a cycle: {sorted(found - allowed)}"
    assert allowed <= found, f"fixed, remove: {sorted(allowed - found)}"


def test_no_layer_imports_a_higher_one_at_module_level():
    found = upward_imports(scanned())
    assert found <= ALLOWED_UPWARD, f"upward imports: {sorted(found - ALLOWED_UPWARD)}"
    assert found >= ALLOWED_UPWARD, f"fixed, remove: {sorted(ALLOWED_UPWARD - found)}"


def test_no_new_function_level_import_of_a_higher_layer():
    found = upward_imports(scanned(), module_level=False)
    allowed = ALLOWED_UPWARD_IN_FUNCTIONS
    assert found <= allowed, f"upward imports in functions: {sorted(found - allowed)}"
    assert found >= allowed, f"fixed, remove: {sorted(allowed - found)}"


def test_no_module_imports_another_module_s_private_name():
    found = private_imports(scanned())
    assert found <= ALLOWED_PRIVATE, f"private imports: {sorted(found - ALLOWED_PRIVATE)}"
    assert found >= ALLOWED_PRIVATE, f"fixed, remove: {sorted(ALLOWED_PRIVATE - found)}"


def test_rationale_metrics_imports_nothing_from_django():
    for path in (ROOT / "rationale_metrics").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            assert not [n for n in names if n.split(".")[0] == "django"], (path, node.lineno)


def test_the_scanner_finds_a_cycle_an_upward_and_a_private_import():
    """The checks above pass on the project only if the scanner sees what they look for."""
    imports = [
        Import("annotate.a", "qc.b", (), 1, True),
        Import("qc.b", "annotate.a", ("_rule",), 1, True),
        Import("qc.c", "qc.d", (), 1, False),
        Import("qc.d", "qc.c", (), 1, True),
    ]
    assert import_cycles(imports) == {frozenset({"annotate.a", "qc.b"})}
    assert cycle_imports(imports) == {("qc.c", "qc.d")}
    assert upward_imports(imports) == {("annotate.a", "qc.b")}
    assert upward_imports(imports, module_level=False) == set()
    assert private_imports(imports) == {("qc.b", "annotate.a._rule")}
    assert function_level_imports(imports) == [imports[2]]


def _sorted(cycles: set[frozenset[str]]) -> list[list[str]]:
    return sorted(sorted(c) for c in cycles)


if __name__ == "__main__":
    every = scanned()
    for module_level in (True, False):
        cycles = _sorted(import_cycles(every, module_level=module_level))
        kind = "module-level imports" if module_level else "every import"
        print(f"import cycles of {kind}: {len(cycles)}")
        for cycle in cycles:
            print("  ", " <-> ".join(cycle))
    closing = sorted(cycle_imports(every))
    print(f"function-level imports that sidestep a cycle: {len(closing)}")
    for importer, target in closing:
        print(f"   {importer} -> {target}")
    for module_level in (True, False):
        upward = sorted(upward_imports(every, module_level=module_level))
        kind = "module-level" if module_level else "function-level"
        print(f"{kind} imports of a higher layer: {len(upward)}")
        for importer, target in upward:
            print(f"   {importer} -> {target}")
    private = sorted(private_imports(every))
    print(f"private cross-module imports: {len(private)}")
    for importer, name in private:
        print(f"   {importer}: {name}")
    inner = function_level_imports(every)
    print(f"function-level imports between product modules: {len(inner)}")
    for i in sorted(inner, key=lambda i: (i.importer, i.line)):
        print(f"   {i.importer}:{i.line} -> {i.target}")
