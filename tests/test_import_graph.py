"""The package import graph (static, with `ast`): no circle, no import from a lower floor to a
higher one, every package on a floor. The floors are declared in docs/design.md §3 (the table
after the ``<!-- floors -->`` marker); this test reads them there. Pure."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "agent_history"
DESIGN = REPO / "docs" / "design.md"

KNOWN_CIRCLES: dict[frozenset[str], str] = {}
"""Module circles still to remove (docs/design.md §3), each with why it is not removed yet."""


def floors() -> dict[str, int]:
    """Unit (top-level package or root module of agent_history; ``agent_history`` for its
    ``__init__``) → floor, from the table in docs/design.md §3."""
    text = DESIGN.read_text(encoding="utf-8")
    table = text[text.index("<!-- floors") :].split("\n\n", 1)[0]
    out: dict[str, int] = {}
    for line in table.splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|[^|]*\|([^|]*)\|", line)
        if m:
            for unit in re.findall(r"`([^`]+)`", m.group(2)):
                assert unit not in out, f"{unit} is on two floors"
                out[unit] = int(m.group(1))
    return out


def modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def unit_of(module: str) -> str:
    """The floor unit of a module: ``agent_history.search.bm25`` → ``search``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "agent_history"


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the package modules it imports (top-level, deferred and TYPE_CHECKING imports
    alike: a deferred import is still an arrow)."""

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for target in targets:
                if target == "agent_history" or target.startswith("agent_history."):
                    found = resolve(target)
                    if found and found != name:
                        graph[name].add(found)
    return graph


def circles(graph: dict[str, set[str]], nodes) -> list[frozenset[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def test_every_package_and_root_module_is_on_one_floor():
    declared = floors()
    units = {unit_of(m) for m in modules()}
    assert sorted(units - set(declared)) == [], "add these to the floors table in docs/design.md §3"
    assert sorted(set(declared) - units) == [], "the floors table names packages that do not exist"
    assert declared["model"] == declared["harnesses"] == 0


def test_no_import_runs_from_a_lower_floor_to_a_higher_one():
    declared = floors()
    upward = sorted(
        f"{m} (floor {declared[unit_of(m)]}) imports {t} (floor {declared[unit_of(t)]})"
        for m, targets in imports(modules()).items()
        for t in targets
        if declared[unit_of(t)] > declared[unit_of(m)]
    )
    assert upward == []


def test_no_module_circle_but_the_known_ones():
    mods = modules()
    found = circles(imports(mods), mods)
    assert [sorted(c) for c in found if c not in KNOWN_CIRCLES] == []
    assert set(KNOWN_CIRCLES) <= set(found), "a known circle is gone: remove it from KNOWN_CIRCLES and docs/design.md"


def test_no_circle_between_packages():
    graph: dict[str, set[str]] = defaultdict(set)
    for m, targets in imports(modules()).items():
        graph[unit_of(m)] |= {unit_of(t) for t in targets if unit_of(t) != unit_of(m)}
    assert circles(graph, list(graph)) == []


def test_the_graph_sees_deferred_imports():
    """The rules cover function-level imports too (a deferred import must not hide a circle)."""
    graph = imports(modules())
    assert "agent_history.embed.service" in graph["agent_history.embed.provider"]  # imported in a method
