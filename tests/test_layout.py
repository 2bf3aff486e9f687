"""The folder tree is the architecture: every import inside ``l3fwd_sim`` runs down the
layers (cli → bench, report → traffic, diff → l3fwd, graph, testpmd → eal → dataplane → capture → tables →
numbers, compiled → errors, text, hold), never up or sideways between peers, and no module imports itself back through
others (imports inside functions count too). The compiled twins' C includes down the same layers."""
from __future__ import annotations

import ast
import os
from pathlib import Path

from forwarding import REPO

PACKAGE = REPO / "l3fwd_sim"
# Higher may import lower; equal ranks are peers that must not import each other.
RANK = {"errors": 0, "text": 0, "hold": 0, "compiled": 1, "numbers": 1, "releases": 1, "tables": 2, "capture": 3, "dataplane": 4, "eal": 5, "l3fwd": 6,
        "testpmd": 6, "graph": 6, "traffic": 7, "diff": 7, "bench": 8, "report": 8, "verify": 8, "cli": 9, "": 10, "command": 10, "__main__": 11}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str, name: str, package: str) -> set[str]:
    """Absolute names of the ``l3fwd_sim`` modules that module ``name`` (of ``package``)
    imports in ``source``, at any depth."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if (PACKAGE.parent / (full.replace(".", "/") + ".py")).exists() else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m.split(".")[0] == "l3fwd_sim" and m != name}


def subsystem(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def module_imports(path: Path) -> set[str]:
    name = module_name(path)
    return imports(path.read_text(), name, name if path.name == "__init__.py" else name.rpartition(".")[0])


GRAPH = {module_name(p): module_imports(p) for p in PACKAGE.rglob("*.py")}


def test_every_subsystem_has_a_rank():
    assert {subsystem(m) for m in GRAPH} == set(RANK)


def test_imports_run_down_the_layers():
    assert upward({m: targets for m, targets in GRAPH.items() if subsystem(m)}) == []


def test_no_import_cycle():
    done, path = set(), []

    def visit(m):
        if m in path:
            raise AssertionError("import cycle: " + " → ".join(path[path.index(m):] + [m]))
        if m in done:
            return
        path.append(m)
        for t in sorted(GRAPH.get(m, ())):
            if t != "l3fwd_sim":
                visit(t)
        path.pop()
        done.add(m)

    for m in sorted(GRAPH):
        visit(m)


def test_the_checker_resolves_every_form_of_import():
    source = ("from ..l3fwd.rules import EmRule\nfrom . import lpm\nfrom .. import errors\n"
              "def f():\n    from ..capture.offline import open_offline\n")
    assert imports(source, "l3fwd_sim.tables.hash", "l3fwd_sim.tables") == {
        "l3fwd_sim.l3fwd.rules", "l3fwd_sim.tables.lpm", "l3fwd_sim.errors", "l3fwd_sim.capture.offline"}


def c_includes(path: Path) -> set[str]:
    """The ``l3fwd_sim`` files (as module names) a ``.c``/``.h`` file includes by its
    quoted ``#include``s."""
    return {module_name(Path(os.path.normpath(path.parent / line.split('"')[1])))
            for line in path.read_text().splitlines() if line.startswith('#include "')}


def upward(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m} uses {t}" for m, targets in graph.items() for t in targets
            if subsystem(t) != subsystem(m) and RANK[subsystem(t)] >= RANK[subsystem(m)]]


C_GRAPH = {module_name(p): c_includes(p) for p in [*PACKAGE.rglob("*.c"), *PACKAGE.rglob("*.h")]}


def test_c_includes_run_down_the_layers():
    """The compiled twins' C lives in its package (none at the top) and includes only
    its own package's headers or those of packages below it: each package's
    ``twins.h`` declares its twins (setup.py binds them all)."""
    assert "l3fwd_sim.dataplane.lcore" in C_GRAPH and all(subsystem(m) for m in C_GRAPH)
    assert upward(C_GRAPH) == []


def test_the_c_checker_sees_an_include_running_up():
    lcore = PACKAGE / "dataplane" / "lcore.c"
    assert "l3fwd_sim.capture.records" in C_GRAPH["l3fwd_sim.dataplane.lcore"]
    assert upward({"l3fwd_sim.dataplane.lcore": {module_name(Path(os.path.normpath(lcore.parent / "../l3fwd/twins.h")))}}) \
        == ["l3fwd_sim.dataplane.lcore uses l3fwd_sim.l3fwd.twins"]
