"""The package's layout: subpackages depend on each other in one direction only (observe -> decide
-> act, with the benchmark, data, reports and memory around them), so a reader knows where a line
belongs and no import needs a function-level escape hatch."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "caap"


def _imports() -> dict[str, dict[str, list[str]]]:
    """Subpackage (or top-level module) -> the ones it imports from -> the files that do, function-level
    imports included."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(PACKAGE.rglob("*.py")):
        here = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("caap."):
                there = node.module.split(".")[1]
                if there != here:
                    graph[here][there].append(str(path.relative_to(PACKAGE.parent)))
    return graph


def _cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    found: list[list[str]] = []

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, {})):
            if nxt == start:
                found.append(path)
            elif nxt not in path and nxt > start:
                walk(start, nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return found


def test_no_import_cycles_between_subpackages():
    graph = _imports()
    cycles = _cycles(graph)
    where = [" -> ".join([*c, c[0]]) + ": " + "; ".join(
        f"{a}->{b} in {sorted(set(graph[a][b]))[0]}" for a, b in zip(c, [*c[1:], c[0]], strict=True)) for c in cycles]
    assert not cycles, "\n".join(where)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b": ["x"]}, "b": {"c": ["y"]}, "c": {"a": ["z"]}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b": ["x"]}, "b": {"c": ["y"]}}) == []


def test_the_results_index_is_up_to_date():
    """results/README.md is generated from the files under results/ (tools/results_index.py)."""
    import subprocess
    import sys

    root = PACKAGE.parent
    done = subprocess.run([sys.executable, str(root / "tools" / "results_index.py"), "--check"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_model_cards_are_cards():
    """Each shipped model's card stays a card (history goes to HISTORY.md beside it)."""
    for card in sorted((PACKAGE.parent / "models").glob("*/MODEL_CARD.md")):
        lines = card.read_text(encoding="utf-8").splitlines()
        assert len(lines) <= 250, f"{card}: {len(lines)} lines"
        assert (card.parent / "HISTORY.md").is_file()
        for section in ("Intended use", "Training data", "Known limits", "reproduce"):
            assert any(section.lower() in line.lower() for line in lines if line.startswith("#")), (card, section)
