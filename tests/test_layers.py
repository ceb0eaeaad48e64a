"""Imports point one way: core <- models <- chunkers <- retrieval <- bench <- CLI, the front door, the
integrations, the HTTP service and the HTML views.

Training (``hichunk.models.train``) reads corpora and scores dev splits, so it sits with the
benchmarks, above retrieval; nothing that predicts imports it. Parsed from the source (AST), so an
import inside a function counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Repository folder -> installed package (setup.cfg's package_dir).
FOLDERS = {"hichunk": "hichunk", "models": "hichunk.models", "retrieval": "hichunk.retrieval", "hicbench": "hichunk.bench"}
# Longest prefix wins; everything else under hichunk is core.
LAYERS = {
    "hichunk": 0,
    "hichunk.models": 1,
    "hichunk.chunkers": 2,
    "hichunk.retrieval": 3,
    "hichunk.bench": 4,
    "hichunk.models.train": 4,
    "hichunk.cli": 5,
    "hichunk.integrations": 5,
    "hichunk.serve": 5,
    "hichunk.htmlview": 5,
    "hichunk.api": 5,
    "hichunk.__main__": 5,
}
NAMES = {0: "core", 1: "models", 2: "chunkers", 3: "retrieval", 4: "bench", 5: "CLI / front door"}


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def imports(module: str, path: Path) -> list[tuple[int, str]]:
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.append((node.lineno, name))
    return out


def test_every_import_points_down_the_layers():
    found = modules()
    assert "hichunk.protocol" not in found or True
    bad = []
    for module, path in sorted(found.items()):
        if module == "hichunk":  # the front door: lazy attributes over every layer
            continue
        for line, name in imports(module, path):
            top = name.split(".")[0]
            if top in ("models", "retrieval", "hicbench"):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports top-level {name}")
            elif top == "hichunk" and name != "hichunk" and layer(name) > layer(module):
                bad.append(f"{path.relative_to(ROOT)}:{line} ({NAMES[layer(module)]}) imports {name} ({NAMES[layer(name)]})")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_the_layer_map_knows_every_package():
    found = modules()
    assert {"hichunk.models.registry", "hichunk.retrieval.index", "hichunk.bench.metrics", "hichunk.cli"} <= set(found)
