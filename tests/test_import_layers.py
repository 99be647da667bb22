"""The import graph has no circles: between packages of ``agentcredit`` (a package never
imports one that imports it back, at any distance) and between modules; and every import
points down the layer order of ``docs/architecture.md`` (:data:`LAYERS`). Every import
counts, also one inside a function. A package's ``__init__`` may name its own submodules
(it is the package's face, loading its jobs on first use)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "agentcredit"
_A = "agentcredit."
LAYERS: dict[int, tuple[str, ...]] = {  # docs/architecture.md, "Layers"; longest prefix wins
    1: ("errors", "hashing", "schema", "text", "version", "safe_io", "db", "integrity", "shell",
        "redact", "markdown"),
    2: ("formats",),
    3: ("checklists.gates", "checklists.units", "checklists.rules", "skills.gates",
        "skills.tool_names", "skills.leaks", "evidence", "scoring", "analysis.stats",
        "rewards.advantages", "evolve.gates"),
    4: ("llm", "gating"),
    5: ("store",),
    6: ("checklists", "judging", "skills", "rewards", "evolve"),
    7: ("runs", "report", "analysis", "integrations", "serve", "skills.jobs", "rewards.jobs",
        "evolve.jobs"),
    8: ("cli", "__main__"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _package(module: str) -> str:
    return module.split(".")[1] if module.count(".") else module


def test_no_package_imports_one_that_imports_it_back() -> None:
    packages: dict[str, set[str]] = defaultdict(set)
    for source, targets in _graph().items():
        for target in targets:
            if _package(source) != _package(target):
                packages[_package(source)].add(_package(target))
    assert _cycles(packages) == []


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in _graph().items()}
    assert _cycles(graph) == []


def layer_of(module: str) -> int | None:
    """The layer of a module: that of the longest prefix in :data:`LAYERS`."""
    best: tuple[int, int] | None = None
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            name = _A + prefix
            if (module == name or module.startswith(name + ".")) and \
                    (best is None or len(name) > best[1]):
                best = (layer, len(name))
    return best[0] if best else None


def upward_arrows(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for source, targets in graph.items():
        for target in targets:
            if source.startswith(target + ".") or target.startswith(source + "."):
                continue  # a module and its package's face
            low, high = layer_of(source), layer_of(target)
            if low is not None and high is not None and high > low:
                found.append(f"{source} (layer {low}) imports {target} (layer {high})")
    return sorted(found)


def test_every_module_has_a_layer() -> None:
    assert [m for m in _graph() if m != "agentcredit" and layer_of(m) is None] == []


def test_every_import_points_down_the_layers() -> None:
    assert upward_arrows(_graph()) == []


def test_the_layer_check_finds_an_upward_arrow() -> None:
    assert upward_arrows({"agentcredit.scoring.metrics": {"agentcredit.llm.client"},
                          "agentcredit.llm": {"agentcredit.llm.client"}}) == [
        "agentcredit.scoring.metrics (layer 3) imports agentcredit.llm.client (layer 4)"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
