"""Data flows one way through the package: a lower layer never imports a higher one.

The layers, lowest first: basics every part shares (text and tokenizing, HTML parsing,
files, URLs, items, memory), the Redis state of a distributed crawl, capture, learning,
extraction (extraction without a crawl, :mod:`spidercrawl.extract.api`, among it), the
pipelines, the spider, and the programs on top (evaluation, server, command lines). Every import of
every module is read from its source, those inside functions included.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "spidercrawl"

# Lowest first. A module belongs to the layer of the longest prefix naming it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "basics",
        (
            "spidercrawl.text", "spidercrawl.files", "spidercrawl.urls", "spidercrawl.items",
            "spidercrawl.signals", "spidercrawl.settings", "spidercrawl.document",
            "spidercrawl.memory", "spidercrawl.near_duplicates", "spidercrawl.sites",
            "spidercrawl.discovery",
            "spidercrawl.archive", "spidercrawl.snapshot", "spidercrawl.runner",
        ),
    ),
    ("shared state", ("spidercrawl.distributed",)),
    ("capture", ("spidercrawl.capture",)),
    ("learn", ("spidercrawl.learn",)),
    ("extract", ("spidercrawl.extract",)),
    ("pipelines", ("spidercrawl.pipelines",)),
    ("spider", ("spidercrawl.spiders",)),
    (
        "programs",
        (
            "spidercrawl.evaluate", "spidercrawl.serve", "spidercrawl.commands",
            "spidercrawl.collect", "spidercrawl.collector", "spidercrawl.enqueue",
            "spidercrawl.datatrove", "spidercrawl.archive_learning", "spidercrawl.learn.__main__",
            # The package's own ``extract_html`` is the api's, imported on first use.
            "spidercrawl.__init__",
        ),
    ),
]  # fmt: skip


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of ``module`` (a dotted name inside the package)."""
    best, best_length = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    return best


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    """The package's modules ``path`` imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("spidercrawl."))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "spidercrawl":  # from spidercrawl import discovery
                found.update(f"spidercrawl.{alias.name}" for alias in node.names)
            elif node.module.startswith("spidercrawl."):
                found.add(node.module)
    return found


def test_every_module_has_a_layer() -> None:
    unplaced = [module_name(p) for p in PACKAGE.rglob("*.py") if layer_of(module_name(p)) < 0]
    assert not unplaced, f"place these modules in LAYERS: {unplaced}"


def test_no_module_imports_a_higher_layer() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = module_name(path)
        for imported in sorted(imported_modules(path)):
            if layer_of(imported) > layer_of(importer):
                upward.append(
                    f"{importer} ({LAYERS[layer_of(importer)][0]}) imports {imported} "
                    f"({LAYERS[layer_of(imported)][0]})"
                )
    assert not upward, "\n".join(upward)


def test_no_two_modules_import_each_other() -> None:
    """No import circle, not even one for type hints only: within a layer too, a module
    is below the ones that import it. (A package's ``__init__`` is left out: importing
    ``spidercrawl.x.y`` names ``spidercrawl.x`` too.)"""
    graph = {
        module_name(path): {m for m in imported_modules(path) if m != module_name(path)}
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py"
    }
    circles = []
    for start in sorted(graph):
        stack, seen = [(start, [start])], set()
        while stack:
            module, trail = stack.pop()
            for imported in graph.get(module, ()):
                if imported == start:
                    circles.append(" -> ".join([*trail, start]))
                elif imported not in seen:
                    seen.add(imported)
                    stack.append((imported, [*trail, imported]))
    assert not circles, "\n".join(sorted(set(circles)))


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The check itself: a learning module importing extraction is caught."""
    source = tmp_path / "model.py"
    source.write_text("def f():\n    from spidercrawl.extract.unseen import UnseenExtractor\n")
    (imported,) = imported_modules(source)
    assert layer_of(imported) > layer_of("spidercrawl.learn.model")
    collector, writer = "spidercrawl.collector", "spidercrawl.pipelines.jsonfeed"
    assert layer_of(collector) > layer_of(writer)
    state, capture = "spidercrawl.distributed.delivery", "spidercrawl.capture.conditional"
    assert layer_of(state) < layer_of(capture)
