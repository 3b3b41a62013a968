"""No import circle inside ``inspector/``: a module never needs, even lazily or for types only, a
module that needs it back.

The graph is read from the source (``ast``): every ``import`` and ``from ... import`` anywhere in a
module (inside functions and ``if TYPE_CHECKING:`` too), to modules of this package; ``from a
import b`` counts as ``a.b`` when ``b`` is a module.  A circle is a strongly connected component of
more than one module (or a module importing itself).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "inspector"

# Circles known to remain (none: the last were broken up in issue 38's rework). A new one fails.
KNOWN: list[frozenset[str]] = []


def module_files(root: Path) -> dict[str, Path]:
    files = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package -> the modules of the package it imports, anywhere in its source."""
    files = module_files(root)
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                graph[name].update(alias.name for alias in node.names if alias.name in files)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([node.module] if node.module else [])])
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    if target in files:
                        graph[name].add(target)
                    elif base in files:
                        graph[name].add(base)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module, or of one importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        found.append(frozenset(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_walk_finds_a_circle_and_the_modules_of_a_package(tmp_path: Path) -> None:
    """The checker itself: a lazy import back and a type-only import close circles; a chain does not."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "a.py").write_text("from pkg import b\n")
    (root / "b.py").write_text("def f():\n    from pkg.a import x\n")
    (root / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..sub import d\n")
    (root / "sub" / "d.py").write_text("import pkg.sub.c\n")
    (root / "e.py").write_text("from pkg import a\n")
    graph = import_graph(root)
    assert graph["pkg.e"] == {"pkg.a"} and graph["pkg.sub.c"] == {"pkg.sub.d"}
    assert sorted(map(sorted, circles(graph))) == [["pkg.a", "pkg.b"], ["pkg.sub.c", "pkg.sub.d"]]


def test_no_import_circle_but_the_known_ones() -> None:
    found = circles(import_graph(PACKAGE))
    new = [sorted(circle) for circle in found if not any(circle <= known for known in KNOWN)]
    assert not new, f"import circles: {new}"


def test_the_app_and_its_screens_form_no_circle() -> None:
    """The screens reach the app through a protocol (``screens.base.Inspector``), the session view's
    parts talk to it through messages: nothing under ``tui/`` needs ``tui.app`` or the session view back."""
    found = circles(import_graph(PACKAGE))
    assert not [sorted(c) for c in found if c & {"inspector.tui.app", "inspector.tui.session.screen",
                                                 "inspector.tui.screens.base", "inspector.tui.running"}]
