"""The package's structure: no import cycle between bytepair's modules, and the library never
imports the command line.

Every module under ``src/bytepair`` is parsed with ``ast``; every import of another bytepair
module counts, at module level or inside a function (a function-level import is a cycle
postponed, not removed). An import names the module it reads from: ``from .formats import
export`` depends on ``bytepair.formats.export`` when that is a module, else on
``bytepair.formats``. The parent packages that Python also runs on first import are not
edges, or every submodule would depend on ``bytepair/__init__.py`` and the other way round.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "bytepair"


def module_names():
    """``{dotted name: file}`` for every module of the package (the compiled one by its .pyx)."""
    names = {}
    for path in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyx")]:
        parts = ["bytepair", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imports_of(name, path, known):
    """The bytepair modules that ``name`` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names
            ]
        else:
            continue
        for target in targets:
            # `import bytepair.a.b` names bytepair.a.b; keep the longest known prefix.
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph():
    known = module_names()
    return {name: imports_of(name, path, known) if path.suffix == ".py" else set() for name, path in known.items()}


def find_cycle(graph):
    """One cycle as a list of modules, or None (depth-first search with colours)."""
    state = {}
    stack = []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == "open":
                return stack[stack.index(successor) :] + [successor]
            if successor not in state:
                cycle = visit(successor)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_graph_is_read_from_real_imports():
    graph = import_graph()
    assert "bytepair.model" in graph["bytepair.tokenizer"]
    assert "bytepair.tokenizer" in graph["bytepair.formats.huggingface"]
    # a function-level import counts
    assert "bytepair.formats.export" in graph["bytepair.tokenizer"]


def test_the_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_between_bytepair_modules():
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle)


@pytest.mark.parametrize(
    "cli_module", ["bytepair.cli", "bytepair.datasets.cli", "bytepair.formats.cli", "bytepair.gpt.cli"]
)
def test_the_library_never_imports_the_command_line(cli_module):
    graph = import_graph()
    # Only entry points (``__main__``) and other command modules may; the helpers every command
    # shares live in ``_cliutil``, which is not a cli module.
    importers = sorted(
        name for name, targets in graph.items() if cli_module in targets and not name.endswith((".cli", ".__main__"))
    )
    assert importers == [], f"{cli_module} is imported by {importers}"
