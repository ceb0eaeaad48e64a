"""MkDocs hook: a source tree in the installed layout, for mkdocstrings to read statically.

The repository keeps ``hichunk/``, ``models/``, ``retrieval/`` and ``hicbench/`` side by side and
setuptools maps them to ``hichunk``, ``hichunk.models`` ... (``package_dir`` in setup.cfg). Griffe reads
packages from folders, so this hook builds ``build/docs-api/hichunk/`` from symbolic links that follow
that mapping, and the API pages can name ``hichunk.Index`` as users import it.
"""

from __future__ import annotations

import configparser
import os
import shutil
from pathlib import Path

from mkdocs.plugins import event_priority

API_TREE = Path("build", "docs-api")  # relative to mkdocs.yml; mkdocs.yml's mkdocstrings `paths` names it


def package_dirs(setup_cfg: Path) -> dict[str, str]:
    """setup.cfg's package_dir: installed package -> repository folder."""
    parser = configparser.ConfigParser()
    parser.read(setup_cfg)
    pairs = (line.split("=", 1) for line in parser["options"]["package_dir"].strip().splitlines())
    return {package.strip(): folder.strip() for package, folder in pairs}


def build_api_tree(root: Path) -> Path:
    """Recreate ``root/build/docs-api``: each package's files linked where the wheel would put them."""
    out = root / API_TREE
    shutil.rmtree(out, ignore_errors=True)
    for package, folder in sorted(package_dirs(root / "setup.cfg").items(), key=lambda item: item[0].count(".")):
        target = out.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for entry in (root / folder).iterdir():
            if entry.name != "__pycache__" and not (target / entry.name).exists():
                os.symlink(entry.resolve(), target / entry.name)
    return out


@event_priority(100)  # before mkdocstrings reads its search paths, which skips folders that do not exist yet
def on_config(config):
    build_api_tree(Path(config.config_file_path).resolve().parent)
    return config
