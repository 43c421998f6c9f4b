"""No import cycle in cfa_lib, function-level imports included: the modules form a path, not a knot."""

from __future__ import annotations

import ast
from pathlib import Path

from cfa_lib.paths import PROJECT_ROOT


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(name: str, path: Path, node: ast.Import | ast.ImportFrom, modules: set[str]) -> set[str]:
    """The cfa_lib modules one import statement names (`from a import b` names a.b when b is a module)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & modules
    base = node.module or ""
    if node.level:
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
    found = {f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names}
    return found & modules


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in (PROJECT_ROOT / "cfa_lib").rglob("*.py")}
    modules = set(paths)
    return {name: {target for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.Import | ast.ImportFrom)
                   for target in imported(name, path, node, modules)} - {name}
            for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each a cycle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            if component:
                found.append(sorted([node, *component]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_cfa_lib_has_no_import_cycle() -> None:
    graph = import_graph()
    assert "cfa_lib.experiments.registry" in graph["cfa_lib"] | graph["cfa_lib.report.runs"]  # imports are read
    assert cycles(graph) == []
