"""The layers point one way, and no module imports itself back.

Every package of gemmlab has a rank (docs/architecture.md draws the same picture); a module may
import only packages of a lower rank, or its own package. Imports inside functions count: a
deferred import is still a dependency. Read from the source with ``ast`` (nothing is imported),
so a new package or an upward import fails here with the file and line named.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "gemmlab"

# Lowest first. Equal ranks may not import each other (they are siblings, not layers).
RANKS = {
    "gemmlab": 0,  # the package itself: __version__ only
    "errors": 0,
    "hardware": 1, "fileio": 1, "numerics": 1, "problem": 1,  # facts and plumbing every layer may use
    "kernels": 2,  # the CUDA sources and the rung registry
    "runtime": 3,  # compiling and launching (CuPy, cuBLAS, nvcc)
    "profile": 4,  # collect and parse: ncu, nsys, CUPTI, the exports
    "bench": 5,  # the harness: timer, checks, results, ladders
    "store": 6,  # the SQLite results database
    "lessons": 7, "shapes": 7,  # experiments built on the harness
    "analysis": 8,  # diagnoses, calculators, the judgement of what mattered
    "report": 9, "corpus": 9,  # rendering; the diagnosis corpus scorer
    "workflows": 10,  # compositions: read inputs, run, keep, render
    "output": 11,  # terminal tables and JSON
    "commands": 12,  # the typer commands
    "cli": 13, "__main__": 14,
}
# Commands import these shared modules and no other command.
COMMAND_HELPERS = {"common", "show", "profiled", "calc_parse", "yours"}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@lru_cache(maxsize=None)
def imports(root: Path) -> dict[str, list[tuple[str, int]]]:
    """module -> [(imported gemmlab module, line)], resolving relative imports and ``from pkg import mod``."""
    paths = {module_name(p, root): p for p in root.rglob("*.py")}
    found: dict[str, list[tuple[str, int]]] = {}
    for mod, path in paths.items():
        is_pkg = path.name == "__init__.py"
        out = []
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    here = here[: len(here) - (node.level - 1)]
                    base = ".".join(here + ([node.module] if node.module else []))
                if base.split(".")[0] != root.name:
                    continue
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == root.name]
            for t in targets:
                while t not in paths and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t != mod:
                    out.append((t, node.lineno))
        found[mod] = out
    return found


def package(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def upward_imports(root: Path, ranks: dict[str, int]) -> list[str]:
    bad = []
    for mod, targets in sorted(imports(root).items()):
        for t, line in targets:
            a, b = package(mod), package(t)
            if a != b and ranks[b] >= ranks[a]:
                bad.append(f"{mod}:{line} imports {t} ({b} is rank {ranks[b]}, {a} is rank {ranks[a]})")
    return bad


def cycles(root: Path) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    graph = {m: {t for t, _ in ts} for m, ts in imports(root).items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

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
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


# --- the checks on gemmlab ---------------------------------------------------------------------
def test_every_package_has_a_rank():
    names = {p.stem if p.is_file() else p.name for p in SRC.iterdir()
             if (p.is_file() and p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert names - set(RANKS) == set(), "place the new package in RANKS (and docs/architecture.md)"


def test_layers_point_one_way():
    assert upward_imports(SRC, RANKS) == []


def test_no_module_imports_itself_back():
    assert cycles(SRC) == []


def test_commands_import_no_other_command():
    bad = [f"{m}:{line} imports {t}" for m, ts in imports(SRC).items() if m.startswith("gemmlab.commands.")
           for t, line in ts if t.startswith("gemmlab.commands.") and t.rsplit(".", 1)[1] not in COMMAND_HELPERS]
    assert bad == []


def test_the_package_root_imports_nothing():
    assert imports(SRC)["gemmlab"] == []


# --- the checker itself finds what it should ----------------------------------------------------
@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "gemmlab"

    def write(rel: str, text: str = "") -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        for d in p.relative_to(root).parents:
            (root / d / "__init__.py").touch()
        p.write_text(text)

    return root, write


def test_the_checker_sees_deferred_relative_and_from_package_imports(tree):
    root, write = tree
    write("bench/timer.py", "def f():\n    from gemmlab.report import html\n")  # deferred, upward
    write("bench/spec.py", "from ..report import html\n")  # relative, upward
    write("bench/stats.py", "from gemmlab.report import html as h\n")
    write("report/html.py", "from gemmlab.bench import stats\n")  # downward: fine
    ranks = {"gemmlab": 0, "bench": 1, "report": 2}
    bad = upward_imports(root, ranks)
    assert [b.split(" ")[0] for b in bad] == ["gemmlab.bench.spec:1", "gemmlab.bench.stats:1", "gemmlab.bench.timer:2"]
    assert ["gemmlab.bench.stats", "gemmlab.report.html"] in cycles(root)


def test_the_checker_finds_a_circle_inside_one_package(tree):
    root, write = tree
    write("runtime/a.py", "from gemmlab.runtime import b\n")
    write("runtime/b.py", "def f():\n    from gemmlab.runtime.a import x\n")
    write("runtime/c.py", "import gemmlab.runtime.a\n")
    assert cycles(root) == [["gemmlab.runtime.a", "gemmlab.runtime.b"]]
    assert upward_imports(root, {"gemmlab": 0, "runtime": 1}) == []
